package api

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package if a test leaves goroutines behind (store
// writers, HTTP servers and keep-alive connections included).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
