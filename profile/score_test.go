package profile_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/profile"
)

// room6 is a node of 6 vcores and 12 GB; one container takes 1 vcore, 1.5 GB.
var (
	room6 = profile.Room{VCores: 6, MemoryMB: 12288}
	each  = profile.Room{VCores: 1, MemoryMB: 1536}
)

func emptyNode() profile.Node { return profile.Node{Capacity: room6, Free: room6} }

func busyNode(jobs ...profile.KindCount) profile.Node {
	n := profile.Node{Capacity: room6, Free: room6, Jobs: jobs}
	for _, j := range jobs {
		n.Free.VCores -= int64(j.Containers)
		n.Free.MemoryMB -= int64(j.Containers) * 1536
	}
	return n
}

func TestPlace(t *testing.T) {
	for _, tc := range []struct {
		name  string
		nodes []profile.Node
		n     int
		want  []profile.Landing
		fits  bool
	}{
		{"empty nodes take a group each", []profile.Node{emptyNode(), emptyNode(), emptyNode()}, 6,
			[]profile.Landing{{Node: 0, Containers: 6, Group: 3}}, true},
		{"then the nodes with room, in proportion", []profile.Node{busyNode(kc("a", 3)), busyNode(kc("b", 4)), emptyNode()}, 6,
			[]profile.Landing{{Node: 2, Containers: 3 + 3.0*3/8, Group: 3}, {Node: 0, Containers: 3 * 3.0 / 8, Group: 3}, {Node: 1, Containers: 3 * 2.0 / 8, Group: 2}}, true},
		{"busy nodes only", []profile.Node{busyNode(kc("a", 3)), busyNode(kc("b", 3))}, 3,
			[]profile.Landing{{Node: 0, Containers: 1.5, Group: 3}, {Node: 1, Containers: 1.5, Group: 3}}, true},
		{"does not fit", []profile.Node{busyNode(kc("a", 5)), busyNode(kc("b", 5))}, 3, nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := profile.Place(tc.nodes, profile.Shape{Containers: tc.n, Each: each}, 3, nil)
			if ok != tc.fits {
				t.Fatalf("fits = %v, want %v", ok, tc.fits)
			}
			if !ok {
				return
			}
			if diff := cmp.Diff(tc.want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("landings (-want +got):\n%s", diff)
			}
			var sum float64
			for _, l := range got {
				sum += l.Containers
			}
			if math.Abs(sum-float64(tc.n)) > 1e-9 {
				t.Errorf("landings hold %v containers, want %d", sum, tc.n)
			}
		})
	}
}

// known is a Fixed profile table of two CPU-heavy and two disk-heavy kinds.
var known = profile.Fixed{
	"cpu1":  {0.18, 0, 0.01, 0, 0.02, 0.02},
	"cpu2":  {0.2, 0, 0.02, 0.02, 0.05, 0.05},
	"disk1": {0.09, 0, 0.17, 0.02, 0.04, 0.04},
	"disk2": {0.1, 0, 0.15, 0.07, 0.05, 0.05},
}

func scoreAll(sc *profile.Scorer, nodes []profile.Node, kinds ...string) map[string]profile.Score {
	v := sc.NewView(nodes)
	out := map[string]profile.Score{}
	for _, k := range kinds {
		out[k] = v.Score(k, profile.Shape{Containers: 3, Each: each})
	}
	return out
}

func TestScorerPrefersComplementaryPartners(t *testing.T) {
	for _, obj := range []profile.Objective{profile.ObjectiveRate, profile.ObjectiveGoodness} {
		t.Run(string(obj), func(t *testing.T) {
			sc := &profile.Scorer{Profiles: known, Objective: obj}
			for _, tc := range []struct {
				beside       string
				better, wors string
			}{
				{"cpu1", "disk1", "cpu2"},
				{"disk1", "cpu2", "disk2"},
				{"disk2", "cpu1", "disk1"},
			} {
				s := scoreAll(sc, []profile.Node{busyNode(kc(tc.beside, 3))}, tc.better, tc.wors)
				if !(s[tc.better].Value > s[tc.wors].Value) {
					t.Errorf("beside %s: %s scores %.4f, %s %.4f; want the complementary one higher", tc.beside, tc.better, s[tc.better].Value, tc.wors, s[tc.wors].Value)
				}
				if s[tc.better].Alone != 0 || len(s[tc.better].Beside) != 1 || s[tc.better].Beside[0] != (profile.KindWeight{Kind: tc.beside, Weight: 1}) {
					t.Errorf("explanation %+v, want all containers beside %s", s[tc.better], tc.beside)
				}
			}
		})
	}
}

func TestScorerRateOfAKnownPlacement(t *testing.T) {
	// Two disk1 groups ask 6 × 0.19 = 1.14 of the disk: every container
	// runs at 1/1.14. The candidate's three run at that speed and slow the
	// three already there from 1: per candidate container, (6/1.14 − 3)/3.
	sc := &profile.Scorer{Profiles: known}
	s := scoreAll(sc, []profile.Node{busyNode(kc("disk1", 3))}, "disk1")["disk1"]
	want := (6/1.14 - 3) / 3
	if math.Abs(s.Model-want) > 1e-9 || s.Value != s.Model {
		t.Errorf("rate score %v (value %v), want %v", s.Model, s.Value, want)
	}
	alone := scoreAll(sc, []profile.Node{emptyNode()}, "disk1")["disk1"]
	if alone.Model != 1 || alone.Alone != 1 {
		t.Errorf("alone on an empty node: %+v, want rate 1, all alone", alone)
	}
}

// TestScorerSizeWeight: with size_weight 1 the rate objective scores a
// candidate by the whole change of its nodes' rate, so of two jobs of one
// kind that both run alone the larger scores higher by its size; at 0 both
// score the same per container; the goodness objective ignores it.
func TestScorerSizeWeight(t *testing.T) {
	nodes := []profile.Node{emptyNode(), emptyNode(), emptyNode(), emptyNode()}
	score := func(sc *profile.Scorer, containers int) profile.Score {
		return sc.NewView(nodes).Score("disk1", profile.Shape{Containers: containers, Each: each})
	}
	per := &profile.Scorer{Profiles: known}
	if a, b := score(per, 3), score(per, 6); a.Value != b.Value || a.Value != 1 {
		t.Errorf("per container: 3 containers %v, 6 containers %v; want 1 each", a.Value, b.Value)
	}
	whole := &profile.Scorer{Profiles: known, SizeWeight: 1}
	if a, b := score(whole, 3), score(whole, 6); math.Abs(a.Value-3) > 1e-9 || math.Abs(b.Value-6) > 1e-9 {
		t.Errorf("whole rate: 3 containers %v, 6 containers %v; want 3 and 6", a.Value, b.Value)
	}
	if a, b := score(per, 6), score(whole, 6); a.Size != 0 || b.Size != 6 {
		t.Errorf("size factor: %v per container, %v with weight 1; want 0 (none) and 6", a.Size, b.Size)
	}
	half := &profile.Scorer{Profiles: known, SizeWeight: 0.5}
	if a := score(half, 4); math.Abs(a.Value-2) > 1e-9 {
		t.Errorf("size_weight 0.5, 4 containers: %v, want 2", a.Value)
	}
	good := &profile.Scorer{Profiles: known, Objective: profile.ObjectiveGoodness}
	goodW := &profile.Scorer{Profiles: known, Objective: profile.ObjectiveGoodness, SizeWeight: 1}
	if a, b := score(good, 6), score(goodW, 6); a.Value != b.Value {
		t.Errorf("goodness: %v without size weight, %v with it; want the same", a.Value, b.Value)
	}
}

func TestPredictGoodness(t *testing.T) {
	// Nothing saturates: the goodness of the summed demands.
	jobs := []profile.KindCount{kc("cpu1", 3), kc("disk1", 3)}
	want := goodness.Score(goodness.Usage{CPU: 3 * (0.18 + 0.09), DiskRead: 3 * (0.01 + 0.17), DiskWrite: 3 * 0.02,
		NetRecv: 3 * 0.06, NetSent: 3 * 0.06}, goodness.Limits{DiskRead: 1, DiskWrite: 1, NetRecv: 1, NetSent: 1})
	if got := profile.PredictGoodness(known, jobs); math.Abs(got-want) > 1e-9 {
		t.Errorf("PredictGoodness = %v, want %v", got, want)
	}
	// A saturated disk starves CPU into I/O wait, which lowers G.
	same := profile.PredictGoodness(known, []profile.KindCount{kc("disk1", 6)})
	mixed := profile.PredictGoodness(known, jobs)
	if !(same < mixed) {
		t.Errorf("G(6 disk1) = %v, G(3 cpu1 + 3 disk1) = %v: want the saturated node lower", same, mixed)
	}
}

// trained is a model that learned cpu1 and disk1 (never cpu2 or disk2).
func trained(t *testing.T) *profile.Model {
	t.Helper()
	m := profile.New(profile.Config{})
	for range 30 {
		m.Observe([]profile.Observation{
			{Usage: usageOf(kc("cpu1", 3), kc("disk1", 3)), Containers: []profile.KindCount{kc("cpu1", 3), kc("disk1", 3)}},
			{Usage: usageOf(kc("cpu1", 3)), Containers: []profile.KindCount{kc("cpu1", 3)}},
		})
	}
	return m
}

func usageOf(kcs ...profile.KindCount) profile.Vector {
	var u profile.Vector
	for _, k := range kcs {
		for r := range u {
			u[r] += k.Containers * known[k.Kind][r]
		}
	}
	return u
}

func TestScorerExploresWhereItPays(t *testing.T) {
	m := trained(t)
	nodes := []profile.Node{busyNode(kc("disk1", 3))}
	plain := scoreAll(&profile.Scorer{Profiles: m}, nodes, "disk1", "cpu1", "new")
	opt := scoreAll(&profile.Scorer{Profiles: m, Explore: 1}, nodes, "disk1", "cpu1", "new")
	if plain["new"].Known || !plain["cpu1"].Known {
		t.Fatalf("known: new %v cpu1 %v", plain["new"].Known, plain["cpu1"].Known)
	}
	// A known bad choice (disk1 beside disk1) loses to the unknown kind once
	// it is scored optimistically; a known good one (cpu1) still wins.
	if !(opt["new"].Value > opt["disk1"].Value) {
		t.Errorf("optimistic: new %.4f, disk1 %.4f: want the unknown kind tried before a known bad pairing", opt["new"].Value, opt["disk1"].Value)
	}
	if !(opt["cpu1"].Value >= opt["new"].Value-1e-9) {
		t.Errorf("optimistic: cpu1 %.4f, new %.4f: want the known good pairing kept", opt["cpu1"].Value, opt["new"].Value)
	}
	if !(opt["new"].Value > plain["new"].Value) {
		t.Errorf("explore did not raise the unknown kind: %.4f → %.4f", plain["new"].Value, opt["new"].Value)
	}
	if d := opt["cpu1"].Value - plain["cpu1"].Value; math.Abs(d) > 0.02 {
		t.Errorf("explore moved a well-known kind by %v", d)
	}
}

func TestScorerFlagsConfounding(t *testing.T) {
	m := trained(t)
	for _, tc := range []struct {
		name  string
		node  profile.Node
		kind  string
		wants bool
	}{
		{"unknown beside unknown", busyNode(kc("other", 3)), "new", true},
		{"unknown beside known", busyNode(kc("cpu1", 3)), "new", false},
		{"known beside unknown", busyNode(kc("other", 3)), "cpu1", false},
		{"unknown beside itself, never observed", busyNode(kc("new", 3)), "new", true},
		{"unknown alone", emptyNode(), "new", false},
	} {
		s := scoreAll(&profile.Scorer{Profiles: m}, []profile.Node{tc.node}, tc.kind)[tc.kind]
		if s.Confounds != tc.wants {
			t.Errorf("%s: Confounds = %v, want %v", tc.name, s.Confounds, tc.wants)
		}
	}
}

// Two copies of one unknown kind are riskier than two unknown kinds: with
// the expectation over the prior, stacking scores lower.
func TestScorerAvoidsStackingAnUnknownKind(t *testing.T) {
	m := profile.New(profile.Config{})
	s := scoreAll(&profile.Scorer{Profiles: m}, []profile.Node{busyNode(kc("x", 3))}, "x", "y")
	if !(s["y"].Value > s["x"].Value) {
		t.Errorf("beside unknown x: x scores %.4f, unknown y %.4f; want y higher", s["x"].Value, s["y"].Value)
	}
}

type prefs map[[2]string]float64

// Observed has 15 observations of every listed pair and none of the others.
func (p prefs) Observed(a, given string) (float64, int64) {
	h, ok := p[[2]string{a, given}]
	if !ok {
		return 0, 0
	}
	return h, 15
}

func TestScorerCorrection(t *testing.T) {
	nodes := []profile.Node{busyNode(kc("cpu1", 3))}
	corr := prefs{{"disk2", "cpu1"}: -2, {"disk1", "cpu1"}: 1}
	s := scoreAll(&profile.Scorer{Profiles: known, Correction: corr, CorrectionWeight: 0.1}, nodes, "disk1", "disk2", "cpu2")
	// tanh of the preference; 15 observations against a prior of 5: three
	// quarters of the weight.
	want2, want1 := 0.1*math.Tanh(-2)*0.75, 0.1*math.Tanh(1)*0.75
	if math.Abs(s["disk2"].Correction-want2) > 1e-12 || math.Abs(s["disk1"].Correction-want1) > 1e-12 || s["cpu2"].Correction != 0 {
		t.Errorf("corrections %v, %v and %v, want %v, %v and 0 (never observed)", s["disk2"].Correction, s["disk1"].Correction, s["cpu2"].Correction, want2, want1)
	}
	if math.Abs(s["disk1"].Value-(s["disk1"].Model+want1)) > 1e-12 {
		t.Errorf("value %v, want model %v + correction", s["disk1"].Value, s["disk1"].Model)
	}
}

func ExampleScorer() {
	profiles := profile.Fixed{
		"kmeans":   {0.18, 0, 0.01, 0, 0.02, 0.02},
		"tpch-q10": {0.1, 0, 0.17, 0.02, 0.1, 0.1},
	}
	sc := &profile.Scorer{Profiles: profiles}
	// One node of 6 vcores runs three TPC-H containers; three more fit.
	nodes := []profile.Node{{
		Capacity: profile.Room{VCores: 6, MemoryMB: 12288},
		Free:     profile.Room{VCores: 3, MemoryMB: 7680},
		Jobs:     []profile.KindCount{{Kind: "tpch-q10", Containers: 3}},
	}}
	v := sc.NewView(nodes)
	for _, k := range []string{"tpch-q10", "kmeans"} {
		s := v.Score(k, profile.Shape{Containers: 3, Each: profile.Room{VCores: 1, MemoryMB: 1536}})
		fmt.Printf("%-8s %.3f\n", k, s.Value)
	}
	// Output:
	// tpch-q10 0.754
	// kmeans   1.000
}
