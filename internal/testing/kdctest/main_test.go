package kdctest_test

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain checks that no goroutine (the KDC's waiter) outlives the tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
