package sim_test

import (
	"fmt"
	"runtime"
	"strconv"
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

// BenchmarkScale plays eight-kinds scaled to 100, 1,000 and 10,000 nodes
// (Scaled(n, n/5): a fifth of a job per node, but at least one job per
// queue entry: 27 on 100 nodes) under FIFO: submit the head while it fits,
// advance to the next event. Besides time and allocations
// it reports events/op (the Advance calls, each one event time), and
// memory: node-B and group-B from the struct sizes (sim's export_test.go:
// a node without its samples; a group with its list entries and heap
// entry), and heap-B/node, measured with runtime.MemStats: the live heap
// the finished simulator holds (samples, apps and groups included), per
// node; runs/node are its sample runs.
func BenchmarkScale(b *testing.B) {
	base := load(b, "../configs/workloads/eight-kinds.yaml")
	for _, n := range []int{100, 1000, 10000} {
		b.Run(fmt.Sprint(n), func(b *testing.B) {
			w, err := base.Scaled(n, max(n/5, len(base.Queue)))
			if err != nil {
				b.Fatal(err)
			}
			var before, after runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&before)
			s, events := scaleFIFO(b, w)
			runtime.GC()
			runtime.ReadMemStats(&after)
			groups, runs := sim.Counts(s)
			heap := float64(after.HeapAlloc) - float64(before.HeapAlloc)
			runtime.KeepAlive(s)
			b.ReportAllocs()
			for b.Loop() {
				scaleFIFO(b, w)
			}
			b.ReportMetric(float64(events), "events/op")
			b.ReportMetric(float64(sim.NodeBytes), "node-B")
			b.ReportMetric(float64(sim.GroupBytes), "group-B")
			b.ReportMetric(heap/float64(n), "heap-B/node")
			b.ReportMetric(float64(runs)/float64(n), "runs/node")
			b.ReportMetric(float64(groups), "groups")
		})
	}
}

// scaleFIFO plays w's jobs in order, each as soon as it fits, and checks
// that all of them finished.
func scaleFIFO(tb testing.TB, w *sim.Workload) (*sim.Sim, int) {
	s := newSim(tb, w, sim.Options{Seed: 1})
	jobs := w.Jobs(nil)
	next, finished, events := 0, 0, 0
	for {
		for next < len(jobs) && s.Fits(jobs[next].Kind) {
			if err := s.Submit(s.NewApplication(), sim.AppSpec{JobID: strconv.Itoa(next), Kind: jobs[next].Kind}); err != nil {
				tb.Fatal(err)
			}
			next++
		}
		t, ok := s.NextEvent()
		if !ok {
			break
		}
		finished += len(s.Advance(t))
		events++
	}
	if next != len(jobs) || finished != len(jobs) {
		tb.Fatalf("%d nodes: %d of %d jobs submitted, %d finished", w.Cluster.Nodes, next, len(jobs), finished)
	}
	return s, events
}
