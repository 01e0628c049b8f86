package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"time"

	"github.com/colocd/colocd/queue"
)

func ExampleStore() {
	dir, _ := os.MkdirTemp("", "queue-example")
	defer os.RemoveAll(dir)
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	s, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{Now: func() time.Time { return now }})
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	job := queue.Job{
		Kind: "tpch-q10", User: "alice", Queue: "default",
		Resources:      queue.Resources{Containers: 4, MemoryMB: 4096, VCores: 2},
		IdempotencyKey: "nightly-2025-01-01",
	}
	first, created, _ := s.Submit(context.Background(), job)
	fmt.Println("created:", created, first.State, first.Seq)
	again, created, _ := s.Submit(context.Background(), job) // a retry
	fmt.Println("retry created:", created, "same job:", again.ID == first.ID)

	// Record first, then act: admit with the RM's reserved id, then submit.
	s.Admit(first.ID, "application_1735732800000_0001", json.RawMessage(`{"chosen":"`+first.ID+`"}`), nil, nil)
	s.Start(first.ID)
	now = now.Add(90 * time.Second)
	done, _ := s.Finish(first.ID, queue.StateSucceeded, "")
	h, _ := s.History("tpch-q10")
	fmt.Println(done.State, "runs:", h.Runs, "mean:", h.MeanRuntime)
	// Output:
	// created: true pending 1
	// retry created: false same job: true
	// succeeded runs: 1 mean: 1m30s
}

// equalPrefs is a stand-in for bandit.Learner: every kind equally good.
type equalPrefs struct{}

func (equalPrefs) Mix(candidates, _ []string, _ []float64, out []float64) {
	for i := range candidates {
		out[i] = 1
	}
}

func ExamplePipeline() {
	p, err := queue.NewPipeline(queue.DefaultConfig(), equalPrefs{})
	if err != nil {
		fmt.Println(err)
		return
	}
	now := time.Date(2025, 1, 1, 12, 0, 0, 0, time.UTC)
	job := func(seq uint64, kind string, memMB int64, skips int) queue.Job {
		return queue.Job{ID: fmt.Sprintf("job-%d", seq), Seq: seq, Kind: kind, User: "alice", Skips: skips,
			Resources: queue.Resources{Containers: 2, MemoryMB: memMB, VCores: 1}}
	}
	snap := queue.Snapshot{
		Now:      now,
		Capacity: queue.Capacity{MemoryMB: 64 << 10, VCores: 32},
		Free:     queue.Capacity{MemoryMB: 16 << 10, VCores: 16},
		Running:  []queue.Running{{JobID: "r1", Kind: "kmeans", User: "bob", Weight: 1}},
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
