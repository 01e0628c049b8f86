package sim_test

import (
	"fmt"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

// twoKinds is one node of cores cores: calc uses 3 × 0.5 cores, scan
// 3 × 0.2 cores and reads 3 × 20, writes 3 × 10 MB/s. Each runs 60 s alone.
const twoKinds = `
cluster: {nodes: 1, node: {cores: %v, vcores: 6, memory_mb: 8192, disk_mbps: 200, net_mbps: 100}}
kinds:
  - {name: calc, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.5, net_out_mbps: 10}]}
  - {name: scan, containers: 3, container: {vcores: 1, memory_mb: 1024}, phases: [{seconds: 60, cpu: 0.2, disk_read_mbps: 20, disk_write_mbps: 10}]}
queue: [{kind: calc, count: 1}]
`

// secs is DefaultStart plus x seconds.
func secs(x float64) time.Time { return sim.DefaultStart.Add(time.Duration(x * float64(time.Second))) }

// submit submits a job of kind to s and returns its id.
func submit(tb testing.TB, s *sim.Sim, kind string) string {
	tb.Helper()
	id := s.NewApplication()
	if err := s.Submit(id, sim.AppSpec{Kind: kind}); err != nil {
		tb.Fatal(err)
	}
	return id
}

// appUsage is AppUsage, failing the test when it finds nothing.
func appUsage(tb testing.TB, s *sim.Sim, node string, from, to time.Time) []sim.AppUsage {
	tb.Helper()
	us, ok := s.AppUsage(node, from, to)
	if !ok {
		tb.Fatalf("AppUsage(%s, %v, %v): ok = false", node, from.Sub(sim.DefaultStart), to.Sub(sim.DefaultStart))
	}
	return us
}

// checkSums checks that node's per-application use over [from, to) adds
// up to its Usage within 1e-9 (near: of CPU, a fraction; relative of the
// disk's bytes per second); and that
// AppUsage finds something exactly when Usage does.
func checkSums(tb testing.TB, s *sim.Sim, node string, from, to time.Time) {
	tb.Helper()
	u, ok := s.Usage(node, from, to)
	us, aok := s.AppUsage(node, from, to)
	if ok != aok {
		tb.Fatalf("%s [%v, %v): Usage ok = %v, AppUsage ok = %v", node, from.Sub(sim.DefaultStart), to.Sub(sim.DefaultStart), ok, aok)
	}
	var cpu, read, write float64
	for _, a := range us {
		cpu += a.CPU
		read += a.DiskRead
		write += a.DiskWrite
	}
	if !near(cpu, u.CPU) || !near(read, u.DiskRead) || !near(write, u.DiskWrite) {
		tb.Fatalf("%s [%v, %v): apps add up to cpu %v, read %v, write %v; the node shows %v, %v, %v (apps %+v)",
			node, from.Sub(sim.DefaultStart), to.Sub(sim.DefaultStart), cpu, read, write, u.CPU, u.DiskRead, u.DiskWrite, us)
	}
}

// Every node's per-application use adds up to the node's, sample by sample
// and over windows of several intervals not aligned on them; each sample's
// applications are the sample's Apps. Shipped workloads with jitter,
// interference (cache interference slows progress below the CPU share) and
// node groups, a metrics interval that floating point does not represent
// exactly, and a kill.
func TestAppUsageSumsToNode(t *testing.T) {
	fifo := func(w *sim.Workload, opts sim.Options) func(*testing.T) *sim.Sim {
		return func(t *testing.T) *sim.Sim { return runFIFO(t, w, opts, nil).s }
	}
	for _, tc := range []struct {
		name string
		run  func(*testing.T) *sim.Sim
	}{
		{"tiny", fifo(simtest.Tiny(t), sim.Options{Seed: 1, ContainerMetrics: true})},
		{"noisy", fifo(load(t, "../configs/workloads/noisy.yaml"), sim.Options{Seed: 2, ContainerMetrics: true})},
		{"hetero-sizes", fifo(load(t, "../configs/workloads/hetero-sizes.yaml"), sim.Options{Seed: 1, ContainerMetrics: true})},
		{"queue A, 3.3 s intervals", fifo(load(t, queueA), sim.Options{Seed: 3, ContainerMetrics: true, MetricsInterval: 3300 * time.Millisecond})},
		{"tiny with a kill", func(t *testing.T) *sim.Sim {
			s := newSim(t, simtest.Tiny(t), sim.Options{Seed: 4, ContainerMetrics: true})
			a, _ := submit(t, s, "cpu"), submit(t, s, "disk")
			s.Advance(secs(27))
			if err := s.Kill(a); err != nil {
				t.Fatal(err)
			}
			s.RunUntilIdle()
			s.Advance(s.Now().Add(time.Minute))
			return s
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.run(t)
			iv := s.MetricsInterval()
			samples := s.Samples()
			if len(samples) == 0 {
				t.Fatal("no samples")
			}
			busy := 0
			for _, sm := range samples {
				checkSums(t, s, sm.Node, sm.Start, sm.End)
				// The sample's apps, in its order; others only from a sliver
				// of the next interval, where the nanosecond grid of its End
				// falls after the float boundary (3.3 s intervals), nearly idle.
				var ids []string
				for _, a := range appUsage(t, s, sm.Node, sm.Start, sm.End) {
					if slices.Contains(sm.Apps, a.App) {
						ids = append(ids, a.App)
					} else if a.CPU > 1e-9 || a.DiskRead+a.DiskWrite > 1 {
						t.Fatalf("%s [%v, %v): AppUsage has %+v, not in the sample's apps %v", sm.Node, sm.Start.Sub(sim.DefaultStart), sm.End.Sub(sim.DefaultStart), a, sm.Apps)
					}
				}
				if !slices.Equal(ids, sm.Apps) {
					t.Fatalf("%s [%v, %v): AppUsage lists %v, the sample %v", sm.Node, sm.Start.Sub(sim.DefaultStart), sm.End.Sub(sim.DefaultStart), ids, sm.Apps)
				}
				if sm.Usage.CPU > 0 {
					busy++
				}
				// Seven intervals and a bit, from inside this one.
				checkSums(t, s, sm.Node, sm.Start.Add(iv*37/100), sm.Start.Add(iv*76/10))
			}
			if busy == 0 {
				t.Fatal("no busy sample")
			}
			for _, n := range s.Nodes() {
				checkSums(t, s, n.Name, sim.DefaultStart, s.Now())
			}
		})
	}
}

// Two jobs of different kinds on one node: each one's CPU is its containers
// × its phase's CPU demand × its share x (the progressive filling's) over
// the node's cores, and its disk its containers × its read and write rates
// × x; unsaturated x = 1, on one core x = 1 / 2.1 for both, so they share
// the CPU in proportion to demand.
func TestAppUsageTwoKinds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cores  float64
		x      float64 // both jobs' share
		window float64 // seconds from the start, while both run
	}{
		{"unsaturated", 4, 1, 60},
		{"CPU saturated", 1, 1 / 2.1, 120},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := newSim(t, parse(t, fmt.Sprintf(twoKinds, tc.cores)), sim.Options{ContainerMetrics: true})
			calc, scan := submit(t, s, "calc"), submit(t, s, "scan")
			s.Advance(secs(tc.window))
			want := []sim.AppUsage{
				{App: calc, CPU: 3 * 0.5 * tc.x / tc.cores},
				{App: scan, CPU: 3 * 0.2 * tc.x / tc.cores, DiskRead: 3 * 20e6 * tc.x, DiskWrite: 3 * 10e6 * tc.x},
			}
			got := appUsage(t, s, "node01", sim.DefaultStart, secs(tc.window))
			if diff := cmp.Diff(want, got, relApprox); diff != "" {
				t.Errorf("per-app use (-want +got):\n%s", diff)
			}
			if r := got[0].CPU / got[1].CPU; math.Abs(r-2.5) > 1e-9 {
				t.Errorf("calc uses %v times scan's CPU, want 2.5 (their demands' ratio)", r)
			}
			checkSums(t, s, "node01", sim.DefaultStart, secs(tc.window))
		})
	}
}

// A job present for half a window counts half its use: calc runs [0, 60 s),
// scan [30 s, 90 s), both at full speed on 4 cores. A window where no job
// ran has none. Runs merge intervals with the same use.
func TestAppUsageHalfWindow(t *testing.T) {
	s := newSim(t, parse(t, fmt.Sprintf(twoKinds, 4)), sim.Options{ContainerMetrics: true})
	calc := submit(t, s, "calc")
	s.Advance(secs(30))
	scan := submit(t, s, "scan")
	s.Advance(secs(120))
	const calcCPU, scanCPU = 1.5 / 4, 0.6 / 4
	for _, tc := range []struct {
		from, to float64
		want     []sim.AppUsage
	}{
		{0, 30, []sim.AppUsage{{App: calc, CPU: calcCPU}}},
		{0, 60, []sim.AppUsage{{App: calc, CPU: calcCPU}, {App: scan, CPU: scanCPU / 2, DiskRead: 30e6, DiskWrite: 15e6}}},
		{30, 90, []sim.AppUsage{{App: calc, CPU: calcCPU / 2}, {App: scan, CPU: scanCPU, DiskRead: 60e6, DiskWrite: 30e6}}},
		{0, 120, []sim.AppUsage{{App: calc, CPU: calcCPU / 2}, {App: scan, CPU: scanCPU / 2, DiskRead: 30e6, DiskWrite: 15e6}}},
		{90, 120, []sim.AppUsage{}},
	} {
		got := appUsage(t, s, "node01", secs(tc.from), secs(tc.to))
		if diff := cmp.Diff(tc.want, got, relApprox); diff != "" {
			t.Errorf("[%v s, %v s) (-want +got):\n%s", tc.from, tc.to, diff)
		}
	}
	// Intervals with the same use are one run: calc alone, both, scan
	// alone, idle, whatever the idle time after.
	s.Advance(secs(3600))
	if r := sim.AppRuns(s, "node01"); r != 4 {
		t.Errorf("%d per-application runs over an hour, want 4", r)
	}
}

// Off (the default), AppUsage finds nothing; on, it finds nothing for an
// unknown node, an empty window or one not yet sampled, as Usage.
func TestAppUsageNotFound(t *testing.T) {
	off := simtest.NewTiny(t, 1)
	submit(t, off, "cpu")
	off.Advance(secs(60))
	if _, ok := off.AppUsage("node01", sim.DefaultStart, off.Now()); ok {
		t.Error("AppUsage with ContainerMetrics off: ok = true")
	}
	s := newSim(t, simtest.Tiny(t), sim.Options{ContainerMetrics: true})
	submit(t, s, "cpu")
	s.Advance(secs(25))
	for _, tc := range []struct {
		name     string
		node     string
		from, to float64
	}{{"unknown node", "node99", 0, 10}, {"empty window", "node01", 10, 10}, {"before the start", "node01", -20, -10}, {"not yet sampled", "node01", 30, 40}} {
		if _, ok := s.AppUsage(tc.node, secs(tc.from), secs(tc.to)); ok {
			t.Errorf("%s: ok = true, want false", tc.name)
		}
	}
}

// Turning ContainerMetrics on changes nothing else: the same finish times,
// applications and node samples, bit for bit, AppUsage read at every step
// (with a metrics interval that floating point does not represent exactly,
// where closing a node's intervals at other times would show).
func TestContainerMetricsChangesNoRun(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		opts sim.Options
	}{
		{"noisy", "../configs/workloads/noisy.yaml", sim.Options{Seed: 1}},
		{"queue A, 3.3 s intervals, retention", queueA, sim.Options{Seed: 2, Jitter: 0.1, Pressure: true,
			MetricsInterval: 3300 * time.Millisecond, Retention: 5 * time.Minute}},
		{"hetero-sizes", "../configs/workloads/hetero-sizes.yaml", sim.Options{Seed: 3}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := load(t, tc.path)
			off := runFIFO(t, w, tc.opts, nil)
			opts := tc.opts
			opts.ContainerMetrics = true
			reads := 0
			on := runFIFO(t, w, opts, func(s *sim.Sim) {
				n := s.Nodes()[reads%len(s.Nodes())].Name
				if _, ok := s.AppUsage(n, s.Now().Add(-time.Minute), s.Now()); ok {
					reads++
				}
			})
			if reads == 0 {
				t.Fatal("AppUsage never found anything during the run")
			}
			if diff := cmp.Diff(off.finished, on.finished); diff != "" {
				t.Errorf("finish times (-off +on):\n%s", diff)
			}
			if diff := cmp.Diff(off.s.Apps(), on.s.Apps()); diff != "" {
				t.Errorf("apps (-off +on):\n%s", diff)
			}
			if diff := cmp.Diff(off.s.Samples(), on.s.Samples()); diff != "" {
				t.Errorf("samples (-off +on):\n%s", diff)
			}
			if diff := cmp.Diff(slices.Collect(off.s.SampleRuns()), slices.Collect(on.s.SampleRuns())); diff != "" {
				t.Errorf("sample runs (-off +on):\n%s", diff)
			}
		})
	}
}

// Retention drops per-application use with the samples: AppUsage finds
// what Usage finds, no more, and a long run keeps a bounded number of runs.
func TestAppUsageRetention(t *testing.T) {
	s := newSim(t, simtest.Tiny(t), sim.Options{Seed: 1, Retention: 30 * time.Second, ContainerMetrics: true})
	for _, k := range []string{"cpu", "disk"} {
		submit(t, s, k)
	}
	s.Advance(secs(600))
	kept := 0
	for _, n := range s.Nodes() {
		for k := range 60 {
			from := secs(float64(10 * k))
			if _, ok := s.Usage(n.Name, from, from.Add(10*time.Second)); ok {
				kept++
			}
			checkSums(t, s, n.Name, from, from.Add(10*time.Second))
		}
		checkSums(t, s, n.Name, sim.DefaultStart, s.Now())
		if r := sim.AppRuns(s, n.Name); r > 5 {
			t.Errorf("%s keeps %d per-application runs after 30 s of retention", n.Name, r)
		}
	}
	if kept == 0 || kept > 4*4 {
		t.Errorf("%d windows kept, want 1 to 4 intervals × 4 nodes", kept)
	}
}

// A clone's per-application use is its own: what the clone does leaves the
// original's untouched, a twin cloned at the same point evolves exactly as
// the original (and both still add up), and DiscardMetrics drops it.
func TestAppUsageCloneAndDiscard(t *testing.T) {
	w := load(t, queueA)
	orig := newSim(t, w, sim.Options{Seed: 5, Jitter: 0.1, ContainerMetrics: true})
	for _, k := range []string{"kmeans", "tpch-q10", "cc"} {
		submit(t, orig, k)
	}
	orig.Advance(secs(7 * 60))
	all := func(s *sim.Sim, to time.Time) map[string][][]sim.AppUsage {
		out := map[string][][]sim.AppUsage{}
		for _, n := range s.Nodes() {
			for from := sim.DefaultStart; from.Before(to); from = from.Add(10 * time.Second) {
				us, _ := s.AppUsage(n.Name, from, from.Add(10*time.Second))
				out[n.Name] = append(out[n.Name], us)
				checkSums(t, s, n.Name, from, from.Add(10*time.Second))
			}
		}
		return out
	}
	before := all(orig, orig.Now())
	clone, quiet := orig.Clone(), orig.Clone()
	quiet.DiscardMetrics()
	for _, s := range []*sim.Sim{clone, quiet} {
		submit(t, s, "kmeans")
		s.RunUntilIdle()
	}
	if _, ok := quiet.AppUsage("node01", sim.DefaultStart, quiet.Now()); ok {
		t.Error("AppUsage found use after DiscardMetrics")
	}
	if diff := cmp.Diff(clone.Apps(), quiet.Apps()); diff != "" {
		t.Errorf("the run without metrics differs (-with +without):\n%s", diff)
	}
	all(clone, clone.Now())
	if diff := cmp.Diff(before, all(orig, secs(7*60))); diff != "" {
		t.Errorf("the clone's run changed the original's use (-before +after):\n%s", diff)
	}
	twin := orig.Clone()
	for _, s := range []*sim.Sim{orig, twin} {
		submit(t, s, "tpch-q3")
		s.Advance(secs(3600))
	}
	if diff := cmp.Diff(all(orig, orig.Now()), all(twin, twin.Now())); diff != "" {
		t.Errorf("original and twin diverged (-orig +twin):\n%s", diff)
	}
}
