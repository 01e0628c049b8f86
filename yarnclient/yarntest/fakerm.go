package yarntest

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// DefaultClusterTimestamp is the fake cluster's start time (ms) and the
// clusterTimestamp part of the ids it allocates, unless ClusterTimestamp
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
}

// Hadoop2 makes the fake answer like a Hadoop 2.7 RM: the 3.x-only fields are
// left out, the attempt-containers endpoint does not exist (Jersey's 404), and
// a standby answers 200 with "This is standby RM. Redirecting to ..." instead
// of a 307.
func Hadoop2() Option { return func(o *options) { o.hadoop2 = true } }

// ClusterTimestamp sets the cluster id / start time (ms since the epoch).
func ClusterTimestamp(ms int64) Option { return func(o *options) { o.clusterTS = ms } }

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

	closeOnce sync.Once
	closing   chan struct{}

	mu          sync.Mutex
	clock       int64 // ms; default clock
	nextSeq     int
	nodes       []*yarnclient.Node
	apps        map[string]*fakeApp
	appOrder    []string
	submissions []yarnclient.SubmissionContext
	submitCalls int
	standby     bool
	activeURL   string
	faults      map[string][]*faultState
	requests    map[string]int
	// The root queue's application counters since the RM started
	// (QueueMetrics: appsSubmitted, and on an app's end appsCompleted,
	// appsFailed or appsKilled); a restart resets them.
	submitted, completed, failed, killed int
	// completedOrder lists the ended applications the RM still holds, in
	// the order they ended (RMAppManager's completedApps).
	completedOrder []string
	timeline       *FakeTimeline
	submittedAt    map[string]int64
}

type fakeApp struct {
	app        yarnclient.App
	resource   yarnclient.ResourceInfo // per container
	attempts   []yarnclient.AppAttempt
	containers []yarnclient.Container // of the current attempt
	nextCID    int
	killPuts   int
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

		submittedAt: map[string]int64{},
	}
	f.routes()
	f.srv = httptest.NewServer(http.HandlerFunc(f.serve))
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

// AddNode adds (or replaces, by ID) a node. Empty fields get defaults: state
// RUNNING, rack /default-rack, nodeHostName from the id, nodeHTTPAddress
// <host>:8042, 8192 MB and 8 vcores available. Containers the fake places on
// the node move memory and vcores from available to used.
func (f *FakeRM) AddNode(n yarnclient.Node) {
	if n.ID == "" {
		f.t.Fatalf("yarntest: AddNode: empty ID")
	}
	host, _, err := net.SplitHostPort(n.ID)
	if err != nil {
		host = n.ID
	}
	if n.State == "" {
		n.State = "RUNNING"
	}
	if n.Rack == "" {
		n.Rack = "/default-rack"
	}
	if n.NodeHostName == "" {
		n.NodeHostName = host
	}
	if n.NodeHTTPAddress == "" {
		n.NodeHTTPAddress = host + ":8042"
	}
	if n.AvailMemoryMB == 0 && n.UsedMemoryMB == 0 {
		n.AvailMemoryMB = 8192
	}
	if n.AvailableVirtualCores == 0 && n.UsedVirtualCores == 0 {
		n.AvailableVirtualCores = 8
	}
	if n.HealthReport == "" && f.opts.hadoop2 {
		n.HealthStatus, n.HealthReport = "Healthy", "Healthy"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.LastHealthUpdate == 0 {
		n.LastHealthUpdate = f.now().UnixMilli()
	}
	for i, old := range f.nodes {
		if old.ID == n.ID {
			f.nodes[i] = &n
			return
		}
	}
	f.nodes = append(f.nodes, &n)
}

// SetNodeState changes a node's state (e.g. LOST, UNHEALTHY).
func (f *FakeRM) SetNodeState(nodeID, state string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.node(nodeID)
	if n == nil {
		return fmt.Errorf("yarntest: no node %q", nodeID)
	}
	n.State = state
	return nil
}

// Nodes returns copies of the nodes.
func (f *FakeRM) Nodes() []yarnclient.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.Node, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = *n
	}
	return out
}

func (f *FakeRM) node(id string) *yarnclient.Node {
	for _, n := range f.nodes {
		if n.ID == id {
			return n
		}
	}
	return nil
}

// AddApp seeds an application that was not submitted through the API (an
// app of another tenant, or one from before a restart). ID is allocated when
// empty; empty State is RUNNING. Tags are lower-cased like YARN does.
func (f *FakeRM) AddApp(a yarnclient.App) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.ID == "" {
		a.ID = f.allocID()
	}
	if a.State == "" {
		a.State = "RUNNING"
	}
	if a.FinalStatus == "" {
		a.FinalStatus = "UNDEFINED"
	}
	if a.ClusterID == 0 {
		a.ClusterID = f.opts.clusterTS
	}
	if a.StartedTime == 0 {
		a.StartedTime = f.now().UnixMilli()
	}
	a.ApplicationTags = normTags(splitComma(a.ApplicationTags))
	if _, ok := f.apps[a.ID]; !ok {
		f.appOrder = append(f.appOrder, a.ID)
		f.submitted++
		if yarnclient.TerminalState(a.State) {
			f.countEndLocked(a.State)
			f.completedOrder = append(f.completedOrder, a.ID)
		}
	}
	f.apps[a.ID] = &fakeApp{app: a, resource: yarnclient.ResourceInfo{Memory: 1024, VCores: 1}}
	f.publishLocked(f.apps[a.ID])
	f.evictLocked()
	return a.ID
}

// PublishTo makes the RM send its applications to a Timeline Server, as
// yarn.system-metrics-publisher.enabled does: at submission, start and end.
func (f *FakeRM) PublishTo(tl *FakeTimeline) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timeline = tl
}

// Restart restarts the RM process: a new cluster timestamp (ms), so new
// application ids differ from the old ones, the application counter and the
// queue metrics start again, and reserved but unsubmitted ids are gone.
// With recover (yarn.resourcemanager.recovery.enabled, work-preserving) the
// applications are recovered as they were; without, the RM forgets every
// application and their containers are released (the NodeManagers kill
// them when they resync).
func (f *FakeRM) Restart(clusterTimestamp int64, recover bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.clusterTS = clusterTimestamp
	f.nextSeq = 1
	f.submitted, f.completed, f.failed, f.killed = 0, 0, 0, 0
	if recover {
		return
	}
	for _, a := range f.apps {
		f.releaseLocked(a)
	}
	f.apps = map[string]*fakeApp{}
	f.appOrder, f.completedOrder = nil, nil
}

func (f *FakeRM) countEndLocked(state string) {
	switch state {
	case "FAILED":
		f.failed++
	case "KILLED":
		f.killed++
	default:
		f.completed++
	}
}

// evictLocked forgets the oldest completed applications beyond the limit.
func (f *FakeRM) evictLocked() {
	for len(f.completedOrder) > f.opts.maxCompleted {
		id := f.completedOrder[0]
		f.completedOrder = f.completedOrder[1:]
		delete(f.apps, id)
		for i, x := range f.appOrder {
			if x == id {
				f.appOrder = append(f.appOrder[:i], f.appOrder[i+1:]...)
				break
			}
		}
	}
}

func (f *FakeRM) publishLocked(a *fakeApp) {
	if f.timeline == nil {
		return
	}
	sub := f.submittedAt[a.app.ID]
	if sub == 0 {
		sub = a.app.StartedTime
	}
	f.timeline.publish(f.appView(a), sub)
}

// App returns the app as the RM would serve it.
func (f *FakeRM) App(id string) (yarnclient.App, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[id]
	if !ok {
		return yarnclient.App{}, false
	}
	return f.appView(a), true
}

// Apps returns every app, in submission order.
func (f *FakeRM) Apps() []yarnclient.App {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.App, 0, len(f.appOrder))
	for _, id := range f.appOrder {
		out = append(out, f.appView(f.apps[id]))
	}
	return out
}

// Submissions returns the accepted submissions that created an app, in
// order (a duplicate submission is not among them; see SubmitCalls).
func (f *FakeRM) Submissions() []yarnclient.SubmissionContext {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.SubmissionContext, len(f.submissions))
	for i, s := range f.submissions {
		out[i] = s.Clone()
	}
	return out
}

// SubmitCalls counts every POST /ws/v1/cluster/apps that reached the
// submission handler, accepted, duplicate or rejected.
func (f *FakeRM) SubmitCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.submitCalls
}

// Requests counts the requests received for method and path (the path
// without query), faulted ones included.
func (f *FakeRM) Requests(method, path string) int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests[method+" "+path]
}

// StartApp moves an ACCEPTED app to RUNNING: attempt 1 starts and its AM
// container is placed on the first RUNNING node with room (on none when no
// node has room; the app still runs).
func (f *FakeRM) StartApp(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.startLocked(id)
}

func (f *FakeRM) startLocked(id string) error {
	a, ok := f.apps[id]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", id)
	}
	switch a.app.State {
	case "NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED":
	default:
		return fmt.Errorf("yarntest: app %s is %s, not ACCEPTED", id, a.app.State)
	}
	now := f.now().UnixMilli()
	a.app.State = "RUNNING"
	a.app.LaunchTime = now
	a.app.TrackingUI = "ApplicationMaster"
	attempt := yarnclient.AppAttempt{ID: len(a.attempts) + 1, StartTime: now, AppAttemptState: "RUNNING"}
	for _, n := range f.nodes {
		if n.State == "RUNNING" && n.AvailMemoryMB >= a.resource.Memory && n.AvailableVirtualCores >= a.resource.VCores {
			c := f.placeLocked(a, n, 0, now)
			attempt.NodeID = n.ID
			attempt.NodeHTTPAddress = n.NodeHTTPAddress
			attempt.ContainerID = c.ContainerID
			attempt.LogsLink = "http://" + n.NodeHTTPAddress + "/node/containerlogs/" + c.ContainerID + "/" + a.app.User
			a.app.AMHostHTTPAddress = n.NodeHTTPAddress
			a.app.AMContainerLogs = attempt.LogsLink
			break
		}
	}
	a.attempts = append(a.attempts, attempt)
	f.publishLocked(a)
	return nil
}

// PlaceContainers adds one running container of the app's container size on
// each listed node (repeat an id for several). The app must be RUNNING.
func (f *FakeRM) PlaceContainers(appID string, nodeIDs ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[appID]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", appID)
	}
	if a.app.State != "RUNNING" || len(a.attempts) == 0 {
		return fmt.Errorf("yarntest: app %s is %s; start it first", appID, a.app.State)
	}
	now := f.now().UnixMilli()
	for _, id := range nodeIDs {
		n := f.node(id)
		if n == nil {
			return fmt.Errorf("yarntest: no node %q", id)
		}
		f.placeLocked(a, n, 20, now)
	}
	return nil
}

func (f *FakeRM) placeLocked(a *fakeApp, n *yarnclient.Node, priority int, now int64) yarnclient.Container {
	a.nextCID++
	ts, seq := splitAppID(a.app.ID)
	cid := fmt.Sprintf("container_%d_%04d_%02d_%06d", ts, seq, len(a.attempts)+boolInt(priority != 0), a.nextCID)
	c := yarnclient.Container{
		ContainerID: cid, AllocatedMB: a.resource.Memory, AllocatedVCores: a.resource.VCores,
		AssignedNodeID: n.ID, Priority: priority, StartedTime: now,
		LogURL:          "http://" + n.NodeHTTPAddress + "/node/containerlogs/" + cid + "/" + a.app.User,
		ContainerState:  "RUNNING",
		NodeHTTPAddress: "http://" + n.NodeHTTPAddress, NodeID: n.ID,
		AllocatedResources: []yarnclient.ResourceEntry{{Key: "memory-mb", Value: a.resource.Memory}, {Key: "vcores", Value: a.resource.VCores}},
	}
	a.containers = append(a.containers, c)
	n.NumContainers++
	n.UsedMemoryMB += a.resource.Memory
	n.AvailMemoryMB -= a.resource.Memory
	n.UsedVirtualCores += a.resource.VCores
	n.AvailableVirtualCores -= a.resource.VCores
	return c
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *FakeRM) releaseLocked(a *fakeApp) {
	for _, c := range a.containers {
		if n := f.node(c.NodeID); n != nil {
			n.NumContainers--
			n.UsedMemoryMB -= c.AllocatedMB
			n.AvailMemoryMB += c.AllocatedMB
			n.UsedVirtualCores -= c.AllocatedVCores
			n.AvailableVirtualCores += c.AllocatedVCores
		}
	}
	a.containers = nil
	for i := range a.attempts {
		if a.attempts[i].AppAttemptState == "RUNNING" {
			a.attempts[i].AppAttemptState = "FINISHED"
		}
	}
}

// FinishApp ends an app with finalStatus: SUCCEEDED leaves it FINISHED,
// FAILED makes it FAILED and KILLED makes it KILLED. Its containers are
// released.
func (f *FakeRM) FinishApp(id, finalStatus string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[id]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", id)
	}
	if yarnclient.TerminalState(a.app.State) {
		return fmt.Errorf("yarntest: app %s already %s", id, a.app.State)
	}
	state := map[string]string{"SUCCEEDED": "FINISHED", "FAILED": "FAILED", "KILLED": "KILLED"}[strings.ToUpper(finalStatus)]
	if state == "" {
		return fmt.Errorf("yarntest: final status %q is not SUCCEEDED, FAILED or KILLED", finalStatus)
	}
	f.endLocked(a, state, strings.ToUpper(finalStatus))
	return nil
}

func (f *FakeRM) endLocked(a *fakeApp, state, final string) {
	now := f.now().UnixMilli()
	a.app.State, a.app.FinalStatus = state, final
	a.app.FinishedTime = now
	a.app.Progress = 100
	a.app.TrackingUI = "History"
	f.releaseLocked(a)
	f.countEndLocked(state)
	f.completedOrder = append(f.completedOrder, a.app.ID)
	f.publishLocked(a)
	f.evictLocked()
}

// NodeContainers returns what the NodeManager of nodeID would list at
// /ws/v1/node/containers: the running containers placed there. Feed it to a
// FakeNM for the Hadoop 2 placement fallback.
func (f *FakeRM) NodeContainers(nodeID string) []yarnclient.NMContainer {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []yarnclient.NMContainer
	for _, id := range f.appOrder {
		a := f.apps[id]
		for _, c := range a.containers {
			if c.NodeID != nodeID {
				continue
			}
			out = append(out, yarnclient.NMContainer{
				ID: c.ContainerID, State: "RUNNING", ExitCode: -1000, User: a.app.User,
				TotalMemoryNeededMB: c.AllocatedMB, TotalVCoresNeeded: c.AllocatedVCores,
				ContainerLogsLink: c.LogURL, NodeID: c.NodeID,
			})
		}
	}
	return out
}

// SetStandby makes the fake act as a standby RM: every call except
// /ws/v1/cluster/info (which reports haState STANDBY) is answered with a
// redirect to the active URL (SetActiveURL), as RMWebAppFilter does.
func (f *FakeRM) SetStandby(standby bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.standby = standby
}

// SetActiveURL sets where a standby fake redirects; "" means no active RM is
// known.
func (f *FakeRM) SetActiveURL(u string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.activeURL = strings.TrimRight(u, "/")
}

func (f *FakeRM) allocID() string {
	id := yarnclient.FormatAppID(f.opts.clusterTS, f.nextSeq)
	f.nextSeq++
	return id
}

func splitAppID(id string) (int64, int) {
	rest := strings.TrimPrefix(id, "application_")
	a, b, _ := strings.Cut(rest, "_")
	ts, _ := strconv.ParseInt(a, 10, 64)
	seq, _ := strconv.Atoi(b)
	return ts, seq
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// normTags lower-cases, de-duplicates and sorts tags, joined with commas.
func normTags(tags []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// appView is the app as served: running totals filled in.
func (f *FakeRM) appView(a *fakeApp) yarnclient.App {
	app := a.app
	app.RunningContainers = len(a.containers)
	app.AllocatedMB, app.AllocatedVCores = 0, 0
	for _, c := range a.containers {
		app.AllocatedMB += c.AllocatedMB
		app.AllocatedVCores += c.AllocatedVCores
	}
	if yarnclient.TerminalState(app.State) {
		app.ElapsedTime = app.FinishedTime - app.StartedTime
	} else if app.StartedTime > 0 {
		now := f.clock
		if f.opts.now != nil {
			now = f.opts.now().UnixMilli()
		}
		app.ElapsedTime = now - app.StartedTime
		if app.ElapsedTime < 0 {
			app.ElapsedTime = 0
		}
	}
	return app
}

// ---- HTTP ----

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
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { f.noResource(w, r) })
	f.mux = m
}

func (f *FakeRM) serve(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.requests[r.Method+" "+r.URL.Path]++
	fault := f.takeFault(r)
	f.mu.Unlock()
	if fault != nil && f.applyFault(w, r, fault) {
		return
	}
	f.answer(w, r)
}

// answer serves r normally: as a standby, or from the cluster state.
func (f *FakeRM) answer(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	standby, active := f.standby, f.activeURL
	f.mu.Unlock()
	if standby && r.URL.Path != "/ws/v1/cluster/info" && r.URL.Path != "/ws/v1/cluster" {
		f.serveStandby(w, r, active)
		return
	}
	f.mux.ServeHTTP(w, r)
}

// serveStandby answers like RMWebAppFilter on a standby RM.
func (f *FakeRM) serveStandby(w http.ResponseWriter, r *http.Request, active string) {
	w.Header().Set("Content-Type", "text/plain; charset=UTF-8")
	uri := r.URL.RequestURI()
	if f.opts.hadoop2 {
		if active == "" {
			fmt.Fprintln(w, "There is no active RM right now.")
			return
		}
		target := active + r.URL.Path
		w.Header().Set("Refresh", "3; url="+target)
		fmt.Fprintln(w, "This is standby RM. Redirecting to the current active RM: "+target)
		return
	}
	if active == "" {
		w.Header().Set("Refresh", "5;url="+f.URL()+uri)
		w.WriteHeader(http.StatusTemporaryRedirect)
		fmt.Fprintln(w, "Can not find any active RM. Will retry in next 5 seconds.\nHA Zookeeper Connection State: CONNECTED")
		return
	}
	w.Header().Set("Location", active+uri)
	w.WriteHeader(http.StatusTemporaryRedirect)
	fmt.Fprintln(w, "This is standby RM. The redirect url is: "+uri)
}

// writeJSON writes v; for Hadoop 2 the 3.x-only keys are removed first.
func (f *FakeRM) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Errorf("yarntest: encode answer: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if f.opts.hadoop2 {
		var tree any
		if err := json.Unmarshal(b, &tree); err == nil {
			stripKeys(tree, hadoop3Only)
			b, _ = json.Marshal(tree)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// hadoop3Only are the keys a 2.7 RM does not send.
var hadoop3Only = map[string]bool{
	"haZooKeeperConnectionState": true, "rmStateStoreName": true,
	"decommissioningNodes": true, "shutdownNodes": true, "pendingMB": true, "pendingVirtualCores": true,
	"totalUsedResourcesAcrossPartition": true, "totalClusterResourcesAcrossPartition": true,
	"totalReservedResourcesAcrossPartition": true, "totalAllocatedContainersAcrossPartition": true,
	"crossPartitionMetricsAvailable": true,
	"version":                        true, "resourceUtilization": true, "totalResource": true,
	"priority": true, "logAggregationStatus": true, "queueUsagePercentage": true, "clusterUsagePercentage": true,
	"preemptedResourceMB": true, "preemptedResourceVCores": true, "numNonAMContainerPreempted": true,
	"numAMContainerPreempted": true, "unmanagedApplication": true, "appNodeLabelExpression": true,
	"amNodeLabelExpression": true, "amRPCAddress": true, "launchTime": true, "applicationPriority": true,
	"reservedMB": true, "reservedVCores": true,
	"appAttemptState": true, "appAttemptId": true,
	"executionType": true, "containerLogFiles": true,
}

func stripKeys(v any, keys map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if keys[k] {
				delete(t, k)
				continue
			}
			stripKeys(c, keys)
		}
	case []any:
		for _, c := range t {
			stripKeys(c, keys)
		}
	}
}

// remoteException writes YARN's error body.
func (f *FakeRM) remoteException(w http.ResponseWriter, status int, exception, javaClass, message string) {
	f.writeJSON(w, status, map[string]any{"RemoteException": map[string]string{
		"exception": exception, "message": message, "javaClassName": javaClass,
	}})
}

func (f *FakeRM) notFound(w http.ResponseWriter, msg string) {
	f.remoteException(w, http.StatusNotFound, "NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException", "java.lang.Exception: "+msg)
}

func (f *FakeRM) badRequest(w http.ResponseWriter, msg string) {
	f.remoteException(w, http.StatusBadRequest, "BadRequestException", "org.apache.hadoop.yarn.webapp.BadRequestException", "java.lang.Exception: "+msg)
}

// noResource is Jersey's answer for a path no resource matches.
func (f *FakeRM) noResource(w http.ResponseWriter, r *http.Request) {
	f.remoteException(w, http.StatusNotFound, "NotFoundException", "com.sun.jersey.api.NotFoundException",
		"null for uri: "+f.URL()+r.URL.RequestURI())
}

func (f *FakeRM) handleInfo(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	ha := "ACTIVE"
	if f.standby {
		ha = "STANDBY"
	}
	info := yarnclient.ClusterInfo{
		ID: f.opts.clusterTS, StartedOn: f.opts.clusterTS, State: "STARTED", HAState: ha,
		RMStateStoreName:              "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore",
		ResourceManagerVersion:        "3.3.6",
		ResourceManagerBuildVersion:   "3.3.6 from colocd yarntest",
		ResourceManagerVersionBuiltOn: "2023-06-18T08:22Z",
		HadoopVersion:                 "3.3.6",
		HadoopBuildVersion:            "3.3.6 from colocd yarntest",
		HadoopVersionBuiltOn:          "2023-06-18T08:22Z",
		HAZooKeeperConnectionState:    "CONNECTED",
	}
	if f.opts.hadoop2 {
		info.ResourceManagerVersion, info.HadoopVersion = "2.7.7", "2.7.7"
		info.ResourceManagerBuildVersion, info.HadoopBuildVersion = "2.7.7 from colocd yarntest", "2.7.7 from colocd yarntest"
	}
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"clusterInfo": info})
}

func (f *FakeRM) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	var m yarnclient.ClusterMetrics
	for _, n := range f.nodes {
		m.TotalNodes++
		switch n.State {
		case "RUNNING", "NEW":
			m.ActiveNodes++
		case "LOST":
			m.LostNodes++
		case "UNHEALTHY":
			m.UnhealthyNodes++
		case "DECOMMISSIONING":
			m.DecommissioningNodes++
		case "DECOMMISSIONED":
			m.DecommissionedNodes++
		case "REBOOTED":
			m.RebootedNodes++
		case "SHUTDOWN":
			m.ShutdownNodes++
		}
		if n.State == "RUNNING" || n.State == "UNHEALTHY" || n.State == "DECOMMISSIONING" {
			m.AllocatedMB += n.UsedMemoryMB
			m.AvailableMB += n.AvailMemoryMB
			m.AllocatedVirtualCores += n.UsedVirtualCores
			m.AvailableVirtualCores += n.AvailableVirtualCores
			m.ContainersAllocated += n.NumContainers
		}
	}
	m.TotalMB = m.AllocatedMB + m.AvailableMB
	m.TotalVirtualCores = m.AllocatedVirtualCores + m.AvailableVirtualCores
	// QueueMetrics: counters since the RM started (appsCompleted counts the
	// successful ends only: finishApp increments appsKilled, appsFailed or
	// appsCompleted), gauges for what runs or waits now.
	m.AppsSubmitted, m.AppsCompleted, m.AppsFailed, m.AppsKilled = f.submitted, f.completed, f.failed, f.killed
	for _, a := range f.apps {
		switch a.app.State {
		case "RUNNING":
			m.AppsRunning++
		case "FINISHED", "FAILED", "KILLED":
		default:
			m.AppsPending++
		}
	}
	m.TotalUsedResourcesAcrossPartition = &yarnclient.ResourceInfo{Memory: m.AllocatedMB, VCores: m.AllocatedVirtualCores}
	m.TotalClusterResourcesAcrossPartition = &yarnclient.ResourceInfo{Memory: m.TotalMB, VCores: m.TotalVirtualCores}
	m.TotalReservedResourcesAcrossPartition = &yarnclient.ResourceInfo{}
	m.TotalAllocatedContainersAcrossPartition = m.ContainersAllocated
	m.CrossPartitionMetricsAvailable = true
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"clusterMetrics": m})
}

var nodeStates = map[string]bool{"NEW": true, "RUNNING": true, "UNHEALTHY": true, "DECOMMISSIONING": true,
	"DECOMMISSIONED": true, "LOST": true, "REBOOTED": true, "SHUTDOWN": true}

func (f *FakeRM) handleNodes(w http.ResponseWriter, r *http.Request) {
	want := map[string]bool{}
	param := r.URL.Query().Get("states")
	if f.opts.hadoop2 {
		param = r.URL.Query().Get("state") // 2.7 knows one state, and ignores "states"
	}
	for _, s := range splitComma(param) {
		s = strings.ToUpper(s)
		if !nodeStates[s] {
			f.badRequest(w, "Invalid node state: "+s)
			return
		}
		want[s] = true
	}
	f.mu.Lock()
	var nodes []yarnclient.Node
	for _, n := range f.nodes {
		if len(want) == 0 || want[n.State] {
			nodes = append(nodes, *n)
		}
	}
	f.mu.Unlock()
	if len(nodes) == 0 {
		f.writeJSON(w, http.StatusOK, map[string]any{"nodes": nil})
		return
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"nodes": map[string]any{"node": nodes}})
}

var appStates = map[string]bool{"NEW": true, "NEW_SAVING": true, "SUBMITTED": true, "ACCEPTED": true,
	"RUNNING": true, "FINISHED": true, "FAILED": true, "KILLED": true}

func (f *FakeRM) handleApps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states := map[string]bool{}
	for _, s := range splitComma(q.Get("states") + "," + q.Get("state")) {
		s = strings.ToUpper(s)
		if !appStates[s] {
			f.badRequest(w, "Invalid application-state "+s+" specified. It should be one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED")
			return
		}
		states[s] = true
	}
	types := map[string]bool{}
	for _, s := range splitComma(q.Get("applicationTypes")) {
		types[strings.ToUpper(s)] = true
	}
	tags := map[string]bool{}
	for _, s := range splitComma(q.Get("applicationTags")) {
		tags[strings.ToLower(s)] = true
	}
	var times [4]int64
	for i, k := range []string{"startedTimeBegin", "startedTimeEnd", "finishedTimeBegin", "finishedTimeEnd"} {
		if v := q.Get(k); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				f.badRequest(w, k+" must be greater than 0")
				return
			}
			times[i] = n
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			f.badRequest(w, "limit value must be greater then 0")
			return
		}
		limit = n
	}
	f.mu.Lock()
	var out []yarnclient.App
	for _, id := range f.appOrder {
		a := f.appView(f.apps[id])
		switch {
		case len(states) > 0 && !states[a.State],
			q.Get("finalStatus") != "" && !strings.EqualFold(q.Get("finalStatus"), a.FinalStatus),
			q.Get("user") != "" && q.Get("user") != a.User,
			q.Get("queue") != "" && (q.Get("queue") != a.Queue || (!f.opts.hadoop2 && yarnclient.TerminalState(a.State))),
			q.Get("name") != "" && q.Get("name") != a.Name,
			len(types) > 0 && !types[strings.ToUpper(a.ApplicationType)],
			len(tags) > 0 && !anyTag(a.Tags(), tags),
			times[0] > 0 && a.StartedTime < times[0],
			times[1] > 0 && a.StartedTime > times[1],
			times[2] > 0 && a.FinishedTime < times[2],
			times[3] > 0 && (a.FinishedTime == 0 || a.FinishedTime > times[3]):
			continue
		}
		out = append(out, a)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	f.mu.Unlock()
	if len(out) == 0 {
		f.writeJSON(w, http.StatusOK, map[string]any{"apps": nil})
		return
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"apps": map[string]any{"app": out}})
}

func anyTag(have []string, want map[string]bool) bool {
	for _, t := range have {
		if want[t] {
			return true
		}
	}
	return false
}

// lookup finds the app of the {id} path value, answering 400/404 itself.
func (f *FakeRM) lookup(w http.ResponseWriter, r *http.Request) *fakeApp {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "application_") || strings.Count(id, "_") != 2 {
		f.badRequest(w, "Invalid ApplicationId: "+id)
		return nil
	}
	a, ok := f.apps[id]
	if !ok {
		f.notFound(w, "app with id: "+id+" not found")
		return nil
	}
	return a
}

func (f *FakeRM) handleApp(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	app := f.appView(a)
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"app": app})
}

func (f *FakeRM) handleGetState(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	state := a.app.State
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]string{"state": state})
}

// user returns the caller's user.name, answering 401 itself when the fake
// requires one and there is none.
func (f *FakeRM) user(w http.ResponseWriter, r *http.Request) (string, bool) {
	u := r.URL.Query().Get("user.name")
	if u == "" && f.opts.requireUser {
		f.remoteException(w, http.StatusUnauthorized, "AuthorizationException",
			"org.apache.hadoop.security.authorize.AuthorizationException",
			"Unable to obtain user name, user not authenticated")
		return "", false
	}
	if u == "" {
		u = "dr.who"
	}
	return u, true
}

func (f *FakeRM) handlePutState(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.user(w, r); !ok {
		return
	}
	var body struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.remoteException(w, http.StatusBadRequest, "WebApplicationException", "javax.ws.rs.WebApplicationException", "javax.xml.bind.UnmarshalException: "+err.Error())
		return
	}
	if !strings.EqualFold(body.State, "KILLED") {
		f.badRequest(w, "Only 'KILLED' is allowed as a target state.")
		return
	}
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	a.killPuts++
	prev := a.app.State
	if yarnclient.TerminalState(prev) {
		f.mu.Unlock()
		f.writeJSON(w, http.StatusOK, map[string]string{"state": prev})
		return
	}
	f.endLocked(a, "KILLED", "KILLED")
	a.app.Diagnostics = "Application killed by user."
	f.mu.Unlock()
	// The first PUT is answered 202 with the state before the kill, as in the
	// documented exchange; repeating it gets 200 KILLED.
	w.Header().Set("Location", f.URL()+yarnclient.PathApp(a.app.ID))
	f.writeJSON(w, http.StatusAccepted, map[string]string{"state": prev})
}

func (f *FakeRM) handleAttempts(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	attempts := append([]yarnclient.AppAttempt(nil), a.attempts...)
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"appAttempts": map[string]any{"appAttempt": attempts}})
}

// handleContainers serves the 3.x attempt-containers endpoint in the
// documented shape, numbers as strings.
func (f *FakeRM) handleContainers(w http.ResponseWriter, r *http.Request) {
	if f.opts.hadoop2 {
		f.noResource(w, r)
		return
	}
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	attemptID := r.PathValue("attempt")
	var cs []yarnclient.Container
	found := false
	for _, at := range a.attempts {
		if id, _ := yarnclient.AttemptID(a.app.ID, at.ID); id == attemptID {
			found = true
			if at.ID == len(a.attempts) {
				cs = append(cs, a.containers...)
			}
		}
	}
	f.mu.Unlock()
	if !found {
		f.notFound(w, "appattempt with id: "+attemptID+" not found")
		return
	}
	list := make([]any, 0, len(cs))
	for _, c := range cs {
		list = append(list, quoteNumbers(c))
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"containers": map[string]any{"container": list}})
}

// quoteNumbers re-encodes v with every number as a string, like Jersey's
// mapped notation.
func quoteNumbers(v any) any {
	b, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var tree any
	_ = dec.Decode(&tree)
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, c := range t {
				t[k] = walk(c)
			}
		case []any:
			for i, c := range t {
				t[i] = walk(c)
			}
		case json.Number:
			return t.String()
		}
		return x
	}
	return walk(tree)
}

func (f *FakeRM) handleNewApp(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.user(w, r); !ok {
		return
	}
	f.mu.Lock()
	id := f.allocID()
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{
		"application-id":              id,
		"maximum-resource-capability": map[string]int64{"memory": f.opts.maxMemory, "vCores": f.opts.maxVCores},
	})
}

func (f *FakeRM) handleSubmit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.submitCalls++
	f.mu.Unlock()
	user, ok := f.user(w, r)
	if !ok {
		return
	}
	var sub yarnclient.SubmissionContext
	if err := json.NewDecoder(r.Body).Decode(&sub); err != nil {
		f.remoteException(w, http.StatusBadRequest, "WebApplicationException", "javax.ws.rs.WebApplicationException", "javax.xml.bind.UnmarshalException: "+err.Error())
		return
	}
	if !strings.HasPrefix(sub.ApplicationID, "application_") || strings.Count(sub.ApplicationID, "_") != 2 {
		f.badRequest(w, "Invalid ApplicationId: "+sub.ApplicationID)
		return
	}
	if sub.Resource != nil && (sub.Resource.Memory > f.opts.maxMemory || sub.Resource.VCores > f.opts.maxVCores) {
		f.badRequest(w, fmt.Sprintf("Invalid resource request, requested resource type=[memory-mb] < 0 or greater than maximum allowed allocation. Requested resource=<memory:%d, vCores:%d>, maximum allowed allocation=<memory:%d, vCores:%d>",
			sub.Resource.Memory, sub.Resource.VCores, f.opts.maxMemory, f.opts.maxVCores))
		return
	}
	f.mu.Lock()
	if _, dup := f.apps[sub.ApplicationID]; dup {
		f.mu.Unlock()
		if !f.opts.acceptResubmission {
			f.badRequest(w, "Application with id "+sub.ApplicationID+" is already present! Cannot add a duplicate!")
			return
		}
		// ClientRMService: "This is an earlier submitted application" — no-op.
		w.Header().Set("Location", f.URL()+yarnclient.PathApp(sub.ApplicationID))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.submissions = append(f.submissions, sub.Clone())
	name, queue, typ := sub.ApplicationName, sub.Queue, sub.ApplicationType
	if name == "" {
		name = "N/A"
	}
	if queue == "" {
		queue = "default"
	}
	if typ == "" {
		typ = "YARN"
	}
	res := yarnclient.ResourceInfo{Memory: 1024, VCores: 1}
	if sub.Resource != nil && sub.Resource.Memory > 0 {
		res.Memory = sub.Resource.Memory
	}
	if sub.Resource != nil && sub.Resource.VCores > 0 {
		res.VCores = sub.Resource.VCores
	}
	a := &fakeApp{resource: res, app: yarnclient.App{
		ID: sub.ApplicationID, User: user, Name: name, Queue: queue, State: "ACCEPTED", FinalStatus: "UNDEFINED",
		TrackingUI: "UNASSIGNED", ClusterID: f.opts.clusterTS, ApplicationType: typ,
		ApplicationTags: normTags(sub.ApplicationTags), Priority: sub.Priority,
		StartedTime: f.now().UnixMilli(), UnmanagedApplication: sub.UnmanagedAM,
		LogAggregationStatus: "DISABLED", AppNodeLabelExpression: sub.AppNodeLabelExpression,
		AMNodeLabelExpression: sub.AMContainerNodeLabelExpression,
	}}
	f.apps[sub.ApplicationID] = a
	f.appOrder = append(f.appOrder, sub.ApplicationID)
	f.submitted++
	f.submittedAt[sub.ApplicationID] = a.app.StartedTime
	f.publishLocked(a)
	if f.opts.autoStart {
		_ = f.startLocked(sub.ApplicationID)
	}
	f.mu.Unlock()
	w.Header().Set("Location", f.URL()+yarnclient.PathApp(sub.ApplicationID))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
}
