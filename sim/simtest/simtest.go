// Package simtest holds test helpers for code that runs on the simulator:
// a small fast workload, and a fake wall clock and ticker that step a
// sim.Realtime driver deterministically (no sleeping). Tests only.
package simtest

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/sim"
)

// ComplementaryYAML is a 4-node cluster (6 vcores, 4 cores) with one
// CPU-bound and one disk-bound kind, every job 6 containers, so 4 run at once,
// two triplets per node. Two cpu triplets want 6 cores of 4, two disk triplets
// 360 MB/s of 200: a cpu job and a disk job side by side both run at full
// speed. The queue comes in blocks of one kind (4 cpu, then 4 disk), repeated
// `repeat` times, so FIFO always co-locates a kind with itself and a
// co-location-aware policy has an obvious gain to find.
func ComplementaryYAML(repeat int) string {
	return fmt.Sprintf(`
cluster:
  nodes: 4
  node: {cores: 4, vcores: 6, memory_mb: 6144, disk_mbps: 200, net_mbps: 125}
kinds:
  - name: cpu
    containers: 6
    container: {vcores: 1, memory_mb: 1024}
    phases: [{seconds: 240, cpu: 1}]
  - name: disk
    containers: 6
    container: {vcores: 1, memory_mb: 1024}
    phases: [{seconds: 240, cpu: 0.2, disk_read_mbps: 60}]
queue:
  - {kind: cpu, count: 4}
  - {kind: disk, count: 4}
repeat: %d
`, repeat)
}

// TinyYAML is a 4-node cluster with two short kinds, one CPU-bound and one
// disk-bound, each job half the cluster's containers (so two run at once).
// Solo durations: cpu 60 s, disk 60 s. A triplet runs at full speed; four
// CPU (or disk) containers on one node contend.
const TinyYAML = `
cluster:
  nodes: 4
  node: {cores: 3, vcores: 4, memory_mb: 8192, disk_mbps: 150, net_mbps: 100}
kinds:
  - name: cpu
    containers: 8
    container: {vcores: 1, memory_mb: 1024}
    repeat: 3
    phases:
      - {seconds: 15, cpu: 0.9, disk_read_mbps: 1}
      - {seconds: 5, cpu: 0.1, net_in_mbps: 5, net_out_mbps: 5}
  - name: disk
    containers: 8
    container: {vcores: 1, memory_mb: 1024}
    phases:
      - {seconds: 40, cpu: 0.3, disk_read_mbps: 40}
      - {seconds: 20, cpu: 0.3, disk_write_mbps: 30, net_in_mbps: 10, net_out_mbps: 10}
queue:
  - {kind: cpu, count: 2}
  - {kind: disk, count: 2}
repeat: 2
`

// Tiny returns the TinyYAML workload.
func Tiny(tb testing.TB) *sim.Workload {
	tb.Helper()
	w, err := sim.ParseWorkload([]byte(TinyYAML))
	if err != nil {
		tb.Fatalf("simtest: tiny workload: %v", err)
	}
	return w
}

// NewTiny returns a simulator of the Tiny workload's cluster and kinds.
func NewTiny(tb testing.TB, seed uint64) *sim.Sim {
	tb.Helper()
	s, err := Tiny(tb).NewSim(sim.Options{Seed: seed})
	if err != nil {
		tb.Fatalf("simtest: %v", err)
	}
	return s
}

// FakeWall is a wall clock and ticker for sim.NewRealtime that a test
// steps by hand. Pass Now as the wall clock and Options() as options.
type FakeWall struct {
	mu    sync.Mutex
	now   time.Time
	ticks chan time.Time
	done  chan time.Time
}

// NewFakeWall starts the fake wall clock at start.
func NewFakeWall(start time.Time) *FakeWall {
	return &FakeWall{now: start, ticks: make(chan time.Time), done: make(chan time.Time)}
}

// Now is the fake wall time.
func (f *FakeWall) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

// Set moves the wall clock without ticking (the driver sees the new time
// at its next tick, or when Now/After/Do are called).
func (f *FakeWall) Set(t time.Time) {
	f.mu.Lock()
	f.now = t
	f.mu.Unlock()
}

// Options wire the fake ticker and the processed-tick hook into NewRealtime.
func (f *FakeWall) Options() []sim.RealtimeOption {
	return []sim.RealtimeOption{
		sim.WithTicker(func(time.Duration) (<-chan time.Time, func()) { return f.ticks, func() {} }),
		sim.WithTickHook(func(v time.Time) { f.done <- v }),
	}
}

// Step advances the wall clock by d, ticks, and waits until the driver has
// processed the tick (advanced, fired timers, delivered events). It
// returns the virtual time reached. The driver must be started.
func (f *FakeWall) Step(tb testing.TB, d time.Duration) time.Time {
	tb.Helper()
	f.mu.Lock()
	f.now = f.now.Add(d)
	now := f.now
	f.mu.Unlock()
	// A real timer bounds a broken driver; nothing here waits for work by sleeping.
	limit := time.NewTimer(10 * time.Second)
	defer limit.Stop()
	select {
	case f.ticks <- now:
	case <-limit.C:
		tb.Fatalf("simtest: driver did not take the tick (not started, or stopped?)")
	}
	select {
	case v := <-f.done:
		return v
	case <-limit.C:
		tb.Fatalf("simtest: driver did not finish the tick")
	}
	return time.Time{}
}

// ThreeKindsYAML is a workload of nodes of 6 containers and three kinds
// (cpu, disk, net), each 3 containers of 1 vcore and 1 GB running 120 s
// alone, so a node holds two jobs; its queue is one cpu job.
func ThreeKindsYAML(nodes int) string { return fmt.Sprintf(threeKindsYAML, nodes) }

const threeKindsYAML = `
cluster:
  nodes: %d
  node: {cores: 4, vcores: 6, memory_mb: 6144, disk_mbps: 200, net_mbps: 125}
kinds:
  - name: cpu
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{name: work, seconds: 120, cpu: 1}]
  - name: disk
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{name: work, seconds: 120, cpu: 0.2, disk_read_mbps: 40, disk_write_mbps: 20}]
  - name: net
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{name: work, seconds: 120, cpu: 0.2, net_in_mbps: 30, net_out_mbps: 30}]
queue:
  - {kind: cpu, count: 1}
`
