package api

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"
	"strings"
	"sync"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
)

// replica is what the API needs of a replicated colocd (package ha,
// through the daemon): whether this replica leads, where the leader is,
// and this replica's state.
type replica interface {
	// Leading reports whether this replica leads now; when not, leader is
	// the URL of the one that does ("" while none is elected).
	Leading() (leading bool, leader string)
	// Status is this replica's view, for GET /v1/ha.
	Status() v1.HAStatus
	// Applied is the index of the last log entry applied to the store.
	Applied() uint64
	// FollowerReady reports whether a replica that does not lead serves
	// (a session, a leader, not far behind it); the Controller's Ready is
	// the leader's.
	FollowerReady() error
}

// unavailableError is an error that means "not now, retry": the API answers
// 503 with its message and Retry-After. The replicated store's refusals
// while leadership moves are (package ha).
type unavailableError interface {
	error
	RetryAfter() time.Duration
}

// Headers a replica adds to every answer.
const (
	headerReplica   = "X-Colocd-Replica"       // the replica that answered
	headerApplied   = "X-Colocd-Applied-Index" // the log index its store had applied
	headerForwarded = "X-Colocd-Forwarded-By"  // set on a request a follower forwards
)

// local reports whether a replica that does not lead answers r itself:
// reads of its own store (jobs), health, readiness, metrics, its
// replication status and the status page's files. Everything else — every
// write, and the reads of what only the leader's engine holds (learned
// state, decisions, the cluster's view) — goes to the leader.
func local(r *http.Request) bool {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		return false
	}
	p := r.URL.Path
	switch {
	case p == "/v1/jobs" && r.URL.Query().Get("estimate") == "":
		return true
	case strings.HasPrefix(p, "/v1/jobs/") && !strings.Contains(strings.TrimPrefix(p, "/v1/jobs/"), "/"):
		return true
	case p == "/healthz", p == "/readyz", p == "/metrics", p == "/v1/ha", p == "/", p == "/favicon.ico",
		strings.HasPrefix(p, "/static/"):
		return true
	}
	return false
}

// replicated is the handler in front of the API when colocd runs
// replicated: it stamps every answer with the replica and its applied
// index, and forwards to the leader what a follower does not answer
// itself (by reverse proxy: a redirect would lose the bearer token in Go's
// client and in curl).
type replicated struct {
	next    http.Handler
	rep     replica
	id      string
	proxy   func(leader string) *httputil.ReverseProxy
	maxBody int64
	auth    *authn // h's; nil: h is not New's handler
}

// NewReplicated wraps the API's handler h for a replica named id;
// transport carries forwarded requests to the leader.
//
// With Deps.ForwardKey set in h (the replicas' shared key), a follower
// authenticates a request it forwards itself — a Kerberos ticket is for
// its own HTTP/<host> principal and a client certificate ends at its TLS
// connection, so neither can be passed on — and forwards the identity it
// established, signed with the key over the identity, the method and the
// request URI, without the Authorization header; the leader takes it as
// that identity's (and applies doAs, the groups and the roles itself).
// Without the key the request goes as it came, Authorization included:
// enough for bearer tokens only.
func NewReplicated(h http.Handler, rep replica, id string, transport http.RoundTripper, maxBody int64) http.Handler {
	if maxBody <= 0 {
		maxBody = defaultMaxBodyBytes
	}
	var mu sync.Mutex
	proxies := map[string]*httputil.ReverseProxy{}
	mk := func(leader string) *httputil.ReverseProxy {
		mu.Lock()
		defer mu.Unlock()
		if p, ok := proxies[leader]; ok {
			return p
		}
		target, _ := url.Parse(leader)
		p := &httputil.ReverseProxy{
			Rewrite: func(pr *httputil.ProxyRequest) {
				pr.SetURL(target)
				pr.SetXForwarded()
				pr.Out.Host = target.Host
				pr.Out.Header.Set(headerForwarded, id)
			},
			Transport: transport,
			ErrorHandler: func(w http.ResponseWriter, _ *http.Request, err error) {
				e := errorf(http.StatusBadGateway, "", "this replica (%s) does not lead and could not reach the leader at %s: %v; retry (with the same Idempotency-Key)", id, leader, err)
				e.RetryAfter = 1
				writeError(w, e)
			},
		}
		if len(proxies) > 16 { // leaders come and go; keep the map small
			clear(proxies)
		}
		proxies[leader] = p
		return p
	}
	out := &replicated{next: h, rep: rep, id: id, proxy: mk, maxBody: maxBody}
	if o, ok := h.(*observed); ok && len(o.s.auth.fwdKey) > 0 {
		out.auth = o.s.auth
	}
	return out
}

func (h *replicated) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set(headerReplica, h.id)
	leading, leader := h.rep.Leading()
	if leading || local(r) {
		w.Header().Set(headerApplied, strconv.FormatUint(h.rep.Applied(), 10))
		h.next.ServeHTTP(w, r)
		return
	}
	switch {
	case leader == "":
		e := errorf(http.StatusServiceUnavailable, "", "no colocd replica leads now (an election is under way, or ZooKeeper is unreachable); nothing was changed; retry")
		e.RetryAfter = 1
		writeError(w, e)
		return
	case r.Header.Get(headerForwarded) != "":
		e := errorf(http.StatusServiceUnavailable, "", "forwarded by replica %s, but this replica (%s) does not lead either: leadership is moving; retry", r.Header.Get(headerForwarded), h.id)
		e.RetryAfter = 1
		writeError(w, e)
		return
	}
	if h.auth != nil {
		id, ok, he := h.auth.identify(w, r)
		if he != nil {
			writeError(w, he)
			return
		}
		r.Header.Del(headerForwardedIdentity)
		if ok {
			id.At = h.auth.wallNow().Unix()
			r.Header.Del("Authorization")
			r.Header.Set(headerForwardedIdentity, signForward(h.auth.fwdKey, id, r.Method, r.URL.RequestURI()))
		}
	}
	if r.Body != nil {
		r.Body = http.MaxBytesReader(w, r.Body, h.maxBody)
	}
	h.proxy(leader).ServeHTTP(w, r)
}

// unavailable maps an unavailableError to its 503.
func unavailable(err error) *httpError {
	var u unavailableError
	if !errors.As(err, &u) {
		return nil
	}
	e := errorf(http.StatusServiceUnavailable, "", "%v; retry (with the same Idempotency-Key for a submission)", err)
	e.RetryAfter = max(1, int(math.Ceil(u.RetryAfter().Seconds())))
	return e
}

// getHA is GET /v1/ha: this replica's view of the replicated colocd.
func (s *server) getHA(w http.ResponseWriter, _ *http.Request, _ principal) error {
	if s.replica == nil {
		return errorf(http.StatusNotFound, "", "colocd runs alone here (no ha.zookeeper.connect)")
	}
	writeJSON(w, http.StatusOK, s.replica.Status())
	return nil
}

// readyRole answers GET /readyz for a replica: ?role=leader is ready only
// on the leader (for a load balancer that sends writes there); without it,
// the leader is ready as the engine says and a follower as FollowerReady.
func (s *server) readyRole(r *http.Request) (role string, err error) {
	leading, _ := s.replica.Leading()
	want := r.URL.Query().Get("role")
	switch {
	case want != "" && want != "leader":
		return "", errorf(http.StatusBadRequest, "role", "role must be leader, got %q", want)
	case leading:
		return "leader", nil
	case want == "leader":
		return "follower", fmt.Errorf("this replica does not lead")
	}
	return "follower", s.replica.FollowerReady()
}
