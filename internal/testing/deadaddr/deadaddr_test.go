package deadaddr

import (
	"errors"
	"net"
	"syscall"
	"testing"
	"time"
)

// TestAddrRefusesAndIsNotReused: a connection to the address is refused,
// and listeners started afterwards (asking the kernel for any port) never
// get its port while the test runs.
func TestAddrRefusesAndIsNotReused(t *testing.T) {
	addr := Addr(t)
	if _, err := net.DialTimeout("tcp", addr, 5*time.Second); !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial %s: %v, want connection refused", addr, err)
	}
	if l, err := net.Listen("tcp", addr); err == nil {
		l.Close()
		t.Fatalf("listen on %s succeeded, want the port held", addr)
	}
	for range 200 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		got := l.Addr().String()
		l.Close()
		if got == addr {
			t.Fatalf("the kernel gave %s to a new listener", addr)
		}
	}
}
