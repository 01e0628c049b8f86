package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/internal/testing/logtest"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// fakePlacement is a PlacementSource that answers set placements on the
// hosts asked about, or fails; it records the hosts it was asked about.
type fakePlacement struct {
	pls   []Placement
	err   error
	asked [][]string
}

func (f *fakePlacement) Placements(_ context.Context, hosts []string, _, _ time.Time) ([]Placement, error) {
	f.asked = append(f.asked, slices.Clone(hosts))
	if f.err != nil {
		return nil, f.err
	}
	var out []Placement
	for _, p := range f.pls {
		if slices.Contains(hosts, p.Node) {
			out = append(out, p)
		}
	}
	return out, nil
}

var _ PlacementSource = (*fakePlacement)(nil)

func testPlacementConfig(tol time.Duration) PlacementConfig {
	return PlacementConfig{Tolerance: tol, ForeignKinds: true, ForeignPrefix: DefaultForeignPrefix, MaxForeignKinds: DefaultForeignMaxKinds}
}

// scenarioJob is one job of a scenario: its node, kind and admission
// sequence (in the order of arrive: a job lands when it is admitted),
// present over [arrive, leave) seconds after sc0 (leave 0: never left),
// with a constant number of containers.
type scenarioJob struct {
	node, kind    string
	seq           int
	arrive, leave int
	containers    int
}

var sc0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func scAt(sec int) time.Time { return sc0.Add(time.Duration(sec) * time.Second) }

func (j scenarioJob) there(sec int) bool { return sec >= j.arrive && (j.leave == 0 || sec < j.leave) }

func (j scenarioJob) app() string { return fmt.Sprintf("application_1700000000000_%04d", j.seq) }

// presenceOf is what the syncs, every period seconds up to end, record of
// the scenario's jobs (observe's rules).
func presenceOf(jobs []scenarioJob, period, end int) map[string]map[string]*presence {
	out := map[string]map[string]*presence{}
	for _, j := range jobs {
		var p *presence
		for s := 0; s <= end; s += period {
			switch {
			case j.there(s) && p == nil:
				p = &presence{kind: j.kind, containers: j.containers, admitted: scAt(j.arrive), seq: uint64(j.seq), since: scAt(s)}
			case !j.there(s) && p != nil && p.goneAt.IsZero():
				p.goneAt = scAt(s)
			}
			if j.there(s) && p != nil {
				p.lastSeen = scAt(s)
			}
		}
		if p == nil {
			continue
		}
		if out[j.node] == nil {
			out[j.node] = map[string]*presence{}
		}
		out[j.node][fmt.Sprintf("job%02d", j.seq)] = p
	}
	return out
}

// placementsOf is what a sampler every period seconds, at the syncs'
// times, writes of the scenario's applications in [from, to).
func placementsOf(jobs []scenarioJob, period, from, to int) []Placement {
	var out []Placement
	for _, j := range jobs {
		p := Placement{Node: j.node, App: j.app(), Kind: j.kind, Containers: float64(j.containers)}
		for s := 0; s < to; s += period {
			if s < from || !j.there(s) {
				continue
			}
			if p.Samples == 0 {
				p.First = scAt(s)
			}
			p.Last = scAt(s)
			p.Samples++
		}
		if p.Samples > 0 {
			out = append(out, p)
		}
	}
	return out
}

// TestPlacementMatchesPresence: when the sampler samples when the syncs
// run, and no job arrives or leaves within one interval of a window's
// edge, the placement read gives the co-locations and compositions the
// syncs' presence gives.
func TestPlacementMatchesPresence(t *testing.T) {
	jobs := []scenarioJob{
		{node: "n1", kind: "cpu", seq: 1, containers: 2},
		{node: "n1", kind: "disk", seq: 2, arrive: 30, containers: 1},
		{node: "n2", kind: "cpu", seq: 3, leave: 90, containers: 3},
		{node: "n2", kind: "net", seq: 4, arrive: 90, containers: 2},
		{node: "n3", kind: "cpu", seq: 5, containers: 1},
		{node: "n3", kind: "cpu", seq: 6, containers: 1},
		{node: "n4", kind: "cpu", seq: 7, containers: 1},
		{node: "n4", kind: "disk", seq: 8, containers: 1},
		{node: "n4", kind: "net", seq: 9, containers: 1},
		{node: "n5", kind: "disk", seq: 10, leave: 40, containers: 2},
		{node: "n6", kind: "cpu", seq: 11, containers: 1},
		{node: "n6", kind: "disk", seq: 12, arrive: 100, containers: 4},
		{node: "n7", kind: "cpu", seq: 13, arrive: 35, leave: 150, containers: 1},
		{node: "n7", kind: "net", seq: 14, arrive: 150, containers: 1},
	}
	const period = 10
	for _, w := range [][2]int{{0, 60}, {60, 120}, {120, 180}, {170, 230}} {
		t.Run(fmt.Sprintf("[%d,%d)", w[0], w[1]), func(t *testing.T) {
			h := newHarness(t, harnessOpts{nodes: 1})
			from, to := scAt(w[0]), scAt(w[1])
			src := &fakePlacement{pls: placementsOf(jobs, period, w[0], w[1])}
			p, err := NewPlacer(src, testPlacementConfig(period*time.Second))
			if err != nil {
				t.Fatal(err)
			}
			h.e.mu.Lock()
			defer h.e.mu.Unlock()
			h.e.presence = presenceOf(jobs, period, 300)
			h.e.nodes = []string{"n1", "n2", "n3", "n4", "n5", "n6", "n7"}
			wantColos, wantComps := h.e.colocations(from, to), nonEmpty(h.e.compositions(from, to, nil))
			pw, err := h.e.readPlacement(h.ctx, p, from, to)
			if err != nil {
				t.Fatal(err)
			}
			if len(wantColos) == 0 || len(wantComps) == 0 {
				t.Fatalf("the scenario has no co-location or composition in this window: nothing compared")
			}
			opts := []cmp.Option{cmp.AllowUnexported(colocation{}), cmpopts.EquateApprox(0, 1e-12)}
			if diff := cmp.Diff(wantColos, pw.colos, opts...); diff != "" {
				t.Errorf("co-locations (-syncs +placement):\n%s", diff)
			}
			if diff := cmp.Diff(wantComps, nonEmpty(pw.comps), opts...); diff != "" {
				t.Errorf("compositions (-syncs +placement):\n%s", diff)
			}
			if len(pw.unplaced) != 0 {
				t.Errorf("unplaced %v, want none", pw.unplaced)
			}
		})
	}
}

func nonEmpty(m map[string][]profile.KindCount) map[string][]profile.KindCount {
	maps.DeleteFunc(m, func(_ string, kc []profile.KindCount) bool { return len(kc) == 0 })
	return m
}

// TestPlacementTolerance: samples that are not aligned with the window
// count as present at an edge within the tolerance, and not beyond; an
// application that left mid-window is counted until one of its sampling
// steps after its last sample.
func TestPlacementTolerance(t *testing.T) {
	from, to := scAt(0), scAt(60)
	tol := 15 * time.Second
	for _, tc := range []struct {
		name        string
		first, last int // seconds
		samples     int
		whole       bool
		start, end  int // seconds, the stay's bounds
	}{
		{"whole, late samples", 9, 49, 5, true, 0, 60},      // 10 s samples, the newest 11 s behind
		{"whole, at the tolerance", 15, 45, 4, true, 0, 60}, // exactly 15 s from each edge
		{"arrived after the tolerance", 16, 56, 5, false, 16, 60},
		{"left before the tolerance", 2, 42, 5, false, 0, 52}, // last + its 10 s step
		{"one sample mid-window", 30, 30, 1, false, 30, 45},   // last + the tolerance
	} {
		t.Run(tc.name, func(t *testing.T) {
			pl := Placement{Node: "n", App: "application_1_0001", Kind: "cpu", First: scAt(tc.first), Last: scAt(tc.last),
				Samples: tc.samples, Containers: 2}
			s := placementStay(pl, "cpu", false, from, to, tol)
			if s.whole != tc.whole || !s.start.Equal(scAt(tc.start)) || !s.end.Equal(scAt(tc.end)) {
				t.Errorf("stay whole %v [%v, %v], want %v [%ds, %ds]", s.whole, s.start.Sub(from), s.end.Sub(from), tc.whole, tc.start, tc.end)
			}
		})
	}
}

// placedHarness is a one-node engine whose metrics source is Placed over
// src, with node01's usage fixed (o.metrics, if set, instead), synced once
// so that it knows its node.
func placedHarness(t *testing.T, src *fakePlacement, mod func(*PlacementConfig), o harnessOpts) *harness {
	t.Helper()
	pc := testPlacementConfig(30 * time.Second)
	if mod != nil {
		mod(&pc)
	}
	um := fixedMetrics{"node01": {CPU: 0.6, DiskRead: 40e6, NetRecv: 10e6}}
	o.nodes = 1
	if o.metrics == nil {
		o.metrics = func(*simcluster.Cluster) UsageSource { return um }
	}
	p, err := NewPlacer(src, pc)
	if err != nil {
		t.Fatal(err)
	}
	o.placer = p
	h := newHarness(t, o)
	h.sync()
	return h
}

// whole is a placement of app on node01 over the whole of [0s, 60s).
func whole(app, kind string) Placement {
	return Placement{Node: "node01", App: app, Kind: kind, First: scAt(0), Last: scAt(50), Samples: 6, Containers: 2}
}

// wholeForeign is whole for another tenant's application, named kind by
// the placement source.
func wholeForeign(app, kind string) Placement {
	p := whole(app, kind)
	p.Foreign = true
	return p
}

// TestLearnForeignKind: another tenant's application on a node makes that
// node's co-location include its foreign kind, whatever the order they
// arrived in: the learner learns the colocd kind given the foreign one
// (never the other way, which no admission could use), the profile model
// learns the foreign kind's profile, and the goodness is journaled with
// the foreign kind given. With foreign kinds off, the node holds a lone
// kind: nothing to learn.
func TestLearnForeignKind(t *testing.T) {
	for _, tc := range []struct {
		name   string
		pls    []Placement
		credit CreditMode
		kinds  []string
	}{
		{"foreign first", []Placement{wholeForeign("application_1_0001", "foreign.spark.root.etl"), whole("application_1_0002", "cpu")},
			CreditLater, []string{"foreign.spark.root.etl", "cpu"}},
		{"foreign later, symmetric credit", []Placement{whole("application_1_0001", "cpu"), wholeForeign("application_1_0002", "foreign.spark.root.etl")},
			CreditSymmetric, []string{"cpu", "foreign.spark.root.etl"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakePlacement{pls: tc.pls}
			h := placedHarness(t, src, nil, harnessOpts{credit: tc.credit})
			rep, err := h.e.Learn(h.ctx, scAt(0), scAt(60))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(src.asked[0], []string{"node01"}) {
				t.Errorf("placement asked about %v, want the cluster's node01", src.asked)
			}
			if rep.Colocations != 1 || rep.Updates != 1 || len(rep.Goodness) != 1 || !slices.Equal(rep.Goodness[0].Kinds, tc.kinds) {
				t.Fatalf("report %+v, want one co-location of %v and one update", rep, tc.kinds)
			}
			const foreign = "foreign.spark.root.etl"
			s := h.learner.Snapshot()
			fi, ci := slices.Index(s.Kinds, foreign), slices.Index(s.Kinds, "cpu")
			if fi < 0 || s.PairObservations[fi][ci] != 1 || s.PairObservations[ci][fi] != 0 {
				t.Errorf("pair observations %v over %v, want cpu given %s once and nothing the other way", s.PairObservations, s.Kinds, foreign)
			}
			if !slices.Contains(h.e.Profiles().Kinds(), foreign) {
				t.Errorf("profiled kinds %v, want %s among them", h.e.Profiles().Kinds(), foreign)
			}
			g := h.journal.Goodness(time.Time{}, time.Time{})
			if len(g) != 1 || g[0].Chosen != "cpu" || g[0].Given != foreign {
				t.Errorf("journaled %+v, want cpu given %s", g, foreign)
			}
		})
	}
	t.Run("foreign kinds off", func(t *testing.T) {
		// The source names no foreign application (learning.foreign.kind
		// none): another tenant's comes without a kind.
		src := &fakePlacement{pls: []Placement{whole("application_1_0001", ""), whole("application_1_0002", "cpu")}}
		h := placedHarness(t, src, func(c *PlacementConfig) { c.ForeignKinds = false }, harnessOpts{})
		rep, err := h.e.Learn(h.ctx, scAt(0), scAt(60))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Colocations != 0 || rep.Updates != 0 || slices.ContainsFunc(h.learner.Kinds(), func(k string) bool { return strings.HasPrefix(k, "foreign.") }) {
			t.Errorf("report %+v, kinds %v; want no co-location and no foreign kind", rep, h.learner.Kinds())
		}
	})
}

// TestLearnPlacementErrorFailsTheTick: a failing placement read is the
// tick's error, wrapping errMetrics and counted as a metrics backend
// error; the learner and the profiles are left as they were.
func TestLearnPlacementErrorFailsTheTick(t *testing.T) {
	src := &fakePlacement{err: errors.New("influxdb: connection refused")}
	h := placedHarness(t, src, nil, harnessOpts{})
	rec := &recorder{}
	h.e.mx = rec
	before, profBefore := h.learner.Snapshot(), h.e.Profiles().Kinds()
	_, err := h.e.Learn(h.ctx, scAt(0), scAt(60))
	if !errors.Is(err, errMetrics) || !strings.Contains(err.Error(), "connection refused") {
		t.Fatalf("Learn = %v, want errMetrics wrapping the source's error", err)
	}
	if !rec.has("error metrics") || !rec.has("up metrics false") || slices.ContainsFunc(rec.calls, func(c string) bool { return strings.HasPrefix(c, "tick ") }) {
		t.Errorf("telemetry %q, want a metrics error, metrics down and no tick", rec.calls)
	}
	if diff := cmp.Diff(before, h.learner.Snapshot()); diff != "" {
		t.Errorf("learner changed (-before +after):\n%s", diff)
	}
	if !slices.Equal(profBefore, h.e.Profiles().Kinds()) {
		t.Errorf("profiles changed: %v → %v", profBefore, h.e.Profiles().Kinds())
	}
}

// TestLearnUnplacedNodes: a node where an application of unknown kind ran,
// or where a job the syncs saw over the whole window has no samples, is
// skipped by the pairs and the profiles, and reported.
func TestLearnUnplacedNodes(t *testing.T) {
	t.Run("unknown application", func(t *testing.T) {
		unknown := whole("application_1_0002", "")
		unknown.Unknown = true
		src := &fakePlacement{pls: []Placement{whole("application_1_0001", "cpu"), unknown}}
		h := placedHarness(t, src, nil, harnessOpts{})
		rep, err := h.e.Learn(h.ctx, scAt(0), scAt(60))
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Unplaced, []string{"node01"}) || rep.Colocations != 0 || rep.Profile.Observations != 0 {
			t.Errorf("report %+v, want node01 unplaced, no co-location and no profile observation", rep)
		}
	})
	t.Run("the samples miss a job", func(t *testing.T) {
		src := &fakePlacement{} // the plugin wrote nothing
		h := placedHarness(t, src, nil, harnessOpts{})
		h.submit("cpu")
		h.admit()
		h.advance(time.Second)
		from := h.sync().At
		h.advance(60 * time.Second)
		rep, err := h.e.Learn(h.ctx, from, h.sync().At)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(rep.Unplaced, []string{"node01"}) || rep.Profile.Observations != 0 {
			t.Errorf("report %+v, want node01 unplaced and not profiled as idle", rep)
		}
		// Once the samples show the job, the node is profiled.
		from = h.sync().At
		to := h.advance(60 * time.Second)
		src.pls = []Placement{{Node: "node01", App: "application_1_0001", Kind: "cpu", First: from, Last: to.Add(-5 * time.Second), Samples: 6, Containers: 1}}
		rep, err = h.e.Learn(h.ctx, from, h.sync().At)
		if err != nil || len(rep.Unplaced) != 0 || rep.Profile.Observations != 1 {
			t.Errorf("with samples: report %+v, %v; want node01 profiled", rep, err)
		}
	})
}

// TestForeignKindsCapped: past max_kinds new foreign kinds count as
// <prefix>other, the first ones taken in name order and the kinds already
// known counted; each refused kind is logged once.
func TestForeignKindsCapped(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelWarn}
	src := &fakePlacement{}
	h := placedHarness(t, src, func(c *PlacementConfig) { c.MaxForeignKinds = 2 }, harnessOpts{logger: slog.New(rec)})
	h.learner.Add("foreign.tez.adhoc") // known from an earlier run
	p := h.e.placer
	pls := []Placement{
		{App: "application_1_0001", Kind: "foreign.spark.etl", Foreign: true},
		{App: "application_1_0002", Kind: "foreign.nightly", Foreign: true},
		{App: "application_1_0003", Kind: "foreign.flink.stream", Foreign: true},
		{App: "application_1_0004", Kind: "foreign.tez.adhoc", Foreign: true},
		{App: "application_1_0005", Kind: "cpu"},
		{App: "application_1_0006", Unknown: true},
	}
	h.e.mu.Lock()
	kinds, foreign := h.e.placementKinds(p, pls)
	again, _ := h.e.placementKinds(p, pls)
	h.e.mu.Unlock()
	// Known: foreign.tez.adhoc. New, in name order: foreign.flink.stream
	// (taken: 2 of 2), foreign.nightly, foreign.spark.etl (refused).
	want := []string{"foreign.other", "foreign.other", "foreign.flink.stream", "foreign.tez.adhoc", "cpu", unknownKind}
	if !slices.Equal(kinds, want) || !slices.Equal(again, want) {
		t.Errorf("kinds %q then %q, want %q", kinds, again, want)
	}
	if wantF := []string{"foreign.flink.stream", "foreign.other", "foreign.tez.adhoc"}; !slices.Equal(slices.Sorted(maps.Keys(foreign)), wantF) {
		t.Errorf("foreign kinds %v, want %v", slices.Sorted(maps.Keys(foreign)), wantF)
	}
	lines := rec.With([]string{"refused", "kind"}, "learn: more foreign kinds than learning.foreign.max_kinds; their applications count as one kind")
	if len(lines) != 1 || !slices.Equal(lines[0].Attrs["refused"].([]string), []string{"foreign.nightly", "foreign.spark.etl"}) {
		t.Errorf("log lines %v, want one naming foreign.nightly and foreign.spark.etl", lines)
	}
}

// TestPlacementConfigValidate: each bad setting is refused naming its key
// under learning.
func TestPlacementConfigValidate(t *testing.T) {
	for field, mod := range map[string]func(*PlacementConfig){
		"placement_tolerance": func(c *PlacementConfig) { c.Tolerance = 0 },
		"foreign.prefix":      func(c *PlacementConfig) { c.ForeignPrefix = "Foreign." },
		"foreign.max_kinds":   func(c *PlacementConfig) { c.MaxForeignKinds = 0 },
	} {
		c := testPlacementConfig(time.Minute)
		mod(&c)
		var fe *fieldError
		if err := c.Validate(); !errors.As(err, &fe) || fe.Field != field {
			t.Errorf("%s: %v, want a fieldError on %s", field, err, field)
		}
	}
	if err := testPlacementConfig(time.Minute).Validate(); err != nil {
		t.Errorf("the defaults: %v", err)
	}
	if _, err := NewPlacer(nil, testPlacementConfig(time.Minute)); err == nil {
		t.Error("NewPlacer without a placement source: no error")
	}
}

// TestAppOrder: application ids order by cluster timestamp, then sequence
// as a number (past 9999 too); others after them.
func TestAppOrder(t *testing.T) {
	ids := []string{"bogus", "application_1700000000001_0001", "application_1700000000000_10000", "application_1700000000000_9999"}
	slices.SortFunc(ids, func(a, b string) int {
		switch oa, ob := appOrder(a), appOrder(b); {
		case oa.before(ob):
			return -1
		case ob.before(oa):
			return 1
		}
		return 0
	})
	want := []string{"application_1700000000000_9999", "application_1700000000000_10000", "application_1700000000001_0001", "bogus"}
	if !slices.Equal(ids, want) {
		t.Errorf("order %v, want %v", ids, want)
	}
}

// withApps is a cluster whose state also lists other tenants' running
// applications (placed nowhere: YARN's state gives only colocd's
// placements).
type withApps struct {
	Cluster
	apps *[]cluster.App
}

func (c withApps) State(ctx context.Context) (cluster.State, error) {
	st, err := c.Cluster.State(ctx)
	st.Apps = append(st.Apps, *c.apps...)
	return st, err
}

// TestAdmissionSeesForeignKinds: after a placement read that saw another
// tenant's application on a node at the window's end, the admission pass
// puts it there with its foreign kind and container count, and gives it
// that kind among the running applications, while the cluster still runs
// it; once it ended, or once a placement read failed, it is gone.
func TestAdmissionSeesForeignKinds(t *testing.T) {
	const foreign = "foreign.spark.root.etl"
	spark := wholeForeign("application_1_0001", "foreign.spark.root.etl")
	early := Placement{Node: "node01", App: "application_1_0002", Kind: "foreign.spark.adhoc", Foreign: true, First: scAt(0), Last: scAt(10), Samples: 2, Containers: 3}
	src := &fakePlacement{pls: []Placement{spark, early}}
	running := []cluster.App{{ID: spark.App, User: "bob", Queue: "root.ETL"}, {ID: early.App, User: "eve", Queue: "adhoc"}}
	h := placedHarness(t, src, nil, harnessOpts{cluster: func(sc *simcluster.Cluster) Cluster { return withApps{sc, &running} }})
	on := func(snap pipeline.Snapshot) []pipeline.NodeJob {
		for _, n := range snap.Nodes {
			if n.Name == "node01" {
				return n.Jobs
			}
		}
		t.Fatalf("no node01 in %+v", snap.Nodes)
		return nil
	}
	runningKind := func(snap pipeline.Snapshot, user string) string {
		for _, r := range snap.Running {
			if r.User == user {
				return r.Kind
			}
		}
		return "(not running)"
	}
	if jobs := on(h.passSnapshot()); len(jobs) != 0 {
		t.Fatalf("node01 before any placement read: %+v, want nothing", jobs)
	}
	if _, err := h.e.Learn(h.ctx, scAt(0), scAt(60)); err != nil {
		t.Fatal(err)
	}
	snap := h.passSnapshot()
	if diff := cmp.Diff([]pipeline.NodeJob{{Kind: foreign, Containers: 2}}, on(snap)); diff != "" {
		t.Errorf("node01's jobs after the read (-want +got; the adhoc application left 50 s before the window's end):\n%s", diff)
	}
	if k := runningKind(snap, "bob"); k != foreign {
		t.Errorf("bob's application runs as kind %q, want %q", k, foreign)
	}
	if k := runningKind(snap, "eve"); k != "" {
		t.Errorf("eve's application, not seen at the window's end, runs as kind %q, want none", k)
	}

	running = running[1:] // bob's application ended
	if jobs := on(h.passSnapshot()); len(jobs) != 0 {
		t.Errorf("node01 once the application ended: %+v, want nothing", jobs)
	}
	running = append(running, cluster.App{ID: spark.App, User: "bob", Queue: "root.ETL"})
	src.err = errors.New("influxdb: connection refused")
	if _, err := h.e.Learn(h.ctx, scAt(60), scAt(120)); err == nil {
		t.Fatal("Learn with the placement source down succeeded")
	}
	if jobs := on(h.passSnapshot()); len(jobs) != 0 {
		t.Errorf("node01 after a failed placement read: %+v, want nothing (not known any more)", jobs)
	}
}

// TestForeignPrefixReserved: with placement read from the plugin, a job
// kind under the foreign prefix is refused naming the prefix and its key
// (it would be counted, and credited, as another tenant's); other kinds
// pass (here the simulator's kinds).
func TestForeignPrefixReserved(t *testing.T) {
	h := placedHarness(t, &fakePlacement{}, func(c *PlacementConfig) { c.ForeignPrefix = "other-tenant." }, harnessOpts{})
	j := queue.Job{Kind: "other-tenant.spark", User: "ana", Queue: "default"}
	err := h.e.Prepare(&j)
	var fe *queue.FieldError
	if !errors.As(err, &fe) || fe.Field != "kind" || !errors.Is(err, queue.ErrInvalid) || !strings.Contains(err.Error(), "learning.foreign.prefix") {
		t.Fatalf("Prepare(%s) = %v, want a FieldError on kind naming learning.foreign.prefix", j.Kind, err)
	}
	for _, k := range []string{"cpu", "disk"} {
		j := queue.Job{Kind: k, User: "ana", Queue: "default"}
		if err := h.e.Prepare(&j); err != nil {
			t.Errorf("Prepare(%s) = %v, want nil", k, err)
		}
	}
}

// TestLearnReadsStalls: a node whose CPUs are saturated shows CPU 1 however
// much its containers ask. Without pressure readings the learning tick's
// profile observation is censored (a lower bound: 0.5 core per container
// of the two); with the node's CPU pressure (every container waited half
// the time) its containers count half, and the kind asks a whole core.
func TestLearnReadsStalls(t *testing.T) {
	for _, tc := range []struct {
		name   string
		usage  goodness.Usage
		lo, hi float64
	}{
		{"no pressure read", goodness.Usage{CPU: 1}, 0.45, 0.55},
		{"cpu pressure read", goodness.Usage{CPU: 1, CPUPressure: 0.5, Pressure: true}, 0.9, 1.05},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := &fakePlacement{pls: []Placement{whole("application_1_0001", "cpu")}}
			um := fixedMetrics{"node01": tc.usage}
			h := placedHarness(t, src, nil, harnessOpts{metrics: func(*simcluster.Cluster) UsageSource { return um }})
			for i := range 20 {
				src.pls = []Placement{{Node: "node01", App: "application_1_0001", Kind: "cpu",
					First: scAt(60 * i), Last: scAt(60*i + 50), Samples: 6, Containers: 2}}
				if _, err := h.e.Learn(h.ctx, scAt(60*i), scAt(60*i+60)); err != nil {
					t.Fatal(err)
				}
			}
			if got := h.e.Profiles().Profile("cpu").Demand[profile.CPU]; got < tc.lo || got > tc.hi {
				t.Errorf("learned cpu demand %.3f per container, want in [%v, %v]", got, tc.lo, tc.hi)
			}
		})
	}
}

// readPlacement is Learn's placement read and placeWindow, for the
// tests: it reads placement over [from, to) for the cluster's nodes
// and turns it into what Learn uses. An error is the source's.
func (e *Engine) readPlacement(ctx context.Context, p *Placer, from, to time.Time) (placedWindow, error) {
	hosts := slices.Sorted(slices.Values(e.nodes))
	if len(hosts) == 0 || !to.After(from) {
		return placedWindow{comps: map[string][]profile.KindCount{}}, nil
	}
	pls, err := p.src.Placements(ctx, hosts, from, to)
	return e.placeWindow(p, pls, err, from, to)
}

// fixedParts is a ContainerUsageSource answering the same usage for every
// window.
type fixedParts map[string]map[string]goodness.Usage

func (f fixedParts) ContainerUsage(context.Context, []string, time.Time, time.Time) (map[string]map[string]goodness.Usage, error) {
	return f, nil
}

// TestPlacedParts: with the placement read (learning.placement: influx)
// the applications it places are the ones whose own usage makes each
// kind's part: two kinds only ever seen together are learned apart.
func TestPlacedParts(t *testing.T) {
	src := &fakePlacement{pls: []Placement{whole("application_1_0001", "cpu"), whole("application_1_0002", "disk")}}
	// node01 (4 cores; the harness's limits give the disk its maxima):
	// 2 cpu containers use 0.5 of the CPU, 2 disk containers 0.1 and
	// 40 MB/s of reads.
	um := fixedMetrics{"node01": {CPU: 0.6, DiskRead: 40e6}}
	h := placedHarness(t, src, nil, harnessOpts{metrics: func(*simcluster.Cluster) UsageSource { return um }})
	h.e.parts = fixedParts{"node01": {"application_1_0001": {CPU: 0.5}, "application_1_0002": {CPU: 0.1, DiskRead: 40e6}}}
	for i := range 20 {
		for j := range src.pls {
			src.pls[j].First, src.pls[j].Last = scAt(60*i), scAt(60*i+50)
		}
		if _, err := h.e.Learn(h.ctx, scAt(60*i), scAt(60*i+60)); err != nil {
			t.Fatal(err)
		}
	}
	cpu, disk := h.e.Profiles().Profile("cpu").Demand, h.e.Profiles().Profile("disk").Demand
	if math.Abs(cpu[profile.CPU]-0.25) > 0.01 || math.Abs(disk[profile.CPU]-0.05) > 0.01 || cpu[profile.DiskRead] > 0.01 {
		t.Errorf("cpu's CPU %.3f and reads %.3f, disk's CPU %.3f per container; want 0.25, 0, 0.05 (each from its own application)",
			cpu[profile.CPU], cpu[profile.DiskRead], disk[profile.CPU])
	}
}
