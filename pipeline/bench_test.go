package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// BenchmarkDecide is one admission decision over a 10,000-job window with
// the default stages, 16 nodes, 3 running kinds and a cheap Preferences.
func BenchmarkDecide(b *testing.B) {
	for _, window := range []int{8, 10000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			cfg := pipeline.DefaultConfig()
			cfg.Window.Size = window
			prefs := fixedPrefs{}
			for k := 0; k < 20; k++ {
				prefs[fmt.Sprintf("kind-%02d", k)] = float64(1 + k)
			}
			p := mustPipeline(b, cfg, prefs)
			snap := bigSnapshot(10000)
			rng := rand.New(rand.NewPCG(1, 2))
			d := p.Decide(snap, rng)
			if d.Chosen == "" || len(d.Candidates) == 0 {
				b.Fatalf("no decision: %s", d.Note)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				d = p.Decide(snap, rng)
			}
			b.StopTimer()
			if d.Chosen == "" {
				b.Fatal("no decision")
			}
		})
	}
}

// bigSnapshot is a 16-node cluster half full, with n pending jobs of 20
// kinds and 3 users, a tenth of them with a deadline, some too big to fit.
func bigSnapshot(n int) pipeline.Snapshot {
	rng := rand.New(rand.NewPCG(9, 9))
	snap := pipeline.Snapshot{
		Now:      t0,
		Capacity: pipeline.Capacity{MemoryMB: 16 * 128 * 1024, VCores: 16 * 32},
		Free:     pipeline.Capacity{MemoryMB: 8 * 128 * 1024, VCores: 8 * 32},
		History:  map[string]queue.KindHistory{},
	}
	for i := 0; i < 16; i++ {
		snap.Nodes = append(snap.Nodes, pipeline.NodeFree{Name: fmt.Sprintf("node-%02d", i),
			Free: pipeline.Capacity{MemoryMB: int64(rng.IntN(128 * 1024)), VCores: int64(rng.IntN(32))}})
	}
	for i, k := range []string{"kind-01", "kind-02", "kind-03"} {
		snap.Running = append(snap.Running, pipeline.Running{JobID: fmt.Sprintf("r%d", i), Kind: k, User: "alice",
			Alloc: pipeline.Capacity{MemoryMB: 64 * 1024, VCores: 16}, Weight: 0.2 + 0.1*float64(i)})
	}
	for k := 0; k < 20; k++ {
		kind := fmt.Sprintf("kind-%02d", k)
		snap.History[kind] = queue.KindHistory{Kind: kind, Runs: 5, EWMARuntime: time.Duration(1+k) * time.Minute}
	}
	for i := 0; i < n; i++ {
		j := pj(uint64(i+1), fmt.Sprintf("kind-%02d", rng.IntN(20)), user([]string{"alice", "bob", "carol"}[rng.IntN(3)]))
		j.ID = fmt.Sprintf("01J%023d", i)
		j.Resources = queue.Resources{Containers: 1 + rng.IntN(40), MemoryMB: int64(1024 * (1 + rng.IntN(16))), VCores: 1 + rng.IntN(4)}
		j.Skips = rng.IntN(4)
		if rng.IntN(10) == 0 {
			d := t0.Add(time.Duration(30+rng.IntN(600)) * time.Minute)
			j.Deadline = &d
		}
		snap.Pending = append(snap.Pending, j)
	}
	return snap
}
