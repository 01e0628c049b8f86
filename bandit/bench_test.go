package bandit_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/colocd/colocd/bandit"
)

// benchKinds returns k realistic kind names.
func benchKinds(k int) []string {
	kinds := make([]string, k)
	for i := range kinds {
		kinds[i] = fmt.Sprintf("tpch-q%02d-sf%04d", i%22+1, i)
	}
	return kinds
}

// benchLearner returns a learner over k kinds with random preferences in
// [−3, 3] and one past observation per row at goodness 20 (as after some
// history), built through Restore.
func benchLearner(tb testing.TB, k int) (*bandit.Learner, []string) {
	tb.Helper()
	kinds := benchKinds(k)
	rng := rand.New(rand.NewPCG(42, uint64(k)))
	s := bandit.Snapshot{
		Version: bandit.SnapshotVersion, Kinds: kinds,
		H: make([][]float64, k), RowBaseline: make([]float64, k),
		RowObservations: make([]int64, k), PairObservations: make([][]int64, k),
	}
	for i := range k {
		s.H[i] = make([]float64, k)
		for j := range k {
			s.H[i][j] = 6*rng.Float64() - 3
		}
		s.PairObservations[i] = make([]int64, k)
		s.PairObservations[i][i] = 1
		s.RowObservations[i] = 1
		s.RowBaseline[i] = 20
	}
	s.Observations, s.Baseline = int64(k), 20
	l := bandit.New(bandit.Config{})
	if err := l.Restore(s); err != nil {
		tb.Fatal(err)
	}
	return l, kinds
}

// checkDistribution fails unless p is finite, non-negative and sums to 1.
func checkDistribution(tb testing.TB, p []float64) {
	tb.Helper()
	sum := 0.0
	for i, v := range p {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 {
			tb.Fatalf("p[%d] = %v", i, v)
		}
		sum += v
	}
	if math.Abs(sum-1) > 1e-9 {
		tb.Fatalf("p sums to %v", sum)
	}
}

// BenchmarkUpdate: one observation at K = 10, 100, 1000 kinds; O(K).
func BenchmarkUpdate(b *testing.B) {
	for _, k := range []int{10, 100, 1000} {
		b.Run(fmt.Sprintf("K=%d", k), func(b *testing.B) {
			l, kinds := benchLearner(b, k)
			rng := rand.New(rand.NewPCG(1, 1))
			// Check the result before timing: one update moves the row as Eqs. 2–3 say.
			before := l.Snapshot()
			l.Update(kinds[1], kinds[0], 40)
			if got := l.Pref(kinds[1], kinds[0]); !(got > before.H[0][1]) {
				b.Fatalf("a good observation did not raise the preference: %v → %v", before.H[0][1], got)
			}
			n := 0
			for b.Loop() {
				l.Update(kinds[n%k], kinds[(n*7+3)%k], math.E+50*rng.Float64())
				n++
			}
			if s := l.Snapshot(); s.Observations != int64(k+n+1) {
				b.Fatalf("observations = %d, want %d", s.Observations, k+n+1)
			}
		})
	}
}

// BenchmarkMix: every one of 1,000 kinds scored against a 3-kind context.
func BenchmarkMix(b *testing.B) {
	l, kinds := benchLearner(b, 1000)
	given := []string{kinds[3], kinds[500], kinds[999]}
	w := []float64{0.5, 0.3, 0.2}
	out := make([]float64, len(kinds))
	l.Mix(kinds, given, w, out)
	checkDistribution(b, out)
	for b.Loop() {
		l.Mix(kinds, given, w, out)
	}
}

// BenchmarkMixWindow10k: the admission hot path's worst case, a 10,000-job
// window (kinds drawn from 1,000, repeated) scored against a 3-kind
// context. Target: < 1 ms on the 2-core machine.
func BenchmarkMixWindow10k(b *testing.B) {
	l, kinds := benchLearner(b, 1000)
	rng := rand.New(rand.NewPCG(7, 7))
	window := make([]string, 10_000)
	for i := range window {
		window[i] = kinds[rng.IntN(len(kinds))]
	}
	given := []string{kinds[3], kinds[500], kinds[999]}
	w := []float64{0.5, 0.3, 0.2}
	out := make([]float64, len(window))
	l.Mix(window, given, w, out)
	checkDistribution(b, out)
	// Spot-check one candidate against Prob: out ∝ Σ_j w_j π(c|given_j).
	ratio := func(i int) float64 {
		s := 0.0
		for j, g := range given {
			s += w[j] * l.Prob(window[i], g)
		}
		return s / out[i]
	}
	if r0, r1 := ratio(0), ratio(1); math.Abs(r0-r1) > 1e-9*r0 {
		b.Fatalf("Mix is not proportional to the weighted π: %v vs %v", r0, r1)
	}
	for b.Loop() {
		l.Mix(window, given, w, out)
	}
}

// BenchmarkMixWindow10kParallel: the same, from both cores at once (the
// HTTP API may score while the admission loop does).
func BenchmarkMixWindow10kParallel(b *testing.B) {
	l, kinds := benchLearner(b, 1000)
	window := make([]string, 10_000)
	for i := range window {
		window[i] = kinds[(i*7919)%len(kinds)]
	}
	given := []string{kinds[3], kinds[500], kinds[999]}
	out := make([]float64, len(window))
	l.Mix(window, given, nil, out)
	checkDistribution(b, out)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		out := make([]float64, len(window))
		for pb.Next() {
			l.Mix(window, given, nil, out)
		}
	})
}

// BenchmarkProb: one π(a|a') at K = 1000 (O(K): it normalises the row).
func BenchmarkProb(b *testing.B) {
	l, kinds := benchLearner(b, 1000)
	if p := l.Prob(kinds[1], kinds[2]); !(p > 0 && p < 1) {
		b.Fatalf("Prob = %v", p)
	}
	for b.Loop() {
		l.Prob(kinds[1], kinds[2])
	}
}
