package api

import (
	"cmp"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	gocmp "github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// fakeView is a ClusterView a test sets.
type fakeView struct {
	mu sync.Mutex
	st cluster.State
	at time.Time
	ok bool
}

var _ ClusterView = (*fakeView)(nil)

func (f *fakeView) ClusterView() (cluster.State, time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.st, f.at, f.ok
}

func (f *fakeView) set(st cluster.State, at time.Time) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.st, f.at, f.ok = st, at, true
}

func withCluster(v ClusterView) harnessOpt { return func(c *harnessCfg) { c.Cluster = v } }

func withClock(fn func() v1.Clock) harnessOpt { return func(c *harnessCfg) { c.Clock = fn } }

func withLimits(lim goodness.Limits) harnessOpt { return func(c *harnessCfg) { c.Limits = lim } }

// usageG is a node's usage with CPU busy cpu, and its goodness under
// testLimits.
func usageG(cpu float64) (goodness.Usage, float64) {
	u := goodness.Usage{CPU: cpu, IOWait: 0.02, DiskRead: 20e6, DiskWrite: 5e6, NetRecv: 3e6, NetSent: 1e6}
	return u, goodness.Score(u, testLimits)
}

// testCluster is n nodes "node-01"… of 8 vcores and 16 GiB, and apps: app
// i of job "job-i" has containers (of 1 vcore, 2 GiB) on the nodes given
// by place[i] (node index → containers).
func testCluster(n int, place ...map[int]int) cluster.State {
	var st cluster.State
	for i := range n {
		capa := pipeline.Capacity{VCores: 8, MemoryMB: 16384}
		st.Nodes = append(st.Nodes, cluster.Node{Name: fmt.Sprintf("node-%02d", i+1), Capacity: capa, Free: capa})
		st.Capacity.VCores += capa.VCores
		st.Capacity.MemoryMB += capa.MemoryMB
	}
	st.Free = st.Capacity
	for i, p := range place {
		a := cluster.App{ID: fmt.Sprintf("application_1_%04d", i), JobID: fmt.Sprintf("job-%d", i), Kind: testKinds[i%len(testKinds)],
			User: "sam", Queue: "etl", Placement: map[string]int{}}
		for k, c := range p {
			node := &st.Nodes[k]
			a.Nodes = append(a.Nodes, node.Name)
			a.Placement[node.Name] = c
			node.Apps = append(node.Apps, a.ID)
			node.Free.VCores -= int64(c)
			node.Free.MemoryMB -= int64(c) * 2048
			a.Alloc.VCores += int64(c)
			a.Alloc.MemoryMB += int64(c) * 2048
		}
		slices.Sort(a.Nodes)
		st.Free.VCores -= a.Alloc.VCores
		st.Free.MemoryMB -= a.Alloc.MemoryMB
		st.Apps = append(st.Apps, a)
	}
	return st
}

// get requires a 200 to GET path as the reader and decodes it into v.
func (h *harness) get(path string, v any) response {
	h.t.Helper()
	r := h.do("GET", path, readerTok, "")
	if r.Code != http.StatusOK {
		h.t.Fatalf("GET %s: %d %s", path, r.Code, r.Body)
	}
	r.decode(h.t, v)
	return r
}

// badParams requires a 400 naming the parameter for each query of path.
func (h *harness) badParams(path string, cases map[string]string) {
	h.t.Helper()
	for q, field := range cases {
		if r := h.do("GET", path+q, readerTok, ""); r.Code != http.StatusBadRequest || r.errBody(h.t).Field != field {
			h.t.Errorf("GET %s%s: %d %s, want a 400 on %s", path, q, r.Code, r.Body, field)
		}
	}
}

// TestConsoleEndpointsNeedAReader: every console endpoint refuses a
// request without a token and answers a reader.
func TestConsoleEndpointsNeedAReader(t *testing.T) {
	h := newHarness(t, withCluster(&fakeView{}))
	for _, path := range []string{"/v1/nodes", "/v1/cluster", "/v1/goodness/trend", "/v1/summary", "/v1/jobs?estimate=1"} {
		if r := h.do("GET", path, "", ""); r.Code != http.StatusUnauthorized {
			t.Errorf("GET %s without a token: %d", path, r.Code)
		}
		if r := h.do("GET", path, readerTok, ""); r.Code != http.StatusOK {
			t.Errorf("GET %s as a reader: %d %s", path, r.Code, r.Body)
		}
		if path == "/v1/jobs?estimate=1" {
			continue // POST submits
		}
		if r := h.do("POST", path, adminTok, "{}"); r.Code != http.StatusMethodNotAllowed {
			t.Errorf("POST %s: %d, want 405", path, r.Code)
		}
	}
}

// TestNodesWithoutAView: before the engine read the cluster (or without
// one), the node and cluster views say so and list nothing.
func TestNodesWithoutAView(t *testing.T) {
	for name, opt := range map[string]harnessOpt{"no Deps.Cluster": func(*harnessCfg) {}, "not read yet": withCluster(&fakeView{})} {
		t.Run(name, func(t *testing.T) {
			h := newHarness(t, opt)
			var nl v1.NodeList
			h.get("/v1/nodes", &nl)
			if nl.Available || nl.ReadAt != nil || len(nl.Nodes) != 0 || nl.Nodes == nil || nl.Total != 0 {
				t.Errorf("nodes without a view: %+v", nl)
			}
			if len(nl.Histogram.Edges) != histogramBuckets+1 || nl.Scale.Min != goodness.Min || nl.Scale.Max != goodness.Max {
				t.Errorf("histogram edges %v, scale %+v", nl.Histogram.Edges, nl.Scale)
			}
			var cs v1.ClusterStatus
			h.get("/v1/cluster", &cs)
			if cs.Available || len(cs.Apps) != 0 || cs.Apps == nil {
				t.Errorf("cluster without a view: %+v", cs)
			}
		})
	}
}

// TestNodes: every node with its room, its applications (most containers
// first) and its latest goodness record; the histogram counts them all;
// sort, limit and offset page them.
func TestNodes(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view), withLimits(testLimits))
	st := testCluster(4, map[int]int{0: 3, 1: 1}, map[int]int{0: 1}, map[int]int{2: 2})
	readAt := h.clock.Now().Add(-time.Second)
	view.set(st, readAt)
	now := h.clock.Now()
	busy, gBusy := usageG(0.9)
	light, gLight := usageG(0.1)
	mid, gMid := usageG(0.4)
	// Each record's G is a reward (a residual: not the node's goodness),
	// which the node view does not show as its goodness.
	recs := []journal.GoodnessRecord{
		{At: now.Add(-3 * time.Minute), Node: "node-01", Chosen: "kmeans", Given: "terasort", G: 40, Usage: busy},
		{At: now.Add(-time.Minute), Node: "node-01", Chosen: "terasort", Given: "kmeans", G: -5, Usage: light}, // node-01's latest
		{At: now.Add(-2 * time.Minute), Node: "node-03", Chosen: "wordcount", Given: "kmeans", G: 1.5, Usage: mid},
		{At: now.Add(-25 * time.Hour), Node: "node-02", G: 30, Usage: busy}, // outside the default window
	}
	for _, r := range recs {
		if err := h.journal.AddGoodness(r); err != nil {
			t.Fatal(err)
		}
	}
	var nl v1.NodeList
	r := h.get("/v1/nodes", &nl)
	if !nl.Available || nl.ReadAt == nil || !nl.ReadAt.Equal(readAt) || nl.Total != 4 || nl.Capacity != wireCapacity(st.Capacity) || nl.Free != wireCapacity(st.Free) ||
		r.Header.Get("X-Total-Count") != "4" || !nl.GoodnessTo.Equal(now) || !nl.GoodnessFrom.Equal(now.Add(-defaultGoodnessWindow)) {
		t.Fatalf("header: %+v (X-Total-Count %q)", nl, r.Header.Get("X-Total-Count"))
	}
	var names []string
	for _, n := range nl.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"node-01", "node-02", "node-03", "node-04"}) {
		t.Fatalf("nodes %v, want all four by name", names)
	}
	n1 := nl.Nodes[0]
	wantApps := []v1.NodeApp{
		{AppID: "application_1_0000", JobID: "job-0", Kind: testKinds[0], User: "sam", Containers: 3},
		{AppID: "application_1_0001", JobID: "job-1", Kind: testKinds[1], User: "sam", Containers: 1},
	}
	if diff := gocmp.Diff(wantApps, n1.Apps); diff != "" || n1.Containers != 4 || n1.AppsTotal != 2 || n1.Free != wireCapacity(st.Nodes[0].Free) {
		t.Errorf("node-01: containers %d, apps total %d, free %+v; apps (-want +got):\n%s", n1.Containers, n1.AppsTotal, n1.Free, diff)
	}
	n3 := nl.Nodes[2]
	if n1.Goodness == nil || n1.Goodness.G != -5 || n1.G == nil || *n1.G != gLight || n3.Goodness == nil || n3.G == nil || *n3.G != gMid {
		t.Errorf("latest goodness: node-01 %+v G %v, node-03 %+v G %v; want recs[1] with G %v and recs[2] with %v", n1.Goodness, n1.G, n3.Goodness, n3.G, gLight, gMid)
	}
	if nl.Nodes[1].Goodness != nil || nl.Nodes[1].G != nil || nl.Nodes[3].Goodness != nil || len(nl.Nodes[3].Apps) != 0 {
		t.Errorf("node-02 (record out of the window) %+v, node-04 (idle) %+v: want no goodness", nl.Nodes[1].Goodness, nl.Nodes[3])
	}
	// The histogram: the two nodes' G in their ln-spaced buckets, two without.
	want := make([]int, histogramBuckets)
	want[bucketOf(nl.Histogram.Edges, gLight)]++
	want[bucketOf(nl.Histogram.Edges, gMid)]++
	if !slices.Equal(nl.Histogram.Counts, want) || nl.Histogram.NoRecord != 2 || nl.Histogram.MeanG == nil || *nl.Histogram.MeanG != (gLight+gMid)/2 {
		t.Errorf("histogram %+v, want counts %v, 2 without a record, mean %v", nl.Histogram, want, (gLight+gMid)/2)
	}
	if gLight >= gMid || gMid >= gBusy {
		t.Fatalf("test usages: G %v, %v, %v are not increasing", gLight, gMid, gBusy)
	}
	for i := 1; i < len(nl.Histogram.Edges); i++ {
		lo, hi := math.Log(nl.Histogram.Edges[i-1]), math.Log(nl.Histogram.Edges[i])
		if math.Abs(hi-lo-3.0/histogramBuckets) > 1e-9 {
			t.Errorf("edges %v are not equally spaced in ln G", nl.Histogram.Edges)
			break
		}
	}

	// Sorted by goodness: lowest first, nodes without a record last (by name).
	h.get("/v1/nodes?sort=goodness&limit=3", &nl)
	names = names[:0]
	for _, n := range nl.Nodes {
		names = append(names, n.Name)
	}
	if !slices.Equal(names, []string{"node-01", "node-03", "node-02"}) || nl.Total != 4 || nl.Sort != "goodness" {
		t.Errorf("sort=goodness&limit=3: %v (total %d)", names, nl.Total)
	}
	h.get("/v1/nodes?offset=3", &nl)
	if len(nl.Nodes) != 1 || nl.Nodes[0].Name != "node-04" || nl.Offset != 3 {
		t.Errorf("offset=3: %+v", nl.Nodes)
	}
	h.get("/v1/nodes?offset=9223372036854775807", &nl) // offset + limit would overflow
	if len(nl.Nodes) != 0 {
		t.Errorf("offset MaxInt64: %d nodes", len(nl.Nodes))
	}
	h.get("/v1/nodes?offset=9", &nl)
	if len(nl.Nodes) != 0 || nl.Total != 4 {
		t.Errorf("offset past the end: %d nodes, total %d", len(nl.Nodes), nl.Total)
	}
	h.badParams("/v1/nodes", map[string]string{"?sort=load": "sort", "?limit=-1": "limit", "?limit=x": "limit", "?limit=10001": "limit", "?offset=-1": "offset"})
}

// bucketOf is the histogram bucket of g by the definition: the last edge
// at or below it.
func bucketOf(edges []float64, g float64) int {
	k := 0
	for i, e := range edges[:len(edges)-1] {
		if e <= g {
			k = i
		}
	}
	return k
}

// TestNodeAppsBounded: a node lists at most MaxNodeApps applications,
// and says how many it has.
func TestNodeAppsBounded(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view))
	var place []map[int]int
	for i := range v1.MaxNodeApps + 5 {
		place = append(place, map[int]int{0: 1 + i%3})
	}
	view.set(testCluster(1, place...), h.clock.Now())
	var nl v1.NodeList
	h.get("/v1/nodes", &nl)
	n := nl.Nodes[0]
	if len(n.Apps) != v1.MaxNodeApps || n.AppsTotal != v1.MaxNodeApps+5 {
		t.Fatalf("%d apps listed of %d", len(n.Apps), n.AppsTotal)
	}
	total := 0
	for _, p := range place {
		total += p[0]
	}
	if n.Containers != total || !slices.IsSortedFunc(n.Apps, func(a, b v1.NodeApp) int { return cmp.Compare(b.Containers, a.Containers) }) {
		t.Errorf("containers %d (want %d), apps not most containers first: %+v", n.Containers, total, n.Apps)
	}
}

// TestClusterApps: the running applications by id with the nodes they
// occupy (most containers first); ?jobs= selects some; an application
// without a placement has one container per node.
func TestClusterApps(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view))
	st := testCluster(3, map[int]int{0: 1, 2: 4}, map[int]int{1: 2})
	st.Apps = append(st.Apps, cluster.App{ID: "application_0_other", Nodes: []string{"node-02", "node-03"}, Alloc: pipeline.Capacity{VCores: 2, MemoryMB: 2048}})
	at := h.clock.Now()
	view.set(st, at)
	var cs v1.ClusterStatus
	r := h.get("/v1/cluster", &cs)
	if !cs.Available || !cs.ReadAt.Equal(at) || cs.Nodes != 3 || cs.Total != 3 || cs.Capacity != wireCapacity(st.Capacity) || r.Header.Get("X-Total-Count") != "3" {
		t.Fatalf("cluster: %+v", cs)
	}
	want := []v1.ClusterApp{
		{AppID: "application_0_other", Alloc: wireCapacity(st.Apps[2].Alloc), Containers: 2, NodesTotal: 2,
			Nodes: []v1.AppNode{{Node: "node-02", Containers: 1}, {Node: "node-03", Containers: 1}}},
		{AppID: "application_1_0000", JobID: "job-0", Kind: testKinds[0], User: "sam", Queue: "etl", Alloc: wireCapacity(st.Apps[0].Alloc), Containers: 5, NodesTotal: 2,
			Nodes: []v1.AppNode{{Node: "node-03", Containers: 4}, {Node: "node-01", Containers: 1}}},
		{AppID: "application_1_0001", JobID: "job-1", Kind: testKinds[1], User: "sam", Queue: "etl", Alloc: wireCapacity(st.Apps[1].Alloc), Containers: 2, NodesTotal: 1,
			Nodes: []v1.AppNode{{Node: "node-02", Containers: 2}}},
	}
	if diff := gocmp.Diff(want, cs.Apps); diff != "" {
		t.Errorf("apps (-want +got):\n%s", diff)
	}
	h.get("/v1/cluster?jobs=job-1,nosuch", &cs)
	if cs.Total != 1 || len(cs.Apps) != 1 || cs.Apps[0].JobID != "job-1" {
		t.Errorf("?jobs=job-1: %+v", cs.Apps)
	}
	h.get("/v1/cluster?offset=9223372036854775807", &cs)
	if len(cs.Apps) != 0 || cs.Total != 3 {
		t.Errorf("offset MaxInt64: %d apps of %d", len(cs.Apps), cs.Total)
	}
	h.get("/v1/cluster?limit=1&offset=1", &cs)
	if cs.Total != 3 || len(cs.Apps) != 1 || cs.Apps[0].AppID != "application_1_0000" {
		t.Errorf("limit=1&offset=1: %+v", cs.Apps)
	}
	many := "job-0"
	for i := range maxJobFilter {
		many += ",j" + strconv.Itoa(i)
	}
	h.badParams("/v1/cluster", map[string]string{"?limit=-2": "limit", "?offset=x": "offset", "?jobs=" + many: "jobs"})
}

// TestClusterAppNodesBounded: an application lists at most MaxAppNodes
// nodes, and says how many it occupies.
func TestClusterAppNodesBounded(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view))
	place := map[int]int{}
	for i := range v1.MaxAppNodes + 7 {
		place[i] = 1 + i%2
	}
	view.set(testCluster(v1.MaxAppNodes+7, place), h.clock.Now())
	var cs v1.ClusterStatus
	h.get("/v1/cluster", &cs)
	a := cs.Apps[0]
	if len(a.Nodes) != v1.MaxAppNodes || a.NodesTotal != v1.MaxAppNodes+7 || a.Containers != int(a.Alloc.VCores) {
		t.Errorf("%d nodes listed of %d, %d containers of %d vcores", len(a.Nodes), a.NodesTotal, a.Containers, a.Alloc.VCores)
	}
}

// TestGoodnessTrend: the records of the window in equal buckets, each
// with its count, mean, min and max; without from, the window starts at
// the oldest record.
func TestGoodnessTrend(t *testing.T) {
	h := newHarness(t, withLimits(testLimits))
	var empty v1.GoodnessTrend
	h.get("/v1/goodness/trend?buckets=4", &empty)
	if empty.Total != 0 || len(empty.Buckets) != 4 || empty.Buckets[0].MeanG != nil || !empty.To.Equal(h.clock.Now()) {
		t.Errorf("no records: %+v", empty)
	}
	now := h.clock.Now()
	var recs []journal.GoodnessRecord
	gs := map[time.Time]float64{}
	for i := range 30 {
		u, g := usageG(float64(i*i%17) / 17)
		at := now.Add(-time.Duration(60-2*i) * time.Minute)
		gs[at] = g
		rec := journal.GoodnessRecord{At: at, Node: "node-1", Chosen: "a", Given: "b", G: -1, Usage: u}
		recs = append(recs, rec)
		if i%3 == 0 { // a node with three kinds: journaled once per pair, counted once
			rec.Chosen, rec.Given = "c", "a"
			recs = append(recs, rec)
		}
	}
	for _, r := range recs {
		if err := h.journal.AddGoodness(r); err != nil {
			t.Fatal(err)
		}
	}
	var tr v1.GoodnessTrend
	h.get("/v1/goodness/trend?buckets=6", &tr)
	from := recs[0].At
	width := now.Sub(from) / 6
	if !tr.From.Equal(from) || !tr.To.Equal(now) || tr.Total != len(gs) || len(tr.Buckets) != 6 || tr.BucketSeconds != width.Seconds() {
		t.Fatalf("trend window %v–%v, %d observations, %d buckets of %v s; want %v–%v, %d, 6 of %v", tr.From, tr.To, tr.Total, len(tr.Buckets), tr.BucketSeconds, from, now, len(gs), width.Seconds())
	}
	for i, b := range tr.Buckets {
		lo := from.Add(time.Duration(i) * width)
		var n int
		var sum, mn, mx float64
		for at, g := range gs {
			if !at.Before(lo) && (at.Before(lo.Add(width)) || i == 5) {
				if n == 0 {
					mn, mx = g, g
				}
				n++
				sum += g
				mn, mx = min(mn, g), max(mx, g)
			}
		}
		if !b.From.Equal(lo) || b.Count != n {
			t.Errorf("bucket %d: from %v count %d, want %v, %d", i, b.From, b.Count, lo, n)
			continue
		}
		if n > 0 && (b.MeanG == nil || math.Abs(*b.MeanG-sum/float64(n)) > 1e-9 || *b.MinG != mn || *b.MaxG != mx) {
			t.Errorf("bucket %d: mean %v min %v max %v, want %v %v %v", i, b.MeanG, b.MinG, b.MaxG, sum/float64(n), mn, mx)
		}
	}
	// An explicit window.
	q := "?buckets=2&from=" + now.Add(-30*time.Minute).Format(time.RFC3339) + "&to=" + now.Format(time.RFC3339)
	h.get("/v1/goodness/trend"+q, &tr)
	inside := 0
	for at := range gs {
		if !at.Before(now.Add(-30 * time.Minute)) {
			inside++
		}
	}
	if tr.Total != inside || tr.Buckets[0].Count+tr.Buckets[1].Count != inside {
		t.Errorf("explicit window: %d observations, buckets %d+%d; want %d", tr.Total, tr.Buckets[0].Count, tr.Buckets[1].Count, inside)
	}
	h.badParams("/v1/goodness/trend", map[string]string{
		"?buckets=0": "buckets", "?buckets=1001": "buckets", "?from=yesterday": "from", "?to=now": "to",
		"?from=" + now.Format(time.RFC3339) + "&to=" + now.Add(-time.Hour).Format(time.RFC3339): "from",
	})
}

// TestGoodnessWithoutLimits: without the nodes' limits no goodness can be
// scored from a usage, and none is made up from the records' rewards.
func TestGoodnessWithoutLimits(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view))
	view.set(testCluster(1), h.clock.Now())
	u, _ := usageG(0.5)
	_ = h.journal.AddGoodness(journal.GoodnessRecord{At: h.clock.Now().Add(-time.Minute), Node: "node-01", G: 9, Usage: u})
	var nl v1.NodeList
	h.get("/v1/nodes", &nl)
	var tr v1.GoodnessTrend
	h.get("/v1/goodness/trend", &tr)
	var s v1.Summary
	h.get("/v1/summary", &s)
	if nl.Nodes[0].G != nil || nl.Histogram.NoRecord != 1 || tr.Total != 0 || s.Goodness.Count != 0 {
		t.Errorf("without limits: node G %v (no record: %d), trend total %d, summary count %d; want none", nl.Nodes[0].G, nl.Histogram.NoRecord, tr.Total, s.Goodness.Count)
	}
}

// TestSummary: the run since the daemon started (jobs, admissions,
// goodness), apart from what the store holds of earlier runs.
func TestSummary(t *testing.T) {
	var hp *harness
	var started time.Time
	h := newHarness(t, withLimits(testLimits), withClock(func() v1.Clock {
		now := hp.clock.Now()
		return v1.Clock{Now: now, WallNow: now, Speed: 1, Started: started, WallStarted: started}
	}))
	hp = h
	// An earlier run: one job done, one still pending.
	h.runJob(h.submit(submitterTok, jobBody("kmeans"), 201).ID, time.Minute)
	h.submit(submitterTok, jobBody("kmeans"), 201)
	_ = h.journal.AddDecision(journal.DecisionRecord{Decision: pipeline.Decision{At: h.clock.Now(), Chosen: "old", Forced: "passed over"}})
	busy, _ := usageG(1)
	_ = h.journal.AddGoodness(journal.GoodnessRecord{At: h.clock.Now(), Node: "n", G: 50, Usage: busy})
	h.clock.Advance(time.Minute)
	started = h.clock.Now()

	// This run: a waits 30 s and runs 100 s; b waits 10 s and runs; c is
	// cancelled; d waits.
	a := h.submit(submitterTok, jobBody("kmeans"), 201).ID
	h.clock.Advance(30 * time.Second)
	h.runJob(a, 100*time.Second)
	b := h.submit(submitterTok, jobBody("terasort"), 201).ID
	h.clock.Advance(10 * time.Second)
	h.runJobStart(b)
	c := h.submit(submitterTok, jobBody("wordcount"), 201).ID
	if _, err := h.store.Cancel(c); err != nil {
		t.Fatal(err)
	}
	h.submit(submitterTok, jobBody("pagerank"), 201)
	at := h.clock.Now()
	for _, d := range []journal.DecisionRecord{
		{Decision: pipeline.Decision{At: at, Chosen: a}},
		{Decision: pipeline.Decision{At: at, Chosen: b, Forced: "job was passed over 5 times"}},
		{Decision: pipeline.Decision{At: at, Chosen: "r", Reserved: "r"}},
		{Decision: pipeline.Decision{At: at, Chosen: "s"}, Shadow: true},
	} {
		_ = h.journal.AddDecision(d)
	}
	u1, g1 := usageG(0.2)
	u2, g2 := usageG(0.6)
	for i, u := range []goodness.Usage{u1, u2} {
		_ = h.journal.AddGoodness(journal.GoodnessRecord{At: at, Node: fmt.Sprint("n", i), G: -1, Usage: u})
	}

	var s v1.Summary
	h.get("/v1/summary", &s)
	counts, _ := h.store.Counts()
	ever, _ := h.store.Submitted()
	wait, runtime := 20.0, 100.0
	mean, lo, hi := (g1+g2)/2, g1, g2
	want := v1.Summary{
		Now: h.clock.Now(), Since: started, Counts: wireCounts(counts), SubmittedEver: ever,
		Run: v1.RunJobs{Scanned: 4, Complete: true, Admitted: 2, MeanWaitSeconds: &wait, MeanRuntimeSeconds: &runtime,
			States: map[v1.State]int{v1.StateSucceeded: 1, v1.StateRunning: 1, v1.StateCancelled: 1, v1.StatePending: 1}},
		Admissions: v1.AdmissionCounts{Scanned: 4, Oldest: &at, Chosen: 2, Shadow: 1, Forced: map[string]int{"max_skips": 1, "reservation": 1}},
		Goodness:   v1.GoodnessStats{Count: 2, MeanG: &mean, MinG: &lo, MaxG: &hi, Scale: goodnessScale},
		Degraded:   []v1.Degraded{},
	}
	if diff := gocmp.Diff(want, s); diff != "" {
		t.Errorf("summary (-want +got):\n%s", diff)
	}
	if counts[queue.StatePending] != 2 || ever != 6 {
		t.Errorf("the store holds %d pending of %d jobs: the test no longer separates the runs", counts[queue.StatePending], ever)
	}
}

// TestSummaryBounded: the jobs of the run are read in doubling batches,
// every one while there are fewer than v1.MaxSummaryJobs, the newest
// that many beyond (and the reply says so).
func TestSummaryBounded(t *testing.T) {
	if testing.Short() {
		t.Skip("stores 5,001 jobs")
	}
	h := newHarness(t)
	submit := func(n int) {
		for range n {
			if _, _, err := h.store.Submit(t.Context(), queue.Job{Kind: "a", User: "sam", Queue: "q",
				Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}}); err != nil {
				t.Fatal(err)
			}
		}
	}
	submit(summaryFirstScan*2 + 3) // three batches
	var s v1.Summary
	h.get("/v1/summary", &s)
	if s.Run.Scanned != summaryFirstScan*2+3 || !s.Run.Complete || s.Run.States[v1.StatePending] != s.Run.Scanned {
		t.Errorf("run of %d jobs: %+v", summaryFirstScan*2+3, s.Run)
	}
	submit(v1.MaxSummaryJobs - s.Run.Scanned + 1)
	h.get("/v1/summary", &s)
	if s.Run.Scanned != v1.MaxSummaryJobs || s.Run.Complete || s.Counts[v1.StatePending] != v1.MaxSummaryJobs+1 {
		t.Errorf("run of %d jobs: scanned %d, complete %v", v1.MaxSummaryJobs+1, s.Run.Scanned, s.Run.Complete)
	}
}

// TestListJobsEstimates: ?estimate=1 gives each listed pending job the
// estimate GET /v1/jobs/{id} gives it, the whole queue's, and the listed
// kinds' runtimes; without it the listing is as before.
func TestListJobsEstimates(t *testing.T) {
	h := newHarness(t)
	var none v1.JobListEstimate
	h.get("/v1/jobs?estimate=1", &none)
	if none.QueueWait != nil || len(none.KindRuntimes) != 0 {
		t.Errorf("empty queue: queue wait %+v, runtimes %v", none.QueueWait, none.KindRuntimes)
	}
	runtimes := map[string]time.Duration{"a": 100 * time.Second, "b": 300 * time.Second}
	for _, k := range []string{"a", "b"} {
		h.runJob(h.submit(submitterTok, jobBody(k), 201).ID, runtimes[k])
	}
	h.runJobStart(h.submit(submitterTok, jobBody("a"), 201).ID)
	h.runJobStart(h.submit(submitterTok, jobBody("x"), 201).ID)
	queued := []string{"a", "b", "x", "b", "a"}
	for _, k := range queued {
		h.submit(submitterTok, jobBody(k), 201)
	}
	fallback := (runtimes["a"] + runtimes["b"]).Seconds() / 2
	expect := func(k string) float64 {
		if rt, ok := runtimes[k]; ok {
			return rt.Seconds()
		}
		return fallback
	}
	var all float64
	for _, k := range queued {
		all += expect(k)
	}
	all /= 2 // two running

	var l v1.JobListEstimate
	h.get("/v1/jobs?state=pending,running&estimate=1", &l)
	if diff := gocmp.Diff(map[string]float64{"a": 100, "b": 300}, l.KindRuntimes); diff != "" {
		t.Errorf("kind runtimes (-want +got):\n%s", diff)
	}
	if q := l.QueueWait; q == nil || q.Seconds == nil || math.Abs(*q.Seconds-all) > 1e-9 || q.JobsAhead != len(queued) || q.Concurrency != 2 {
		t.Errorf("queue wait %+v, want %v s for %d jobs", q, all, len(queued))
	}
	ahead := 0.0
	for _, j := range l.Jobs {
		if j.State != v1.StatePending {
			if j.EstimatedWait != nil {
				t.Errorf("running job %s has a wait estimate", j.ID)
			}
			continue
		}
		var one v1.Job
		h.get("/v1/jobs/"+j.ID, &one)
		if diff := gocmp.Diff(one.EstimatedWait, j.EstimatedWait); diff != "" {
			t.Errorf("job %s at %d: listing's estimate differs from GET /v1/jobs/{id}'s (-get +list):\n%s", j.ID, *j.Position, diff)
		}
		if w := j.EstimatedWait; w == nil || w.Seconds == nil || math.Abs(*w.Seconds-ahead/2) > 1e-9 {
			t.Errorf("job %s at %d waits %+v, want %v s", j.ID, *j.Position, w, ahead/2)
		}
		ahead += expect(j.Kind)
	}
	// The running jobs alone: their kinds' runtimes, no queue estimate.
	var active v1.JobListEstimate
	h.get("/v1/jobs?state=running&estimate=1", &active)
	if active.QueueWait != nil || active.KindRuntimes["a"] != 100 || len(active.Jobs) != 2 {
		t.Errorf("state=running: %d jobs, queue wait %+v, runtimes %v; want 2, none, a: 100", len(active.Jobs), active.QueueWait, active.KindRuntimes)
	}
	// A shorter page: the queue's estimate still covers every pending job.
	var page v1.JobListEstimate
	h.get("/v1/jobs?state=pending&limit=2&estimate=1", &page)
	if len(page.Jobs) != 2 || gocmp.Diff(l.QueueWait, page.QueueWait) != "" || page.Jobs[1].EstimatedWait == nil {
		t.Errorf("limit=2: %d jobs, queue wait %+v (want %+v)", len(page.Jobs), page.QueueWait, l.QueueWait)
	}
	// Without estimate=1: no estimates, no extra fields.
	for _, q := range []string{"", "&estimate=0", "&estimate=false"} {
		r := h.do("GET", "/v1/jobs?state=pending"+q, readerTok, "")
		if bytes := string(r.Body); r.Code != 200 || strings.Contains(bytes, "estimated_wait") || strings.Contains(bytes, "queue_wait") {
			t.Errorf("GET /v1/jobs?state=pending%s: %d, has estimates:\n%.300s", q, r.Code, bytes)
		}
	}
	h.badParams("/v1/jobs", map[string]string{"?estimate=maybe": "estimate"})
}

// TestNodesAtScale: 10,000 nodes come a page at a time, and the
// histogram still counts every one of them.
func TestNodesAtScale(t *testing.T) {
	view := &fakeView{}
	h := newHarness(t, withCluster(view), withLimits(testLimits))
	st := testCluster(10000)
	view.set(st, h.clock.Now())
	u, _ := usageG(0.3)
	for i := range 1000 { // the harness's journal keeps 1,000
		_ = h.journal.AddGoodness(journal.GoodnessRecord{At: h.clock.Now().Add(-time.Minute), Node: st.Nodes[i*4].Name, Usage: u})
	}
	var nl v1.NodeList
	h.get("/v1/nodes", &nl)
	sum := nl.Histogram.NoRecord
	for _, c := range nl.Histogram.Counts {
		sum += c
	}
	if nl.Total != 10000 || len(nl.Nodes) != defaultNodePage || sum != 10000 || nl.Histogram.NoRecord != 10000-1000 {
		t.Errorf("10,000 nodes: total %d, %d listed, histogram counts %d (%d without a record); want 10000, %d, 10000, 9000",
			nl.Total, len(nl.Nodes), sum, nl.Histogram.NoRecord, defaultNodePage)
	}
}
