package bench

import (
	"context"
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// The true mean solo profile of the small workload by hand: cpu runs one
// phase at 1 core of 4, nothing else; disk 0.2 cores and 60 MB/s of 200.
func TestTrueProfiles(t *testing.T) {
	got := trueProfiles(small(t, 1))
	want := profile.Fixed{
		"cpu":  {0.25, 0, 0, 0, 0, 0},
		"disk": {0.05, 0, 0.3, 0, 0, 0},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("true profiles (-want +got):\n%s", diff)
	}
	// Phases are weighted by their seconds, repeats included.
	q := trueProfiles(queueA(t))["kmeans"]
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
	for _, p := range []Policy{policyPackFit, policyAlternate, policyTetris, policyRAProfileTrue, policyRollout, policyRA} {
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

// The paper's method (daemon.PresetPaper) is the pair bandit alone: it
// learns pair preferences.
func TestPaperPolicy(t *testing.T) {
	w := small(t, 1)
	r := run(t, RunConfig{Workload: w, Policy: policyPaper, Seed: 1})
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
		if got := spearman(tc.x, tc.y); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("%s: ρ = %v, want %v", tc.name, got, tc.want)
		}
	}
	if !math.IsNaN(spearman([]float64{1, 1}, []float64{1, 2})) || !math.IsNaN(spearman([]float64{1}, []float64{1})) {
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
			t.Errorf("%s seed %d: %+v, want within %.0f %% from the first tick", r.Kind, r.Seed, r, 100*profileTolerance)
		}
	}
}

// A rollout sample forgets the future: its simulator draws from another
// stream and, under Poisson arrivals, the jobs still to come arrive at
// fresh times after now, in their order; what arrived stays, and the run
// it was cloned from keeps its own arrivals.
func TestRolloutSampleForgetsTheFuture(t *testing.T) {
	w := small(t, 3)
	w.Arrivals = sim.Arrivals{Mode: sim.ArrivalsPoisson, RatePerHour: 30}
	rc := RunConfig{Workload: w, Policy: policyRollout, Seed: 1}
	s, err := w.NewSim(rc.simOptions())
	if err != nil {
		t.Fatal(err)
	}
	jobs := w.Jobs(rand.New(rand.NewPCG(1, 2)))
	d := &driver{s: s, jobs: jobs, start: s.Now(), next: 3}
	s.Advance(s.Now().Add(jobs[2].Arrival))
	orig := slices.Clone(jobs)
	c := d.clone()
	c.forget(rc, 7)
	if diff := cmp.Diff(orig, d.jobs); diff != "" {
		t.Errorf("the original's arrivals changed (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(orig[:3], c.jobs[:3]); diff != "" {
		t.Errorf("arrivals in the past changed (-before +after):\n%s", diff)
	}
	changed := 0
	for i := 3; i < len(jobs); i++ {
		if c.jobs[i].Arrival < c.jobs[i-1].Arrival || c.jobs[i].Arrival < jobs[2].Arrival {
			t.Errorf("job %d arrives at %v, before job %d (%v) or now", i, c.jobs[i].Arrival, i-1, c.jobs[i-1].Arrival)
		}
		if c.jobs[i].Kind != jobs[i].Kind {
			t.Errorf("job %d is a %s, was a %s", i, c.jobs[i].Kind, jobs[i].Kind)
		}
		if c.jobs[i].Arrival != jobs[i].Arrival {
			changed++
		}
	}
	if changed != len(jobs)-3 {
		t.Errorf("%d of %d future arrivals resampled, want all", changed, len(jobs)-3)
	}
	again := d.clone()
	again.forget(rc, 7)
	if diff := cmp.Diff(c.jobs, again.jobs); diff != "" {
		t.Errorf("the same sample seed drew other arrivals (-first +second):\n%s", diff)
	}
}
