package engine

import (
	"errors"
	"log/slog"
	"math"
	"reflect"
	"slices"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/testing/logtest"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
)

// constPredictor predicts the same goodness for every composition and
// counts what it was asked to prepare.
type constPredictor struct {
	g        float64
	prepared int
}

func (p *constPredictor) Prepare(kcs ...[]profile.KindCount)                          { p.prepared += len(kcs) }
func (p *constPredictor) GoodnessOn(kc []profile.KindCount, _ profile.Vector) float64 { return p.g }

// TestPlanTick: a tick's plan is a function of what the gather read and of
// the profiles before the tick: the same inputs give the same plan; the
// residual reward subtracts the prediction; pair aggregation credits each
// pair once with its mean, node aggregation once per node; a foreign kind
// is only ever given; stale and rejected hosts are reported, not learned
// from.
func TestPlanTick(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	use := goodness.Usage{CPU: 0.5}
	comp := func(kinds ...string) []profile.KindCount {
		var kc []profile.KindCount
		for _, k := range kinds {
			kc = append(kc, profile.KindCount{Kind: k, Containers: 1})
		}
		return kc
	}
	in := tickInputs{
		colos: []colocation{
			{node: "n1", kinds: []string{"a", "b"}},
			{node: "n2", kinds: []string{"a", "b"}},
			{node: "n3", kinds: []string{"f", "a"}, foreign: map[string]bool{"f": true}},
			{node: "n4", kinds: []string{"a", "b"}},
			{node: "n5", kinds: []string{"a", "b"}},
		},
		comps: map[string][]profile.KindCount{"n1": comp("a", "b"), "n2": comp("a", "b"), "n3": comp("a", "f"), "n5": comp("a", "b"), "n6": comp("b")},
		hosts: []string{"n1", "n2", "n3", "n5", "n6"},
		readings: map[string]Reading{
			"n1": {Usage: use, Goodness: 10}, "n2": {Usage: use, Goodness: 20}, "n3": {Usage: use, Goodness: 5},
			"n5": {Usage: use, Err: errors.New("cpu above 1")}, "n6": {Usage: use, Goodness: 1},
		},
	}
	lim := goodness.Limits{DiskRead: 1, DiskWrite: 1, NetRecv: 1, NetSent: 1}
	rules := tickRules{limitsOf: func(string) goodness.Limits { return lim }, pairReward: RewardResidual, aggregate: AggregatePair}
	p1 := &constPredictor{g: 4}
	pl := planTick(in, p1, rules, to, from, to)
	if again := planTick(in, &constPredictor{g: 4}, rules, to, from, to); !reflect.DeepEqual(pl, again) {
		t.Errorf("the same inputs gave two plans:\n%+v\n%+v", pl, again)
	}
	if p1.prepared != 3 {
		t.Errorf("prepared %d compositions, want the 3 co-locations with a valid reading", p1.prepared)
	}
	want := []pairCredit{
		{pairKey{later: "b", earlier: "a"}, 11},                      // (10−4 + 20−4) / 2
		{pairKey{later: "a", earlier: "f", foreignEarlier: true}, 1}, // 5−4; f is only given
	}
	if !reflect.DeepEqual(pl.credits, want) {
		t.Errorf("pair credits %+v, want %+v", pl.credits, want)
	}
	if pl.observed != 3 || len(pl.records) != 3 || len(pl.checks) != 3 || pl.checks[1].Observed != 20 || pl.checks[1].Predicted != 4 {
		t.Errorf("observed %d, %d records, checks %+v", pl.observed, len(pl.records), pl.checks)
	}
	if !reflect.DeepEqual(pl.stale, []string{"n4"}) || len(pl.invalid) != 1 || pl.invalid[0].host != "n5" {
		t.Errorf("stale %v, rejected %+v; want n4 and n5", pl.stale, pl.invalid)
	}
	var obsNodes []string
	for _, o := range pl.observations {
		obsNodes = append(obsNodes, o.Node)
	}
	if !reflect.DeepEqual(obsNodes, []string{"n1", "n2", "n3", "n5", "n6"}) {
		t.Errorf("the profiles observe %v; want every host with a reading", obsNodes)
	}

	rules.aggregate, rules.pairReward = AggregateNode, RewardGoodness
	pl = planTick(in, &constPredictor{g: 4}, rules, to, from, to)
	var gs []float64
	for _, c := range pl.credits {
		gs = append(gs, c.g)
	}
	if !reflect.DeepEqual(gs, []float64{10, 20, 5}) {
		t.Errorf("node aggregation with the goodness reward credits %v, want 10, 20, 5", gs)
	}
}

// TestPlanTickParts: with each application's own use read (a
// ContainerUsageSource), a node's observation carries each kind's part —
// its applications' CPU and disk summed, in the node's utilisation units —
// in the order of its compositions; a node where some kind's applications
// have no reading is fitted whole (no parts).
func TestPlanTickParts(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	use := goodness.Usage{CPU: 0.6, DiskRead: 50, NetRecv: 10}
	in := tickInputs{
		comps: map[string][]profile.KindCount{
			"n1": {{Kind: "a", Containers: 3}, {Kind: "b", Containers: 1}},
			"n2": {{Kind: "a", Containers: 1}, {Kind: "b", Containers: 1}},
			"n3": {{Kind: "a", Containers: 2}, {Kind: "b", Containers: 1}},
		},
		hosts:    []string{"n1", "n2", "n3"},
		readings: map[string]Reading{"n1": {Usage: use}, "n2": {Usage: use}, "n3": {Usage: use}},
		apps: map[string][]appKind{
			"n1": {{"app1", "a"}, {"app2", "b"}, {"app3", "a"}},
			"n2": {{"app4", "a"}, {"app5", "b"}},
			"n3": {{"app6", "a"}, {"app7", "a"}, {"app8", "b"}},
		},
		parts: map[string]map[string]goodness.Usage{
			"n1": {"app1": {CPU: 0.1, DiskRead: 20}, "app2": {CPU: 0.3, DiskWrite: 10, NetRecv: 99}, "app3": {CPU: 0.15, DiskRead: 5}},
			"n2": {"app4": {CPU: 0.2}},                                  // app5 (kind b) unread
			"n3": {"app6": {CPU: 0.2}, "app8": {CPU: 0.1, DiskRead: 1}}, // app7, kind a's other, unread
		},
	}
	lim := goodness.Limits{DiskRead: 100, DiskWrite: 100, NetRecv: 100, NetSent: 100}
	rules := tickRules{limitsOf: func(string) goodness.Limits { return lim }}
	pl := planTick(in, &constPredictor{}, rules, to, from, to)
	if len(pl.observations) != 3 {
		t.Fatalf("%d observations, want 3", len(pl.observations))
	}
	want := []profile.Part{
		{Kind: "a", Usage: profile.Vector{profile.CPU: 0.25, profile.DiskRead: 0.25}},
		{Kind: "b", Usage: profile.Vector{profile.CPU: 0.3, profile.DiskWrite: 0.1}}, // no network: no cgroup shows it
	}
	got := pl.observations[0].Parts
	if len(got) != len(want) {
		t.Fatalf("n1's parts %+v, want %+v", got, want)
	}
	for i := range want {
		if got[i].Kind != want[i].Kind {
			t.Errorf("part %d is %s, want %s", i, got[i].Kind, want[i].Kind)
		}
		for r := range profile.NumResources {
			if math.Abs(got[i].Usage[r]-want[i].Usage[r]) > 1e-12 {
				t.Errorf("part %s %s = %v, want %v", got[i].Kind, profile.Resource(r), got[i].Usage[r], want[i].Usage[r])
			}
		}
	}
	if p := pl.observations[1].Parts; p != nil {
		t.Errorf("n2's parts %+v, want none: kind b's application has no reading", p)
	}
	if p := pl.observations[2].Parts; p != nil {
		t.Errorf("n3's parts %+v, want none: one of kind a's two applications has no reading", p)
	}
}

// TestLearnFitsKindsApart: two kinds never observed run side by side on the
// one node. From the node's sum their split is a guess; with the
// simulator's per-application metrics (a ContainerUsageSource) the first
// tick learns each kind's own CPU and disk.
func TestLearnFitsKindsApart(t *testing.T) {
	// Per container, of the node's 4 cores and 200 MB/s
	// (simtest.ThreeKindsYAML): cpu uses 1 core, disk 0.2 and 40 + 20 MB/s.
	want := map[string]profile.Vector{"cpu": {profile.CPU: 0.25}, "disk": {profile.CPU: 0.05, profile.DiskRead: 0.2, profile.DiskWrite: 0.1}}
	errOf := func(m *profile.Model) (worst float64) {
		for kind, v := range want {
			d := m.Profile(kind).Demand
			for _, r := range []profile.Resource{profile.CPU, profile.DiskRead, profile.DiskWrite} {
				worst = max(worst, math.Abs(d[r]-v[r]))
			}
		}
		return worst
	}
	var errs [2]float64
	for i, on := range []bool{false, true} {
		h := newHarness(t, harnessOpts{nodes: 1, containerMetrics: on})
		from, to := colocate(h, "disk")
		rep, err := h.e.Learn(h.ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		if rep.Profile.Observations != 1 {
			t.Fatalf("container metrics %v: the profiles observed %d nodes, want 1", on, rep.Profile.Observations)
		}
		errs[i] = errOf(h.e.Profiles())
	}
	// One tick of 3 containers each: the prior (the population mean, of
	// strength 1 against 3² = 9) still holds a tenth of each estimate.
	if errs[1] > 0.025 {
		t.Errorf("with per-application metrics the worst error is %.4f, want ≤ 0.025", errs[1])
	}
	if errs[0] < 0.05 {
		t.Errorf("from the node's sum the worst error is %.4f: the test shows nothing the parts add", errs[0])
	}
}

// TestPartsAdmitWithoutHoldingBack: the observe-first hold-back waits for
// a landing where a never-observed kind's usage can be told apart; with
// each application's own usage read, it always can (CPU and disk), so a
// second never-observed kind is admitted beside the first at once.
func TestPartsAdmitWithoutHoldingBack(t *testing.T) {
	for _, on := range []bool{false, true} {
		h := newHarness(t, harnessOpts{nodes: 1, containerMetrics: on, pipeline: func(c *pipeline.Config) {
			c.Preference.ObserveWait = 2 * time.Minute
		}})
		h.submit("cpu")
		h.admit()
		h.advance(time.Second)
		h.sync()
		ids := h.submit("disk")
		rep := h.admit()
		if held := len(rep.Admitted) == 0; held == on {
			t.Errorf("container metrics %v: admitted %v of %v; want it held back only without them", on, rep.Admitted, ids)
		}
	}
}

// TestPartsSeen: with a container usage source, a tick whose nodes that ran
// something mostly had no parts (a plugin without its cgroup reading)
// turns the hold-back's "kinds apart" off, with a WARN; one with parts on
// at least half of them turns it back on. Idle ticks change nothing.
func TestPartsSeen(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelWarn}
	h := newHarness(t, harnessOpts{nodes: 1, containerMetrics: true, logger: slog.New(rec)})
	busy := func(parts bool) profile.Observation {
		o := profile.Observation{Containers: []profile.KindCount{{Kind: "cpu", Containers: 1}}}
		if parts {
			o.Parts = []profile.Part{{Kind: "cpu"}}
		}
		return o
	}
	mx := &recorder{}
	h.e.mx = mx
	for i, tc := range []struct {
		obs   []profile.Observation
		apart bool
		warns int
	}{
		{nil, true, 0},
		{[]profile.Observation{{}}, true, 0}, // idle nodes only
		{[]profile.Observation{busy(false), busy(false), busy(true)}, false, 0},
		{[]profile.Observation{busy(true), busy(false)}, true, 0},
		{[]profile.Observation{busy(false), {}}, false, 1},
	} {
		var rep LearnReport
		h.e.notePartsSeen(tc.obs, &rep)
		if got := h.e.apart.Load(); got != tc.apart {
			t.Errorf("tick %d: apart %v, want %v", i, got, tc.apart)
		}
		if n := len(rec.Take()); n != tc.warns {
			t.Errorf("tick %d: %d warnings, want %d", i, n, tc.warns)
		}
	}
	// The nodes that ran something, fitted apart and whole, tick by tick.
	want := []string{"container usage 0 apart 0 whole", "container usage 0 apart 0 whole", "container usage 1 apart 2 whole",
		"container usage 1 apart 1 whole", "container usage 0 apart 1 whole"}
	if !slices.Equal(mx.calls, want) {
		t.Errorf("telemetry %q, want %q", mx.calls, want)
	}
}
