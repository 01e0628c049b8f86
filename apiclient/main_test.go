package apiclient_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind (servers,
// store writers and keep-alive connections included).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
