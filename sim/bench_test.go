package sim_test

import (
	"testing"
	"time"

	"github.com/colocd/colocd/sim"
)

// BenchmarkQueueA simulates queue A (48 jobs, 16 nodes, about 2.3 simulated
// hours) under the trivial FIFO admission loop.
func BenchmarkQueueA(b *testing.B) {
	w := load(b, queueA)
	f := runFIFO(b, w, sim.Options{Seed: 1}, nil)
	if len(f.finished) != 48 || f.makespan() < 2*time.Hour || f.makespan() > 150*time.Minute {
		b.Fatalf("FIFO run: %d finished, makespan %v", len(f.finished), f.makespan())
	}
	b.ReportAllocs()
	for b.Loop() {
		runFIFO(b, w, sim.Options{Seed: 1}, nil)
	}
	b.ReportMetric(f.makespan().Hours(), "sim-hours")
}

// BenchmarkClone is the cost of one what-if copy in the middle of queue A.
func BenchmarkClone(b *testing.B) {
	w := load(b, queueA)
	s, err := w.NewSim(sim.Options{Seed: 1})
	if err != nil {
		b.Fatal(err)
	}
	for _, k := range []string{"kmeans", "cc", "tpch-q10", "tpch-q3"} {
		if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			b.Fatal(err)
		}
	}
	s.Advance(sim.DefaultStart.Add(time.Hour))
	if c := s.Clone(); len(c.Samples()) != len(s.Samples()) {
		b.Fatal("clone lost samples")
	}
	b.ReportAllocs()
	for b.Loop() {
		s.Clone()
	}
}
