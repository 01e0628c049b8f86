package bench

import (
	"context"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/profile"
)

// The true mean solo profile of the small workload by hand: cpu runs one
// phase at 1 core of 4, nothing else; disk 0.2 cores and 60 MB/s of 200.
func TestTrueProfiles(t *testing.T) {
	got := TrueProfiles(small(t, 1))
	want := profile.Fixed{
		"cpu":  {0.25, 0, 0, 0, 0, 0},
		"disk": {0.05, 0, 0.3, 0, 0, 0},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("true profiles (-want +got):\n%s", diff)
	}
	// Phases are weighted by their seconds, repeats included.
	q := TrueProfiles(queueA(t))["kmeans"]
	cpu := (40*0.6 + 14*(25*0.95+8*0.1) + 10*0.3) / (40 + 14*33 + 10) / 4
	if math.Abs(q[profile.CPU]-cpu) > 1e-12 {
		t.Errorf("kmeans cpu %v, want %v", q[profile.CPU], cpu)
	}
}

// Every peer knows the profiles and finds the complementary pairing that
// FIFO misses; each run is deterministic for its seed.
func TestPeersFindThePairing(t *testing.T) {
	w := small(t, 2)
	fifo := run(t, RunConfig{Workload: w, Policy: FIFO, Seed: 1})
	for _, p := range []Policy{PackFit, Alternate, Tetris, RAProfileTrue, Rollout, RA} {
		r := run(t, RunConfig{Workload: w, Policy: p, Seed: 1})
		if !(r.MakespanS < 0.95*fifo.MakespanS) {
			t.Errorf("%s: makespan %.0f s, want at least 5 %% below fifo's %.0f s", p, r.MakespanS, fifo.MakespanS)
		}
		again := run(t, RunConfig{Workload: w, Policy: p, Seed: 1})
		if diff := cmp.Diff(kinds(r), kinds(again)); diff != "" {
			t.Errorf("%s: the same seed gave another order (-first +second):\n%s", p, diff)
		}
	}
}

// The paper's method is the pair bandit alone: no profile model scores it,
// and it samples.
func TestPaperConfig(t *testing.T) {
	w := small(t, 1)
	base := RunConfig{Workload: w}.daemonConfig()
	c := PaperConfig(base)
	if c.Pipeline.Preference.Mode != "bandit" || c.Pipeline.Select.Mode != "sample" || c.Learning.SelfPrior != 0 || c.Learning.PairReward != "goodness" {
		t.Errorf("paper config %+v / %+v", c.Pipeline.Preference, c.Learning)
	}
	if base.Pipeline.Preference.Mode != "model" {
		t.Errorf("PaperConfig changed its argument: %+v", base.Pipeline.Preference)
	}
	r := run(t, RunConfig{Workload: w, Policy: Paper, Seed: 1})
	if r.Jobs != 8 || r.Updates == 0 {
		t.Errorf("paper: %d jobs, %d pair updates; want 8 and some", r.Jobs, r.Updates)
	}
}

func TestSpearman(t *testing.T) {
	for _, tc := range []struct {
		name string
		x, y []float64
		want float64
	}{
		{"same order", []float64{1, 2, 3, 4}, []float64{10, 20, 30, 40}, 1},
		{"reversed", []float64{1, 2, 3, 4}, []float64{4, 3, 2, 1}, -1},
		{"monotone, not linear", []float64{1, 2, 3, 4}, []float64{1, 8, 27, 1000}, 1},
		{"ties get their mean rank", []float64{1, 1, 2, 3}, []float64{5, 6, 7, 8}, 0.9486832980505138},
	} {
		if got := Spearman(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: ρ = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(Spearman([]float64{1, 1}, []float64{1, 2})) || !math.IsNaN(Spearman([]float64{1}, []float64{1})) {
		t.Error("constant or single-point input: want NaN")
	}
}

func TestRewardAndProfileStudies(t *testing.T) {
	w := small(t, 2)
	rr, err := RewardStudy(context.Background(), RewardConfig{Run: RunConfig{Workload: w, Dir: t.TempDir()}, Seeds: Seeds(1, 2), Workers: 2})
	if err != nil {
		t.Fatal(err)
	}
	if len(rr.Pairs) != 3 { // cpu+cpu, cpu+disk, disk+disk
		t.Fatalf("pairs %+v", rr.Pairs)
	}
	// The complementary pair scores the highest goodness and the only
	// speed-up (the same-kind pairs tie at 0): ρ = √3/2.
	best := rr.Pairs[0]
	for _, p := range rr.Pairs {
		if p.Goodness > best.Goodness {
			best = p
		}
	}
	if best.A != "cpu" || best.B != "disk" || !(best.Speedup > 0.3) || math.Abs(rr.GoodnessVsSpeedup-math.Sqrt(3)/2) > 1e-12 {
		t.Errorf("pairs %+v, ρ = %v: want cpu+disk best on both, ρ = √3/2", rr.Pairs, rr.GoodnessVsSpeedup)
	}
	if rr.Checks == 0 || len(rr.Objectives) != 2 {
		t.Errorf("%d goodness checks, %d objective summaries; want some and 2", rr.Checks, len(rr.Objectives))
	}
	ps, err := ProfileSpeed(context.Background(), RunConfig{Workload: w, Dir: t.TempDir()}, Seeds(1, 2), 2)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 4 { // 2 kinds × 2 seeds
		t.Fatalf("profile study: %d results, want 4", len(ps))
	}
	for _, r := range ps {
		// One steady phase: the first observed tick already shows it.
		if r.Within != 1 || !r.Same[0] {
			t.Errorf("%s seed %d: %+v, want within %.0f %% from the first tick", r.Kind, r.Seed, r, 100*ProfileTolerance)
		}
	}
}
