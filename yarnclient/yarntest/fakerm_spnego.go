package yarntest

import (
	"context"
	"log"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/jcmturner/goidentity/v6"
	"github.com/jcmturner/gokrb5/v8/keytab"
	"github.com/jcmturner/gokrb5/v8/service"
	"github.com/jcmturner/gokrb5/v8/spnego"
	"go.uber.org/goleak"
)

// SPNEGO makes the fake RM a kerberized one: every request, the standby's
// included, goes through gokrb5's SPNEGO server side
// (spnego.SPNEGOKRB5Authenticate) with the service keytab at keytabPath,
// the way Hadoop's AuthenticationFilter with the kerberos handler sits in
// front of the RM's web app. A request without "Authorization: Negotiate"
// gets 401 with "WWW-Authenticate: Negotiate"; one whose ticket the keytab
// cannot decrypt (another service principal, an old key version) gets 401
// too. The tickets of an MIT 1.20 KDC carry a PAC, which is not required
// nor decoded (service.DecodePAC(false)). SPNEGOGate (FakeRM.SPNEGO)
// reports what it accepted and refused; Requests and Traffic count only
// the requests that authenticated.
//
// gokrb5's replay cache is a process-wide singleton whose cleaning
// goroutine never ends: a package whose tests use this option passes
// IgnoreReplayCache to its goroutine-leak check.
func SPNEGO(keytabPath string) Option { return func(o *options) { o.spnegoKeytab = keytabPath } }

// IgnoreReplayCache are the goleak options that ignore the goroutine
// gokrb5's SPNEGO server side starts once per process and never stops
// (service.GetReplayCache), under its name whether or not the compiler
// inlined GetReplayCache into VerifyAPREQ.
func IgnoreReplayCache() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/jcmturner/gokrb5/v8/service.GetReplayCache.func1.1"),
		goleak.IgnoreAnyFunction("github.com/jcmturner/gokrb5/v8/service.VerifyAPREQ.GetReplayCache.func1.1"),
	}
}

// SPNEGOGate authenticates requests with SPNEGO before passing them to the
// handler behind it, as the user the principal's short name gives
// (colocd/host@REALM calls as colocd, through user.name, which it
// replaces; the handler behind sees that it came over Kerberos, as the
// RM's delegation token API checks); it records the client principals it
// accepted and the reasons it refused others. It is safe for concurrent
// use.
type SPNEGOGate struct {
	t    testing.TB
	next http.Handler

	mu       sync.Mutex
	kt       *keytab.Keytab
	accepted []string // client principals, in order
	refused  []string // gokrb5's reasons, in order
}

// NewSPNEGOGate puts SPNEGO with the keytab at keytabPath in front of
// next (FakeRM does it with the SPNEGO option; a test puts it in front of
// another fake server, such as a NodeManager).
func NewSPNEGOGate(t testing.TB, keytabPath string, next http.Handler) *SPNEGOGate {
	t.Helper()
	g := &SPNEGOGate{t: t, next: next}
	g.SetKeytab(keytabPath)
	return g
}

// SetKeytab replaces the service keytab, as when the server's key is
// rotated: tickets for the old key version are refused from then on.
func (g *SPNEGOGate) SetKeytab(keytabPath string) {
	g.t.Helper()
	kt, err := keytab.Load(keytabPath)
	if err != nil {
		g.t.Fatalf("yarntest: SPNEGO keytab: %v", err)
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	g.kt = kt
}

// Accepted lists the client principals ("colocd@EXAMPLE.COM") of the
// requests that authenticated, in order.
func (g *SPNEGOGate) Accepted() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.accepted...)
}

// Refused lists why requests were refused, in order: gokrb5's log lines,
// or "no Authorization: Negotiate header".
func (g *SPNEGOGate) Refused() []string {
	g.mu.Lock()
	defer g.mu.Unlock()
	return append([]string(nil), g.refused...)
}

// ServeHTTP authenticates r and serves it with the handler behind.
func (g *SPNEGOGate) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	g.mu.Lock()
	kt := g.kt
	if !strings.HasPrefix(r.Header.Get("Authorization"), "Negotiate ") {
		g.refused = append(g.refused, r.RemoteAddr+" - no Authorization: Negotiate header")
	}
	g.mu.Unlock()
	inner := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := goidentity.FromHTTPRequestContext(r); id != nil {
			principal := id.UserName() + "@" + id.Domain()
			g.mu.Lock()
			g.accepted = append(g.accepted, principal)
			g.mu.Unlock()
			r = r.WithContext(context.WithValue(r.Context(), principalKey{}, principal))
			// The caller is the principal's short name (Hadoop's DEFAULT
			// auth_to_local rule), whatever user.name says.
			short, _, _ := strings.Cut(id.UserName(), "/")
			q := r.URL.Query()
			q.Set("user.name", short)
			r.URL.RawQuery = q.Encode()
		}
		g.next.ServeHTTP(w, r)
	})
	logger := log.New(refusalLog{g}, "", 0)
	spnego.SPNEGOKRB5Authenticate(inner, kt, service.DecodePAC(false), service.Logger(logger)).ServeHTTP(w, r)
}

// refusalLog keeps gokrb5's log lines that are not successes.
type refusalLog struct{ g *SPNEGOGate }

func (l refusalLog) Write(p []byte) (int, error) {
	line := strings.TrimSpace(string(p))
	if !strings.Contains(line, "succeeded") && !strings.Contains(line, "served under session") {
		l.g.mu.Lock()
		l.g.refused = append(l.g.refused, line)
		l.g.mu.Unlock()
	}
	return len(p), nil
}

// SPNEGO is the fake's SPNEGO gate, nil unless it was started with the
// SPNEGO option.
func (f *FakeRM) SPNEGO() *SPNEGOGate { return f.gate }

// serveGated starts a loopback server for h, behind a SPNEGO gate when
// keytab is set (the gate is nil otherwise).
func serveGated(t testing.TB, keytab string, h http.Handler) (*httptest.Server, *SPNEGOGate) {
	t.Helper()
	if keytab == "" {
		return httptest.NewServer(h), nil
	}
	g := NewSPNEGOGate(t, keytab, h)
	return httptest.NewServer(g), g
}
