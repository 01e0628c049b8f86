package sim_test

import (
	"fmt"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim"
)

// relApprox compares floats within 1e-6 relative (1e-12 absolute near 0).
var relApprox = cmp.Comparer(func(a, b float64) bool {
	return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) || math.Abs(a-b) <= 1e-12
})

func parse(tb testing.TB, doc string) *sim.Workload {
	tb.Helper()
	w, err := sim.ParseWorkload([]byte(doc))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// colocated is what a run of jobs submitted together at time 0 on a
// one-node cluster shows.
type colocated struct {
	Speeds    []float64 // each job's AppInfo.Speed right after the submits
	Durations []float64 // seconds, in submission order
	Usage     observed  // node01 over [0, 60 s)
}

// observed is a node's usage in cores of its capacity and MB/s.
type observed struct{ CPU, IOWait, DiskMBps, NetSentMBps float64 }

func runTogether(tb testing.TB, w *sim.Workload, kinds []string) colocated {
	tb.Helper()
	s := newSim(tb, w, sim.Options{Seed: 1})
	var ids []string
	for _, k := range kinds {
		id := s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{Kind: k}); err != nil {
			tb.Fatal(err)
		}
		ids = append(ids, id)
	}
	var out colocated
	for _, id := range ids {
		a, _ := s.App(id)
		if len(a.Nodes) != 1 || a.Nodes[0] != "node01" {
			tb.Fatalf("%s (%s) placed on %v, want node01 only", id, a.Kind, a.Nodes)
		}
		out.Speeds = append(out.Speeds, a.Speed)
	}
	s.RunUntilIdle()
	for _, id := range ids {
		a, _ := s.App(id)
		out.Durations = append(out.Durations, a.Finished.Sub(a.Started).Seconds())
	}
	u, ok := s.Usage("node01", sim.DefaultStart, sim.DefaultStart.Add(60*time.Second))
	if !ok {
		tb.Fatal("no usage over the first minute")
	}
	out.Usage = observed{CPU: u.CPU, IOWait: u.IOWait, DiskMBps: (u.DiskRead + u.DiskWrite) / 1e6, NetSentMBps: u.NetSent / 1e6}
	return out
}

// diskNode is one node, 100 MB/s of disk; scan reads and sort writes
// 3 × 25 MB/s, calc uses no disk. Every job alone runs 60 s at full speed.
const diskNode = `
cluster: {nodes: 1, node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100, interference: {disk_streams: %v}}}
kinds:
  - {name: scan, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.1, disk_read_mbps: 25}]}
  - {name: sort, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.1, disk_write_mbps: 25}]}
  - {name: calc, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.5}]}
queue: [{kind: scan, count: 1}]
`

func TestDiskStreams(t *testing.T) {
	// Two disk jobs want 150 MB/s. Without the penalty the disk gives 100:
	// rate 2/3, 90 s. With p = 0.5 and two streams it gives 100/1.5: rate
	// 4/9, 135 s. I/O wait is the starved 6 × 0.1 × (1 − rate) cores of 4.
	const slow = 4.0 / 9
	for _, tc := range []struct {
		name  string
		p     float64
		kinds []string
		want  colocated
	}{
		{"two disk jobs, no penalty", 0, []string{"scan", "sort"}, colocated{
			Speeds: []float64{2.0 / 3, 2.0 / 3}, Durations: []float64{90, 90},
			Usage: observed{CPU: 0.6 * 2 / 3 / 4, IOWait: 0.6 / 3 / 4, DiskMBps: 100}}},
		{"two disk jobs, p=0.5", 0.5, []string{"scan", "sort"}, colocated{
			Speeds: []float64{slow, slow}, Durations: []float64{135, 135},
			Usage: observed{CPU: 0.6 * slow / 4, IOWait: 0.6 * (1 - slow) / 4, DiskMBps: 100 / 1.5}}},
		{"two jobs of one kind count as two streams", 0.5, []string{"scan", "scan"}, colocated{
			Speeds: []float64{slow, slow}, Durations: []float64{135, 135},
			Usage: observed{CPU: 0.6 * slow / 4, IOWait: 0.6 * (1 - slow) / 4, DiskMBps: 100 / 1.5}}},
		{"one disk job alone", 0.5, []string{"scan"}, colocated{
			Speeds: []float64{1}, Durations: []float64{60},
			Usage: observed{CPU: 0.3 / 4, DiskMBps: 75}}},
		{"a disk job beside a job without disk", 0.5, []string{"scan", "calc"}, colocated{
			Speeds: []float64{1, 1}, Durations: []float64{60, 60},
			Usage: observed{CPU: 1.8 / 4, DiskMBps: 75}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runTogether(t, parse(t, fmt.Sprintf(diskNode, tc.p)), tc.kinds)
			if diff := cmp.Diff(tc.want, got, relApprox); diff != "" {
				t.Errorf("speeds, durations, usage (-want +got):\n%s", diff)
			}
		})
	}
}

// cpuNode is one node of 6 cores and 9 vcores. hot (0.6 cores), warm and
// dig (0.5) are CPU-bound, cool (0.4) is not; hot and cool send 10 MB/s per
// container. Three jobs together want at most 4.8 cores: CPU never
// saturates, so every job but dig, alone or without the penalty, runs 60 s.
// dig wants 120 MB/s of the 100 MB/s disk: alone it runs at 5/6.
const cpuNode = `
cluster: {nodes: 1, node: {cores: 6, vcores: 9, memory_mb: 9216, disk_mbps: 100, net_mbps: 100, interference: {cpu_cache: %v}}}
kinds:
  - {name: hot,  containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.6, net_out_mbps: 10}]}
  - {name: warm, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.5}]}
  - {name: cool, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.4, net_out_mbps: 10}]}
  - {name: dig,  containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.5, disk_read_mbps: 40}]}
queue: [{kind: hot, count: 1}]
`

func TestCPUCache(t *testing.T) {
	// With p = 0.2 a CPU-bound job beside m other CPU-bound jobs progresses
	// at 1/(1 + 0.2·m) but burns its full share: CPU usage is the
	// no-penalty one, the network (which follows progress) drops.
	for _, tc := range []struct {
		name  string
		p     float64
		kinds []string
		want  colocated
	}{
		{"two CPU-bound jobs, no penalty", 0, []string{"hot", "warm"}, colocated{
			Speeds: []float64{1, 1}, Durations: []float64{60, 60},
			Usage: observed{CPU: 3.3 / 6, NetSentMBps: 30}}},
		{"two CPU-bound jobs, p=0.2", 0.2, []string{"hot", "warm"}, colocated{
			Speeds: []float64{1 / 1.2, 1 / 1.2}, Durations: []float64{72, 72},
			Usage: observed{CPU: 3.3 / 6, NetSentMBps: 30 / 1.2}}},
		{"three CPU-bound jobs, p=0.2", 0.2, []string{"hot", "warm", "hot"}, colocated{
			Speeds: []float64{1 / 1.4, 1 / 1.4, 1 / 1.4}, Durations: []float64{84, 84, 84},
			Usage: observed{CPU: 5.1 / 6, NetSentMBps: 60 / 1.4}}},
		{"one CPU-bound job alone", 0.2, []string{"hot"}, colocated{
			Speeds: []float64{1}, Durations: []float64{60},
			Usage: observed{CPU: 1.8 / 6, NetSentMBps: 30}}},
		{"a CPU-bound job beside a light one", 0.2, []string{"hot", "cool"}, colocated{
			Speeds: []float64{1, 1}, Durations: []float64{60, 60},
			Usage: observed{CPU: 3.0 / 6, NetSentMBps: 60}}},
		// dig gets 5/6 of its demand from the filling and progresses at
		// 5/6/1.2 = 25/36: its iowait follows the 5/6 it burns, its disk
		// read the 25/36 it progresses. After hot ends at 72 s, dig (50 s
		// of work done) runs alone at 5/6: 12 s more.
		{"a disk-bound CPU-bound job, p=0.2", 0.2, []string{"hot", "dig"}, colocated{
			Speeds: []float64{1 / 1.2, 25.0 / 36}, Durations: []float64{72, 84},
			Usage: observed{CPU: (1.8 + 1.5*5/6) / 6, IOWait: 1.5 / 6 / 6, DiskMBps: 120 * 25.0 / 36, NetSentMBps: 30 / 1.2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := runTogether(t, parse(t, fmt.Sprintf(cpuNode, tc.p)), tc.kinds)
			if diff := cmp.Diff(tc.want, got, relApprox); diff != "" {
				t.Errorf("speeds, durations, usage (-want +got):\n%s", diff)
			}
		})
	}
}

// A job alone on its nodes takes exactly its solo duration, however strong
// the interference: one stream per disk, no other CPU-bound job.
func TestInterferenceSparesSoloJobs(t *testing.T) {
	w := load(t, queueA)
	w.Cluster.Node.Interference = sim.Interference{DiskStreams: sim.MaxInterference, CPUCache: sim.MaxInterference}
	for _, k := range w.Kinds {
		t.Run(k.Name, func(t *testing.T) {
			s := newSim(t, w, sim.Options{Seed: 1})
			id := s.NewApplication()
			if err := s.Submit(id, sim.AppSpec{Kind: k.Name}); err != nil {
				t.Fatal(err)
			}
			want := []sim.Event{{At: sim.DefaultStart.Add(k.SoloDuration()), AppID: id, Kind: sim.EventFinished}}
			if diff := cmp.Diff(want, s.RunUntilIdle()); diff != "" {
				t.Errorf("events (-want +got):\n%s", diff)
			}
		})
	}
}

// Queue A under FIFO with interference: slower than without, and a clone
// taken mid-run evolves exactly like the original.
func TestInterferenceQueueA(t *testing.T) {
	w := load(t, queueA)
	plain := runFIFO(t, w, sim.Options{Seed: 1}, nil).makespan()
	w.Cluster.Node.Interference = sim.Interference{DiskStreams: 0.15, CPUCache: 0.05}
	if got := runFIFO(t, w, sim.Options{Seed: 1}, nil).makespan(); got <= plain {
		t.Errorf("makespan with interference %v, want more than %v without", got, plain)
	}

	orig := newSim(t, w, sim.Options{Seed: 3})
	for _, k := range []string{"kmeans", "tpch-q10", "cc", "tpch-q3"} {
		if err := orig.Submit(orig.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	orig.Advance(sim.DefaultStart.Add(5 * time.Minute))
	twin := orig.Clone()
	for _, s := range []*sim.Sim{orig, twin} {
		s.RunUntilIdle()
	}
	if diff := cmp.Diff(orig.Apps(), twin.Apps()); diff != "" {
		t.Errorf("original and clone diverged (-orig +clone):\n%s", diff)
	}
	if diff := cmp.Diff(orig.Samples(), twin.Samples()); diff != "" {
		t.Errorf("samples diverged (-orig +clone):\n%s", diff)
	}
}

// variability.jitter reaches the simulator as Options.Jitter, unless the
// options set their own.
func TestVariabilityJitter(t *testing.T) {
	const doc = `
cluster: {nodes: 1, node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}}
kinds:
  - {name: k, containers: 3, container: {vcores: 1, memory_mb: 1024}, repeat: 5, phases: [{seconds: 10, cpu: 0.5}]}
queue: [{kind: k, count: 1}]
variability: {jitter: %v}
`
	duration := func(jitter float64, opts sim.Options) time.Duration {
		t.Helper()
		s := newSim(t, parse(t, fmt.Sprintf(doc, jitter)), opts)
		id := s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{Kind: "k"}); err != nil {
			t.Fatal(err)
		}
		s.RunUntilIdle()
		a, _ := s.App(id)
		return a.Finished.Sub(a.Started)
	}
	const solo = 50 * time.Second
	for _, seed := range []uint64{1, 2} {
		if got := duration(0, sim.Options{Seed: seed}); got != solo {
			t.Errorf("jitter 0, seed %d: %v, want exactly %v", seed, got, solo)
		}
	}
	a, b := duration(0.2, sim.Options{Seed: 1}), duration(0.2, sim.Options{Seed: 2})
	if a == b || a == solo || b == solo {
		t.Errorf("jitter 0.2: seeds 1 and 2 took %v and %v, want two different durations, not %v", a, b, solo)
	}
	for _, d := range []time.Duration{a, b} {
		if d < 40*time.Second || d > 60*time.Second {
			t.Errorf("jitter 0.2: %v outside %v ± 20%%", d, solo)
		}
	}
	for _, tc := range []struct {
		name       string
		yaml, opts float64 // jitter of the workload and of the options
		same       float64 // options jitter of a jitter-free workload giving the same run
	}{
		{"from the workload", 0.2, 0, 0.2},
		{"explicit options win", 0.2, 0.01, 0.01},
	} {
		got := duration(tc.yaml, sim.Options{Seed: 3, Jitter: tc.opts})
		if want := duration(0, sim.Options{Seed: 3, Jitter: tc.same}); got != want {
			t.Errorf("%s: workload jitter %v, options %v: %v, want %v (options jitter %v)", tc.name, tc.yaml, tc.opts, got, want, tc.same)
		}
	}
}
