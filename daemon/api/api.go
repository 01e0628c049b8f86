package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"net/http"
	"runtime/debug"
	"slices"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// Controller is what the API needs from the admission engine (engine.Engine
// implements it).
type Controller interface {
	// Kick requests an admission pass soon. It never blocks.
	Kick()
	// Prepare fills backend defaults into a submitted job and validates it
	// for the backend (on the simulator: resources from the workload kind).
	// Bad input is reported as a *queue.FieldError. It changes nothing
	// else: the API makes a kind known to the learner only once a job of
	// it is stored.
	Prepare(j *queue.Job) error
	// Kill kills an admitted or running job on the cluster and marks it
	// killed.
	Kill(ctx context.Context, id string) (queue.Job, error)
	// Ready reports whether the daemon can take and admit jobs, from state
	// it already holds (no call to the cluster). Its error may wrap a
	// PublicReasoner, the reason /readyz shows without a token.
	Ready(ctx context.Context) error
	// AddKind makes kind known to the learner; the API calls it once a
	// job of kind is stored.
	AddKind(kind string)
	// ImportPreferences replaces the learned preferences with s and
	// persists them, or leaves them as they were. An invalid snapshot is a
	// *bandit.FieldError wrapping bandit.ErrInvalidSnapshot.
	ImportPreferences(s bandit.Snapshot) error
	// ResetPreferences forgets every learned preference and kind and
	// persists that, or leaves them as they were.
	ResetPreferences() error
}

// preferences is what the API reads of the learned pair preferences
// (bandit.Learner). It writes them only through the Controller.
type preferences interface {
	Snapshot() bandit.Snapshot
	Config() bandit.Config
	Kinds() []string
}

// apiMetrics is what the API records of its requests and serves at
// /metrics (telemetry.Metrics).
type apiMetrics interface {
	APIRequest(route string, code int, d time.Duration)
	Handler() http.Handler
}

// journalReader is what the API reads of the decision and goodness
// journal (journal.Journal).
type journalReader interface {
	// Decisions returns up to limit decisions, newest first.
	Decisions(limit int) []journal.DecisionRecord
	// EachGoodness calls fn on the goodness records with from <= At < to,
	// oldest first.
	EachGoodness(from, to time.Time, fn func(journal.GoodnessRecord))
}

// WriteRecorder is told the outcome of every store write the API makes (a
// submit, a cancel, a preference save), so that readiness sees a failing
// disk (engine.Engine implements it). err is what the store returned: nil
// for a write that succeeded, or an error that may also be the request's
// fault (an illegal transition), which the recorder tells apart.
type WriteRecorder interface {
	StoreWrite(op string, err error)
}

// Deps is everything the API serves from.
type Deps struct {
	Store      *queue.Store  // required
	Learner    preferences   // required
	Journal    journalReader // nil: no decisions or goodness are listed
	Controller Controller    // required
	// Profiles is the learned per-kind resource profiles behind
	// GET /v1/profiles; nil (or a nil *profile.Model): that endpoint is 404.
	Profiles profileSource
	// Queues is the fairness stage's view behind GET /v1/queues; nil: the
	// endpoint reports fairness off.
	Queues QueueSource
	// Cluster is the cluster as the engine last read it, behind GET
	// /v1/nodes and GET /v1/cluster; nil: they report no view
	// ("available": false).
	Cluster ClusterView
	// Limits are the nodes' maxima in bytes/s that GET /v1/profiles
	// converts utilisation units with; a zero field leaves that rate null.
	Limits goodness.Limits
	// Auth is how callers authenticate; "" is AuthTokens.
	Auth AuthMode
	// Tokens are the accepted bearer tokens (at least one with AuthTokens
	// or AuthBoth), for service accounts: each names its user and role.
	Tokens []Token
	// Kerberos is the SPNEGO acceptor, required with AuthKerberos and
	// AuthBoth.
	Kerberos *Kerberos
	// ClientCerts identifies a caller that sends no Authorization by the
	// TLS client certificate the server verified (its subject's common
	// name is the user).
	ClientCerts bool
	// Groups names a user's groups (for the ACLs, the proxy rules and
	// JobGroups); nil: nobody is in any group.
	Groups groupSource
	// ACLs grant roles to the users Kerberos or a certificate
	// authenticated; the zero value grants none (DefaultACLs: read and
	// submit for everyone).
	ACLs ACLs
	// ProxyUsers let a user act for others (?doAs=user), audited.
	ProxyUsers []ProxyRule
	// JobGroups are groups whose members read each other's jobs whole and
	// cancel them, as their owner may.
	JobGroups []string
	// ForwardKey, when set, is the key replicas sign forwarded identities
	// with (NewReplicated): a request carrying one signed with it is taken
	// as that identity's.
	ForwardKey []byte
	// WallNow is the wall clock that token expiry and forwarded identities
	// are checked against; nil: time.Now (Now may be simulated).
	WallNow func() time.Time
	// Metrics backs /metrics and records API requests
	// (telemetry.Metrics); nil: no /metrics.
	Metrics apiMetrics
	// Now is the clock (deadline checks, default goodness window);
	// nil means time.Now.
	Now func() time.Time
	// MaxBodyBytes caps request bodies (413 above); zero means
	// defaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxKinds caps the job kinds the learner knows: a job of a new kind
	// beyond it is 422 (api.max_kinds). Zero means defaultMaxKinds.
	MaxKinds int
	// Writes is told the outcome of the API's store writes; nil: nobody.
	Writes WriteRecorder
	// Logger receives one line per request (levels: see observed); nil
	// discards.
	Logger *slog.Logger
	// Clock describes the daemon's clock for GET /v1/clock and sets the
	// default start of time windows (Started); nil: the wall clock (Now),
	// started when New was called.
	Clock func() v1.Clock
	// PublicMetrics serves /metrics without a token, for scrapers that
	// cannot send one. The default needs a reader token (Prometheus:
	// authorization.credentials_file in the scrape config).
	PublicMetrics bool
	// Degraded, when set, lists the dependencies failing now (the
	// engine's), for /readyz, GET /v1/summary and the page; nil: none.
	Degraded func() []v1.Degraded
	// FIFO, when set, is the simulator demo's comparison with FIFO (nil:
	// none yet), for GET /v1/summary.
	FIFO func() *v1.FIFOComparison
	// Replica, when set, is this replica of a replicated colocd: GET
	// /v1/ha reports it and /readyz answers by its role (NewReplicated
	// forwards to the leader what a follower does not answer). Nil: colocd
	// runs alone.
	Replica replica
}

// Defaults and bounds of request parameters.
const (
	defaultMaxBodyBytes = 1 << 20
	defaultMaxKinds     = 1000
	defaultListLimit    = 100
	maxListLimit        = 10000
	defaultDecisions    = 50
	readyTimeout        = 2 * time.Second
	maxIdempotencyKey   = 128
)

// server holds the API's state; its methods are the handlers.
type server struct {
	store   *queue.Store
	learner preferences
	journal journalReader
	ctl     Controller
	metrics apiMetrics
	auth    *authn
	now     func() time.Time
	clock   func() v1.Clock
	maxBody int64
	kinds   *kindGate
	writes  WriteRecorder // nil: not reported
	log     *slog.Logger
	slow    time.Duration // requests slower than this are logged at WARN (tests lower it)

	// profiles is nil when the daemon runs without a profile model.
	profiles profileSource
	limits   goodness.Limits
	queues   QueueSource // nil: fairness reported off
	cluster  ClusterView // nil: no nodes or applications listed
	replica  replica     // nil: colocd runs alone
	degraded func() []v1.Degraded
	fifo     func() *v1.FIFOComparison
	// publicMetrics is Deps.PublicMetrics (WithIdentity builds the mux again).
	publicMetrics bool

	// routes are the methods served on each path (as the OpenAPI
	// description names it), for the test that checks they match.
	routes map[string][]string

	// beforeCancel, when set (tests only), runs between reading a pending
	// job and cancelling it: the window in which the engine may admit it.
	beforeCancel func(id string)
}

// handlerFunc is an endpoint: it returns an error instead of writing one;
// an *httpError is sent as is, anything else as a logged 500.
type handlerFunc func(w http.ResponseWriter, r *http.Request, p principal) error

// endpoint is one method of one route.
type endpoint struct {
	role   Role // least role allowed; 0 = no authentication
	handle handlerFunc
}

// New returns the API's handler: /v1/..., /healthz, /readyz, /metrics and
// the status page at /. It does no I/O.
func New(d Deps) (http.Handler, error) {
	switch {
	case d.Store == nil:
		return nil, fmt.Errorf("%w: Deps.Store is nil", errConfig)
	case d.Learner == nil:
		return nil, fmt.Errorf("%w: Deps.Learner is nil", errConfig)
	case d.Controller == nil:
		return nil, fmt.Errorf("%w: Deps.Controller is nil", errConfig)
	case d.MaxBodyBytes < 0:
		return nil, fmt.Errorf("%w: Deps.MaxBodyBytes is %d, want >= 0", errConfig, d.MaxBodyBytes)
	case d.MaxKinds < 0:
		return nil, fmt.Errorf("%w: Deps.MaxKinds is %d, want >= 0", errConfig, d.MaxKinds)
	}
	if d.MaxKinds == 0 {
		d.MaxKinds = defaultMaxKinds
	}
	for _, l := range []struct {
		name string
		v    float64
	}{{"DiskRead", d.Limits.DiskRead}, {"DiskWrite", d.Limits.DiskWrite}, {"NetRecv", d.Limits.NetRecv}, {"NetSent", d.Limits.NetSent}} {
		if !(l.v >= 0) || math.IsInf(l.v, 0) {
			return nil, fmt.Errorf("%w: Deps.Limits.%s is %v, want a finite number >= 0", errConfig, l.name, l.v)
		}
	}
	if m, ok := d.Profiles.(*profile.Model); ok && m == nil {
		d.Profiles = nil // a nil model in a non-nil interface
	}
	auth, err := newAuthn(d)
	if err != nil {
		return nil, err
	}
	s := &server{
		store: d.Store, learner: d.Learner, journal: d.Journal, ctl: d.Controller,
		metrics: d.Metrics, auth: auth, now: d.Now, maxBody: d.MaxBodyBytes, log: d.Logger,
		profiles: d.Profiles, limits: d.Limits, writes: d.Writes, queues: d.Queues, cluster: d.Cluster,
		kinds: newKindGate(d.Learner, d.Controller, d.MaxKinds), replica: d.Replica, degraded: d.Degraded, fifo: d.FIFO, publicMetrics: d.PublicMetrics,
	}
	if s.now == nil {
		s.now = time.Now
	}
	s.clock = d.Clock
	if s.clock == nil {
		started := s.now()
		s.clock = func() v1.Clock {
			now := s.now()
			return v1.Clock{Now: now, WallNow: now, Speed: 1, Started: started, WallStarted: started}
		}
	}
	if s.maxBody == 0 {
		s.maxBody = defaultMaxBodyBytes
	}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	s.slow = slowRequest

	return &observed{s: s, mux: s.mux(d.Metrics, d.PublicMetrics)}, nil
}

// routes is the API's mux: every endpoint with the role it needs, the
// status page's static files, and a JSON 404 for anything else.
func (s *server) mux(metrics apiMetrics, publicMetrics bool) *http.ServeMux {
	mux := http.NewServeMux()
	s.routes = map[string][]string{}
	route := func(pattern string, methods map[string]endpoint) {
		mux.Handle(pattern, s.dispatch(methods))
		for m := range methods {
			s.routes[specPath(pattern)] = append(s.routes[specPath(pattern)], m)
		}
	}
	route("/v1/jobs", map[string]endpoint{
		http.MethodGet:  {RoleReader, s.listJobs},
		http.MethodPost: {RoleSubmitter, s.submitJob},
	})
	route("/v1/jobs/{id}", map[string]endpoint{
		http.MethodGet:    {RoleReader, s.getJob},
		http.MethodDelete: {RoleSubmitter, s.deleteJob},
	})
	route("/v1/jobs/{id}/resolve", map[string]endpoint{http.MethodPost: {RoleAdmin, s.resolveJob}})
	route("/v1/preferences", map[string]endpoint{
		http.MethodGet:    {RoleReader, s.getPreferences},
		http.MethodPut:    {RoleAdmin, s.putPreferences},
		http.MethodDelete: {RoleAdmin, s.resetPreferences},
	})
	route("/v1/preferences/heatmap.svg", map[string]endpoint{http.MethodGet: {RoleReader, s.heatmapSVG}})
	route("/v1/profiles", map[string]endpoint{http.MethodGet: {RoleReader, s.getProfiles}})
	route("/v1/decisions", map[string]endpoint{http.MethodGet: {RoleReader, s.listDecisions}})
	route("/v1/queues", map[string]endpoint{http.MethodGet: {RoleReader, s.getQueues}})
	route("/v1/goodness", map[string]endpoint{http.MethodGet: {RoleReader, s.listGoodness}})
	route("/v1/clock", map[string]endpoint{http.MethodGet: {RoleReader, s.getClock}})
	route("/v1/nodes", map[string]endpoint{http.MethodGet: {RoleReader, s.getNodes}})
	route("/v1/cluster", map[string]endpoint{http.MethodGet: {RoleReader, s.getCluster}})
	route("/v1/goodness/trend", map[string]endpoint{http.MethodGet: {RoleReader, s.getGoodnessTrend}})
	route("/v1/summary", map[string]endpoint{http.MethodGet: {RoleReader, s.getSummary}})
	route("/v1/ha", map[string]endpoint{http.MethodGet: {RoleReader, s.getHA}})
	route("/v1/whoami", map[string]endpoint{http.MethodGet: {RoleReader, whoami}})
	route("/v1/openapi.json", map[string]endpoint{http.MethodGet: {0, serveOpenAPI}})
	route("/healthz", map[string]endpoint{http.MethodGet: {0, s.healthz}})
	route("/readyz", map[string]endpoint{http.MethodGet: {0, s.readyz}})
	if metrics != nil {
		role := RoleReader
		if publicMetrics {
			role = 0
		}
		h := metrics.Handler()
		route("/metrics", map[string]endpoint{http.MethodGet: {role, func(w http.ResponseWriter, r *http.Request, _ principal) error {
			h.ServeHTTP(w, r)
			return nil
		}}})
	}
	// The status page: static files, no data, so no authentication.
	route("/{$}", map[string]endpoint{http.MethodGet: {0, serveStatic("index.html")}})
	route("/static/{file}", map[string]endpoint{http.MethodGet: {0, serveStaticFile}})
	// Browsers ask for it on every load of the status page: nothing, not a 404.
	route("/favicon.ico", map[string]endpoint{http.MethodGet: {0, favicon}})
	// Everything else: a JSON 404.
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, errorf(http.StatusNotFound, "", "no such endpoint: %s %s", r.Method, r.URL.Path))
	})
	return mux
}

// caller authenticates r and settles who it acts as, recording the user
// for the request's log line; a proxied request is audited at INFO.
func (s *server) caller(w http.ResponseWriter, r *http.Request) (principal, *httpError) {
	id, he := s.auth.authenticate(w, r)
	if he != nil {
		return principal{}, he
	}
	info, _ := r.Context().Value(reqInfoKey{}).(*reqInfo)
	if info != nil {
		info.user = id.User
		info.via = id.Method
	}
	p, he := s.auth.principalOf(id, doAsParam(r))
	if p.RealUser != "" || (he != nil && he.Code == v1.CodeProxyRefused) {
		s.log.Info("proxy user", "real_user", id.User, "principal", id.Principal, "via", id.Method, "do_as", doAsParam(r),
			"allowed", he == nil, "rule", cmpOr(p.ProxyRule, "none"), "method", r.Method, "path", r.URL.Path, "remote", id.Addr)
	}
	if he != nil {
		return principal{}, he
	}
	if info != nil {
		info.user, info.realUser = p.User, p.RealUser
	}
	return p, nil
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// reqInfo carries what a handler learned (the caller, the error it
// returned) back to the logging middleware.
type reqInfo struct {
	user     string
	realUser string // the proxy, when a rule let it act as user
	via      string // how the caller authenticated
	err      error  // a failure of the handler (not a refusal it chose); logged with the request
}

type reqInfoKey struct{}

// dispatch picks the endpoint for the method (405 with Allow if none),
// authenticates (401) and authorises (403) the caller, then runs it.
func (s *server) dispatch(methods map[string]endpoint) http.Handler {
	allow := make([]string, 0, len(methods)+1)
	for m := range methods {
		allow = append(allow, m)
	}
	if _, ok := methods[http.MethodGet]; ok {
		allow = append(allow, http.MethodHead)
	}
	slices.Sort(allow)
	allowHeader := strings.Join(allow, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		method := r.Method
		if method == http.MethodHead {
			method = http.MethodGet
		}
		ep, ok := methods[method]
		if !ok {
			w.Header().Set("Allow", allowHeader)
			writeError(w, errorf(http.StatusMethodNotAllowed, "", "method %s not allowed on %s (allowed: %s)", r.Method, r.URL.Path, allowHeader))
			return
		}
		if he := checkParams(r); he != nil {
			writeError(w, he)
			return
		}
		var p principal
		if ep.role != 0 {
			var he *httpError
			if p, he = s.caller(w, r); he != nil {
				writeError(w, he)
				return
			}
			if p.Role < ep.role {
				if p.RoleRule == "tokens" {
					writeError(w, forbidden("tokens", "role %s may not %s %s: it needs %s (the token of user %s has role %s)",
						p.Role, r.Method, r.URL.Path, ep.role, p.User, p.Role))
					return
				}
				rule := "api.acl." + ep.role.String()
				writeError(w, forbidden(rule, "role %s may not %s %s: it needs %s, which %s does not grant user %s (groups %s)",
					p.Role, r.Method, r.URL.Path, ep.role, rule, p.User, listOrNone(p.Groups)))
				return
			}
		}
		if err := ep.handle(w, r, p); err != nil {
			var he *httpError
			if !errors.As(err, &he) {
				// A failure, not a refusal: the request's line carries it
				// at WARN, whatever the code (a quarantined record's 410).
				if info, _ := r.Context().Value(reqInfoKey{}).(*reqInfo); info != nil {
					info.err = err
				}
				if he = knownFailure(err); he == nil {
					he = errorf(http.StatusInternalServerError, "", "internal error: %v", err)
				}
			}
			writeError(w, he)
		}
	})
}

// statusWriter records the status code and size of a response. A response
// to an HTTP/1 request whose body the handler did not read to its end (a
// rejected request, or a body the endpoint does not take) says
// "Connection: close": the rest of that body is never read.
type statusWriter struct {
	http.ResponseWriter
	code  int
	bytes int64
	body  *bodyReader // the request body; nil when there is none to watch
	// unread: the response closes the connection on an unread body.
	unread bool
}

func (w *statusWriter) WriteHeader(code int) {
	if w.code == 0 {
		w.code = code
		if w.body != nil && !w.body.eof {
			w.Header().Set("Connection", "close")
			w.unread = true
		}
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if w.code == 0 {
		w.WriteHeader(http.StatusOK)
	}
	n, err := w.ResponseWriter.Write(b)
	w.bytes += int64(n)
	return n, err
}

func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// bodyReader notes whether the handler read the request body to its end.
// Only the handler's goroutine uses it.
type bodyReader struct {
	io.ReadCloser
	eof bool
}

func (b *bodyReader) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF {
		b.eof = true
	}
	return n, err
}

// expired is a read deadline in the past: reads fail at once.
var expired = time.Unix(1, 0)

// observed is New's handler: it logs every request, counts it by route
// pattern and code, and turns a panic into a JSON 500.
type observed struct {
	s   *server
	mux *http.ServeMux
}

// slowRequest is the latency above which a request is logged at WARN.
// Every endpoint answers from memory or the local store in milliseconds
// (the heaviest, a 1,000-kind heatmap, in tens); a second means the store
// or the host is struggling.
const slowRequest = time.Second

// requestLevel is the level of a request's log line. A status page open
// in a browser makes a few requests every refresh, so a request that went
// well is DEBUG, and so is a client's mistake (4xx). WARN: a server error
// (5xx), a handler's failure, a slow answer. INFO: authentication and
// authorisation failures (401, 403), which are not the daemon's trouble
// (so not WARN, which journalctl -p warning keeps for it) but which an
// operator wants to see by default: a token that expired or leaked, a
// misconfigured scraper.
func requestLevel(code int, failed bool, d, slow time.Duration) slog.Level {
	switch {
	case code >= 500, failed, d > slow:
		return slog.LevelWarn
	case code == http.StatusUnauthorized, code == http.StatusForbidden:
		return slog.LevelInfo
	}
	return slog.LevelDebug
}

func (o *observed) ServeHTTP(rw http.ResponseWriter, r *http.Request) {
	s := o.s
	start := time.Now() // latency measurement only, not logic
	info := &reqInfo{}
	r = r.WithContext(context.WithValue(r.Context(), reqInfoKey{}, info))
	w := &statusWriter{ResponseWriter: rw}
	if r.ProtoMajor == 1 && r.Body != nil && r.Body != http.NoBody {
		w.body = &bodyReader{ReadCloser: r.Body}
		r.Body = w.body
	}
	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.Error("handler panic", "method", r.Method, "path", r.URL.Path, "panic", v, "stack", string(debug.Stack()))
			if w.code == 0 {
				writeError(w, errorf(http.StatusInternalServerError, "", "internal error"))
			}
		}
		if w.code == 0 {
			w.WriteHeader(http.StatusOK) // what net/http would send, with our Connection header
		}
		if w.unread {
			// "Connection: close" spares the unread body only until the
			// handler returns: net/http then still reads up to 256 KiB of
			// it, bounded only by api.read_timeout (a 1-byte body announced
			// as 200 kB holds the connection that long). With the read
			// deadline expired, that read fails at once and the connection
			// closes right after the response.
			_ = http.NewResponseController(rw).SetReadDeadline(expired)
		}
		code := w.code
		if code == 0 {
			code = http.StatusOK
		}
		route := routeLabel(r.Pattern)
		d := time.Since(start)
		if s.metrics != nil {
			s.metrics.APIRequest(route, code, d)
		}
		level := requestLevel(code, info.err != nil, d, s.slow)
		if !s.log.Enabled(r.Context(), level) {
			return
		}
		attrs := []any{"method", r.Method, "route", route, "path", r.URL.Path,
			"code", code, "bytes", w.bytes, "took", d, "user", info.user, "remote", r.RemoteAddr}
		if info.via != "" {
			attrs = append(attrs, "via", info.via)
		}
		if info.realUser != "" {
			attrs = append(attrs, "real_user", info.realUser)
		}
		if info.err != nil {
			attrs = append(attrs, "err", info.err)
		}
		s.log.Log(r.Context(), level, "http request", attrs...)
	}()
	o.mux.ServeHTTP(w, r)
}

// routeLabel is the route label of a request the mux matched to pattern:
// the pattern (bounded, unlike the path) without Go's "{$}" end-of-path
// marker, so the status page is "/"; "other" for the catch-all 404 and
// for requests the mux answered itself (pattern "").
func routeLabel(pattern string) string {
	if pattern == "" || pattern == "/" {
		return "other"
	}
	return strings.TrimSuffix(pattern, "{$}")
}

// favicon answers a browser's icon request with nothing, cached for a day.
func favicon(w http.ResponseWriter, _ *http.Request, _ principal) error {
	w.Header().Set("Cache-Control", "public, max-age=86400")
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// healthz is liveness: the process serves HTTP.
func (s *server) healthz(w http.ResponseWriter, _ *http.Request, _ principal) error {
	w.Header().Set("Cache-Control", "no-store")
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok"})
	return nil
}

// readyz is readiness: what the controller says, within readyTimeout. The
// endpoint needs no token, so the reason it gives is one of the public
// ones (PublicReasoner); a caller with a valid token also gets the details.
func (s *server) readyz(w http.ResponseWriter, r *http.Request, _ principal) error {
	ctx, cancel := context.WithTimeout(r.Context(), readyTimeout)
	defer cancel()
	w.Header().Set("Cache-Control", "no-store")
	role, err := "", error(nil)
	if s.replica != nil {
		if role, err = s.readyRole(r); err != nil {
			var he *httpError
			if errors.As(err, &he) {
				return he
			}
			return errorf(http.StatusServiceUnavailable, "", "not ready: %s: %v", role, err)
		}
	}
	if role == "" || role == "leader" {
		err = s.ctl.Ready(ctx)
	}
	if err != nil {
		if _, ok, _ := s.auth.identify(nil, r); ok {
			return errorf(http.StatusServiceUnavailable, "", "not ready: %v", err)
		}
		if reason := publicReason(err); reason != "" {
			return errorf(http.StatusServiceUnavailable, "", "not ready: %s (send a token for details)", reason)
		}
		return errorf(http.StatusServiceUnavailable, "", "not ready (send a token for details)")
	}
	out := readyBody{Status: "ready", Role: role, Degraded: s.degradedNow()}
	if _, ok, _ := s.auth.identify(nil, r); !ok {
		for i := range out.Degraded {
			out.Degraded[i].Error = "" // the error's details only with a token
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// readyBody is /readyz's answer when ready: what is degraded, if anything
// (colocd serves on through a metrics store or KDC that is down).
type readyBody struct {
	Status   string        `json:"status"`
	Role     string        `json:"role,omitempty"`
	Degraded []v1.Degraded `json:"degraded,omitempty"`
}

// degradedNow is Deps.Degraded's answer, never nil.
func (s *server) degradedNow() []v1.Degraded {
	if s.degraded == nil {
		return []v1.Degraded{}
	}
	if d := s.degraded(); d != nil {
		return d
	}
	return []v1.Degraded{}
}
