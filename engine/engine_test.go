package engine

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

// harness is an engine on a simulator in virtual time.
type harness struct {
	tb      testing.TB
	s       *sim.Sim
	store   *queue.Store
	learner *bandit.Learner
	journal *journal.Journal
	dir     string // the store's and the journal's
	cluster *simcluster.Cluster
	e       *Engine
	opts    Options // what e was made with
	ctx     context.Context
}

type harnessOpts struct {
	nodes    int
	mode     AdmissionMode
	max      int
	credit   CreditMode
	maxKinds int
	metrics  func(*simcluster.Cluster) UsageSource // nil: the simulator's
	placer   *Placer                               // Options.Placement
	cluster  func(*simcluster.Cluster) Cluster     // nil: the simulator
	pipeline func(*pipeline.Config)
	noRecon  bool
	logger   *slog.Logger // nil: discard
	// free is the store's free space (queue.Options.FreeSpace, with a
	// 1 MiB reserve); nil: no reserve.
	free func() (uint64, error)
	// containerMetrics: the simulator reports each application's own CPU
	// and disk (sim.Options.ContainerMetrics).
	containerMetrics bool
}

// testQueueConfig is colocd's default pipeline: pipeline.DefaultConfig with
// the profile model deciding by argmax (the daemon's defaults).
func testQueueConfig() pipeline.Config {
	q := pipeline.DefaultConfig()
	q.Preference.Mode = pipeline.PreferenceModel
	q.Select.Mode = pipeline.SelectArgmax
	return q
}

func newHarness(tb testing.TB, o harnessOpts) *harness {
	tb.Helper()
	if o.nodes == 0 {
		o.nodes = 2
	}
	wl, err := sim.ParseWorkload([]byte(simtest.ThreeKindsYAML(o.nodes)))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := wl.NewSim(sim.Options{Seed: 7, ContainerMetrics: o.containerMetrics})
	if err != nil {
		tb.Fatal(err)
	}
	dir := tb.TempDir()
	clk := simcluster.Clock{Sim: s}
	qo := queue.Options{NoSync: true, Now: clk.Now}
	if o.free != nil {
		qo.Reserve, qo.FreeSpace = 1<<20, o.free
	}
	store, err := queue.Open(filepath.Join(dir, "colocd.db"), qo)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	j, err := journal.Open(filepath.Join(dir, "journal"), 1000, 1000)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { j.Close() })
	l := bandit.New(bandit.Config{StepSize: 0.1})
	for _, k := range []string{"cpu", "disk", "net"} {
		l.Add(k)
	}
	sc := simcluster.New(simcluster.DirectExec(s), nil)
	var cl Cluster = sc
	if o.cluster != nil {
		cl = o.cluster(sc)
	}
	var m UsageSource = sc
	if o.metrics != nil {
		m = o.metrics(sc)
	}
	pc := testQueueConfig()
	pc.Altruism.Enabled = false
	pc.Preference.ObserveWait = 0 // admit at once: these tests follow the jobs, not the exploration
	if o.pipeline != nil {
		o.pipeline(&pc)
	}
	if o.mode == "" {
		o.mode = ModeActive
	}
	opts := Options{
		Store: store, Learner: l, Cluster: cl, Metrics: m, Clock: clk, Journal: j,
		Rand:  rand.New(rand.NewPCG(1, 1)),
		Queue: pc, Scorer: DefaultScorerConfig(),
		MaxRunning: o.max, Mode: o.mode, Credit: o.credit, MaxKindsPerNode: o.maxKinds,
		Limits: sc.Limits(), Logger: o.logger, Placement: o.placer,
	}
	if o.containerMetrics {
		opts.ContainerUsage = sc
	}
	e, err := New(opts)
	if err != nil {
		tb.Fatal(err)
	}
	h := &harness{tb: tb, s: s, store: store, learner: l, journal: j, dir: dir, cluster: sc, e: e, opts: opts, ctx: context.Background()}
	if !o.noRecon {
		if _, err := e.Reconcile(h.ctx); err != nil {
			tb.Fatal(err)
		}
	}
	return h
}

// submit queues jobs of the given kinds, in order, through Prepare, and
// makes their kinds known as the API does.
func (h *harness) submit(kinds ...string) []string {
	h.tb.Helper()
	var ids []string
	for _, k := range kinds {
		j := queue.Job{Kind: k, User: "ana", Queue: "default"}
		if err := h.e.Prepare(&j); err != nil {
			h.tb.Fatal(err)
		}
		got, _, err := h.store.Submit(h.ctx, j)
		if err != nil {
			h.tb.Fatal(err)
		}
		h.e.AddKind(got.Kind) // as the API does once a job is stored
		ids = append(ids, got.ID)
	}
	return ids
}

// passSnapshot is the first decision's input of a pass opened now.
func (h *harness) passSnapshot() pipeline.Snapshot {
	h.tb.Helper()
	v := &passView{}
	if err := h.e.openView(h.ctx, v); err != nil {
		h.tb.Fatal(err)
	}
	snap, err := h.e.snapshot(v)
	if err != nil {
		h.tb.Fatal(err)
	}
	return snap
}

func (h *harness) admit() admitReport {
	h.tb.Helper()
	rep, err := h.e.AdmitPass(h.ctx)
	if err != nil {
		h.tb.Fatal(err)
	}
	return rep
}

func (h *harness) sync() syncReport {
	h.tb.Helper()
	rep, err := h.e.Sync(h.ctx)
	if err != nil {
		h.tb.Fatal(err)
	}
	return rep
}

func (h *harness) advance(d time.Duration) time.Time {
	h.s.Advance(h.s.Now().Add(d))
	return h.s.Now()
}

func (h *harness) state(id string) queue.State {
	h.tb.Helper()
	j, err := h.store.Get(id)
	if err != nil {
		h.tb.Fatal(err)
	}
	return j.State
}

// submissions counts the simulator's applications per job id.
func (h *harness) submissions() map[string]int {
	n := map[string]int{}
	for _, a := range h.s.Apps() {
		n[a.JobID]++
	}
	return n
}

func TestAdmitRespectsFitAndRunsEveryJobOnce(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2})
	ids := h.submit("cpu", "disk", "net", "cpu", "disk", "net", "cpu")
	rep := h.admit()
	if len(rep.Admitted) != 4 || rep.Stopped != "nothing fits" {
		t.Fatalf("first pass admitted %d (%s), want 4 then nothing fits", len(rep.Admitted), rep.Stopped)
	}
	for i := 0; i < 50; i++ {
		h.advance(30 * time.Second)
		h.sync()
		h.admit()
		c, _ := h.store.Counts()
		if c[queue.StateSucceeded] == len(ids) {
			break
		}
	}
	for _, id := range ids {
		if got := h.state(id); got != queue.StateSucceeded {
			t.Errorf("job %s is %s, want succeeded", id, got)
		}
	}
	want := map[string]int{}
	for _, id := range ids {
		want[id] = 1
	}
	if diff := cmp.Diff(want, h.submissions()); diff != "" {
		t.Errorf("submissions per job (-want +got):\n%s", diff)
	}
	// Every admission's node use stayed within capacity (the simulator
	// would have refused it), and each decision is journaled.
	if got := len(h.journal.Decisions(100)); got != len(ids) {
		t.Errorf("journaled %d decisions, want %d", got, len(ids))
	}
}

func TestAdmitMaxRunning(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2, max: 1})
	ids := h.submit("cpu", "disk")
	rep := h.admit()
	if len(rep.Admitted) != 1 || rep.Stopped != "max_running" {
		t.Fatalf("admitted %v (%s), want one then max_running", rep.Admitted, rep.Stopped)
	}
	h.advance(200 * time.Second)
	if rep := h.sync(); len(rep.Finished) != 1 {
		t.Fatalf("sync finished %v, want 1", rep.Finished)
	}
	if rep := h.admit(); len(rep.Admitted) != 1 || rep.Admitted[0] != ids[1] {
		t.Fatalf("second pass admitted %v, want [%s]", rep.Admitted, ids[1])
	}
}

func TestAdmitBeforeReconcile(t *testing.T) {
	h := newHarness(t, harnessOpts{noRecon: true})
	h.submit("cpu")
	if _, err := h.e.AdmitPass(h.ctx); !errors.Is(err, ErrNotReady) {
		t.Fatalf("AdmitPass before Reconcile: err = %v, want ErrNotReady", err)
	}
	if err := h.e.Ready(h.ctx); !errors.Is(err, ErrNotReady) {
		t.Fatalf("Ready before Reconcile = %v, want ErrNotReady", err)
	}
}

// preferNet makes net by far the preferred partner of cpu.
func preferNet(l *bandit.Learner) {
	for range 40 {
		l.Update("net", "cpu", 50)
		l.Update("disk", "cpu", 3)
	}
}

func TestShadowModeAdmitsFIFOAndJournalsLearnedChoice(t *testing.T) {
	for _, mode := range []AdmissionMode{ModeShadow, ModeActive} {
		t.Run(string(mode), func(t *testing.T) {
			// One node: the next job must land beside cpu (an empty node
			// would take it alone, and the context would be empty).
			h := newHarness(t, harnessOpts{nodes: 1, mode: mode, pipeline: func(pc *pipeline.Config) {
				pc.Preference.Mode = pipeline.PreferenceBandit // the learned pair preferences decide
			}})
			preferNet(h.learner)
			first := h.submit("cpu")
			h.admit() // cpu holds half of the only node
			ids := h.submit("disk", "net")
			rep := h.admit()
			if len(rep.Admitted) == 0 {
				t.Fatalf("nothing admitted: %+v", rep)
			}
			recs := h.journal.Decisions(10)
			var rec journal.DecisionRecord // the decision between disk and net
			for _, r := range recs {
				if len(r.Candidates) == 2 {
					rec = r
				}
			}
			_ = first
			learned, fifo := ids[1], ids[0] // net is learned, disk is FIFO
			if rec.Chosen != learned {
				t.Errorf("journaled learned choice %s, want the net job %s", rec.Chosen, learned)
			}
			want := learned
			if mode == ModeShadow {
				want = fifo
				if !rec.Shadow || rec.FIFOChoice != fifo {
					t.Errorf("shadow record: shadow=%v fifo=%q, want true and %s", rec.Shadow, rec.FIFOChoice, fifo)
				}
			} else if rec.Shadow {
				t.Errorf("active mode journaled shadow=true")
			}
			if rep.Admitted[0] != want {
				t.Errorf("admitted %s first, want %s", rep.Admitted[0], want)
			}
			j, _ := h.store.Get(want)
			var stored journal.DecisionRecord
			if err := json.Unmarshal(j.Decision, &stored); err != nil || stored.AppID != j.AppID || stored.Chosen != learned {
				t.Errorf("stored decision %+v (err %v), want app %s and chosen %s", stored, err, j.AppID, learned)
			}
		})
	}
}

// colocate runs one cpu job then one other job on a single node and
// returns the times of the two syncs around a 60 s window.
func colocate(h *harness, other string) (from, to time.Time) {
	h.tb.Helper()
	h.submit("cpu")
	h.admit()
	h.advance(time.Second)
	h.submit(other)
	h.admit()
	h.advance(time.Second)
	from = h.sync().At
	h.advance(60 * time.Second)
	return from, h.sync().At
}

func TestLearnCreditsLaterKindGivenEarlier(t *testing.T) {
	for _, credit := range []CreditMode{CreditLater, CreditSymmetric} {
		t.Run(string(credit), func(t *testing.T) {
			h := newHarness(t, harnessOpts{nodes: 1, credit: credit})
			from, to := colocate(h, "disk")
			rep, err := h.e.Learn(h.ctx, from, to)
			if err != nil {
				t.Fatal(err)
			}
			wantUpdates := map[CreditMode]int{CreditLater: 1, CreditSymmetric: 2}[credit]
			if rep.Colocations != 1 || rep.Updates != wantUpdates || len(rep.Stale) != 0 {
				t.Fatalf("report %+v, want 1 colocation and %d updates", rep, wantUpdates)
			}
			u, ok := h.s.Usage("node01", from, to)
			if !ok {
				t.Fatal("no simulated usage")
			}
			g := goodness.Score(u, h.cluster.Limits())
			got := h.journal.Goodness(from.Add(-time.Hour), to.Add(time.Hour))
			if len(got) != 1 || got[0].Chosen != "disk" || got[0].Given != "cpu" || got[0].Node != "node01" || got[0].G != g {
				t.Fatalf("goodness records %+v, want disk given cpu on node01 with G=%v", got, g)
			}
			// One observation: the baseline is G itself, so the first
			// update moves nothing; a second, worse co-location must.
			snap := h.learner.Snapshot()
			if snap.Observations != int64(wantUpdates) {
				t.Errorf("observations %d, want %d", snap.Observations, wantUpdates)
			}
			if saved := h.persisted(); saved.Observations != snap.Observations {
				t.Errorf("persisted observations %d, want %d", saved.Observations, snap.Observations)
			}
			kinds := h.learner.Kinds()
			po := h.learner.Snapshot().PairObservations
			at := func(given, chosen string) int64 {
				return po[slices.Index(kinds, given)][slices.Index(kinds, chosen)]
			}
			if at("cpu", "disk") != 1 {
				t.Errorf("observations of disk given cpu = %d, want 1", at("cpu", "disk"))
			}
			wantRev := map[CreditMode]int64{CreditLater: 0, CreditSymmetric: 1}[credit]
			if at("disk", "cpu") != wantRev {
				t.Errorf("observations of cpu given disk = %d, want %d", at("disk", "cpu"), wantRev)
			}
		})
	}
}

// fixedMetrics returns set usage per host.
type fixedMetrics map[string]goodness.Usage

func (f fixedMetrics) Usage(_ context.Context, hosts []string, _, _ time.Time) (map[string]goodness.Usage, []string, error) {
	out := map[string]goodness.Usage{}
	var stale []string
	for _, h := range hosts {
		if u, ok := f[h]; ok {
			out[h] = u
		} else {
			stale = append(stale, h)
		}
	}
	return out, stale, nil
}

func TestLearnAggregate(t *testing.T) {
	um := fixedMetrics{
		"n1": {CPU: 0.9, DiskRead: 50e6},
		"n2": {CPU: 0.2, IOWait: 0.3, DiskRead: 150e6, DiskWrite: 100e6},
	}
	for _, tc := range []struct {
		agg     Aggregate
		updates int
	}{{AggregatePair, 1}, {AggregateNode, 2}} {
		t.Run(string(tc.agg), func(t *testing.T) {
			h := newHarness(t, harnessOpts{nodes: 1, metrics: func(*simcluster.Cluster) UsageSource { return um }})
			h.e.aggregate = tc.agg
			t0 := h.s.Now()
			t1 := t0.Add(time.Minute)
			h.e.mu.Lock()
			for _, n := range []string{"n1", "n2"} {
				h.e.presence[n] = map[string]*presence{
					n + "a": {kind: "cpu", since: t0, lastSeen: t1, admitted: t0},
					n + "b": {kind: "disk", since: t0, lastSeen: t1, admitted: t0.Add(time.Second)},
				}
			}
			h.e.mu.Unlock()
			rep, err := h.e.Learn(h.ctx, t0, t1)
			if err != nil {
				t.Fatal(err)
			}
			if rep.Observed != 2 || rep.Updates != tc.updates {
				t.Errorf("report %+v, want 2 nodes observed and %d updates", rep, tc.updates)
			}
			lim := h.cluster.Limits()
			g1, g2 := goodness.Score(um["n1"], lim), goodness.Score(um["n2"], lim)
			snap := h.learner.Snapshot()
			want := (g1 + g2) / 2 // the baseline: the mean of what the learner saw
			if snap.Observations != int64(tc.updates) || math.Abs(snap.Baseline-want) > 1e-9 {
				t.Errorf("observations %d baseline %v, want %d and %v", snap.Observations, snap.Baseline, tc.updates, want)
			}
			if got := len(h.journal.Goodness(t0.Add(-time.Hour), t1.Add(time.Hour))); got != 2 {
				t.Errorf("journaled %d goodness records, want one per node (2)", got)
			}
		})
	}
}

func TestLearnMovesPreferences(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1})
	h.learner.Update("net", "cpu", goodness.Max) // a high baseline: the next co-location is worse
	before := h.learner.Pref("disk", "cpu")
	from, to := colocate(h, "disk")
	if _, err := h.e.Learn(h.ctx, from, to); err != nil {
		t.Fatal(err)
	}
	if after := h.learner.Pref("disk", "cpu"); !(after < before) {
		t.Errorf("H(disk|cpu) %v → %v, want it lowered by a goodness below the baseline", before, after)
	}
	if got := h.learner.Pref("cpu", "disk"); got != 0 {
		t.Errorf("H(cpu|disk) = %v, want 0 with credit later", got)
	}
}

// staleMetrics reports some hosts stale, or fails.
type staleMetrics struct {
	m     UsageSource
	stale []string
	err   error
	calls int
}

func (s *staleMetrics) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	s.calls++
	if s.err != nil {
		return nil, nil, s.err
	}
	u, st, err := s.m.Usage(ctx, hosts, from, to)
	for _, h := range s.stale {
		delete(u, h)
	}
	return u, append(st, s.stale...), err
}

func TestLearnSkipsStaleHosts(t *testing.T) {
	sm := &staleMetrics{stale: []string{"node01"}}
	h := newHarness(t, harnessOpts{nodes: 1, metrics: func(c *simcluster.Cluster) UsageSource { sm.m = c; return sm }})
	from, to := colocate(h, "disk")
	rep, err := h.e.Learn(h.ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Updates != 0 || !slices.Equal(rep.Stale, []string{"node01"}) {
		t.Errorf("report %+v, want no update and node01 stale", rep)
	}
	if obs := h.learner.Snapshot().Observations; obs != 0 {
		t.Errorf("learner observed %d, want 0", obs)
	}
}

func TestLearnSkipsThreeKindsAndLoneKinds(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1})
	// One kind alone on the node: nothing to learn.
	h.submit("cpu")
	h.admit()
	h.advance(time.Second)
	from := h.sync().At
	h.advance(60 * time.Second)
	rep, err := h.e.Learn(h.ctx, from, h.sync().At)
	if err != nil || rep.Colocations != 0 {
		t.Fatalf("lone kind: %+v, %v; want no colocation", rep, err)
	}
	// A second kind that arrives mid-interval does not qualify either.
	from = h.sync().At
	h.advance(10 * time.Second)
	h.submit("disk")
	h.admit()
	h.advance(50 * time.Second)
	rep, err = h.e.Learn(h.ctx, from, h.sync().At)
	if err != nil || rep.Colocations != 0 {
		t.Fatalf("kind arriving mid-interval: %+v, %v; want no colocation", rep, err)
	}

	// Three kinds on one node: skipped with max_kinds_per_node 2, learned
	// (all three ordered pairs) with 3.
	for _, maxKinds := range []int{2, 3} {
		h := newHarness(t, harnessOpts{nodes: 1, maxKinds: maxKinds})
		// The test node holds two jobs, so three kinds are planted in the
		// presence table directly.
		h.e.mu.Lock()
		t0 := h.s.Now()
		h.e.presence["nodeX"] = map[string]*presence{
			"a": {kind: "cpu", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0},
			"b": {kind: "disk", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0.Add(time.Second)},
			"c": {kind: "net", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0.Add(2 * time.Second)},
		}
		colos := h.e.colocations(t0, t0.Add(time.Minute))
		h.e.mu.Unlock()
		want := 0
		if maxKinds == 3 {
			want = 1
		}
		if len(colos) != want {
			t.Errorf("max_kinds_per_node %d: %d colocations, want %d", maxKinds, len(colos), want)
		}
		if want == 1 && !slices.Equal(colos[0].kinds, []string{"cpu", "disk", "net"}) {
			t.Errorf("kinds in admission order %v, want [cpu disk net]", colos[0].kinds)
		}
	}
}

// Two jobs of one kind on a node are a co-location too (the paper's "two
// distinct jobs"): the learner sees what a kind is worth beside itself.
func TestLearnScoresTwoJobsOfOneKind(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1})
	from, to := colocate(h, "cpu")
	rep, err := h.e.Learn(h.ctx, from, to)
	if err != nil {
		t.Fatal(err)
	}
	if rep.Colocations != 1 || rep.Updates != 1 {
		t.Fatalf("report %+v, want 1 colocation and 1 update", rep)
	}
	s := h.learner.Snapshot()
	i := slices.Index(s.Kinds, "cpu")
	if i < 0 || s.PairObservations[i][i] != 1 {
		t.Errorf("pair observations %v over %v, want cpu|cpu = 1", s.PairObservations, s.Kinds)
	}

	// With two kinds on the node the kinds' pair is learned, not the self
	// pair of the kind that has two jobs there.
	h.e.mu.Lock()
	t0 := h.s.Now()
	h.e.presence["nodeX"] = map[string]*presence{
		"a": {kind: "cpu", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0},
		"b": {kind: "cpu", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0.Add(time.Second)},
		"c": {kind: "disk", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0.Add(2 * time.Second)},
		// A job of a third kind that left before the interval does not count.
		"d": {kind: "net", since: t0.Add(-time.Hour), lastSeen: t0.Add(-time.Minute), goneAt: t0.Add(-time.Minute), admitted: t0.Add(-time.Hour)},
	}
	// A node whose second job of the kind arrives mid-interval does not
	// qualify: its usage mixes one job and two.
	h.e.presence["nodeY"] = map[string]*presence{
		"e": {kind: "cpu", since: t0, lastSeen: t0.Add(time.Minute), admitted: t0},
		"f": {kind: "cpu", since: t0.Add(30 * time.Second), lastSeen: t0.Add(time.Minute), admitted: t0.Add(30 * time.Second)},
	}
	colos := h.e.colocations(t0, t0.Add(time.Minute))
	h.e.mu.Unlock()
	var got [][]string
	for _, c := range colos {
		if c.node != "node01" {
			got = append(got, append([]string{c.node}, c.kinds...))
		}
	}
	if want := [][]string{{"nodeX", "cpu", "disk"}}; !slices.EqualFunc(got, want, slices.Equal[[]string]) {
		t.Errorf("colocations %v, want %v", got, want)
	}
}

func TestMetricsErrorKeepsAdmitting(t *testing.T) {
	sm := &staleMetrics{err: errors.New("influxdb: connection refused")}
	h := newHarness(t, harnessOpts{nodes: 1, metrics: func(c *simcluster.Cluster) UsageSource { sm.m = c; return sm }})
	from, to := colocate(h, "disk")
	before := h.learner.Snapshot()
	_, err := h.e.Learn(h.ctx, from, to)
	if !errors.Is(err, errMetrics) || sm.calls != 1 {
		t.Fatalf("Learn err = %v (calls %d), want errMetrics after one call", err, sm.calls)
	}
	if diff := cmp.Diff(before, h.learner.Snapshot()); diff != "" {
		t.Errorf("learner changed on a metrics error (-before +after):\n%s", diff)
	}
	h.advance(200 * time.Second)
	h.sync()
	ids := h.submit("net")
	if rep := h.admit(); !slices.Equal(rep.Admitted, ids) {
		t.Errorf("after a metrics error admitted %v, want %v", rep.Admitted, ids)
	}
}

// flakyCluster wraps a cluster, failing submissions on demand.
type flakyCluster struct {
	Cluster
	mu sync.Mutex
	// submit decides per call: forward (true) and which error to return.
	submit func(appID string) (forward bool, err error)
}

func (f *flakyCluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	f.mu.Lock()
	decide := f.submit
	f.mu.Unlock()
	if decide == nil {
		return f.Cluster.Submit(ctx, appID, j)
	}
	fwd, err := decide(appID)
	if fwd {
		if e := f.Cluster.Submit(ctx, appID, j); e != nil {
			return e
		}
	}
	return err
}

func (f *flakyCluster) Prepare(j *queue.Job) error { return f.Cluster.(JobPreparer).Prepare(j) }

func (f *flakyCluster) set(d func(string) (bool, error)) {
	f.mu.Lock()
	f.submit = d
	f.mu.Unlock()
}

func TestSubmitFailures(t *testing.T) {
	timeout := fmt.Errorf("post: %w", context.DeadlineExceeded)
	for _, tc := range []struct {
		name      string
		forward   bool
		err       error
		wantState queue.State // after the pass
		wantAfter queue.State // after the next sync
	}{
		{"rejected", false, fmt.Errorf("%w: user bob may not be impersonated", cluster.ErrRejected), queue.StateFailed, queue.StateFailed},
		{"stale application id", false, fmt.Errorf("%w: never reserved", cluster.ErrStaleAppID), queue.StatePending, queue.StatePending},
		{"timeout before the cluster saw it", false, timeout, queue.StateAdmitted, queue.StateRunning},
		{"timeout after the cluster took it", true, timeout, queue.StateAdmitted, queue.StateRunning},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fc := &flakyCluster{}
			h := newHarness(t, harnessOpts{nodes: 1, cluster: func(c *simcluster.Cluster) Cluster { fc.Cluster = c; return fc }})
			fc.set(func(string) (bool, error) { return tc.forward, tc.err })
			id := h.submit("cpu")[0]
			rep := h.admit()
			if got := h.state(id); got != tc.wantState {
				t.Fatalf("after the pass: %s, want %s (%+v)", got, tc.wantState, rep)
			}
			fc.set(nil)
			h.sync()
			if got := h.state(id); got != tc.wantAfter {
				t.Fatalf("after sync: %s, want %s", got, tc.wantAfter)
			}
			if tc.wantAfter == queue.StateRunning {
				if n := h.submissions()[id]; n != 1 {
					t.Errorf("job submitted %d times, want 1", n)
				}
				j, _ := h.store.Get(id)
				if a, ok := h.s.App(j.AppID); !ok || a.JobID != id {
					t.Errorf("app %s: %+v, want it to run job %s under the recorded id", j.AppID, a, id)
				}
			}
		})
	}
}

func TestReconcile(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2, noRecon: true})
	ids := h.submit("cpu", "disk", "net", "cpu")
	admitOnly := func(id string) string { // recorded, never submitted
		app, err := h.cluster.Reserve(h.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.Admit(id, app, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		return app
	}
	submitted := func(id string) string {
		app := admitOnly(id)
		j, _ := h.store.Get(id)
		if err := h.cluster.Submit(h.ctx, app, j); err != nil {
			t.Fatal(err)
		}
		return app
	}
	doneApp := submitted(ids[2]) // crash after submit; it finishes before the restart
	h.advance(130 * time.Second)
	lostApp := admitOnly(ids[0]) // crash between record and submit
	runApp := submitted(ids[1])  // crash after submit: still running
	if _, err := h.store.Admit(ids[3], "application_1_9999", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Start(ids[3]); err != nil { // the store says running; the cluster never heard of it
		t.Fatal(err)
	}
	rep, err := h.e.Reconcile(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := syncReport{
		Started:     []string{ids[0], ids[1]},
		Finished:    []string{ids[2]},
		Resubmitted: []string{ids[0]},
		Parked:      []string{ids[3]}, // it ran; how it ended, nobody knows
	}
	for _, l := range [][]string{rep.Started, rep.Finished, want.Started, want.Finished} {
		slices.Sort(l)
	}
	if diff := cmp.Diff(want, rep); diff != "" {
		t.Errorf("reconcile report (-want +got):\n%s", diff)
	}
	for id, st := range map[string]queue.State{ids[0]: queue.StateRunning, ids[1]: queue.StateRunning, ids[2]: queue.StateSucceeded, ids[3]: queue.StateParked} {
		if got := h.state(id); got != st {
			t.Errorf("job %s: %s, want %s", id, got, st)
		}
	}
	if a, ok := h.s.App(runApp); !ok || a.JobID != ids[1] {
		t.Errorf("app %s = %+v, want job %s", runApp, a, ids[1])
	}
	if a, ok := h.s.App(lostApp); !ok || a.JobID != ids[0] {
		t.Errorf("lost submission: app %s = %+v, want job %s under the recorded id", lostApp, a, ids[0])
	}
	if a, _ := h.s.App(doneApp); a.JobID != ids[2] {
		t.Errorf("app %s runs %s", doneApp, a.JobID)
	}
	if err := h.e.Ready(h.ctx); err != nil {
		t.Errorf("Ready after reconcile: %v", err)
	}
	// Reconciling again changes nothing and submits nothing twice.
	h.sync()
	rep, err = h.e.Reconcile(h.ctx)
	if err != nil || len(rep.Resubmitted) != 0 {
		t.Errorf("second reconcile: %+v, %v", rep, err)
	}
	for id, n := range h.submissions() {
		if n != 1 {
			t.Errorf("job %s submitted %d times", id, n)
		}
	}
}

func TestReconcileRequeuesStaleAppID(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1, noRecon: true})
	id := h.submit("cpu")[0]
	// An id the cluster never reserved: the simulator refuses it.
	if _, err := h.store.Admit(id, "application_1_0042", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	rep, err := h.e.Reconcile(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(rep.Requeued, []string{id}) || h.state(id) != queue.StatePending {
		t.Errorf("report %+v, state %s; want the job requeued", rep, h.state(id))
	}
}

func TestKillAndPrepare(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1})
	ids := h.submit("cpu", "disk")
	h.admit()
	j, err := h.e.Kill(h.ctx, ids[0])
	if err != nil || j.State != queue.StateKilled {
		t.Fatalf("Kill = %+v, %v", j.State, err)
	}
	if a, _ := h.s.App(j.AppID); a.State != sim.AppKilled {
		t.Errorf("simulated app %s is %s, want killed", j.AppID, a.State)
	}
	if _, err := h.e.Kill(h.ctx, ids[0]); !errors.Is(err, errNotKillable) {
		t.Errorf("second kill: %v, want errNotKillable", err)
	}

	for _, tc := range []struct {
		name  string
		job   queue.Job
		field string
		want  queue.Resources
	}{
		{"fills resources", queue.Job{Kind: "net"}, "", queue.Resources{Containers: 3, MemoryMB: 1024, VCores: 1}},
		{"unknown kind", queue.Job{Kind: "spark-pi"}, "kind", queue.Resources{}},
		{"resources that differ", queue.Job{Kind: "net", Resources: queue.Resources{Containers: 9, MemoryMB: 1, VCores: 1}}, "resources", queue.Resources{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job
			err := h.e.Prepare(&j)
			var fe *queue.FieldError
			switch {
			case tc.field == "" && err != nil:
				t.Fatalf("Prepare: %v", err)
			case tc.field == "" && j.Resources != tc.want:
				t.Errorf("resources %+v, want %+v", j.Resources, tc.want)
			case tc.field != "" && (!errors.As(err, &fe) || fe.Field != tc.field):
				t.Errorf("Prepare err = %v, want a FieldError on %s", err, tc.field)
			}
		})
	}
}

func TestKick(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	for range 3 {
		h.e.Kick() // never blocks; coalesces
	}
	select {
	case <-h.e.Kicked():
	default:
		t.Fatal("no kick pending")
	}
	select {
	case <-h.e.Kicked():
		t.Fatal("kicks did not coalesce")
	default:
	}
}

// A job larger than the whole cluster is refused at submit, once an
// admission pass has seen the cluster: it could never run, and would
// never hold a reservation. Before any pass nothing is known, so nothing
// is refused for size.
func TestPrepareRefusesJobsLargerThanTheCluster(t *testing.T) {
	// The simulator's own Prepare insists on its kinds' sizes; hide it.
	h := newHarness(t, harnessOpts{nodes: 2, cluster: func(sc *simcluster.Cluster) Cluster { return struct{ Cluster }{sc} }})
	huge := func() *queue.Job {
		return &queue.Job{Kind: "cpu", User: "ana", Queue: "default",
			Resources: queue.Resources{Containers: 1, MemoryMB: 1 << 20, VCores: 1}}
	}
	if err := h.e.Prepare(huge()); err != nil {
		t.Fatalf("before any pass: %v, want no size check", err)
	}
	j := queue.Job{Kind: "cpu", User: "ana", Queue: "default", Resources: queue.Resources{Containers: 3, MemoryMB: 1024, VCores: 1}}
	if _, _, err := h.store.Submit(h.ctx, j); err != nil {
		t.Fatal(err)
	}
	h.admit()
	err := h.e.Prepare(huge())
	var fe *queue.FieldError
	if !errors.As(err, &fe) || fe.Field != "resources" || !strings.Contains(fe.Reason, "larger than the whole cluster") {
		t.Fatalf("Prepare(1 TB container) = %v, want a FieldError on resources", err)
	}
	if err := h.e.Prepare(&j); err != nil {
		t.Errorf("Prepare(default job) = %v", err)
	}
}

// TestRejectedJobDoesNotStallTheQueue: a job the cluster refuses (here a
// user its proxy-user rules refuse) fails with the refusal as its
// diagnostics, and the jobs queued behind it are admitted in the same pass.
func TestRejectedJobDoesNotStallTheQueue(t *testing.T) {
	fc := &flakyCluster{}
	h := newHarness(t, harnessOpts{nodes: 4, cluster: func(c *simcluster.Cluster) Cluster { fc.Cluster = c; return fc }})
	ids := h.submit("cpu", "disk", "net")
	refused := ""
	fc.set(func(string) (bool, error) {
		if refused == "" { // the first submission of the pass is refused
			refused = "yes"
			return false, fmt.Errorf("%w: User: colocd is not allowed to impersonate bob", cluster.ErrRejected)
		}
		return true, nil
	})
	rep := h.admit()
	if len(rep.Rejected) != 1 || len(rep.Admitted) != 2 {
		t.Fatalf("pass %+v: want one job rejected and the other two admitted", rep)
	}
	j, err := h.store.Get(rep.Rejected[0])
	if err != nil {
		t.Fatal(err)
	}
	if j.State != queue.StateFailed || !strings.Contains(j.Diagnostics, "not allowed to impersonate bob") || j.FinishedAt == nil {
		t.Errorf("refused job: state %s, diagnostics %q, finished %v; want failed with the refusal", j.State, j.Diagnostics, j.FinishedAt)
	}
	if !slices.Contains(ids, j.ID) {
		t.Errorf("rejected %s is none of %v", j.ID, ids)
	}
}
