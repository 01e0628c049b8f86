package api

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/queue"
)

// The operator's console: the endpoints behind the status page's node
// view, running applications, goodness trend and run summary. Each reads
// what the daemon already holds in memory or counts in O(1), in bounded
// amounts.

// ClusterView is the cluster as the engine last read it (engine.Engine
// implements it): its nodes, free room and running applications with
// where their containers are. It must be safe for concurrent use and
// must not wait for an admission pass; the state it returns is shared
// and is not modified.
type ClusterView interface {
	// ClusterView returns the last state read and when, on the daemon
	// clock; ok is false before the first read.
	ClusterView() (st cluster.State, at time.Time, ok bool)
}

// Defaults and bounds of the console's parameters.
const (
	defaultNodePage     = 500  // GET /v1/nodes and /v1/cluster without ?limit=
	defaultTrendBuckets = 60   // GET /v1/goodness/trend without ?buckets=
	maxTrendBuckets     = 1000 // ?buckets=
	histogramBuckets    = 10   // GET /v1/nodes's histogram
	maxJobFilter        = 1000 // ?jobs= of GET /v1/cluster
	summaryFirstScan    = 64   // GET /v1/summary reads jobs in doubling batches from this
)

var goodnessScale = apiclient.GoodnessScale{Min: goodness.Min, Max: goodness.Max}

// goodnessWindowStart is the default start of a goodness window ending at
// to (GET /v1/goodness and the console's): the last defaultGoodnessWindow,
// or on the simulator, whose clock races ahead (24 virtual hours pass in
// 2.4 wall minutes at 600×), everything since this daemon started.
func (s *server) goodnessWindowStart(to time.Time) time.Time {
	if c := s.clock(); c.Simulated && c.Started.Before(to) {
		return c.Started
	}
	return to.Add(-defaultGoodnessWindow)
}

// view reads the cluster view; ok false without one.
func (s *server) view() (cluster.State, time.Time, bool) {
	if s.cluster == nil {
		return cluster.State{}, time.Time{}, false
	}
	return s.cluster.ClusterView()
}

// nodePage is the page of ?limit=&offset=, limit defaultNodePage when
// absent.
func nodePage(q url.Values) (limit, offset int, err error) {
	limit, offset, err = parsePage(q)
	if err == nil && limit < 0 {
		limit = defaultNodePage
	}
	return limit, offset, err
}

// getNodes: GET /v1/nodes?limit=&offset=&sort=name|goodness.
func (s *server) getNodes(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	limit, offset, err := nodePage(q)
	if err != nil {
		return err
	}
	sortBy := cmp.Or(q.Get("sort"), "name")
	if sortBy != "name" && sortBy != "goodness" {
		return errorf(http.StatusBadRequest, "sort", "sort %q is not name or goodness", sortBy)
	}
	to := s.now()
	out := apiclient.NodeList{Sort: sortBy, Offset: offset, Nodes: []apiclient.NodeStatus{}, Scale: goodnessScale,
		GoodnessFrom: s.goodnessWindowStart(to), GoodnessTo: to}
	st, at, ok := s.view()
	out.Histogram = apiclient.GoodnessHistogram{Edges: histogramEdges(), Counts: make([]int, histogramBuckets)}
	if !ok {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	out.Available, out.ReadAt, out.Capacity, out.Free, out.Total = true, &at, st.Capacity, st.Free, len(st.Nodes)
	latest := s.latestGoodness(out.GoodnessFrom, to)
	order := make([]int, len(st.Nodes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int {
		na, nb := st.Nodes[a].Name, st.Nodes[b].Name
		if sortBy == "goodness" {
			ra, oka := latest[na]
			rb, okb := latest[nb]
			switch {
			case oka && okb && ra.g != rb.g:
				return cmp.Compare(ra.g, rb.g)
			case oka != okb:
				if oka {
					return -1
				}
				return 1
			}
		}
		return cmp.Compare(na, nb)
	})
	histogram(&out.Histogram, st.Nodes, latest)
	apps := appsByID(st)
	from := min(offset, len(order)) // then from+limit cannot overflow
	for _, i := range order[from:min(from+limit, len(order))] {
		out.Nodes = append(out.Nodes, nodeStatus(st.Nodes[i], apps, latest))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(out.Total))
	writeJSON(w, http.StatusOK, out)
	return nil
}

// nodeG is a goodness record and the goodness of its node's usage.
type nodeG struct {
	rec journal.GoodnessRecord
	g   float64
}

// eachNodeG calls fn on each node observation of the goodness records
// with from <= at < to (a zero bound is open), oldest first, with g the
// goodness of the node's usage (Eq. 1 under Deps.Limits). That is not
// always the record's G: the record holds the reward the learner was
// credited, which with learning.pair_reward residual is the goodness
// minus the profiles' prediction. A node observed with k kinds is
// journaled once per pair of them, in a row: fn sees it once. Records
// whose goodness cannot be computed (unknown limits, invalid usage) are
// left out.
func (s *server) eachNodeG(from, to time.Time, fn func(rec journal.GoodnessRecord, g float64)) {
	if s.journal == nil || s.limits.Validate() != nil {
		return
	}
	var lastNode string
	var lastAt time.Time
	s.journal.EachGoodness(from, to, func(rec journal.GoodnessRecord) {
		if rec.Node == lastNode && rec.At.Equal(lastAt) {
			return
		}
		lastNode, lastAt = rec.Node, rec.At
		if g, err := goodness.Checked(rec.Usage, s.limits); err == nil {
			fn(rec, g)
		}
	})
}

// latestGoodness is each node's newest observation with from <= at < to.
func (s *server) latestGoodness(from, to time.Time) map[string]nodeG {
	latest := map[string]nodeG{}
	s.eachNodeG(from, to, func(rec journal.GoodnessRecord, g float64) {
		if old, ok := latest[rec.Node]; !ok || !rec.At.Before(old.rec.At) {
			latest[rec.Node] = nodeG{rec: rec, g: g}
		}
	})
	return latest
}

// histogramEdges are histogramBuckets+1 edges equally spaced in ln G over
// [goodness.Min, goodness.Max].
func histogramEdges() []float64 {
	lo, hi := math.Log(goodness.Min), math.Log(goodness.Max)
	edges := make([]float64, histogramBuckets+1)
	for i := range edges {
		edges[i] = math.Exp(lo + (hi-lo)*float64(i)/histogramBuckets)
	}
	edges[0], edges[histogramBuckets] = goodness.Min, goodness.Max
	return edges
}

// histogram counts nodes into h by their latest goodness.
func histogram(h *apiclient.GoodnessHistogram, nodes []cluster.Node, latest map[string]nodeG) {
	var sum float64
	n := 0
	for _, node := range nodes {
		ng, ok := latest[node.Name]
		if !ok {
			h.NoRecord++
			continue
		}
		k, _ := slices.BinarySearch(h.Edges, ng.g)
		// BinarySearch gives the first edge >= G: the bucket below it,
		// except at an exact lower edge.
		if k < len(h.Edges) && h.Edges[k] == ng.g {
			k++
		}
		h.Counts[min(max(k-1, 0), histogramBuckets-1)]++
		sum += ng.g
		n++
	}
	if n > 0 {
		m := sum / float64(n)
		h.MeanG = &m
	}
}

func appsByID(st cluster.State) map[string]*cluster.App {
	apps := make(map[string]*cluster.App, len(st.Apps))
	for i := range st.Apps {
		apps[st.Apps[i].ID] = &st.Apps[i]
	}
	return apps
}

// nodeStatus is one node of GET /v1/nodes.
func nodeStatus(n cluster.Node, apps map[string]*cluster.App, latest map[string]nodeG) apiclient.NodeStatus {
	ns := apiclient.NodeStatus{Name: n.Name, Capacity: n.Capacity, Free: n.Free, Apps: []apiclient.NodeApp{}}
	for _, id := range n.Apps {
		na := apiclient.NodeApp{AppID: id, Containers: 1}
		if a, ok := apps[id]; ok {
			na = apiclient.NodeApp{AppID: id, JobID: a.JobID, Kind: a.Kind, User: a.User, Containers: a.ContainersOn(n.Name)}
		}
		ns.Containers += na.Containers
		ns.Apps = append(ns.Apps, na)
	}
	slices.SortStableFunc(ns.Apps, func(a, b apiclient.NodeApp) int {
		return cmp.Or(cmp.Compare(b.Containers, a.Containers), cmp.Compare(a.AppID, b.AppID))
	})
	ns.AppsTotal = len(ns.Apps)
	ns.Apps = ns.Apps[:min(len(ns.Apps), apiclient.MaxNodeApps)]
	if ng, ok := latest[n.Name]; ok {
		ns.Goodness, ns.G = &ng.rec, &ng.g
	}
	return ns
}

// getCluster: GET /v1/cluster?jobs=a,b&limit=&offset=.
func (s *server) getCluster(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	limit, offset, err := nodePage(q)
	if err != nil {
		return err
	}
	jobs, err := parseJobFilter(q.Get("jobs"))
	if err != nil {
		return err
	}
	out := apiclient.ClusterStatus{Offset: offset, Apps: []apiclient.ClusterApp{}}
	st, at, ok := s.view()
	if !ok {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	out.Available, out.ReadAt, out.Capacity, out.Free, out.Nodes = true, &at, st.Capacity, st.Free, len(st.Nodes)
	sel := make([]*cluster.App, 0, len(st.Apps))
	for i := range st.Apps {
		if a := &st.Apps[i]; jobs == nil || jobs[a.JobID] {
			sel = append(sel, a)
		}
	}
	slices.SortFunc(sel, func(a, b *cluster.App) int { return cmp.Compare(a.ID, b.ID) })
	out.Total = len(sel)
	from := min(offset, len(sel))
	for _, a := range sel[from:min(from+limit, len(sel))] {
		out.Apps = append(out.Apps, clusterApp(a))
	}
	w.Header().Set("X-Total-Count", strconv.Itoa(out.Total))
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseJobFilter parses ?jobs=a,b: nil (every application) when empty.
func parseJobFilter(v string) (map[string]bool, error) {
	if strings.TrimSpace(v) == "" {
		return nil, nil
	}
	set := map[string]bool{}
	for part := range strings.SplitSeq(v, ",") {
		if id := strings.TrimSpace(part); id != "" {
			set[id] = true
		}
		if len(set) > maxJobFilter {
			return nil, errorf(http.StatusBadRequest, "jobs", "more than %d job ids in the filter", maxJobFilter)
		}
	}
	if len(set) == 0 {
		return nil, nil // only commas: every application
	}
	return set, nil
}

// clusterApp is one application of GET /v1/cluster.
func clusterApp(a *cluster.App) apiclient.ClusterApp {
	ca := apiclient.ClusterApp{AppID: a.ID, JobID: a.JobID, Kind: a.Kind, User: a.User, Queue: a.Queue,
		Alloc: a.Alloc, Nodes: []apiclient.AppNode{}}
	if !a.Starts.IsZero() {
		t := a.Starts
		ca.Starts = &t
	}
	for _, n := range a.Nodes {
		c := a.ContainersOn(n)
		ca.Containers += c
		ca.Nodes = append(ca.Nodes, apiclient.AppNode{Node: n, Containers: c})
	}
	slices.SortStableFunc(ca.Nodes, func(x, y apiclient.AppNode) int {
		return cmp.Or(cmp.Compare(y.Containers, x.Containers), cmp.Compare(x.Node, y.Node))
	})
	ca.NodesTotal = len(ca.Nodes)
	ca.Nodes = ca.Nodes[:min(len(ca.Nodes), apiclient.MaxAppNodes)]
	return ca
}

// timeParam parses the RFC 3339 time of query parameter name; ok false
// when it is absent.
func timeParam(r *http.Request, name string) (t time.Time, ok bool, err error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return time.Time{}, false, nil
	}
	t, err = time.Parse(time.RFC3339, v)
	if err != nil {
		return time.Time{}, false, errorf(http.StatusBadRequest, name, "%s %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", name, v)
	}
	return t, true, nil
}

// getGoodnessTrend: GET /v1/goodness/trend?from=&to=&buckets=. Without
// from, the window starts at the oldest record of GET /v1/goodness's
// default window, so that the buckets span the data.
func (s *server) getGoodnessTrend(w http.ResponseWriter, r *http.Request, _ principal) error {
	n, err := queryInt(r, "buckets", defaultTrendBuckets, maxTrendBuckets)
	if err != nil {
		return err
	}
	to, ok, err := timeParam(r, "to")
	if err != nil {
		return err
	}
	if !ok {
		to = s.now()
	}
	from, ok, err := timeParam(r, "from")
	if err != nil {
		return err
	}
	if !ok {
		from = s.goodnessWindowStart(to)
		first := to
		s.eachNodeG(from, to, func(rec journal.GoodnessRecord, _ float64) {
			if rec.At.Before(first) {
				first = rec.At
			}
		})
		if first.Before(to) {
			from = first
		}
	}
	if !from.Before(to) {
		return errorf(http.StatusBadRequest, "from", "from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	width := to.Sub(from) / time.Duration(n)
	if width <= 0 {
		width = 1
	}
	out := apiclient.GoodnessTrend{From: from, To: to, BucketSeconds: width.Seconds(), Scale: goodnessScale,
		Buckets: make([]apiclient.TrendBucket, n)}
	sum := make([]float64, n)
	for i := range out.Buckets {
		out.Buckets[i].From = from.Add(time.Duration(i) * width)
	}
	s.eachNodeG(from, to, func(rec journal.GoodnessRecord, g float64) {
		i := min(int(rec.At.Sub(from)/width), n-1)
		b := &out.Buckets[i]
		out.Total++
		b.Count++
		sum[i] += g
		if b.MinG == nil {
			lo, hi := g, g
			b.MinG, b.MaxG = &lo, &hi
		}
		*b.MinG, *b.MaxG = min(*b.MinG, g), max(*b.MaxG, g)
	})
	for i := range out.Buckets {
		if b := &out.Buckets[i]; b.Count > 0 {
			m := sum[i] / float64(b.Count)
			b.MeanG = &m
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getSummary: GET /v1/summary, the run since this daemon started. Bounded:
// the store's counts are O(1); the jobs since the start are read newest
// first, at most apiclient.MaxSummaryJobs; the decisions from the
// journal's ring, at most apiclient.MaxSummaryDecisions; the goodness
// records are the journal's ring.
func (s *server) getSummary(w http.ResponseWriter, _ *http.Request, _ principal) error {
	c := s.clock()
	out := apiclient.Summary{Now: c.Now, Since: c.Started}
	var err error
	if out.Counts, err = s.store.Counts(); err != nil {
		return storeError(err, "counting jobs")
	}
	if out.SubmittedEver, err = s.store.Submitted(); err != nil {
		return storeError(err, "counting submissions")
	}
	if out.Run, err = s.runJobs(c.Started); err != nil {
		return storeError(err, "reading the run's jobs")
	}
	out.Admissions = s.admissions(c.Started)
	out.Degraded = s.degradedNow()
	if s.fifo != nil {
		out.FIFO = s.fifo()
	}
	out.Goodness = apiclient.GoodnessStats{Scale: goodnessScale}
	var sum float64
	g := &out.Goodness
	s.eachNodeG(c.Started, time.Time{}, func(_ journal.GoodnessRecord, v float64) {
		if g.Count == 0 {
			lo, hi := v, v
			g.MinG, g.MaxG = &lo, &hi
		}
		g.Count++
		sum += v
		*g.MinG, *g.MaxG = min(*g.MinG, v), max(*g.MaxG, v)
	})
	if g.Count > 0 {
		m := sum / float64(g.Count)
		g.MeanG = &m
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// storeError is a read of the store that failed: 503 when the store is
// closed (shutting down), else ours.
func storeError(err error, doing string) error {
	if errors.Is(err, queue.ErrClosed) {
		return errorf(http.StatusServiceUnavailable, "", "store is closed (shutting down)")
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// runJobs describes the jobs submitted since since. It reads the newest
// jobs in batches that double, from summaryFirstScan up to
// apiclient.MaxSummaryJobs, until one was submitted before since: the
// cost follows the run's jobs, not the store's.
func (s *server) runJobs(since time.Time) (apiclient.RunJobs, error) {
	n := summaryFirstScan
	for {
		jobs, err := s.store.Recent("", n)
		if err != nil {
			return apiclient.RunJobs{}, err
		}
		run := apiclient.RunJobs{States: map[queue.State]int{}}
		var wait, runtime float64
		succeeded := 0
		older := false
		for _, j := range jobs {
			if j.CreatedAt.Before(since) {
				older = true
				break
			}
			run.Scanned++
			run.States[j.State]++
			if j.AdmittedAt != nil {
				run.Admitted++
				wait += j.AdmittedAt.Sub(j.CreatedAt).Seconds()
			}
			if j.State == queue.StateSucceeded && j.RunningAt != nil && j.FinishedAt != nil {
				succeeded++
				runtime += j.FinishedAt.Sub(*j.RunningAt).Seconds()
			}
		}
		run.Complete = older || len(jobs) < n
		if run.Complete || n >= apiclient.MaxSummaryJobs {
			if run.Admitted > 0 {
				m := wait / float64(run.Admitted)
				run.MeanWaitSeconds = &m
			}
			if succeeded > 0 {
				m := runtime / float64(succeeded)
				run.MeanRuntimeSeconds = &m
			}
			return run, nil
		}
		n = min(2*n, apiclient.MaxSummaryJobs)
	}
}

// admissions counts the journaled admissions since since. Forced
// admissions are told apart as the engine's metrics do: the job holding
// the reservation, or one passed over max_skips times.
func (s *server) admissions(since time.Time) apiclient.AdmissionCounts {
	out := apiclient.AdmissionCounts{Forced: map[string]int{}}
	if s.journal == nil {
		return out
	}
	for _, d := range s.journal.Decisions(apiclient.MaxSummaryDecisions) {
		if d.At.Before(since) {
			break
		}
		out.Scanned++
		at := d.At
		out.Oldest = &at
		if d.Shadow {
			out.Shadow++
		}
		switch {
		case d.Reserved != "" && d.Reserved == d.Chosen:
			out.Forced["reservation"]++
		case d.Forced != "":
			out.Forced["max_skips"]++
		default:
			out.Chosen++
		}
	}
	return out
}
