package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// equalPrefs is a stand-in for bandit.Learner: every kind equally good.
type equalPrefs struct{}

func ExamplePipeline() {
	p, err := pipeline.New(pipeline.DefaultConfig(), equalPrefs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	job := func(seq uint64, kind string, memMB int64, skips int) queue.Job {
		return queue.Job{ID: fmt.Sprintf("job-%d", seq), Seq: seq, Kind: kind, User: "alice", Skips: skips,
			Resources: queue.Resources{Containers: 2, MemoryMB: memMB, VCores: 1}}
	}
	snap := pipeline.Snapshot{
		Now:      now,
		Capacity: pipeline.Capacity{MemoryMB: 64 << 10, VCores: 32},
		Free:     pipeline.Capacity{MemoryMB: 16 << 10, VCores: 16},
		Running:  []pipeline.Running{{JobID: "r1", Kind: "kmeans", User: "bob", Weight: 1}},
		Pending: []queue.Job{
			job(1, "tpch-q3", 4096, 0),
			job(2, "tpch-q10", 32<<10, 0), // does not fit
			job(3, "cc", 2048, 8),         // passed over 8 times: forced through
		},
	}
	d := p.Decide(snap, rand.New(rand.NewPCG(1, 2)))
	fmt.Println("chosen:", d.Chosen, "passed:", d.Passed)
	fmt.Println("forced:", d.Forced)
	for _, s := range d.Stages {
		fmt.Printf("%-10s %d → %d\n", s.Name, s.In, s.Out)
	}
	// Output:
	// chosen: job-3 passed: [job-1]
	// forced: job job-3 was passed over 8 times (max_skips 8)
	// window     3 → 3
	// fit        3 → 2
	// altruism   2 → 2
	// reservation 2 → 2
	// preference 2 → 2
	// starvation 2 → 1
	// select     1 → 1
}

func (equalPrefs) Mix(candidates, _ []string, _ []float64, out []float64) {
	for i := range candidates {
		out[i] = 1
	}
}
