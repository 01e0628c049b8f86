package kerberos

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"slices"
	"sync"
	"time"

	"github.com/jcmturner/gokrb5/v8/config"
)

// The KDC relays: how a KDC's reply is capped.
//
// gokrb5 v8.4.4 reads a KDC's TCP reply into a buffer of the length the
// reply's 4-byte prefix declares, up to 4 GiB, before reading any of it
// (client/network.go:197-199: s := binary.BigEndian.Uint32(sh);
// rb := make([]byte, s, s)), and it dials the KDCs itself
// (net.DialTimeout, client/network.go:94 and :158): it takes no dialer,
// transport or cap, and nothing in krb5.conf sets one. Its one bound is
// a deadline of 5 s per KDC (client/network.go:99 and :163), in which a
// KDC on a fast link delivers gigabytes. Over UDP it reads into 4,096
// bytes (client/network.go:122), but a KDC that answers UDP with
// KRB_ERR_RESPONSE_TOO_BIG, or not at all, moves it to TCP.
//
// So no exchange of the Auth reaches a KDC directly. For the time of one
// exchange, each KDC of the realm gets a relay on 127.0.0.1, and gokrb5
// gets a copy of krb5.conf that names the relays in the KDCs' place and
// speaks TCP only (udp_preference_limit = 1). A relay passes gokrb5's
// request to its KDC over TCP (over UDP when the KDC takes no TCP
// connection, reading one datagram), reads the reply's length prefix, and
// passes the reply on only when it is at most maxKDCReply; otherwise it
// hangs up, and the exchange fails with ErrReplyTooLarge naming the KDC.
// gokrb5 thus allocates at most maxKDCReply for a reply, and the relay as
// much. The relays' goroutines end with the exchange.

const (
	// maxKDCReply caps a KDC's reply. An honest one holds a ticket and
	// its encrypted part: a few KB, and at most Active Directory's
	// MaxTokenSize (65,535 bytes, its largest setting) with a large PAC.
	maxKDCReply = 1 << 20
	// maxKDCRequest caps gokrb5's request (ours: a few hundred bytes).
	maxKDCRequest = 64 << 10
	// kdcTimeout bounds a relay's exchange with its KDC, as gokrb5 bounds
	// its own with each KDC.
	kdcTimeout = 5 * time.Second
)

// relays relay one exchange's connections to the realm's KDCs.
type relays struct {
	max   int64
	kdcs  []string       // the KDCs, in the realm's order
	lns   []net.Listener // lns[i] relays to kdcs[i]
	wg    sync.WaitGroup
	mu    sync.Mutex
	conns map[net.Conn]bool // open connections, closed by stop
	errs  []error           // replies refused
}

// startRelays starts a relay on 127.0.0.1 for each KDC.
func startRelays(kdcs []string, max int64) (*relays, error) {
	r := &relays{max: max, kdcs: kdcs, conns: map[net.Conn]bool{}}
	for _, kdc := range kdcs {
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			_ = r.stop()
			return nil, fmt.Errorf("listen for the relay to KDC %s: %w", kdc, err)
		}
		r.lns = append(r.lns, ln)
		r.wg.Add(1)
		go r.accept(ln, kdc)
	}
	return r, nil
}

// addrs are the relays' addresses, in the KDCs' order.
func (r *relays) addrs() []string {
	out := make([]string, len(r.lns))
	for i, ln := range r.lns {
		out[i] = ln.Addr().String()
	}
	return out
}

// stop closes the relays and their connections, waits for their
// goroutines, and returns the replies they refused (nil: none).
func (r *relays) stop() error {
	for _, ln := range r.lns {
		_ = ln.Close()
	}
	r.mu.Lock()
	for c := range r.conns {
		_ = c.Close()
	}
	r.conns = nil // track refuses any further one
	r.mu.Unlock()
	r.wg.Wait()
	r.mu.Lock()
	defer r.mu.Unlock()
	return errors.Join(r.errs...)
}

// track adds c to the open connections, or closes it when the relays
// are stopping (false).
func (r *relays) track(c net.Conn) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.conns == nil {
		_ = c.Close()
		return false
	}
	r.conns[c] = true
	return true
}

func (r *relays) untrack(c net.Conn) {
	_ = c.Close()
	r.mu.Lock()
	delete(r.conns, c)
	r.mu.Unlock()
}

func (r *relays) accept(ln net.Listener, kdc string) {
	defer r.wg.Done()
	for {
		c, err := ln.Accept()
		if err != nil {
			return // closed by stop
		}
		if !r.track(c) {
			continue
		}
		r.wg.Add(1)
		go func() {
			defer r.wg.Done()
			defer r.untrack(c)
			r.serve(c, kdc)
		}()
	}
}

// serve relays one request of gokrb5's on c to kdc and its reply back.
// On any failure it hangs up: gokrb5 then reports the exchange failed,
// and the Auth looks at what the relays refused.
func (r *relays) serve(c net.Conn, kdc string) {
	_ = c.SetDeadline(time.Now().Add(kdcTimeout))
	req, err := readFrame(c, maxKDCRequest, "gokrb5's request")
	if err != nil {
		return
	}
	rep, err := r.exchange(kdc, req)
	if err != nil {
		var tl *replyTooLargeError
		if errors.As(err, &tl) {
			r.mu.Lock()
			r.errs = append(r.errs, err)
			r.mu.Unlock()
		}
		return
	}
	_ = writeFrame(c, rep)
}

// exchange sends req to kdc over TCP, or over UDP when kdc takes no TCP
// connection, and reads its reply, at most r.max bytes.
func (r *relays) exchange(kdc string, req []byte) ([]byte, error) {
	up, err := net.DialTimeout("tcp", kdc, kdcTimeout)
	if err != nil {
		return r.exchangeUDP(kdc, req)
	}
	if !r.track(up) {
		return nil, net.ErrClosed
	}
	defer r.untrack(up)
	_ = up.SetDeadline(time.Now().Add(kdcTimeout))
	if err := writeFrame(up, req); err != nil {
		return nil, err
	}
	return readFrame(up, r.max, "the reply of KDC "+kdc)
}

// exchangeUDP sends req to kdc as one datagram and reads one back, at
// most r.max bytes (a datagram holds at most 65,507).
func (r *relays) exchangeUDP(kdc string, req []byte) ([]byte, error) {
	up, err := net.DialTimeout("udp", kdc, kdcTimeout)
	if err != nil {
		return nil, err
	}
	if !r.track(up) {
		return nil, net.ErrClosed
	}
	defer r.untrack(up)
	_ = up.SetDeadline(time.Now().Add(kdcTimeout))
	if _, err := up.Write(req); err != nil {
		return nil, err
	}
	buf := make([]byte, min(r.max, 64<<10))
	n, err := up.Read(buf)
	if err != nil {
		return nil, err
	}
	return buf[:n], nil
}

// readFrame reads one message of RFC 4120 §7.2.2's TCP framing: a 4-byte
// big-endian length, then as many bytes, at most max.
func readFrame(c io.Reader, max int64, what string) ([]byte, error) {
	var h [4]byte
	if _, err := io.ReadFull(c, h[:]); err != nil {
		return nil, err
	}
	n := int64(binary.BigEndian.Uint32(h[:]))
	if n > max {
		return nil, &replyTooLargeError{what: what, declared: n, max: max}
	}
	b := make([]byte, n)
	if _, err := io.ReadFull(c, b); err != nil {
		return nil, err
	}
	return b, nil
}

func writeFrame(c io.Writer, b []byte) error {
	msg := make([]byte, 4+len(b))
	binary.BigEndian.PutUint32(msg, uint32(len(b)))
	copy(msg[4:], b)
	_, err := c.Write(msg)
	return err
}

// replyTooLargeError is a message that declared a length over its cap.
type replyTooLargeError struct {
	what          string
	declared, max int64
}

func (e *replyTooLargeError) Error() string {
	return fmt.Sprintf("%s declares %d bytes, over the cap of %d on a KDC's reply", e.what, e.declared, e.max)
}

func (e *replyTooLargeError) Unwrap() error { return ErrReplyTooLarge }

// viaRelays runs exch, an exchange of gokrb5's with the realm's KDCs,
// through relays (see above). The error of a refused reply replaces
// gokrb5's own, which only says the connection closed. Called under a.mu,
// which keeps exchanges one at a time.
func (a *Auth) viaRelays(exch func() error) error {
	_, byPref, err := a.krb5.GetKDCs(a.realm, true)
	if err != nil || len(byPref) == 0 {
		return exch() // gokrb5 finds no KDC either, and says so
	}
	kdcs := make([]string, 0, len(byPref))
	for _, k := range slices.Sorted(maps.Keys(byPref)) {
		kdcs = append(kdcs, byPref[k])
	}
	r, err := startRelays(kdcs, a.maxReply)
	if err != nil {
		return err
	}
	cfg := relayedConfig(a.krb5, a.realm, r.addrs())
	a.cl.Config = cfg
	err = exch()
	a.cl.Config = a.krb5
	if refused := r.stop(); refused != nil {
		return refused
	}
	return err
}

// relayedConfig is c with the KDCs of realm replaced by addrs, TCP only,
// no DNS lookup of KDCs.
func relayedConfig(c *config.Config, realm string, addrs []string) *config.Config {
	cp := *c
	cp.LibDefaults.UDPPreferenceLimit = 1
	cp.LibDefaults.DNSLookupKDC = false
	cp.Realms = slices.Clone(c.Realms)
	for i := range cp.Realms {
		if cp.Realms[i].Realm == realm {
			cp.Realms[i].KDC = addrs
			return &cp
		}
	}
	cp.Realms = append(cp.Realms, config.Realm{Realm: realm, KDC: addrs}) // found by DNS
	return &cp
}
