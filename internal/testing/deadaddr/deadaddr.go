// Package deadaddr gives tests a loopback address where a connection is
// refused, and keeps it that way for the whole test.
//
// The usual trick (listen on port 0, note the address, close) leaves the
// port free for the next server the test starts, which the kernel may give
// the same port: a test that wanted "nothing listens" then talks to its own
// other server (it failed CI once that way). Here the port stays bound to
// a socket that never listens, so the kernel refuses every connection and
// gives the port to nobody else until the test ends.
package deadaddr

import "testing"

// Addr is "127.0.0.1:port", refused until t ends.
func Addr(t testing.TB) string {
	t.Helper()
	addr, closeFn, err := hold()
	if err != nil {
		t.Fatalf("deadaddr: %v", err)
	}
	t.Cleanup(closeFn)
	return addr
}

// URL is "http://" + Addr(t).
func URL(t testing.TB) string {
	t.Helper()
	return "http://" + Addr(t)
}
