package yarncluster

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// stateRM is a Cluster over a fake RM with nodes w1..w3 (8 GB, 8 vcores),
// reading the nodes every refresh, on a clock the test moves.
func stateRM(t *testing.T, refresh time.Duration, opts ...yarntest.Option) (*Cluster, *yarntest.FakeRM, *time.Time) {
	t.Helper()
	rm := yarntest.NewFakeRM(t, opts...)
	for _, n := range []string{"w1:8041", "w2:8041", "w3:8041"} {
		rm.AddNode(yarnclient.Node{ID: n})
	}
	cfg := DefaultConfig()
	cfg.RMURLs, cfg.User, cfg.NodesRefresh = []string{rm.URL()}, "colocd", refresh
	cc := cfg.ClientConfig(nil)
	cc.Retries = -1
	c, err := yarnclient.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	y := New(c, cfg, nil)
	now := time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC)
	y.now = func() time.Time { return now }
	return y, rm, &now
}

// runningApp adds a running application to rm (colocd's when job is set),
// its AM on the first node with room, and containers on the nodes given.
func runningApp(t *testing.T, rm *yarntest.FakeRM, job string, on ...string) string {
	t.Helper()
	a := yarnclient.App{Name: "app", User: "ana", Queue: "default", State: "ACCEPTED"}
	if job != "" {
		a.ApplicationTags = strings.Join(yarnclient.JobTags(job, "cpu"), ",")
	}
	id := rm.AddApp(a)
	if err := rm.StartApp(id); err != nil {
		t.Fatal(err)
	}
	if err := rm.PlaceContainers(id, on...); err != nil {
		t.Fatal(err)
	}
	return id
}

func freeOf(t *testing.T, y *Cluster) map[string]int64 {
	t.Helper()
	st, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]int64{}
	for _, n := range st.Nodes {
		out[n.Name] = n.Free.MemoryMB
	}
	return out
}

// TestStateNodesRefresh: the nodes are read on the first State, then only
// once nodes_refresh has passed or the node counts change; in between a
// node's free room follows colocd's applications, and other tenants'
// containers show at the next reading.
func TestStateNodesRefresh(t *testing.T) {
	y, rm, now := stateRM(t, 30*time.Second)
	reads := func() int { return rm.Requests(http.MethodGet, yarnclient.PathNodes) }
	ours := runningApp(t, rm, "JOB1", "w2:8041", "w2:8041") // AM on w1
	if diff := cmp.Diff(map[string]int64{"w1": 7168, "w2": 6144, "w3": 8192}, freeOf(t, y)); diff != "" || reads() != 1 {
		t.Fatalf("first reading: %d node reads, free (-want +got):\n%s", reads(), diff)
	}
	runningApp(t, rm, "", "w3:8041") // another tenant's: AM on w1, one on w3
	if err := rm.PlaceContainers(ours, "w3:8041"); err != nil {
		t.Fatal(err)
	}
	*now = now.Add(placementTTL) // colocd's placement is read again; the nodes are not
	if diff := cmp.Diff(map[string]int64{"w1": 7168, "w2": 6144, "w3": 7168}, freeOf(t, y)); diff != "" || reads() != 1 {
		t.Errorf("between readings: %d node reads, free (-want +got):\n%s", reads(), diff)
	}
	*now = now.Add(30 * time.Second)
	if diff := cmp.Diff(map[string]int64{"w1": 6144, "w2": 6144, "w3": 6144}, freeOf(t, y)); diff != "" || reads() != 2 {
		t.Errorf("after nodes_refresh: %d node reads, free (-want +got):\n%s", reads(), diff)
	}
	rm.AddNode(yarnclient.Node{ID: "w4:8041"})
	if got := freeOf(t, y); got["w4"] != 8192 || reads() != 3 {
		t.Errorf("after a node joined: %d node reads, free %v; want w4 read at once", reads(), got)
	}
	if err := rm.FinishApp(ours, "SUCCEEDED"); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int64{"w1": 7168, "w2": 8192, "w3": 7168, "w4": 8192}, freeOf(t, y)); diff != "" || reads() != 3 {
		t.Errorf("after colocd's application ended: %d node reads, free (-want +got):\n%s", reads(), diff)
	}
}

// TestStateNodesEveryTime: nodes_refresh 0 reads the nodes on every State.
func TestStateNodesEveryTime(t *testing.T) {
	y, rm, _ := stateRM(t, 0)
	for range 3 {
		freeOf(t, y)
	}
	if n := rm.Requests(http.MethodGet, yarnclient.PathNodes); n != 3 {
		t.Errorf("3 States read the nodes %d times, want 3", n)
	}
}

// TestStatePlacements: colocd's applications are placed (and other
// tenants' are not), each asked for again once its placement is
// placementTTL old; on a Hadoop 2 RM, the NodeManagers are swept once for
// all the applications due, not once per application.
func TestStatePlacements(t *testing.T) {
	y, rm, now := stateRM(t, time.Hour, yarntest.Hadoop2())
	nms := map[string]*yarntest.FakeNM{}
	for _, n := range rm.Nodes() {
		nm := yarntest.NewFakeNM(t)
		nms[n.ID] = nm
		n.NodeHTTPAddress = strings.TrimPrefix(nm.URL(), "http://")
		rm.AddNode(n)
	}
	a := runningApp(t, rm, "JOB1", "w2:8041")
	b := runningApp(t, rm, "JOB2", "w3:8041", "w3:8041")
	foreign := runningApp(t, rm, "", "w2:8041")
	for id, nm := range nms {
		nm.SetContainers(rm.NodeContainers(id))
	}
	st, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]map[string]int{}
	for _, app := range st.Apps {
		got[app.ID] = app.Placement
	}
	want := map[string]map[string]int{a: {"w1": 1, "w2": 1}, b: {"w1": 1, "w3": 2}, foreign: nil}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Fatalf("placements (-want +got):\n%s", diff)
	}
	sweeps := func() int { return rm.Requests(http.MethodGet, yarnclient.PathNodes) }
	before := sweeps()
	*now = now.Add(placementTTL)
	if _, err := y.State(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := sweeps() - before; n != 1 {
		t.Errorf("placements of two applications swept the NodeManagers %d times, want once", n)
	}
}

// TestStatePlacementKeptOnError: when the placements cannot be read, an
// application keeps the placement it had.
func TestStatePlacementKeptOnError(t *testing.T) {
	y, rm, now := stateRM(t, time.Hour)
	a := runningApp(t, rm, "JOB1", "w2:8041")
	st, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	rm.InjectFault(yarnclient.PathAppAttempts(a), yarntest.Fault{Status: http.StatusInternalServerError})
	*now = now.Add(placementTTL)
	st2, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(st.Apps[0].Placement, st2.Apps[0].Placement); diff != "" || len(st2.Apps[0].Nodes) != 2 {
		t.Errorf("placement after a failed read (-before +after):\n%s", diff)
	}
}

func TestConfigNodesRefresh(t *testing.T) {
	c := DefaultConfig()
	c.RMURLs = []string{"http://rm1:8088"}
	if c.NodesRefresh != 30*time.Second {
		t.Errorf("default nodes_refresh %v, want 30s", c.NodesRefresh)
	}
	c.NodesRefresh = 0
	if err := c.Validate(); err != nil {
		t.Errorf("nodes_refresh 0: %v", err)
	}
	c.NodesRefresh = -time.Second
	var fe *fieldError
	if err := c.Validate(); !errors.As(err, &fe) || fe.Field != "nodes_refresh" {
		t.Errorf("nodes_refresh -1s: %v, want a fieldError on nodes_refresh", err)
	}
}

// TestStateOneNodeName: a node whose nodeHostName differs from its node
// id's host (a NodeManager with yarn.nodemanager.hostname set apart from
// what it registers) is named by the node id's host in the node list and
// in every application's placement, so its co-locations are not dropped.
func TestStateOneNodeName(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	for _, n := range []yarnclient.Node{
		{ID: "w1.dc.example.com:8041", NodeHostName: "w1"},
		{ID: "w2.dc.example.com:8041", NodeHostName: "w2-alias"},
	} {
		rm.AddNode(n)
	}
	cfg := DefaultConfig()
	cfg.RMURLs, cfg.User = []string{rm.URL()}, "colocd"
	c, err := yarnclient.New(cfg.ClientConfig(nil))
	if err != nil {
		t.Fatal(err)
	}
	y := New(c, cfg, nil)
	a := runningApp(t, rm, "JOB1", "w2.dc.example.com:8041")
	st, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range st.Nodes {
		names = append(names, n.Name)
	}
	if diff := cmp.Diff([]string{"w1.dc.example.com", "w2.dc.example.com"}, names); diff != "" {
		t.Errorf("node names (-want +got):\n%s", diff)
	}
	for _, app := range st.Apps {
		if app.ID != a {
			continue
		}
		for node := range app.Placement {
			if !slices.Contains(names, node) {
				t.Errorf("application %s is placed on %q, which is no node's name %v", a, node, names)
			}
		}
		if app.Placement["w2.dc.example.com"] != 1 {
			t.Errorf("placement %v, want a container on w2.dc.example.com", app.Placement)
		}
	}
}

// TestSubmitRefusals: a 4xx answer to the submission is a definite refusal
// of the job (cluster.ErrRejected), except 401 (colocd's own authentication
// failed: an expired ticket says nothing about the job) and a 5xx, which
// are ambiguous and leave the job for the engine to submit again.
func TestSubmitRefusals(t *testing.T) {
	for _, tc := range []struct {
		status   int
		rejected bool
	}{
		{http.StatusBadRequest, true},
		{http.StatusForbidden, true},
		{http.StatusUnauthorized, false},
		{http.StatusInternalServerError, false},
	} {
		t.Run(http.StatusText(tc.status), func(t *testing.T) {
			y, rm, _ := stateRM(t, time.Hour)
			id, err := y.Reserve(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Method: http.MethodPost, Status: tc.status})
			err = y.Submit(context.Background(), id, queue.Job{ID: "JOB1", Kind: "cpu"})
			if err == nil {
				t.Fatal("submission answered with an error status succeeded")
			}
			if got := errors.Is(err, cluster.ErrRejected); got != tc.rejected {
				t.Errorf("status %d: %v; rejected %v, want %v", tc.status, err, got, tc.rejected)
			}
		})
	}
}
