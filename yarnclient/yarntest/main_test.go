package yarntest_test

import (
	"fmt"
	"net/http"
	"os"
	"testing"

	"go.uber.org/goleak"

	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestMain checks that the fakes leave no goroutine behind once their tests
// have cleaned up (but gokrb5's replay cache, see SPNEGO).
func TestMain(m *testing.M) {
	code := m.Run()
	http.DefaultTransport.(*http.Transport).CloseIdleConnections()
	if code == 0 {
		if err := goleak.Find(yarntest.IgnoreReplayCache()...); err != nil {
			fmt.Fprintln(os.Stderr, "goroutine leak:", err)
			code = 1
		}
	}
	os.Exit(code)
}
