package pipeline_test

import (
	"encoding/json"
	"math"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// FuzzDecide: any snapshot gives a consistent decision — probabilities sum
// to one, the chosen job is a candidate from the window, Passed is ahead of
// it in FIFO order.
func FuzzDecide(f *testing.F) {
	f.Add(uint64(1), uint8(8), uint8(20), true, true)
	f.Add(uint64(2), uint8(1), uint8(3), false, true)
	f.Add(uint64(3), uint8(50), uint8(0), true, false)
	f.Fuzz(func(t *testing.T, seed uint64, window, n uint8, fairness, sample bool) {
		cfg := pipeline.DefaultConfig()
		cfg.Window.Size = 1 + int(window)
		cfg.Fairness.Enabled = fairness
		if !sample {
			cfg.Select.Mode = pipeline.SelectArgmax
		}
		p := mustPipeline(t, cfg, fixedPrefs{"k0": 0, "k1": 1, "k2": math.MaxFloat64, "k3": 1e-300})
		sim := newQueueSim(t, cfg, seed)
		sim.p = p
		sim.deadline = 0.3
		for i := 0; i < int(n); i++ {
			sim.arrive()
		}
		for step := 0; step < 5; step++ {
			sim.arrivals()
			before := append([]queue.Job(nil), sim.pending...)
			d, _ := sim.decide()
			checkDecision(t, d, before, cfg.Window.Size, fairness)
		}
	})
}

// checkDecision: with fairness (grouped by user), the window is the first
// window jobs of each user.
func checkDecision(t *testing.T, d pipeline.Decision, pending []queue.Job, window int, fairness bool) {
	t.Helper()
	if d.Chosen == "" {
		if d.Note == "" {
			t.Fatal("no job chosen and no note saying why")
		}
		return
	}
	var sum float64
	inCands := false
	for _, c := range d.Candidates {
		if c.Prob < 0 || math.IsNaN(c.Prob) {
			t.Fatalf("candidate %+v has a bad probability", c)
		}
		sum += c.Prob
		inCands = inCands || c.JobID == d.Chosen
	}
	if math.Abs(sum-1) > 1e-9 || !inCands {
		t.Fatalf("candidates %+v: sum %v, chosen %s among them %v", d.Candidates, sum, d.Chosen, inCands)
	}
	pos := map[string]int{}
	ahead := map[string]int{} // jobs of the same group ahead of it
	seen := map[string]int{}
	for i, j := range pending {
		pos[j.ID] = i
		g := ""
		if fairness {
			g = j.User
		}
		ahead[j.ID] = seen[g]
		seen[g]++
	}
	at, ok := pos[d.Chosen]
	if !ok || ahead[d.Chosen] >= window {
		t.Fatalf("chosen %s at %d (%d of its group ahead), window %d", d.Chosen, at, ahead[d.Chosen], window)
	}
	last := -1
	for _, id := range d.Passed {
		if p, ok := pos[id]; !ok || p >= at || p <= last {
			t.Fatalf("passed %v not a FIFO-ordered subset ahead of %s", d.Passed, d.Chosen)
		}
		last = pos[id]
	}
}

func TestDecideDeterministic(t *testing.T) {
	run := func() []string {
		cfg := pipeline.DefaultConfig()
		cfg.Fairness.Enabled = true
		s := newQueueSim(t, cfg, 42)
		s.deadline = 0.2
		var out []string
		for i := 0; i < 300; i++ {
			d, _ := s.step()
			b, _ := json.Marshal(d) // the whole explanation, deficits included
			out = append(out, string(b))
		}
		return out
	}
	a, b := run(), run()
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("decision %d differs between runs with the same seed:\n%s\n%s", i, a[i], b[i])
		}
	}
}

func TestAltruismKeepsCutJobDroppedByFairness(t *testing.T) {
	// bob is owed, but alice's deadline job (P = 0, so it never yields) is
	// ahead of bob's only job: admitting bob would pass it over, and
	// waiting would block everyone, so the deadline job goes.
	capa := pipeline.Capacity{MemoryMB: 8192, VCores: 64}
	cfg := only("fairness", "altruism", "preference")
	cfg.Altruism.P = 0
	p := mustPipeline(t, cfg, fixedPrefs{"a": 1000, "b": 1, "dl": 1})
	for i := 0; i < 2; i++ { // alice twice: bob's deficit reaches κ
		snap := snapshot(pj(uint64(10+i), "a"), pj(uint64(20+i), "b", user("bob")))
		snap.Capacity, snap.Free = capa, capa
		p.Decide(snap, nil)
	}
	snap := snapshot(pj(15, "dl", deadline(time.Hour)), pj(25, "b", user("bob")))
	snap.Capacity, snap.Free = capa, capa
	d := p.Decide(snap, nil)
	if d.Chosen != "j15" || len(d.Passed) != 0 {
		t.Errorf("chosen %s passed %v; want alice's deadline job j15 (fairness %q, altruism %q)",
			d.Chosen, d.Passed, stage(d, "fairness").Note, stage(d, "altruism").Note)
	}
}

func TestPipelineConcurrentUse(t *testing.T) {
	cfg := pipeline.DefaultConfig()
	cfg.Fairness.Enabled = true
	p := mustPipeline(t, cfg, nil)
	var wg sync.WaitGroup
	for g := 0; g < 4; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(g), 1))
			for i := 0; i < 200; i++ {
				d := p.Decide(snapshot(pj(1, "a"), pj(2, "b", user("bob"))), rng)
				if d.Chosen == "" {
					t.Error("nothing chosen")
					return
				}
				p.Deficits()
			}
		}()
	}
	wg.Wait()
}
