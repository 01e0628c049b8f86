package yarnclient_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

func TestMain(m *testing.M) {
	switch os.Getenv(helperEnv) {
	case "":
	case "daemon":
		os.Exit(runDaemonHelper())
	default:
		os.Exit(runHelper())
	}
	goleak.VerifyTestMain(m)
}

// sleeps records the backoff waits instead of sleeping.
type sleeps struct {
	mu sync.Mutex
	d  []time.Duration
}

func (s *sleeps) sleep(d time.Duration) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.d = append(s.d, d)
}

func (s *sleeps) got() []time.Duration {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]time.Duration(nil), s.d...)
}

// newClient builds a client for the given RM URLs with recorded sleeps.
func newClient(t testing.TB, mod func(*yarnclient.Config), urls ...string) (*yarnclient.Client, *sleeps) {
	t.Helper()
	s := &sleeps{}
	cfg := yarnclient.Config{RMURLs: urls, User: "alice", Sleep: s.sleep, Backoff: 100 * time.Millisecond, Timeout: 10 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := yarnclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c, s
}

func ctxT(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func addNodes(rm *yarntest.FakeRM, ids ...string) {
	for _, id := range ids {
		rm.AddNode(yarnclient.Node{ID: id})
	}
}

// TestSubmitEndToEnd: new-application → submit with tags and the AM spec
// passed through → the app is visible with its tags → start → placement →
// kill.
func TestSubmitEndToEnd(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.RequireUser())
	addNodes(rm, "node1:8041", "node2:8041")
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)

	na, err := c.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	wantID := yarnclient.FormatAppID(yarntest.DefaultClusterTimestamp, 1)
	if na.ApplicationID != wantID || na.MaximumResourceCapability.Memory != 8192 || na.MaximumResourceCapability.VCores != 32 {
		t.Fatalf("NewApplication = %+v, want id %s and 8192 MB / 32 vcores", na, wantID)
	}
	amSpec := json.RawMessage(`{"commands":{"command":"{{JAVA_HOME}}/bin/java -Xmx512m Main 1><LOG_DIR>/AM.stdout"},"environment":{"entry":[{"key":"K","value":"v"}]}}`)
	sub := yarnclient.SubmissionContext{
		ApplicationID: na.ApplicationID, ApplicationName: "tpch-q10", Queue: "batch", ApplicationType: "SPARK",
		AMContainerSpec: amSpec, Resource: &yarnclient.ResourceInfo{Memory: 2048, VCores: 2}, MaxAppAttempts: 1,
	}
	sub.AddTags(yarnclient.JobTags("01HZX3Q4", "TPCH-Q10")...)
	loc, err := c.SubmitApp(ctx, sub)
	if err != nil {
		t.Fatal(err)
	}
	if want := rm.URL() + yarnclient.PathApp(wantID); loc != want {
		t.Errorf("Location = %q, want %q", loc, want)
	}

	subs := rm.Submissions()
	if len(subs) != 1 {
		t.Fatalf("RM saw %d submissions, want 1", len(subs))
	}
	if diff := cmp.Diff(string(amSpec), string(subs[0].AMContainerSpec)); diff != "" {
		t.Errorf("am-container-spec not passed through (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(yarnclient.Tags{"colocd-job-01hzx3q4", "colocd-kind-tpch-q10"}, subs[0].ApplicationTags); diff != "" {
		t.Errorf("tags (-want +got)\n%s", diff)
	}

	app, err := c.App(ctx, wantID)
	if err != nil {
		t.Fatal(err)
	}
	want := yarnclient.App{ID: wantID, User: "alice", Name: "tpch-q10", Queue: "batch", State: "ACCEPTED", FinalStatus: "UNDEFINED",
		ApplicationType: "SPARK", ApplicationTags: "colocd-job-01hzx3q4,colocd-kind-tpch-q10"}
	got := yarnclient.App{ID: app.ID, User: app.User, Name: app.Name, Queue: app.Queue, State: app.State, FinalStatus: app.FinalStatus,
		ApplicationType: app.ApplicationType, ApplicationTags: app.ApplicationTags}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("App (-want +got)\n%s", diff)
	}
	found, ok, err := c.FindAppByTag(ctx, "COLOCD-JOB-01HZX3Q4")
	if err != nil || !ok || found.ID != wantID {
		t.Fatalf("FindAppByTag = %s, %v, %v; want %s", found.ID, ok, err, wantID)
	}

	if err := rm.StartApp(wantID); err != nil {
		t.Fatal(err)
	}
	if err := rm.PlaceContainers(wantID, "node2:8041", "node2:8041", "node1:8041"); err != nil {
		t.Fatal(err)
	}
	place, err := c.Placement(ctx, wantID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"node1": 2, "node2": 2}, place); diff != "" {
		t.Errorf("Placement (-want +got)\n%s", diff)
	}
	if s, err := c.AppState(ctx, wantID); err != nil || s != "RUNNING" {
		t.Errorf("AppState = %q, %v; want RUNNING", s, err)
	}

	if err := c.KillApp(ctx, wantID); err != nil {
		t.Fatal(err)
	}
	if err := c.KillApp(ctx, wantID); err != nil { // the documented second PUT: 200 KILLED
		t.Fatal(err)
	}
	if s, err := c.AppState(ctx, wantID); err != nil || s != "KILLED" {
		t.Errorf("after kill AppState = %q, %v; want KILLED", s, err)
	}
	if got := rm.Requests(http.MethodPut, yarnclient.PathAppState(wantID)); got != 2 {
		t.Errorf("kill PUTs = %d, want 2", got)
	}
	place, err = c.Placement(ctx, wantID)
	if err != nil || len(place) != 0 {
		t.Errorf("Placement after kill = %v, %v; want empty", place, err)
	}
}

func TestDuplicateSubmission(t *testing.T) {
	tests := map[string]struct {
		opts    []yarntest.Option
		wantErr error
	}{
		"sequential resubmission, a no-op on a real RM": {[]yarntest.Option{yarntest.AcceptResubmission()}, nil},
		"rejected like racing submissions (default)":    {nil, yarnclient.ErrConflict},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rm := yarntest.NewFakeRM(t, tt.opts...)
			c, _ := newClient(t, nil, rm.URL())
			ctx := ctxT(t)
			na, err := c.NewApplication(ctx)
			if err != nil {
				t.Fatal(err)
			}
			sub := yarnclient.SubmissionContext{ApplicationID: na.ApplicationID, ApplicationName: "first"}
			if _, err := c.SubmitApp(ctx, sub); err != nil {
				t.Fatal(err)
			}
			sub.ApplicationName = "second"
			_, err = c.SubmitApp(ctx, sub)
			if !errors.Is(err, tt.wantErr) || (tt.wantErr == nil) != (err == nil) {
				t.Fatalf("second SubmitApp error = %v, want %v", err, tt.wantErr)
			}
			if tt.wantErr != nil && !errors.Is(err, yarnclient.ErrBadRequest) {
				t.Errorf("duplicate error %v does not match ErrBadRequest (the RM answers 400)", err)
			}
			if rm.SubmitCalls() != 2 || len(rm.Submissions()) != 1 {
				t.Errorf("SubmitCalls %d, Submissions %d; want 2 and 1", rm.SubmitCalls(), len(rm.Submissions()))
			}
			if a, _ := rm.App(na.ApplicationID); a.Name != "first" {
				t.Errorf("app name = %q, want the first submission's", a.Name)
			}
		})
	}
}

func TestRemoteErrors(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.RequireUser())
	anon, _ := newClient(t, func(c *yarnclient.Config) { c.User = "" }, rm.URL())
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	id := rm.AddApp(yarnclient.App{Name: "other", User: "bob"})

	tests := map[string]struct {
		call      func() error
		want      error
		status    int
		exception string
	}{
		"unknown app": {func() error { _, err := c.App(ctx, "application_1700000000000_0999"); return err },
			yarnclient.ErrNotFound, 404, "NotFoundException"},
		"kill unknown app": {func() error { return c.KillApp(ctx, "application_1700000000000_0999") },
			yarnclient.ErrNotFound, 404, "NotFoundException"},
		"kill without a user": {func() error { return anon.KillApp(ctx, id) },
			yarnclient.ErrUnauthorized, 401, "AuthorizationException"},
		"new-application without a user": {func() error { _, err := anon.NewApplication(ctx); return err },
			yarnclient.ErrUnauthorized, 401, "AuthorizationException"},
		"bad state filter": {func() error { _, err := c.Apps(ctx, yarnclient.AppsFilter{States: []string{"SLEEPING"}}); return err },
			yarnclient.ErrBadRequest, 400, "BadRequestException"},
		"too large AM": {func() error {
			_, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: "application_1700000000000_0005",
				Resource: &yarnclient.ResourceInfo{Memory: 1 << 20, VCores: 1}})
			return err
		}, yarnclient.ErrBadRequest, 400, "BadRequestException"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			err := tt.call()
			if !errors.Is(err, tt.want) {
				t.Fatalf("error %v does not match %v", err, tt.want)
			}
			var re *yarnclient.RemoteError
			if !errors.As(err, &re) {
				t.Fatalf("error %T is not a *RemoteError", err)
			}
			if re.StatusCode != tt.status || re.Exception != tt.exception || re.JavaClassName == "" || re.Message == "" {
				t.Errorf("RemoteError = %+v, want status %d exception %s with class and message", re, tt.status, tt.exception)
			}
			if strings.Contains(re.Error(), "user.name") {
				t.Errorf("error %q leaks the query", re.Error())
			}
		})
	}

	invalid := map[string]func() error{
		"App bad id":     func() error { _, err := c.App(ctx, "job_1_1"); return err },
		"Kill bad id":    func() error { return c.KillApp(ctx, "application_x_1") },
		"Submit no id":   func() error { _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{}); return err },
		"Tag with comma": func() error { _, _, err := c.FindAppByTag(ctx, "a,b"); return err },
		"Containers path": func() error {
			_, err := c.AttemptContainers(ctx, "application_1700000000000_0001", "../../x")
			return err
		},
		"NM no address": func() error { _, err := c.NodeContainers(ctx, ""); return err },
	}
	before := rm.Requests(http.MethodGet, yarnclient.PathApp("job_1_1"))
	for name, call := range invalid {
		t.Run(name, func(t *testing.T) {
			if err := call(); !errors.Is(err, yarnclient.ErrInvalid) {
				t.Errorf("error %v, want ErrInvalid", err)
			}
		})
	}
	if rm.Requests(http.MethodGet, yarnclient.PathApp("job_1_1")) != before {
		t.Error("an invalid id reached the RM")
	}
}

func TestReads(t *testing.T) {
	var now int64 = yarntest.DefaultClusterTimestamp
	rm := yarntest.NewFakeRM(t, yarntest.Clock(func() time.Time { now += 1000; return time.UnixMilli(now) }))
	rm.AddNode(yarnclient.Node{ID: "n1:8041", AvailMemoryMB: 16384, AvailableVirtualCores: 16})
	rm.AddNode(yarnclient.Node{ID: "n2:8041"})
	rm.AddNode(yarnclient.Node{ID: "n3:8041", State: "LOST"})
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)

	if apps, err := c.Apps(ctx, yarnclient.AppsFilter{}); err != nil || apps == nil && err != nil || len(apps) != 0 {
		t.Fatalf(`Apps on an empty RM ({"apps":null}) = %v, %v; want empty`, apps, err)
	}
	a1 := rm.AddApp(yarnclient.App{Name: "a1", User: "u1", Queue: "q1", ApplicationTags: "X,y"})
	a2 := rm.AddApp(yarnclient.App{Name: "a2", User: "u2", Queue: "q2", State: "ACCEPTED"})
	mid := time.UnixMilli(now + 1)
	a3 := rm.AddApp(yarnclient.App{Name: "a3", User: "u1", Queue: "q1", ApplicationTags: "y"})
	if err := rm.FinishApp(a3, "FAILED"); err != nil {
		t.Fatal(err)
	}

	filters := map[string]struct {
		f    yarnclient.AppsFilter
		want []string
	}{
		"all":                {yarnclient.AppsFilter{}, []string{a1, a2, a3}},
		"states":             {yarnclient.AppsFilter{States: []string{"running", "Accepted"}}, []string{a1, a2}},
		"user":               {yarnclient.AppsFilter{User: "u1"}, []string{a1, a3}},
		"queue (unfinished)": {yarnclient.AppsFilter{Queue: "q1"}, []string{a1}},
		"tags any of":        {yarnclient.AppsFilter{ApplicationTags: []string{"x", "nope"}}, []string{a1}},
		"tags lower-cased":   {yarnclient.AppsFilter{ApplicationTags: []string{"Y"}}, []string{a1, a3}},
		"startedTimeBegin":   {yarnclient.AppsFilter{StartedTimeBegin: mid}, []string{a3}},
		"final status":       {yarnclient.AppsFilter{FinalStatus: "FAILED"}, []string{a3}},
		"limit":              {yarnclient.AppsFilter{Limit: 2}, []string{a1, a2}},
		"none":               {yarnclient.AppsFilter{User: "nobody"}, nil},
	}
	for name, tt := range filters {
		t.Run("apps/"+name, func(t *testing.T) {
			apps, err := c.Apps(ctx, tt.f)
			if err != nil {
				t.Fatal(err)
			}
			var ids []string
			for _, a := range apps {
				ids = append(ids, a.ID)
			}
			if diff := cmp.Diff(tt.want, ids); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}

	nodes, err := c.Nodes(ctx, "running")
	if err != nil {
		t.Fatal(err)
	}
	if len(nodes) != 2 || nodes[0].ID != "n1:8041" || nodes[0].AvailMemoryMB != 16384 || nodes[1].NodeHTTPAddress != "n2:8042" {
		t.Errorf("Nodes(RUNNING) = %+v", nodes)
	}
	all, err := c.Nodes(ctx)
	if err != nil || len(all) != 3 {
		t.Errorf("Nodes() = %d nodes, %v; want 3", len(all), err)
	}

	m, err := c.ClusterMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// appsCompleted counts successful ends only (QueueMetrics.finishApp).
	wantM := yarnclient.ClusterMetrics{AppsSubmitted: 3, AppsRunning: 1, AppsPending: 1, AppsFailed: 1, AppsCompleted: 0,
		AvailableMB: 24576, TotalMB: 24576, AvailableVirtualCores: 24, TotalVirtualCores: 24,
		TotalNodes: 3, ActiveNodes: 2, LostNodes: 1,
		TotalUsedResourcesAcrossPartition:     &yarnclient.ResourceInfo{},
		TotalClusterResourcesAcrossPartition:  &yarnclient.ResourceInfo{Memory: 24576, VCores: 24},
		TotalReservedResourcesAcrossPartition: &yarnclient.ResourceInfo{}, CrossPartitionMetricsAvailable: true}
	if diff := cmp.Diff(wantM, m); diff != "" {
		t.Errorf("ClusterMetrics (-want +got)\n%s", diff)
	}
	info, err := c.ClusterInfo(ctx)
	if err != nil || info.HAState != "ACTIVE" || info.ID != yarntest.DefaultClusterTimestamp {
		t.Errorf("ClusterInfo = %+v, %v", info, err)
	}
}

// TestHadoop2Shapes runs the reads against a fake answering in 2.7 shapes.
func TestHadoop2Shapes(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.Hadoop2())
	rm.AddNode(yarnclient.Node{ID: "n1:8041"})
	id := rm.AddApp(yarnclient.App{Name: "old", User: "u"})
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	m, err := c.ClusterMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.TotalMB != 8192 || m.TotalClusterResourcesAcrossPartition != nil {
		t.Errorf("2.7 metrics = %+v, want totalMB 8192 and no 3.x resource objects", m)
	}
	app, err := c.App(ctx, id)
	if err != nil || app.State != "RUNNING" || app.LogAggregationStatus != "" {
		t.Errorf("2.7 app = %+v, %v", app, err)
	}
	if _, err := c.AttemptContainers(ctx, id, "appattempt_1700000000000_0001_000001"); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Errorf("2.7 attempt containers: %v, want ErrNotFound", err)
	}
}
