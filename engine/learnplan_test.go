package engine

import (
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
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
