package kdctest

import (
	"fmt"
	"net"
	"time"

	"github.com/colocd/colocd/internal/testing/childproc"
)

// waitReady waits until addr accepts a TCP connection (krb5kdc binds its
// UDP and TCP sockets together, before it serves either), failing at once
// when the process exits first and after readyTimeout otherwise.
func waitReady(p *childproc.Proc, addr string) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, dialTimeout)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-p.Exited():
			return fmt.Errorf("krb5kdc exited before it listened on %s: %v", addr, p.Err())
		case <-deadline.C:
			return fmt.Errorf("krb5kdc not listening on %s after %v: %v", addr, readyTimeout, err)
		case <-tick.C:
		}
	}
}
