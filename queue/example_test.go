package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
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
