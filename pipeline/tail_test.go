package pipeline_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// tailCase is a draining queue on a 100-vcore cluster, two hours after
// the last submission: one long job (kind "long", 60 min, 10 vcores) behind
// short ones (kind "short", 5 min, 10 vcores each): the others drain in
// n·5·10/100 minutes.
func tailCase(shorts int) pipeline.Snapshot {
	capa := pipeline.Capacity{MemoryMB: 1 << 20, VCores: 100}
	var pending []queue.Job
	for i := range shorts {
		pending = append(pending, pj(uint64(i+1), "short", containers(10)))
	}
	pending = append(pending, pj(uint64(shorts+1), "long", containers(10)))
	for i := range pending {
		pending[i].CreatedAt = t0.Add(-2 * time.Hour)
	}
	return pipeline.Snapshot{
		Now: t0, Capacity: capa, Free: capa, Pending: pending, PendingTotal: len(pending),
		History: map[string]queue.KindHistory{
			"short": {Kind: "short", Runs: 3, EWMARuntime: 5 * time.Minute},
			"long":  {Kind: "long", Runs: 2, EWMARuntime: time.Hour},
		},
	}
}

// TestTailLongestFirst: at a draining queue's end, the job that would
// finish alone long after the rest goes first; the stage says why and
// names the jobs it held back.
func TestTailLongestFirst(t *testing.T) {
	snap := tailCase(4) // the shorts drain in 2 min; the long job runs 60
	p := mustPipeline(t, only("tail"), nil)
	d := p.Decide(snap, nil)
	if d.Chosen != "j05" {
		t.Fatalf("chose %s, want the long job j05 (FIFO would take j01)", d.Chosen)
	}
	rec := stage(d, "tail")
	if got := dropped(rec); !slices.Equal(got, []string{"j01", "j02", "j03", "j04"}) || !strings.Contains(rec.Note, "1h0m0s") {
		t.Errorf("tail dropped %v with note %q; want the four short jobs and the long job's runtime", got, rec.Note)
	}
}

// TestTailLeavesTheQueueAlone: the stage changes nothing unless the queue
// is draining and the long job would straggle: when the rest of the queue
// needs longer than the job (with the margin), when jobs are pending
// beyond the window or their count is unknown, when a job arrived within
// the long job's runtime, when a kind has no runtime history, when a job
// has a deadline; and a job at the starvation cap is never held back.
func TestTailLeavesTheQueueAlone(t *testing.T) {
	tests := map[string]func(*pipeline.Snapshot){
		"the rest drains slower": func(s *pipeline.Snapshot) { // 100 shorts: 50 min ≥ 60/1.25
			*s = tailCase(100)
		},
		"more pending":  func(s *pipeline.Snapshot) { s.PendingTotal++ },
		"count unknown": func(s *pipeline.Snapshot) { s.PendingTotal = 0 },
		"recent arrival": func(s *pipeline.Snapshot) {
			s.Pending[1].CreatedAt = t0.Add(-30 * time.Minute)
		},
		"no history": func(s *pipeline.Snapshot) { delete(s.History, "short") },
		"deadline":   func(s *pipeline.Snapshot) { s.Pending[2].Deadline = new(t0.Add(24 * time.Hour)) },
	}
	for name, mod := range tests {
		t.Run(name, func(t *testing.T) {
			snap := tailCase(4)
			mod(&snap)
			cfg := only("tail")
			d := mustPipeline(t, cfg, nil).Decide(snap, nil)
			if d.Chosen != "j01" || len(dropped(stage(d, "tail"))) != 0 {
				t.Errorf("chose %s, tail dropped %v; want the FIFO head j01 and nothing dropped", d.Chosen, dropped(stage(d, "tail")))
			}
		})
	}
	t.Run("the margin", func(t *testing.T) {
		snap := tailCase(50) // the rest drains in 25 min: critical at margin 2, not at 2.5
		for margin, want := range map[float64]string{2: "j51", 2.5: "j01"} {
			cfg := only("tail")
			cfg.Tail.Margin = margin
			if d := mustPipeline(t, cfg, nil).Decide(snap, nil); d.Chosen != want {
				t.Errorf("margin %v: chose %s, want %s", margin, d.Chosen, want)
			}
		}
	})
	t.Run("starving job kept", func(t *testing.T) {
		snap := tailCase(4)
		snap.Pending[0].Skips = 8
		cfg := only("tail", "starvation")
		d := mustPipeline(t, cfg, nil).Decide(snap, nil)
		if d.Chosen != "j01" || slices.Contains(dropped(stage(d, "tail")), "j01") {
			t.Errorf("chose %s, tail dropped %v; want j01 (8 skips) kept and forced", d.Chosen, dropped(stage(d, "tail")))
		}
	})
}

// TestTailConfig: the margin is checked only when the stage is on, and
// the paper's scheduler (DefaultConfig) has no tail stage.
func TestTailConfig(t *testing.T) {
	if pipeline.DefaultConfig().Tail.Enabled {
		t.Error("DefaultConfig (the paper's scheduler) has the tail stage on")
	}
	for _, m := range []float64{0, -1, 101} {
		cfg := only("tail")
		cfg.Tail.Margin = m
		if _, err := pipeline.New(cfg, nil); err == nil || !strings.Contains(err.Error(), "tail.margin") {
			t.Errorf("margin %v: %v, want an error naming tail.margin", m, err)
		}
		cfg.Tail.Enabled = false
		if _, err := pipeline.New(cfg, nil); err != nil {
			t.Errorf("margin %v with the stage off: %v", m, err)
		}
	}
}

// TestPropertyTailStarvationBound: with the tail stage on, draining
// batches (every job in the window, submitted a day ago, one kind far
// longer than the others) still pass no job over more than max_skips
// times, and the stage does restrict decisions.
func TestPropertyTailStarvationBound(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) {
			t.Parallel()
			cfg := pipeline.DefaultConfig()
			cfg.Preference.Mode = mode
			cfg.Window.Size = 16
			cfg.Tail = pipeline.TailConfig{Enabled: true, Margin: pipeline.DefaultTailMargin}
			s := newQueueSim(t, cfg, propertySeed(t))
			s.countAll = true
			s.history = map[string]queue.KindHistory{}
			for i, d := range []time.Duration{5 * time.Minute, 10 * time.Minute, 20 * time.Minute, 40 * time.Minute, 3 * time.Hour} {
				k := s.kinds[i]
				s.history[k] = queue.KindHistory{Kind: k, Runs: 5, EWMARuntime: d}
			}
			maxSkips, restricted, decisions := 0, 0, 0
			for decisions < propertyDecisions/2 {
				for range 12 {
					s.arrive()
					s.pending[len(s.pending)-1].CreatedAt = s.now.Add(-24 * time.Hour)
				}
				for n := 0; len(s.pending) > 0 && n < 500; n++ {
					d, _ := s.decide()
					decisions++
					if len(stage(d, "tail").Dropped) > 0 {
						restricted++
					}
					for _, j := range s.pending {
						maxSkips = max(maxSkips, j.Skips)
					}
					if maxSkips > cfg.Starvation.MaxSkips {
						t.Fatalf("decision %d: a job was passed over %d times (max_skips %d)", decisions, maxSkips, cfg.Starvation.MaxSkips)
					}
				}
			}
			t.Logf("%d decisions, %d restricted by the tail stage, max skips %d", decisions, restricted, maxSkips)
			if restricted == 0 {
				t.Error("the tail stage never restricted a decision: the property was not exercised")
			}
		})
	}
}
