package api

import (
	"testing"

	"go.uber.org/goleak"

	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestMain fails the package if a test leaves goroutines behind (store
// writers, HTTP servers and keep-alive connections included).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, yarntest.IgnoreReplayCache()...) // gokrb5's SPNEGO replay cache (kerberos_test.go)
}
