package daemon

import (
	"io"
	"net"
	"sync"
	"testing"
)

// tcpProxy forwards loopback TCP connections to upstream servers, one
// listener per server, until the test partitions it: then it drops every
// byte both ways (connections stay open, as behind a firewall that drops
// packets), and new connections are accepted and ignored. Heal closes what
// was held and forwards again.
type tcpProxy struct {
	tb   testing.TB
	mu   sync.Mutex
	drop bool
	deaf bool // drop only what the servers send back
	lns  []net.Listener
	held []net.Conn
}

func newTCPProxy(tb testing.TB, upstreams []string) *tcpProxy {
	p := &tcpProxy{tb: tb}
	for _, up := range upstreams {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			tb.Fatal(err)
		}
		p.lns = append(p.lns, ln)
		go p.serve(ln, up)
	}
	tb.Cleanup(p.close)
	return p
}

// Addrs are the proxy's addresses, one per upstream.
func (p *tcpProxy) Addrs() []string {
	var out []string
	for _, ln := range p.lns {
		out = append(out, ln.Addr().String())
	}
	return out
}

func (p *tcpProxy) serve(ln net.Listener, up string) {
	for {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		p.mu.Lock()
		p.held = append(p.held, c)
		drop := p.drop
		p.mu.Unlock()
		if drop {
			go io.Copy(io.Discard, c)
			continue
		}
		u, err := net.Dial("tcp", up)
		if err != nil {
			c.Close()
			continue
		}
		p.mu.Lock()
		p.held = append(p.held, u)
		p.mu.Unlock()
		go p.pipe(c, u, true)
		go p.pipe(u, c, false)
	}
}

// pipe copies from src to dst, discarding while partitioned (and, for
// what a server sends back, while deaf).
func (p *tcpProxy) pipe(dst, src net.Conn, back bool) {
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			p.mu.Lock()
			drop := p.drop || (back && p.deaf)
			p.mu.Unlock()
			if !drop {
				if _, werr := dst.Write(buf[:n]); werr != nil {
					return
				}
			}
		}
		if err != nil {
			dst.Close()
			return
		}
	}
}

// Partition starts dropping everything.
func (p *tcpProxy) Partition() {
	p.mu.Lock()
	p.drop = true
	p.mu.Unlock()
}

// Deafen drops what the servers send back and passes what the client
// sends: its requests are carried out, and it never hears of them.
func (p *tcpProxy) Deafen() {
	p.mu.Lock()
	p.deaf = true
	p.mu.Unlock()
}

// Heal closes the connections held through the partition and forwards
// new ones again.
func (p *tcpProxy) Heal() {
	p.mu.Lock()
	p.drop, p.deaf = false, false
	held := p.held
	p.held = nil
	p.mu.Unlock()
	for _, c := range held {
		c.Close()
	}
}

func (p *tcpProxy) close() {
	for _, ln := range p.lns {
		ln.Close()
	}
	p.Heal()
}
