package sim_test

import (
	"errors"
	"os"
	"testing"
	"time"

	"github.com/colocd/colocd/sim"
)

// TestReplayFIFO: every job of a burst starts in arrival order (no job
// starts before an earlier one), none before it arrives, each finishes
// after it starts; the same replay twice is the same.
func TestReplayFIFO(t *testing.T) {
	raw, err := os.ReadFile("../configs/workloads/paper-queue-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	wl, err := sim.ParseWorkload(raw)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Date(2026, 11, 28, 9, 0, 0, 0, time.UTC)
	var arrivals []sim.Arrival
	for i := range 40 {
		k := wl.Kinds[i%len(wl.Kinds)].Name
		arrivals = append(arrivals, sim.Arrival{JobID: "j" + string(rune('A'+i%26)) + string(rune('a'+i/26)), Kind: k, At: start.Add(time.Duration(i) * 30 * time.Second)})
	}
	replay := func() sim.FIFOResult {
		s, err := wl.NewSim(sim.Options{Seed: 7, Start: start})
		if err != nil {
			t.Fatal(err)
		}
		r, err := sim.ReplayFIFO(s, arrivals)
		if err != nil {
			t.Fatal(err)
		}
		return r
	}
	r := replay()
	if len(r.Jobs) != len(arrivals) {
		t.Fatalf("%d jobs, want %d", len(r.Jobs), len(arrivals))
	}
	for i, j := range r.Jobs {
		if j.Started.Before(j.Arrived) || !j.Finished.After(j.Started) {
			t.Errorf("job %d: arrived %v, started %v, finished %v", i, j.Arrived, j.Started, j.Finished)
		}
		if i > 0 && j.Started.Before(r.Jobs[i-1].Started) {
			t.Errorf("job %d started at %v, before job %d (%v): not FIFO", i, j.Started, i-1, r.Jobs[i-1].Started)
		}
	}
	if r.MeanJCT() <= 0 || r.Makespan() < r.MeanJCT() {
		t.Errorf("mean JCT %v, makespan %v", r.MeanJCT(), r.Makespan())
	}
	if again := replay(); again.MeanJCT() != r.MeanJCT() || again.Makespan() != r.Makespan() {
		t.Errorf("a second replay differs: %v/%v against %v/%v", again.MeanJCT(), again.Makespan(), r.MeanJCT(), r.Makespan())
	}
	s, _ := wl.NewSim(sim.Options{Seed: 7, Start: start})
	if _, err := sim.ReplayFIFO(s, []sim.Arrival{{JobID: "x", Kind: "no-such-kind", At: start}}); err == nil {
		t.Error("a replay of an unknown kind succeeded")
	} else if errors.Is(err, sim.ErrNeverFits) {
		t.Logf("unknown kind: %v", err)
	}
}
