package ha_test

import (
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/internal/testing/zktest"
)

// zkConn is a plain client of e, for a test to look at or change the
// znodes colocd keeps.
func zkConn(t *testing.T, e *zktest.Ensemble) (*zk.Conn, <-chan zk.Event, error) {
	t.Helper()
	return zk.Connect(e.Addrs(), 4*time.Second, zk.WithLogInfo(false))
}
