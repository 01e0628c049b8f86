package daemon

import (
	"net"
	"sync"
)

// limitListener caps the connections open at once (api.max_connections):
// Accept takes a slot before it takes a connection from the kernel, so
// while every slot is held the next clients wait in the listen backlog
// instead of costing the process a file descriptor each; a slot frees when
// its connection closes. golang.org/x/net/netutil.LimitListener does the
// same, but x/net is only an indirect dependency of this module, and these
// few lines are not worth making it a direct one; netutil also has no
// full hook.
type limitListener struct {
	net.Listener
	slots     chan struct{}
	full      func() // called when Accept finds every slot taken; nil: none
	done      chan struct{}
	closeOnce sync.Once
}

func newLimitListener(ln net.Listener, n int, full func()) *limitListener {
	return &limitListener{Listener: ln, slots: make(chan struct{}, n), full: full, done: make(chan struct{})}
}

// Accept waits for a free slot, then for a connection. When every slot is
// taken it calls full first, which may free some.
func (l *limitListener) Accept() (net.Conn, error) {
	select {
	case l.slots <- struct{}{}:
	default:
		if l.full != nil {
			l.full()
		}
		select {
		case l.slots <- struct{}{}:
		case <-l.done:
			return nil, net.ErrClosed
		}
	}
	c, err := l.Listener.Accept()
	if err != nil {
		<-l.slots
		return nil, err
	}
	return &limitConn{Conn: c, release: func() { <-l.slots }}, nil
}

// Close stops accepting, also waking an Accept that waits for a slot.
func (l *limitListener) Close() error {
	l.closeOnce.Do(func() { close(l.done) })
	return l.Listener.Close()
}

// limitConn gives its slot back on the first Close.
type limitConn struct {
	net.Conn
	once    sync.Once
	release func()
}

func (c *limitConn) Close() error {
	err := c.Conn.Close()
	c.once.Do(c.release)
	return err
}

// CloseWrite half-closes a TCP connection; net/http uses it to let a client
// read a response before the connection closes.
func (c *limitConn) CloseWrite() error {
	if cw, ok := c.Conn.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return nil
}
