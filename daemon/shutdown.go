package daemon

import (
	"context"
	"net"
	"net/http"
	"sync"
	"time"
)

// freshConns tracks the API's connections on which no request has begun
// (http.StateNew), so that a shutdown can close them at once.
// http.Server.Shutdown waits for such a connection until it is 5 s old, as
// if a request might still come on it; Go's own client leaves them behind
// routinely (a dial it started for a request that then went out on another
// connection joins the pool unused), so one idle client could make every
// shutdown use 5 s of shutdown_timeout, which the pass in flight then
// lacks. A connection that has not sent a request has nothing in flight:
// closing it is what refusing it would have been.
type freshConns struct {
	mu sync.Mutex
	m  map[net.Conn]struct{}
}

func newFreshConns() *freshConns { return &freshConns{m: map[net.Conn]struct{}{}} }

// track is the server's ConnState hook.
func (f *freshConns) track(c net.Conn, s http.ConnState) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if s == http.StateNew {
		f.m[c] = struct{}{}
	} else {
		delete(f.m, c)
	}
}

// closeAll closes every connection still waiting for its first request.
func (f *freshConns) closeAll() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for c := range f.m {
		c.Close()
		delete(f.m, c)
	}
}

// shutdownHTTP is srv.Shutdown that does not wait for connections on
// which no request began: it closes them as the shutdown starts, and again
// while it waits for the requests in flight (a connection accepted just
// before the listener closed may turn up a moment later).
func shutdownHTTP(ctx context.Context, srv *http.Server, fresh *freshConns) error {
	done := make(chan error, 1)
	go func() { done <- srv.Shutdown(ctx) }()
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for {
		fresh.closeAll()
		select {
		case err := <-done:
			return err
		case <-tick.C:
		}
	}
}
