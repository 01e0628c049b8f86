package bandit_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/bandit"
)

// newLearner returns a learner with kinds added, and registers a cleanup
// that checks the invariants on whatever state the test left it in.
func newLearner(tb testing.TB, cfg bandit.Config, kinds ...string) *bandit.Learner {
	tb.Helper()
	l := bandit.New(cfg)
	for _, k := range kinds {
		l.Add(k)
	}
	tb.Cleanup(func() { checkInvariants(tb, l) })
	return l
}

// checkInvariants: H is square and finite (and within ±Clip), every row of π
// sums to 1, Prob agrees with the softmax of the snapshot, counters add up,
// and the snapshot restores into a fresh learner.
func checkInvariants(tb testing.TB, l *bandit.Learner) {
	tb.Helper()
	s := l.Snapshot()
	clip := l.Config().Clip
	k := len(s.Kinds)
	if len(s.H) != k {
		tb.Fatalf("H has %d rows for %d kinds", len(s.H), k)
	}
	for i, row := range s.H {
		if len(row) != k {
			tb.Fatalf("H[%d] has %d entries for %d kinds", i, len(row), k)
		}
		for j, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) || (clip > 0 && math.Abs(v) > clip) {
				tb.Fatalf("H[%d][%d] = %v (clip %v)", i, j, v, clip)
			}
		}
		p := softmax(row)
		sum := 0.0
		for j, v := range p {
			sum += v
			if j < 4 && i < 4 { // Prob is O(K): spot-check a corner
				if got := l.Prob(s.Kinds[j], s.Kinds[i]); math.Abs(got-v) > 1e-12 {
					tb.Errorf("Prob(%s|%s) = %v, softmax of the snapshot row = %v", s.Kinds[j], s.Kinds[i], got, v)
				}
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			tb.Fatalf("row %d of π sums to %v", i, sum)
		}
	}
	if math.IsNaN(s.Baseline) || math.IsInf(s.Baseline, 0) {
		tb.Fatalf("baseline %v", s.Baseline)
	}
	var total int64
	for _, c := range s.RowObservations {
		total += c
	}
	if total != s.Observations {
		tb.Fatalf("row observations sum to %d, observations = %d", total, s.Observations)
	}
	if err := bandit.New(s.Config).Restore(s); err != nil {
		tb.Fatalf("the learner's own snapshot does not restore: %v", err)
	}
}

// softmax is the test's own, straightforward softmax.
func softmax(h []float64) []float64 {
	m := math.Inf(-1)
	for _, v := range h {
		m = max(m, v)
	}
	p := make([]float64, len(h))
	z := 0.0
	for i, v := range h {
		p[i] = math.Exp(v - m)
		z += p[i]
	}
	for i := range p {
		p[i] /= z
	}
	return p
}

// draw samples an index of p (a probability vector) with rng.
func draw(p []float64, rng *rand.Rand) int {
	u := rng.Float64()
	for i, v := range p {
		if u -= v; u < 0 {
			return i
		}
	}
	return len(p) - 1
}

func near(a, b float64) bool { return math.Abs(a-b) <= 1e-9*max(1, math.Abs(b)) }

var approx = cmpopts.EquateApprox(0, 1e-9)

func seedRNG(tb testing.TB) (*rand.Rand, uint64) {
	tb.Helper()
	seed := uint64(time.Now().UnixNano())
	tb.Logf("seed %d (hard-code it to replay)", seed)
	return rand.New(rand.NewPCG(seed, 0xc0ffee)), seed
}

// TestUpdateHandComputed follows three updates on three kinds x, y, z (all
// added first) with γ = 0.1, under each baseline mode.
//
//  1. Update(y, x, 6)   2. Update(z, x, 10)   3. Update(x, y, 2)
func TestUpdateHandComputed(t *testing.T) {
	type step struct {
		base float64            // Snapshot().Baseline after the step
		h    map[string]float64 // "a|given" → H(a|given) after the step
	}
	tests := []struct {
		name  string
		cfg   bandit.Config
		steps [3]step
	}{
		{
			// Paper: Ḡ is the mean of every goodness so far, the current one included.
			//  1. Ḡ = 6; G−Ḡ = 0, so nothing moves.
			//  2. Ḡ = (6+10)/2 = 8; γ(G−Ḡ) = 0.1·2 = 0.2; π(·|x) = 1/3 each (H = 0):
			//     H(z|x) = 0 + 0.2·(1−1/3) = 0.1333333, H(x|x) = H(y|x) = 0 − 0.2·1/3 = −0.0666667
			//  3. Ḡ = (6+10+2)/3 = 6; γ(G−Ḡ) = 0.1·(2−6) = −0.4; π(·|y) = 1/3 each:
			//     H(x|y) = 0 − 0.4·(2/3) = −0.2666667, H(y|y) = H(z|y) = 0 + 0.4/3 = 0.1333333
			name: "global mean",
			cfg:  bandit.Config{StepSize: 0.1},
			steps: [3]step{
				{6, map[string]float64{"x|x": 0, "y|x": 0, "z|x": 0}},
				{8, map[string]float64{"x|x": -0.2 / 3, "y|x": -0.2 / 3, "z|x": 0.4 / 3}},
				{6, map[string]float64{"x|y": -0.8 / 3, "y|y": 0.4 / 3, "z|y": 0.4 / 3, "z|x": 0.4 / 3}},
			},
		},
		{
			// Per-row mean: steps 1–2 as above (both in row x, row mean 6 then 8).
			//  3. Row y has seen only G = 2: Ḡ_y = 2, G−Ḡ_y = 0, row y stays 0.
			//     (The global mean, 6, is still tracked and reported.)
			name: "row mean",
			cfg:  bandit.Config{StepSize: 0.1, Baseline: bandit.RowMean},
			steps: [3]step{
				{6, map[string]float64{"y|x": 0}},
				{8, map[string]float64{"x|x": -0.2 / 3, "y|x": -0.2 / 3, "z|x": 0.4 / 3}},
				{6, map[string]float64{"x|y": 0, "y|y": 0, "z|y": 0, "z|x": 0.4 / 3}},
			},
		},
		{
			// Recency, α = 0.5, unbiased step β_n = α/(1−(1−α)^n):
			//  1. β = 0.5/0.5 = 1: Ḡ = 6. No move.
			//  2. β = 0.5/0.75 = 2/3: Ḡ = 6 + (2/3)·4 = 8.6666667;
			//     γ(G−Ḡ) = 0.1·1.3333333 = 0.1333333;
			//     H(z|x) = 0.1333333·2/3 = 0.0888889, H(x|x) = H(y|x) = −0.1333333/3 = −0.0444444
			//  3. β = 0.5/0.875 = 4/7: Ḡ = 8.6666667 + (4/7)(2 − 8.6666667) = 4.8571429
			//     (= (0.125·6 + 0.25·10 + 0.5·2)/0.875, the recency-weighted mean);
			//     γ(G−Ḡ) = 0.1·(2 − 4.8571429) = −0.2857143;
			//     H(x|y) = −0.2857143·2/3 = −0.1904762, H(y|y) = H(z|y) = 0.2857143/3 = 0.0952381
			name: "recency",
			cfg:  bandit.Config{StepSize: 0.1, Baseline: bandit.Recency, RecencyAlpha: 0.5},
			steps: [3]step{
				{6, map[string]float64{"z|x": 0}},
				{26.0 / 3, map[string]float64{"x|x": -0.4 / 9, "y|x": -0.4 / 9, "z|x": 0.8 / 9}},
				{34.0 / 7, map[string]float64{"x|y": -0.4 / 2.1, "y|y": 0.2 / 2.1, "z|y": 0.2 / 2.1}},
			},
		},
	}
	updates := [3]struct {
		chosen, given string
		g             float64
	}{{"y", "x", 6}, {"z", "x", 10}, {"x", "y", 2}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := newLearner(t, tt.cfg, "x", "y", "z")
			for i, u := range updates {
				l.Update(u.chosen, u.given, u.g)
				s := l.Snapshot()
				if !near(s.Baseline, tt.steps[i].base) {
					t.Errorf("after update %d: baseline = %.10g, want %.10g", i+1, s.Baseline, tt.steps[i].base)
				}
				got := map[string]float64{}
				for key := range tt.steps[i].h {
					a, given, _ := strings.Cut(key, "|")
					got[key] = l.Pref(a, given)
				}
				if diff := cmp.Diff(tt.steps[i].h, got, approx); diff != "" {
					t.Errorf("after update %d: H (-want +got):\n%s", i+1, diff)
				}
			}
			s := l.Snapshot()
			if diff := cmp.Diff([]int64{2, 1, 0}, s.RowObservations); diff != "" {
				t.Errorf("row observations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([][]int64{{0, 1, 1}, {1, 0, 0}, {0, 0, 0}}, s.PairObservations); diff != "" {
				t.Errorf("pair observations (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff([]float64{8, 2, 0}, s.RowBaseline, approx); diff != "" {
				t.Errorf("row baselines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestUpdateTwoKindsNonUniform: an update whose π is not uniform.
func TestUpdateTwoKindsNonUniform(t *testing.T) {
	l := newLearner(t, bandit.Config{StepSize: 0.1}, "a", "b")
	// 1. Update(a, b, 5): Ḡ = 5, no move.
	// 2. Update(a, b, 9): Ḡ = 7, γ(G−Ḡ) = 0.2, π = 1/2: H(a|b) = 0.1, H(b|b) = −0.1.
	// 3. Update(b, b, 4): Ḡ = 18/3 = 6, γ(G−Ḡ) = −0.2;
	//    π(b|b) = e^−0.1/(e^0.1+e^−0.1) = 1/(1+e^0.2) = 0.4501660027, π(a|b) = 0.5498339973
	//    H(b|b) = −0.1 + (−0.2)(1 − 0.4501660027) = −0.1 − 0.1099667995 = −0.2099667995
	//    H(a|b) =  0.1 − (−0.2)·π(a|b) = 0.1 + 0.2·0.5498339973 = 0.1 + 0.1099667995 = 0.2099667995
	l.Update("a", "b", 5)
	l.Update("a", "b", 9)
	if !near(l.Pref("a", "b"), 0.1) || !near(l.Pref("b", "b"), -0.1) {
		t.Fatalf("after 2 updates H(a|b), H(b|b) = %v, %v; want 0.1, -0.1", l.Pref("a", "b"), l.Pref("b", "b"))
	}
	l.Update("b", "b", 4)
	want := map[string]float64{"a|b": 0.2099667995, "b|b": -0.2099667995, "a|a": 0, "b|a": 0}
	got := map[string]float64{
		"a|b": l.Pref("a", "b"), "b|b": l.Pref("b", "b"), "a|a": l.Pref("a", "a"), "b|a": l.Pref("b", "a"),
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("H (-want +got):\n%s", diff)
	}
	// π(a|b) = 1/(1+e^(−0.419933599)) = 0.6034...
	if p := l.Prob("a", "b"); !near(p, 1/(1+math.Exp(-0.419933599))) {
		t.Errorf("Prob(a|b) = %v", p)
	}
}

func TestUpdateAddsUnknownKinds(t *testing.T) {
	l := newLearner(t, bandit.Config{}, "a")
	l.Update("new-chosen", "new-given", 10)
	if diff := cmp.Diff([]string{"a", "new-chosen", "new-given"}, l.Kinds()); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if s := l.Snapshot(); s.Observations != 1 || s.PairObservations[2][1] != 1 {
		t.Errorf("observations = %d, pair[given][chosen] = %d; want 1, 1", s.Observations, s.PairObservations[2][1])
	}
}

func TestUpdateRejects(t *testing.T) {
	l := newLearner(t, bandit.Config{}, "a", "b")
	l.Update("a", "b", 10)
	l.Update("b", "b", 20)
	before := l.Snapshot()
	bad := []struct {
		chosen, given string
		g             float64
	}{
		{"a", "b", math.NaN()},
		{"a", "b", math.Inf(1)},
		{"a", "b", math.Inf(-1)},
		{"", "b", 10},
		{"a", "", 10},
		{"c", "d", math.NaN()}, // rejected before the kinds are added
	}
	for _, u := range bad {
		l.Update(u.chosen, u.given, u.g)
	}
	after := l.Snapshot()
	before.Rejected = int64(len(bad))
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("rejected updates changed the learner (-want +got):\n%s", diff)
	}
	// An update that would overflow: after g = −MaxFloat64 (accepted: Ḡ = g, no move),
	// g = +MaxFloat64 makes the mean's step (g − Ḡ)/2 = +Inf/2: rejected, nothing changes.
	l2 := newLearner(t, bandit.Config{StepSize: 1})
	l2.Update("a", "b", -math.MaxFloat64)
	s := l2.Snapshot()
	l2.Update("a", "b", math.MaxFloat64) // (g − Ḡ) = +Inf
	s.Rejected++
	if diff := cmp.Diff(s, l2.Snapshot()); diff != "" {
		t.Errorf("an overflowing update changed the learner (-want +got):\n%s", diff)
	}

	// An update that would spread a row over more than the float64 range:
	// H(a|b) = 1e308, H(b|b) = 0, so π(a|b) = 1, π(b|b) = 0 in float64.
	// g = −1e308 with Ḡ = (0 − 1e308)/2 = −5e307 gives γ(G−Ḡ) = −5e307:
	// H(a|b) → 1e308 + 5e307 = 1.5e308 and H(b|b) → −5e307, both finite,
	// but their span 2e308 is not.
	l3 := newLearner(t, bandit.Config{StepSize: 1})
	if err := l3.Restore(bandit.Snapshot{
		Version: 1, Kinds: []string{"a", "b"}, H: [][]float64{{0, 0}, {1e308, 0}},
		RowBaseline: []float64{0, 0}, Observations: 1, RowObservations: []int64{0, 1},
		PairObservations: [][]int64{{0, 0}, {1, 0}},
	}); err != nil {
		t.Fatal(err)
	}
	s3 := l3.Snapshot()
	l3.Update("b", "b", -1e308)
	s3.Rejected++
	if diff := cmp.Diff(s3, l3.Snapshot()); diff != "" {
		t.Errorf("an update overflowing the row span changed the learner (-want +got):\n%s", diff)
	}
}

// TestProbRowsSumToOne: property over random updates, adds and warm starts.
func TestProbRowsSumToOne(t *testing.T) {
	rng, seed := seedRNG(t)
	for trial := range 20 {
		cfg := bandit.Config{
			StepSize: []float64{0.01, 0.05, 0.5, 5}[rng.IntN(4)],
			Baseline: bandit.BaselineMode(rng.IntN(3)),
			Clip:     []float64{0, 0, 3, 50}[rng.IntN(4)],
		}
		l := newLearner(t, cfg)
		kinds := make([]string, 2+rng.IntN(12))
		for i := range kinds {
			kinds[i] = fmt.Sprintf("k%d", i)
		}
		for range 500 {
			switch r := rng.IntN(50); {
			case r == 0:
				l.AddSimilar(fmt.Sprintf("s%d", rng.IntN(1000)), map[string]float64{kinds[rng.IntN(len(kinds))]: rng.Float64()})
			default:
				g := math.E + (math.Exp(4)-math.E)*rng.Float64()
				l.Update(kinds[rng.IntN(len(kinds))], kinds[rng.IntN(len(kinds))], g)
			}
		}
		all := l.Kinds()
		out := make([]float64, len(all))
		for _, given := range all {
			sum := 0.0
			for _, a := range all {
				sum += l.Prob(a, given)
			}
			if math.Abs(sum-1) > 1e-9 {
				t.Fatalf("seed %d trial %d cfg %+v: Σ_a π(a|%s) = %v", seed, trial, cfg, given, sum)
			}
			// Mix with a single context and every kind as candidate is the row of π.
			l.Mix(all, []string{given}, nil, out)
			for i, a := range all {
				if p := l.Prob(a, given); !near(out[i], p) {
					t.Fatalf("seed %d trial %d: Mix(all, [%s])[%s] = %v, Prob = %v", seed, trial, given, a, out[i], p)
				}
			}
		}
	}
}

// stationaryRun: 10 kinds, context k0 always running; the learner samples a
// partner from π(·|k0) and observes a noisy goodness. Partner k7 is best
// (mean 33 ≈ e^3.5), the others have means drawn from [4.5, 12.2]
// (≈ e^1.5 .. e^2.5), noise σ = 2, clamped to [e, e^4]. It returns the
// number of updates until π(k7|k0) > 0.9 (−1 if not within max) and the
// lowest π(k7|k0) seen in the 500 updates after that.
func stationaryRun(seed uint64, cfg bandit.Config, maxSteps int) (reached int, lowAfter float64) {
	rng := rand.New(rand.NewPCG(seed, 7))
	l := bandit.New(cfg)
	kinds := make([]string, 10)
	means := make([]float64, 10)
	for i := range kinds {
		kinds[i] = fmt.Sprintf("k%d", i)
		l.Add(kinds[i])
		means[i] = 4.5 + (12.2-4.5)*rng.Float64()
	}
	const best = 7
	means[best] = 33
	p := make([]float64, len(kinds))
	reached, lowAfter = -1, 1
	for step := 1; step <= maxSteps; step++ {
		l.Mix(kinds, []string{"k0"}, nil, p)
		c := draw(p, rng)
		g := min(max(means[c]+2*rng.NormFloat64(), math.E), math.Exp(4))
		l.Update(kinds[c], "k0", g)
		pb := l.Prob(kinds[best], "k0")
		if reached < 0 && pb > 0.9 {
			reached = step
		}
		if reached > 0 {
			lowAfter = min(lowAfter, pb)
			if step >= reached+500 {
				break
			}
		}
	}
	return reached, lowAfter
}

// TestLearnsBestPartner: with the default configuration, π(best|a') passes
// 0.9 within a bounded number of updates, for every one of 300 fixed seeds,
// and stays high afterwards. Measured (DefaultStepSize 0.05): median 25,
// 95th percentile 47, max 80 updates; the bound asserted is 150.
func TestLearnsBestPartner(t *testing.T) {
	const seeds, bound = 300, 150
	var steps []int
	for seed := range uint64(seeds) {
		reached, low := stationaryRun(seed, bandit.Config{}, 2000)
		if reached < 0 || reached > bound {
			t.Errorf("seed %d: π(best|a') > 0.9 after %d updates, want within %d", seed, reached, bound)
			continue
		}
		if low < 0.8 {
			t.Errorf("seed %d: π(best|a') fell back to %v after reaching 0.9", seed, low)
		}
		steps = append(steps, reached)
	}
	slices.Sort(steps)
	if len(steps) > 0 {
		t.Logf("updates to π(best|a') > 0.9 over %d seeds: median %d, p95 %d, max %d (bound %d)",
			len(steps), steps[len(steps)/2], steps[len(steps)*95/100], steps[len(steps)-1], bound)
	}
}

// TestExtremeRewardsStayFinite: 1e6 updates with rewards at and far beyond
// the ends of the goodness range, clipping on: every preference stays finite
// and within ±Clip, every row of π still sums to 1.
func TestExtremeRewardsStayFinite(t *testing.T) {
	rng, seed := seedRNG(t)
	for _, mode := range []bandit.BaselineMode{bandit.GlobalMean, bandit.RowMean, bandit.Recency} {
		t.Run(mode.String(), func(t *testing.T) {
			n := 1_000_000
			if mode != bandit.GlobalMean || testing.Short() {
				n = 100_000
			}
			const clip = 30
			kinds := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
			l := newLearner(t, bandit.Config{StepSize: 1, Baseline: mode, Clip: clip}, kinds...)
			rewards := []float64{math.E, math.Exp(4), 0, 1e300, -1e300, 5e-324, math.MaxFloat64, -math.MaxFloat64}
			for i := range n {
				g := rewards[rng.IntN(len(rewards))]
				if i%1000 == 999 { // and long runs of one extreme, to push rows to the clip
					for range 50 {
						l.Update(kinds[0], kinds[1], math.Exp(4))
					}
				}
				l.Update(kinds[rng.IntN(len(kinds))], kinds[rng.IntN(len(kinds))], g)
			}
			s := l.Snapshot()
			if got := s.Observations + s.Rejected; got != int64(n+n/1000*50) {
				t.Errorf("seed %d: observations %d + rejected %d = %d, want %d", seed, s.Observations, s.Rejected, got, n+n/1000*50)
			}
			t.Logf("seed %d: %d accepted, %d rejected (overflowing), max |H| = %v", seed, s.Observations, s.Rejected, maxAbs(s.H))
			// checkInvariants (cleanup) asserts finiteness, |H| <= clip and Σπ = 1.
		})
	}
	// Without clipping, in-range rewards also stay finite.
	l := newLearner(t, bandit.Config{StepSize: 0.5}, "a", "b", "c")
	for range 50_000 {
		g := math.E
		if rng.IntN(2) == 0 {
			g = math.Exp(4)
		}
		l.Update([]string{"a", "b", "c"}[rng.IntN(3)], "a", g)
	}
}

func maxAbs(h [][]float64) float64 {
	m := 0.0
	for _, row := range h {
		for _, v := range row {
			m = max(m, math.Abs(v))
		}
	}
	return m
}

func TestClipBoundsPreferences(t *testing.T) {
	l := newLearner(t, bandit.Config{StepSize: 10, Clip: 2}, "a", "b")
	l.Update("a", "b", 3)
	l.Update("a", "b", 50) // Ḡ = 26.5, γ(G−Ḡ) = 235: unclipped H(a|b) = 117.5
	if got := l.Pref("a", "b"); got != 2 {
		t.Errorf("H(a|b) = %v, want clipped to 2", got)
	}
	if got := l.Pref("b", "b"); got != -2 {
		t.Errorf("H(b|b) = %v, want clipped to -2", got)
	}
	if got, want := l.Prob("a", "b"), 1/(1+math.Exp(-4)); !near(got, want) {
		t.Errorf("π(a|b) = %v, want 1/(1+e^-4) = %v", got, want)
	}
}

func TestSelfPriorStartsTheDiagonalLower(t *testing.T) {
	l := newLearner(t, bandit.Config{SelfPrior: 1}, "a", "b", "c")
	for _, k := range []string{"a", "b", "c"} {
		if got := l.Pref(k, k); got != -1 {
			t.Errorf("H(%s|%s) = %v, want -1", k, k, got)
		}
		for _, o := range []string{"a", "b", "c"} {
			if o != k && l.Pref(o, k) != 0 {
				t.Errorf("H(%s|%s) = %v, want 0", o, k, l.Pref(o, k))
			}
		}
	}
	// π(a|a) = e^-1 / (e^-1 + 2).
	if got, want := l.Prob("a", "a"), math.Exp(-1)/(math.Exp(-1)+2); !near(got, want) {
		t.Errorf("π(a|a) = %v, want %v", got, want)
	}
	// It is a start, not a rule: good observations of a beside a lift it.
	for range 50 {
		l.Update("b", "a", 5)
		l.Update("a", "a", 20)
	}
	if l.Prob("a", "a") < 0.9 {
		t.Errorf("π(a|a) = %v after 50 good observations, want > 0.9", l.Prob("a", "a"))
	}
	// Clip bounds the prior too; AddSimilar inherits rather than applies it.
	c := newLearner(t, bandit.Config{SelfPrior: 5, Clip: 2}, "x")
	if got := c.Pref("x", "x"); got != -2 {
		t.Errorf("clipped H(x|x) = %v, want -2", got)
	}
	c.AddSimilar("y", map[string]float64{"x": 1})
	if got := c.Pref("y", "y"); got != -2 {
		t.Errorf("AddSimilar H(y|y) = %v, want H(x|x) = -2", got)
	}
}

func TestAddLeavesPreferencesUntouched(t *testing.T) {
	rng, seed := seedRNG(t)
	l := newLearner(t, bandit.Config{StepSize: 0.3}, "a", "b", "c")
	for range 200 {
		l.Update([]string{"a", "b", "c"}[rng.IntN(3)], []string{"a", "b", "c"}[rng.IntN(3)], 3+50*rng.Float64())
	}
	before := l.Snapshot()
	l.Add("d")
	l.Add("a") // known: no-op
	l.Add("")  // ignored
	after := l.Snapshot()
	if diff := cmp.Diff([]string{"a", "b", "c", "d"}, after.Kinds); diff != "" {
		t.Fatalf("seed %d: kinds (-want +got):\n%s", seed, diff)
	}
	for i := range before.Kinds {
		if diff := cmp.Diff(before.H[i], after.H[i][:3]); diff != "" {
			t.Errorf("seed %d: row %s changed (-before +after):\n%s", seed, before.Kinds[i], diff)
		}
		if after.H[i][3] != 0 {
			t.Errorf("seed %d: new column H(d|%s) = %v, want 0", seed, before.Kinds[i], after.H[i][3])
		}
	}
	if diff := cmp.Diff([]float64{0, 0, 0, 0}, after.H[3]); diff != "" {
		t.Errorf("new row (-want +got):\n%s", diff)
	}
	if before.Baseline != after.Baseline || before.Observations != after.Observations {
		t.Errorf("Add changed baseline/observations: %v/%d → %v/%d", before.Baseline, before.Observations, after.Baseline, after.Observations)
	}
}

func TestAddSimilar(t *testing.T) {
	// H (rows = given):   a     b
	//               a   [ 1,   -1 ]
	//               b   [ 2,    4 ]
	snap := bandit.Snapshot{
		Version: bandit.SnapshotVersion, Kinds: []string{"a", "b"},
		H:           [][]float64{{1, -1}, {2, 4}},
		RowBaseline: []float64{0, 0}, RowObservations: []int64{0, 0},
		PairObservations: [][]int64{{0, 0}, {0, 0}},
	}
	l := newLearner(t, bandit.Config{})
	if err := l.Restore(snap); err != nil {
		t.Fatal(err)
	}
	// Weights 3 and 1 normalise to 0.75 and 0.25; "zzz" is unknown, "b2" has weight 0: ignored.
	l.AddSimilar("c", map[string]float64{"a": 3, "b": 1, "zzz": 100, "b2": 0})
	// Row c:    H(a|c) = 0.75·1 + 0.25·2 = 1.25;   H(b|c) = 0.75·(−1) + 0.25·4 = 0.25
	// Column c: H(c|a) = 0.75·1 + 0.25·(−1) = 0.5; H(c|b) = 0.75·2 + 0.25·4 = 2.5
	// H(c|c) = 0.75·H(·|c)[a] + 0.25·H(·|c)[b] = 0.75·1.25 + 0.25·0.25 = 1.0
	want := [][]float64{{1, -1, 0.5}, {2, 4, 2.5}, {1.25, 0.25, 1.0}}
	if diff := cmp.Diff(want, l.Snapshot().H, approx); diff != "" {
		t.Errorf("H after AddSimilar (-want +got):\n%s", diff)
	}
	// A second AddSimilar of a known kind is a no-op.
	before := l.Snapshot()
	l.AddSimilar("c", map[string]float64{"b": 1})
	if diff := cmp.Diff(before, l.Snapshot()); diff != "" {
		t.Errorf("AddSimilar of a known kind changed the learner (-want +got):\n%s", diff)
	}
	// No usable weight: plain Add (zeros).
	l.AddSimilar("d", map[string]float64{"nope": 1, "a": -2, "b": math.NaN()})
	s := l.Snapshot()
	if diff := cmp.Diff([]float64{0, 0, 0, 0}, s.H[3]); diff != "" {
		t.Errorf("row d (-want +got):\n%s", diff)
	}
	// Huge weights do not overflow the normalisation.
	l.AddSimilar("e", map[string]float64{"a": math.MaxFloat64, "b": math.MaxFloat64})
	if got := l.Pref("a", "e"); !near(got, 1.5) {
		t.Errorf("H(a|e) = %v, want (1+2)/2 = 1.5", got)
	}
}

func TestProbUnknownKindsAsIfAdded(t *testing.T) {
	l := newLearner(t, bandit.Config{StepSize: 0.5}, "a", "b")
	l.Update("a", "b", 5)
	l.Update("a", "b", 40)
	tests := []struct{ a, given string }{{"x", "b"}, {"a", "x"}, {"x", "x"}, {"x", "y"}, {"a", "b"}}
	for _, tt := range tests {
		t.Run(tt.a+"|"+tt.given, func(t *testing.T) {
			before := l.Prob(tt.a, tt.given)
			c := bandit.New(bandit.Config{})
			if err := c.Restore(l.Snapshot()); err != nil {
				t.Fatal(err)
			}
			c.Add(tt.a)
			c.Add(tt.given)
			if after := c.Prob(tt.a, tt.given); !near(before, after) {
				t.Errorf("Prob before adding = %v, after = %v", before, after)
			}
			if tt.a == "x" && tt.given == "x" && !near(before, 1.0/3) {
				t.Errorf("Prob(x|x) = %v, want 1/3 (a zero row over a, b, x)", before)
			}
		})
	}
}

func TestMix(t *testing.T) {
	// H rows (given a, given b) over kinds a, b, c:
	snap := bandit.Snapshot{
		Version: bandit.SnapshotVersion, Kinds: []string{"a", "b", "c"},
		H:           [][]float64{{0, 1, 2}, {2, 0, -1}, {0, 0, 0}},
		RowBaseline: []float64{0, 0, 0}, RowObservations: []int64{0, 0, 0},
		PairObservations: [][]int64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	}
	l := newLearner(t, bandit.Config{})
	if err := l.Restore(snap); err != nil {
		t.Fatal(err)
	}
	pa := softmax([]float64{0, 1, 2}) // π(·|a)
	pb := softmax([]float64{2, 0, -1})
	out := make([]float64, 2)
	// Candidates b, c; context a (weight 3), b (weight 1):
	// raw(b) = (3·π(b|a) + 1·π(b|b))/4, raw(c) = (3·π(c|a) + π(c|b))/4, then renormalised.
	l.Mix([]string{"b", "c"}, []string{"a", "b"}, []float64{3, 1}, out)
	rb, rc := (3*pa[1]+pb[1])/4, (3*pa[2]+pb[2])/4
	if diff := cmp.Diff([]float64{rb / (rb + rc), rc / (rb + rc)}, out, approx); diff != "" {
		t.Errorf("weighted mix (-want +got):\n%s", diff)
	}
	// Zero, negative and NaN weights are ignored; nil weights are equal weights.
	l.Mix([]string{"b", "c"}, []string{"a", "b", "c"}, []float64{1, 1, math.NaN()}, out)
	want := slices.Clone(out)
	l.Mix([]string{"b", "c"}, []string{"a", "b"}, nil, out)
	if diff := cmp.Diff(want, out, approx); diff != "" {
		t.Errorf("NaN weight not ignored, or nil weights not equal (-want +got):\n%s", diff)
	}
	// No context, or no positive weight: uniform.
	for _, tc := range []struct {
		given []string
		w     []float64
	}{{nil, nil}, {[]string{"a"}, []float64{0}}, {[]string{"a", "b"}, []float64{-1, math.Inf(1)}}} {
		out := make([]float64, 4)
		l.Mix([]string{"a", "b", "c", "a"}, tc.given, tc.w, out)
		if diff := cmp.Diff([]float64{0.25, 0.25, 0.25, 0.25}, out); diff != "" {
			t.Errorf("Mix with context %v weights %v (-want +got):\n%s", tc.given, tc.w, diff)
		}
	}
	// Repeated candidates share the kind's score.
	out3 := make([]float64, 3)
	l.Mix([]string{"c", "b", "c"}, []string{"a"}, nil, out3)
	if !near(out3[0], out3[2]) || !near(out3[0]+out3[1]+out3[2], 1) || !near(out3[0]/out3[1], pa[2]/pa[1]) {
		t.Errorf("Mix with a repeated candidate = %v", out3)
	}
	// Empty candidates: nothing to do, no panic.
	l.Mix(nil, []string{"a"}, nil, nil)
}

func TestMixUnknownKindsAsIfAdded(t *testing.T) {
	rng, seed := seedRNG(t)
	l := newLearner(t, bandit.Config{StepSize: 0.4}, "a", "b", "c")
	for range 100 {
		l.Update([]string{"a", "b", "c"}[rng.IntN(3)], []string{"a", "b", "c"}[rng.IntN(3)], 3+50*rng.Float64())
	}
	cands := []string{"a", "x", "c", "y", "x"}
	given := []string{"b", "z", "y"}
	w := []float64{2, 1, 0.5}
	before := make([]float64, len(cands))
	l.Mix(cands, given, w, before)
	c := bandit.New(bandit.Config{})
	if err := c.Restore(l.Snapshot()); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"x", "y", "z"} {
		c.Add(k)
	}
	after := make([]float64, len(cands))
	c.Mix(cands, given, w, after)
	if diff := cmp.Diff(before, after, approx); diff != "" {
		t.Errorf("seed %d: Mix changed when the unknown kinds were added (-before +after):\n%s", seed, diff)
	}
	if len(l.Kinds()) != 3 {
		t.Errorf("Mix added kinds: %v", l.Kinds())
	}
}

// TestMixMatchesReference: Mix against the definition, computed naively with
// Prob on a copy of the learner to which the unknown kinds were added.
func TestMixMatchesReference(t *testing.T) {
	rng, seed := seedRNG(t)
	for trial := range 200 {
		k := 1 + rng.IntN(8)
		scale := []float64{0.1, 3, 40}[rng.IntN(3)]
		snap := bandit.Snapshot{Version: 1, RowBaseline: make([]float64, k), RowObservations: make([]int64, k)}
		for i := range k {
			snap.Kinds = append(snap.Kinds, fmt.Sprintf("k%d", i))
			row := make([]float64, k)
			for j := range row {
				row[j] = scale * (2*rng.Float64() - 1)
			}
			snap.H = append(snap.H, row)
			snap.PairObservations = append(snap.PairObservations, make([]int64, k))
		}
		l := bandit.New(bandit.Config{})
		if err := l.Restore(snap); err != nil {
			t.Fatal(err)
		}
		pick := func() string { // known, or one of two unknown kinds
			if i := rng.IntN(k + 2); i < k {
				return snap.Kinds[i]
			} else {
				return fmt.Sprintf("new%d", i-k)
			}
		}
		cands := make([]string, 1+rng.IntN(12))
		for i := range cands {
			cands[i] = pick()
		}
		given := make([]string, 1+rng.IntN(4))
		w := make([]float64, len(given))
		for j := range given {
			given[j] = pick()
			w[j] = []float64{0, 0.5, 1, 7}[rng.IntN(4)]
		}
		got := make([]float64, len(cands))
		l.Mix(cands, given, w, got)

		ref := bandit.New(bandit.Config{})
		if err := ref.Restore(snap); err != nil {
			t.Fatal(err)
		}
		for _, c := range append(slices.Clone(cands), given...) {
			ref.Add(c)
		}
		want := make([]float64, len(cands))
		sumW, total := 0.0, 0.0
		for _, x := range w {
			sumW += x
		}
		for i, c := range cands {
			if sumW == 0 {
				want[i] = 1
			}
			for j, g := range given {
				if sumW > 0 {
					want[i] += w[j] * ref.Prob(c, g) / sumW
				}
			}
			total += want[i]
		}
		for i := range want {
			want[i] /= total
		}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(1e-9, 1e-300)); diff != "" {
			t.Fatalf("seed %d trial %d: Mix(%v, %v, %v) (-reference +got):\n%s", seed, trial, cands, given, w, diff)
		}
	}
}

// TestMixNoUnderflow: preferences so far apart that every π of the
// candidates underflows to 0 in a plain softmax; Mix still ranks them.
func TestMixNoUnderflow(t *testing.T) {
	snap := bandit.Snapshot{
		Version: bandit.SnapshotVersion, Kinds: []string{"top", "b", "c"},
		H:           [][]float64{{5000, -3000, -3001}, {0, 0, 0}, {0, 0, 0}},
		RowBaseline: []float64{0, 0, 0}, RowObservations: []int64{0, 0, 0},
		PairObservations: [][]int64{{0, 0, 0}, {0, 0, 0}, {0, 0, 0}},
	}
	l := newLearner(t, bandit.Config{})
	if err := l.Restore(snap); err != nil {
		t.Fatal(err)
	}
	out := make([]float64, 2)
	l.Mix([]string{"b", "c"}, []string{"top"}, nil, out)
	// π(b|top) : π(c|top) = e^1 : 1.
	want := []float64{math.E / (1 + math.E), 1 / (1 + math.E)}
	if diff := cmp.Diff(want, out, approx); diff != "" {
		t.Errorf("Mix (-want +got):\n%s", diff)
	}
}

func TestMixPanicsOnBadLengths(t *testing.T) {
	l := newLearner(t, bandit.Config{}, "a")
	for name, f := range map[string]func(){
		"out":     func() { l.Mix([]string{"a"}, nil, nil, make([]float64, 2)) },
		"weights": func() { l.Mix([]string{"a"}, []string{"a"}, []float64{1, 2}, make([]float64, 1)) },
	} {
		t.Run(name, func(t *testing.T) {
			defer func() {
				if recover() == nil {
					t.Errorf("Mix with a bad %s length did not panic", name)
				}
			}()
			f()
		})
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		name      string
		cfg       bandit.Config
		wantField string
	}{
		{"zero value", bandit.Config{}, ""},
		{"default", bandit.DefaultConfig(), ""},
		{"recency", bandit.Config{Baseline: bandit.Recency, RecencyAlpha: 1}, ""},
		{"step negative", bandit.Config{StepSize: -0.1}, "step_size"},
		{"step NaN", bandit.Config{StepSize: math.NaN()}, "step_size"},
		{"step Inf", bandit.Config{StepSize: math.Inf(1)}, "step_size"},
		{"baseline unknown", bandit.Config{Baseline: 3}, "baseline"},
		{"baseline negative", bandit.Config{Baseline: -1}, "baseline"},
		{"alpha above 1", bandit.Config{RecencyAlpha: 1.5}, "recency_alpha"},
		{"alpha negative", bandit.Config{RecencyAlpha: -0.5}, "recency_alpha"},
		{"clip negative", bandit.Config{Clip: -1}, "clip"},
		{"clip Inf", bandit.Config{Clip: math.Inf(1)}, "clip"},
		{"self prior", bandit.Config{SelfPrior: 1}, ""},
		{"self prior negative", bandit.Config{SelfPrior: -1}, "self_prior"},
		{"self prior NaN", bandit.Config{SelfPrior: math.NaN()}, "self_prior"},
		{"self prior too large", bandit.Config{SelfPrior: bandit.MaxSelfPrior + 1}, "self_prior"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.cfg.Validate()
			if tt.wantField == "" {
				if err != nil {
					t.Fatalf("Validate: %v", err)
				}
				return
			}
			var fe *bandit.FieldError
			if !errors.Is(err, bandit.ErrInvalidConfig) || !errors.As(err, &fe) {
				t.Fatalf("Validate = %v, want a *FieldError wrapping ErrInvalidConfig", err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", fe.Field, tt.wantField, err)
			}
			defer func() {
				if recover() == nil {
					t.Errorf("New accepted an invalid config")
				}
			}()
			bandit.New(tt.cfg)
		})
	}
	if diff := cmp.Diff(bandit.DefaultConfig(), bandit.New(bandit.Config{}).Config()); diff != "" {
		t.Errorf("New(zero).Config() vs DefaultConfig() (-want +got):\n%s", diff)
	}
}

func TestBaselineModeText(t *testing.T) {
	for _, m := range []bandit.BaselineMode{bandit.GlobalMean, bandit.RowMean, bandit.Recency} {
		got, err := bandit.ParseBaselineMode(m.String())
		if err != nil || got != m {
			t.Errorf("ParseBaselineMode(%q) = %v, %v; want %v", m.String(), got, err, m)
		}
		b, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		var back bandit.BaselineMode
		if err := json.Unmarshal(b, &back); err != nil || back != m {
			t.Errorf("JSON %s → %v, %v; want %v", b, back, err, m)
		}
	}
	for in, want := range map[string]bandit.BaselineMode{"": bandit.GlobalMean, " Global-Mean ": bandit.GlobalMean, "ROW_MEAN": bandit.RowMean, "Recency": bandit.Recency} {
		if got, err := bandit.ParseBaselineMode(in); err != nil || got != want {
			t.Errorf("ParseBaselineMode(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	if _, err := bandit.ParseBaselineMode("median"); !errors.Is(err, bandit.ErrUnknownBaselineMode) {
		t.Errorf("ParseBaselineMode(median) error = %v, want ErrUnknownBaselineMode", err)
	}
	if _, err := json.Marshal(bandit.BaselineMode(9)); err == nil {
		t.Errorf("marshalling BaselineMode(9) succeeded")
	}
	if got := bandit.BaselineMode(9).String(); got != "BaselineMode(9)" {
		t.Errorf("String = %q", got)
	}
}

// learned returns a learner with some history, for snapshot tests.
func learned(tb testing.TB, cfg bandit.Config) *bandit.Learner {
	l := newLearner(tb, cfg, "tpch-q10", "kmeans", "cc")
	rng := rand.New(rand.NewPCG(1, 2))
	kinds := l.Kinds()
	for range 300 {
		l.Update(kinds[rng.IntN(3)], kinds[rng.IntN(3)], math.E+50*rng.Float64())
	}
	l.Update("a", "b", math.NaN())
	return l
}

func TestSnapshotJSONRoundTrip(t *testing.T) {
	for _, cfg := range []bandit.Config{{}, {StepSize: 0.3, Baseline: bandit.Recency, RecencyAlpha: 0.2, Clip: 5}, {Baseline: bandit.RowMean}} {
		t.Run(cfg.Baseline.String(), func(t *testing.T) {
			l := learned(t, cfg)
			s := l.Snapshot()
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var back bandit.Snapshot
			if err := json.Unmarshal(b, &back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s, back); diff != "" {
				t.Fatalf("JSON round trip (-want +got):\n%s", diff)
			}
			r := newLearner(t, back.Config)
			if err := r.Restore(back); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(s, r.Snapshot()); diff != "" {
				t.Errorf("restored learner's snapshot (-want +got):\n%s", diff)
			}
			// Restored and original behave the same from here on.
			l.Update("kmeans", "cc", 30)
			r.Update("kmeans", "cc", 30)
			if diff := cmp.Diff(l.Snapshot(), r.Snapshot()); diff != "" {
				t.Errorf("after one more update (-orig +restored):\n%s", diff)
			}
		})
	}
	// The JSON uses names, not numbers, for the baseline mode.
	b, _ := json.Marshal(bandit.New(bandit.Config{Baseline: bandit.RowMean}).Snapshot())
	var raw map[string]any
	if err := json.Unmarshal(b, &raw); err != nil {
		t.Fatal(err)
	}
	if got := raw["config"].(map[string]any)["baseline"]; got != "row" {
		t.Errorf("config.baseline in JSON = %v, want \"row\"; JSON: %s", got, b)
	}
	if string(b) == "" || raw["kinds"] == nil {
		t.Errorf("empty learner's kinds marshal as null, want []: %s", b)
	}
}

func TestSnapshotIsDeepCopy(t *testing.T) {
	l := learned(t, bandit.Config{})
	s := l.Snapshot()
	want := l.Snapshot()
	s.H[0][0] = 1e9
	s.Kinds[0] = "mutated"
	s.PairObservations[0][0] = 1e9
	s.RowBaseline[0] = 1e9
	if diff := cmp.Diff(want, l.Snapshot()); diff != "" {
		t.Errorf("mutating a snapshot changed the learner (-want +got):\n%s", diff)
	}
	// And Restore copies too.
	r := bandit.New(bandit.Config{})
	in := l.Snapshot()
	if err := r.Restore(in); err != nil {
		t.Fatal(err)
	}
	in.H[1][1] = -1e9
	if diff := cmp.Diff(want, r.Snapshot()); diff != "" {
		t.Errorf("mutating a restored snapshot changed the learner (-want +got):\n%s", diff)
	}
}

func TestRestoreRejects(t *testing.T) {
	good := learned(t, bandit.Config{}).Snapshot()
	tests := []struct {
		name      string
		mutate    func(s *bandit.Snapshot)
		wantField string
	}{
		{"version 0", func(s *bandit.Snapshot) { s.Version = 0 }, "version"},
		{"version 2", func(s *bandit.Snapshot) { s.Version = 2 }, "version"},
		{"bad config", func(s *bandit.Snapshot) { s.Config.StepSize = -1 }, "config.step_size"},
		{"empty kind", func(s *bandit.Snapshot) { s.Kinds[1] = "" }, "kinds[1]"},
		{"duplicate kind", func(s *bandit.Snapshot) { s.Kinds[2] = s.Kinds[0] }, "kinds[2]"},
		{"H missing a row", func(s *bandit.Snapshot) { s.H = s.H[:2] }, "h"},
		{"H row too short", func(s *bandit.Snapshot) { s.H[1] = s.H[1][:2] }, "h[1]"},
		{"H row too long", func(s *bandit.Snapshot) { s.H[2] = append(s.H[2], 0) }, "h[2]"},
		{"H NaN", func(s *bandit.Snapshot) { s.H[0][2] = math.NaN() }, "h[0][2]"},
		{"H +Inf", func(s *bandit.Snapshot) { s.H[2][1] = math.Inf(1) }, "h[2][1]"},
		{"H row spans more than float64", func(s *bandit.Snapshot) { s.H[1][0], s.H[1][2] = 1e308, -1e308 }, "h[1]"},
		{"baseline NaN", func(s *bandit.Snapshot) { s.Baseline = math.NaN() }, "baseline"},
		{"row_baseline length", func(s *bandit.Snapshot) { s.RowBaseline = s.RowBaseline[:1] }, "row_baseline"},
		{"row_baseline -Inf", func(s *bandit.Snapshot) { s.RowBaseline[1] = math.Inf(-1) }, "row_baseline[1]"},
		{"negative observations", func(s *bandit.Snapshot) { s.Observations = -1 }, "observations"},
		{"negative rejected", func(s *bandit.Snapshot) { s.Rejected = -1 }, "rejected"},
		{"row_observations length", func(s *bandit.Snapshot) { s.RowObservations = nil }, "row_observations"},
		{"pair_observations rows", func(s *bandit.Snapshot) { s.PairObservations = s.PairObservations[:2] }, "pair_observations"},
		{"pair_observations row length", func(s *bandit.Snapshot) { s.PairObservations[0] = nil }, "pair_observations[0]"},
		{"pair_observations negative", func(s *bandit.Snapshot) { s.PairObservations[1][0] = -5 }, "pair_observations[1][0]"},
		{"pair_observations at the int64 maximum", func(s *bandit.Snapshot) { s.PairObservations[1][0] = math.MaxInt64 }, "pair_observations[1][0]"},
		{"pair_observations over MaxCount", func(s *bandit.Snapshot) { s.PairObservations[1][0] = bandit.MaxCount + 1 }, "pair_observations[1][0]"},
		{"a row summing over MaxCount", func(s *bandit.Snapshot) { s.PairObservations[1][0], s.PairObservations[1][1] = bandit.MaxCount, 1 }, "pair_observations[1][1]"},
		{"observations at the int64 maximum", func(s *bandit.Snapshot) { s.Observations = math.MaxInt64 }, "observations"},
		{"rejected at the int64 maximum", func(s *bandit.Snapshot) { s.Rejected = math.MaxInt64 }, "rejected"},
		{"rejected over MaxCount", func(s *bandit.Snapshot) { s.Rejected = bandit.MaxCount + 1 }, "rejected"},
		{"row_observations disagree with pairs", func(s *bandit.Snapshot) { s.RowObservations[2]++ }, "row_observations[2]"},
		{"observations disagree with rows", func(s *bandit.Snapshot) { s.Observations++ }, "observations"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s := deepCopy(t, good)
			tt.mutate(&s)
			l := learned(t, bandit.Config{StepSize: 0.2})
			before := l.Snapshot()
			err := l.Restore(s)
			var fe *bandit.FieldError
			if !errors.Is(err, bandit.ErrInvalidSnapshot) || !errors.As(err, &fe) {
				t.Fatalf("Restore = %v, want a *FieldError wrapping ErrInvalidSnapshot", err)
			}
			if fe.Field != tt.wantField {
				t.Errorf("field = %q, want %q (%v)", fe.Field, tt.wantField, err)
			}
			if diff := cmp.Diff(before, l.Snapshot()); diff != "" {
				t.Errorf("a failed Restore changed the learner (-want +got):\n%s", diff)
			}
		})
	}
	// The empty snapshot of a fresh learner is valid, and so is a minimal literal.
	if err := bandit.New(bandit.Config{}).Restore(bandit.New(bandit.Config{}).Snapshot()); err != nil {
		t.Errorf("restoring an empty snapshot: %v", err)
	}
	minimal := bandit.New(bandit.Config{})
	if err := minimal.Restore(bandit.Snapshot{Version: 1}); err != nil {
		t.Errorf("restoring Snapshot{Version: 1}: %v", err)
	}
	if diff := cmp.Diff(bandit.New(bandit.Config{}).Snapshot(), minimal.Snapshot()); diff != "" {
		t.Errorf("restored minimal snapshot vs a fresh learner's (-want +got):\n%s", diff)
	}
}

func TestRestoreClampsToLearnersClip(t *testing.T) {
	s := learned(t, bandit.Config{StepSize: 2}).Snapshot()
	if maxAbs(s.H) <= 1 {
		t.Fatalf("test setup: max |H| = %v, want > 1", maxAbs(s.H))
	}
	l := newLearner(t, bandit.Config{Clip: 1})
	if err := l.Restore(s); err != nil {
		t.Fatal(err)
	}
	if got := maxAbs(l.Snapshot().H); got != 1 {
		t.Errorf("max |H| after Restore into a Clip=1 learner = %v, want 1", got)
	}
	if got := l.Config().Clip; got != 1 {
		t.Errorf("Restore changed the learner's config: clip = %v", got)
	}
}

func deepCopy(tb testing.TB, s bandit.Snapshot) bandit.Snapshot {
	tb.Helper()
	b, err := json.Marshal(s)
	if err != nil {
		tb.Fatal(err)
	}
	var c bandit.Snapshot
	if err := json.Unmarshal(b, &c); err != nil {
		tb.Fatal(err)
	}
	return c
}

func TestReset(t *testing.T) {
	cfg := bandit.Config{StepSize: 0.2, Clip: 4}
	l := learned(t, cfg)
	l.Reset()
	want := bandit.New(cfg).Snapshot()
	if diff := cmp.Diff(want, l.Snapshot()); diff != "" {
		t.Errorf("after Reset (-want +got):\n%s", diff)
	}
}

// TestConcurrentUse runs writers and readers at once; run with -race. At the
// end the counters account for every update and the invariants hold.
func TestConcurrentUse(t *testing.T) {
	l := newLearner(t, bandit.Config{Clip: 20})
	kinds := []string{"a", "b", "c", "d", "e"}
	const writers, perWriter = 4, 2000
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(w), 1))
			for i := range perWriter {
				l.Update(kinds[rng.IntN(len(kinds))], kinds[rng.IntN(len(kinds))], math.E+50*rng.Float64())
				if i%200 == 0 {
					l.AddSimilar(fmt.Sprintf("w%d-%d", w, i), map[string]float64{"a": 1, "b": 2})
				}
			}
		})
	}
	// Readers, at the same time.
	for r := range 3 {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(uint64(r), 2))
			out := make([]float64, len(kinds))
			for range 500 {
				l.Mix(kinds, []string{"a", kinds[rng.IntN(len(kinds))]}, []float64{1, 2}, out)
				sum := 0.0
				for _, v := range out {
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Errorf("concurrent Mix sums to %v", sum)
					return
				}
				if p := l.Prob("a", "b"); !(p >= 0 && p <= 1) {
					t.Errorf("concurrent Prob = %v", p)
					return
				}
				_ = l.Pref("c", "d")
				if s := l.Snapshot(); len(s.H) != len(s.Kinds) || len(s.PairObservations) != len(s.Kinds) {
					t.Errorf("torn snapshot: %d rows, %d kinds", len(s.H), len(s.Kinds))
					return
				}
				_ = l.Kinds()
			}
		})
	}
	wg.Wait()
	s := l.Snapshot()
	if s.Observations != writers*perWriter {
		t.Errorf("observations = %d, want %d", s.Observations, writers*perWriter)
	}
	if got, want := len(s.Kinds), len(kinds)+writers*perWriter/200; got != want {
		t.Errorf("%d kinds, want %d", got, want)
	}
}

func TestRowObservations(t *testing.T) {
	l := bandit.New(bandit.Config{})
	l.Update("b", "a", 10)
	l.Update("a", "a", 5)
	l.Update("a", "b", 7)
	l.Update("a", "b", math.NaN()) // ignored: not an observation
	got := map[string]int64{}
	for _, k := range []string{"a", "b", "unknown"} {
		got[k] = l.RowObservations(k)
	}
	want := map[string]int64{"a": 2, "b": 1, "unknown": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("row observations (-want +got):\n%s", diff)
	}
	s := l.Snapshot()
	for i, k := range s.Kinds {
		if s.RowObservations[i] != got[k] {
			t.Errorf("snapshot row %s = %d, RowObservations = %d", k, s.RowObservations[i], got[k])
		}
	}
}

func TestObservedCentresOnObservedPairs(t *testing.T) {
	l := bandit.New(bandit.Config{StepSize: 0.1})
	for _, k := range []string{"a", "b", "c", "d"} {
		l.Add(k)
	}
	for range 20 {
		l.Update("a", "x", 10)
		l.Update("b", "x", 2)
	}
	// c and d were never started beside x: no evidence.
	if h, n := l.Observed("c", "x"); h != 0 || n != 0 {
		t.Errorf("Observed(c|x) = %v, %d; want 0, 0 for a pair never observed", h, n)
	}
	ha, na := l.Observed("a", "x")
	hb, nb := l.Observed("b", "x")
	if na != 20 || nb != 20 {
		t.Errorf("observations %d and %d, want 20 each", na, nb)
	}
	// Centred on the observed pairs: they sum to zero, the better one above.
	if math.Abs(ha+hb) > 1e-12 || !(ha > 0) {
		t.Errorf("Observed(a|x) = %v, (b|x) = %v: want opposite, a positive", ha, hb)
	}
	if want := l.Pref("a", "x") - (l.Pref("a", "x")+l.Pref("b", "x"))/2; math.Abs(ha-want) > 1e-12 {
		t.Errorf("Observed(a|x) = %v, want H(a|x) − the mean of the observed pairs = %v", ha, want)
	}
	if h, n := l.Observed("zz", "x"); h != 0 || n != 0 {
		t.Errorf("unknown kind: %v, %d", h, n)
	}
}

// TestCountersSaturate: a learner whose counters are at MaxCount (the
// largest a snapshot may hold) goes on learning the preferences, never
// overflows a counter, and its state restores again after every update.
func TestCountersSaturate(t *testing.T) {
	for _, tc := range []struct {
		name string
		snap bandit.Snapshot
	}{
		{"one pair at the bound", bandit.Snapshot{Version: 1, Kinds: []string{"a", "b"},
			H: [][]float64{{0, 0}, {0, 0}}, RowBaseline: []float64{0.5, 0},
			Observations: bandit.MaxCount, RowObservations: []int64{bandit.MaxCount, 0},
			PairObservations: [][]int64{{0, bandit.MaxCount}, {0, 0}}, Rejected: bandit.MaxCount}},
		{"one below the bound", bandit.Snapshot{Version: 1, Kinds: []string{"a", "b"},
			H: [][]float64{{0, 0}, {0, 0}}, RowBaseline: []float64{0.5, 0},
			Observations: bandit.MaxCount - 1, RowObservations: []int64{bandit.MaxCount - 1, 0},
			PairObservations: [][]int64{{0, bandit.MaxCount - 1}, {0, 0}}, Rejected: bandit.MaxCount - 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for _, baseline := range []bandit.BaselineMode{bandit.GlobalMean, bandit.RowMean, bandit.Recency} {
				l := bandit.New(bandit.Config{StepSize: 0.1, Baseline: baseline})
				if err := l.Restore(tc.snap); err != nil {
					t.Fatal(err)
				}
				h0 := l.Pref("b", "a")
				for i := range 5 {
					l.Update("b", "a", 0.9)
					l.Update("a", "b", 0.1) // row b: never counted before the bound
					l.Update("c", "a", 0.2) // a new kind
					l.Update("a", "a", math.NaN())
					s := l.Snapshot()
					if s.Observations != bandit.MaxCount || s.Rejected != bandit.MaxCount {
						t.Fatalf("%v, update %d: observations %d, rejected %d: want both at MaxCount", baseline, i, s.Observations, s.Rejected)
					}
					if err := bandit.New(bandit.Config{}).Restore(s); err != nil {
						t.Fatalf("%v, update %d: the state does not restore: %v", baseline, i, err)
					}
				}
				if l.Pref("b", "a") == h0 {
					t.Errorf("%v: H(b|a) did not move past the bound", baseline)
				}
			}
		})
	}
}
