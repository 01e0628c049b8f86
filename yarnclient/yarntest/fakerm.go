package yarntest

import (
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// DefaultClusterTimestamp is the fake cluster's start time (ms) and the
// clusterTimestamp part of the ids it allocates, unless clusterTimestamp
// says otherwise.
const DefaultClusterTimestamp int64 = 1700000000000

// Option configures a FakeRM.
type Option func(*options)

type options struct {
	hadoop2            bool
	clusterTS          int64
	now                func() time.Time
	requireUser        bool
	acceptResubmission bool
	autoStart          bool
	maxMemory          int64
	maxVCores          int64
	maxCompleted       int
	population         *Population
	spnegoKeytab       string     // SPNEGO: the service keytab
	proxy              proxyUsers // ProxyUser: who may act for whom
	aclAdmins          []string   // ACLs: yarn.admin.acl
	acls               bool       // ACLs: yarn.acl.enable
	onSubmit           func(yarnclient.SubmissionContext)
}

// Hadoop2 makes the fake answer like a Hadoop 2.7 RM: the 3.x-only fields are
// left out, the attempt-containers endpoint does not exist (Jersey's 404), and
// a standby answers 200 with "This is standby RM. Redirecting to ..." instead
// of a 307.
func Hadoop2() Option { return func(o *options) { o.hadoop2 = true } }

// clusterTimestamp sets the cluster id / start time (ms since the epoch).
func clusterTimestamp(ms int64) Option { return func(o *options) { o.clusterTS = ms } }

// Clock sets the clock used for startedTime, finishedTime and the time
// filters. The default starts at the cluster timestamp and advances one
// second per reading, so runs are deterministic.
func Clock(now func() time.Time) Option { return func(o *options) { o.now = now } }

// RequireUser makes the writable calls (new-application, submit, kill) answer
// 401 AuthorizationException without a user.name, like an RM whose HTTP
// interface has no anonymous access.
func RequireUser() Option { return func(o *options) { o.requireUser = true } }

// AcceptResubmission makes a second submission of a known application id
// succeed (202) and change nothing, which is what a real RM does when the
// submissions are sequential (ClientRMService: "This is an earlier submitted
// application"). By default the fake rejects it with the RM's 400
// "Application with id ... is already present! Cannot add a duplicate!" (the
// real answer when two submissions race), so that a duplicate submit shows
// up as an error in the code under test. SubmitCalls counts both kinds.
func AcceptResubmission() Option { return func(o *options) { o.acceptResubmission = true } }

// AutoStart moves submitted apps to RUNNING at once (StartApp).
func AutoStart() Option { return func(o *options) { o.autoStart = true } }

// OnSubmit calls f with each submission the fake accepts (one that
// created an application: not a duplicate, not a rejected one), after it
// is recorded and before the 202 is written, outside the fake's lock: a
// test can timestamp the moment an application reached the RM, or wait
// for one, without polling Submissions. f must not block for long (the
// submitter waits for its answer).
func OnSubmit(f func(yarnclient.SubmissionContext)) Option {
	return func(o *options) { o.onSubmit = f }
}

// MaxCompletedApps sets yarn.resourcemanager.max-completed-applications:
// once more applications have completed, the RM forgets the oldest
// completed ones (RMAppManager.checkAppNumCompletedLimit); GET then answers
// 404 for them. Default 1000, Hadoop 3's default (Hadoop 2: 10000).
func MaxCompletedApps(n int) Option { return func(o *options) { o.maxCompleted = n } }

// MaxResourceCapability sets new-application's maximum-resource-capability
// (default 8192 MB, 32 vcores, the documented example).
func MaxResourceCapability(memoryMB, vcores int64) Option {
	return func(o *options) { o.maxMemory, o.maxVCores = memoryMB, vcores }
}

// FakeRM is a YARN ResourceManager on httptest (127.0.0.1) that serves the
// documented REST API from an in-memory cluster: nodes, applications, their
// attempts and containers. It accepts new-application, submissions and
// kills, can act as a standby RM, and injects faults per path. All methods
// are safe for concurrent use.
type FakeRM struct {
	t    testing.TB
	srv  *httptest.Server
	opts options
	mux  *http.ServeMux
	gate *SPNEGOGate // SPNEGO: in front of everything

	closeOnce sync.Once
	closing   chan struct{}

	mu          sync.Mutex
	clock       int64 // ms; default clock
	nextSeq     int
	nodes       []*yarnclient.Node
	nodeIndex   map[string]int // node id → index in nodes
	apps        map[string]*fakeApp
	appOrder    []string
	submissions []yarnclient.SubmissionContext
	submitCalls int
	standby     bool
	activeURL   string
	faults      map[string][]*faultState
	requests    map[string]int
	traffic     traffic
	// The root queue's application counters since the RM started
	// (QueueMetrics: appsSubmitted, and on an app's end appsCompleted,
	// appsFailed or appsKilled); a restart resets them.
	submitted, completed, failed, killed int
	// completedOrder lists the ended applications the RM still holds, in
	// the order they ended (RMAppManager's completedApps).
	completedOrder []string
	timeline       *FakeTimeline
	submittedAt    map[string]int64
	tokens         tokenIssuer                            // the RM's delegation tokens
	credentials    map[string]map[string]yarnclient.Token // app → its credentials' tokens by alias
}

type fakeApp struct {
	app        yarnclient.App
	resource   yarnclient.ResourceInfo // per container
	attempts   []yarnclient.AppAttempt
	containers []yarnclient.Container // of the current attempt
	nextCID    int
	killPuts   int
	// requests are the attempt's resource requests beyond the AM's (a
	// populated application's locality requests, all satisfied).
	requests []resourceRequest
}

// NewFakeRM starts a fake RM; it is closed by t.Cleanup.
func NewFakeRM(t testing.TB, opts ...Option) *FakeRM {
	t.Helper()
	o := options{clusterTS: DefaultClusterTimestamp, maxMemory: 8192, maxVCores: 32, maxCompleted: 1000}
	for _, opt := range opts {
		opt(&o)
	}
	f := &FakeRM{
		t:        t,
		opts:     o,
		closing:  make(chan struct{}),
		clock:    o.clusterTS,
		nextSeq:  1,
		apps:     map[string]*fakeApp{},
		faults:   map[string][]*faultState{},
		requests: map[string]int{},

		nodeIndex:   map[string]int{},
		submittedAt: map[string]int64{},
		tokens:      newTokenIssuer("the fake RM"),
		credentials: map[string]map[string]yarnclient.Token{},
	}
	if o.population != nil {
		f.populate(*o.population)
	}
	f.routes()
	f.srv, f.gate = serveGated(t, o.spnegoKeytab, http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// URL is the fake's base URL, e.g. http://127.0.0.1:41234.
func (f *FakeRM) URL() string { return f.srv.URL }

// Close stops the server; blocked requests are released first.
func (f *FakeRM) Close() {
	f.closeOnce.Do(func() {
		close(f.closing)
		f.srv.CloseClientConnections()
		f.srv.Close()
	})
}

func (f *FakeRM) now() time.Time {
	if f.opts.now != nil {
		return f.opts.now()
	}
	f.clock += 1000
	return time.UnixMilli(f.clock)
}

// traffic is what a FakeRM answered: requests, and bytes of response
// bodies (what the RM's HTTP layer writes after the headers; faulted
// answers are counted as requests only).
type traffic struct {
	Requests int
	Bytes    int64
}

// Traffic returns what the fake answered since it started.
func (f *FakeRM) Traffic() traffic {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.traffic
}

// Requests counts the requests received for method and path (the path
// without query), faulted ones included.
func (f *FakeRM) Requests(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[method+" "+path]
}

// ---- HTTP ----

// routes wires every endpoint to its handler, here in one place; the
// handlers live with their endpoint group: fakerm_cluster.go (info,
// metrics, nodes), fakerm_apps.go (the apps list and one app),
// fakerm_submit.go (new-application, submit), fakerm_state.go (state,
// kill), fakerm_containers.go (attempts, containers), fakerm_tokens.go
// (delegation tokens).
func (f *FakeRM) routes() {
	m := http.NewServeMux()
	m.HandleFunc("GET /ws/v1/cluster", f.handleInfo)
	m.HandleFunc("GET /ws/v1/cluster/info", f.handleInfo)
	m.HandleFunc("GET /ws/v1/cluster/metrics", f.handleMetrics)
	m.HandleFunc("GET /ws/v1/cluster/nodes", f.handleNodes)
	m.HandleFunc("GET /ws/v1/cluster/apps", f.handleApps)
	m.HandleFunc("POST /ws/v1/cluster/apps", f.handleSubmit)
	m.HandleFunc("POST /ws/v1/cluster/apps/new-application", f.handleNewApp)
	m.HandleFunc("GET /ws/v1/cluster/apps/{id}", f.handleApp)
	m.HandleFunc("GET /ws/v1/cluster/apps/{id}/state", f.handleGetState)
	m.HandleFunc("PUT /ws/v1/cluster/apps/{id}/state", f.handlePutState)
	m.HandleFunc("GET /ws/v1/cluster/apps/{id}/appattempts", f.handleAttempts)
	m.HandleFunc("GET /ws/v1/cluster/apps/{id}/appattempts/{attempt}/containers", f.handleContainers)
	m.HandleFunc("POST /ws/v1/cluster/delegation-token", f.handleDelegationToken)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { f.noResource(w, r) })
	f.mux = m
}

func (f *FakeRM) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.Method+" "+r.URL.Path]++
	f.traffic.Requests++
	fault := f.takeFault(r)
	f.mu.Unlock()
	if fault != nil && f.applyFault(w, r, fault) {
		return
	}
	cw := &countingWriter{ResponseWriter: w}
	f.answer(cw, r)
	f.mu.Lock()
	f.traffic.Bytes += cw.n
	f.mu.Unlock()
}

// countingWriter counts the body bytes written through it.
type countingWriter struct {
	http.ResponseWriter
	n int64
}

func (c *countingWriter) Write(b []byte) (int, error) {
	n, err := c.ResponseWriter.Write(b)
	c.n += int64(n)
	return n, err
}

// answer serves r normally: as a standby, or from the cluster state,
// after the authentication filter's proxy-user check (doAs).
func (f *FakeRM) answer(w http.ResponseWriter, r *http.Request) {
	r, ok := f.impersonate(w, r)
	if !ok {
		return
	}
	f.mu.Lock()
	standby, active := f.standby, f.activeURL
	f.mu.Unlock()
	if standby && r.URL.Path != "/ws/v1/cluster/info" && r.URL.Path != "/ws/v1/cluster" {
		f.serveStandby(w, r, active)
		return
	}
	f.mux.ServeHTTP(w, r)
}
