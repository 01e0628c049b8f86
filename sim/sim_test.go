package sim_test

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func newSim(tb testing.TB, w *sim.Workload, opts sim.Options) *sim.Sim {
	tb.Helper()
	s, err := w.NewSim(opts)
	if err != nil {
		tb.Fatal(err)
	}
	return s
}

// fifo is the trivial admission loop: submit jobs in queue order while the
// next one fits, at the start and after every finish. check, if not nil,
// runs after every step.
type fifo struct {
	s        *sim.Sim
	jobs     []sim.JobSpec
	next     int
	finished map[string]time.Time
}

func runFIFO(tb testing.TB, w *sim.Workload, opts sim.Options, check func(*sim.Sim)) *fifo {
	tb.Helper()
	f := &fifo{s: newSim(tb, w, opts), jobs: w.Jobs(nil), finished: map[string]time.Time{}}
	f.admit(tb)
	for {
		t, ok := f.s.NextEvent()
		if !ok {
			break
		}
		evs := f.s.Advance(t)
		if check != nil {
			check(f.s)
		}
		for _, ev := range evs {
			f.finished[ev.AppID] = ev.At
		}
		if len(evs) > 0 {
			f.admit(tb)
		}
	}
	if f.next != len(f.jobs) {
		tb.Fatalf("fifo: %d of %d jobs admitted when the cluster went idle", f.next, len(f.jobs))
	}
	return f
}

func (f *fifo) admit(tb testing.TB) {
	for f.next < len(f.jobs) {
		id := f.s.NewApplication()
		err := f.s.Submit(id, sim.AppSpec{JobID: fmt.Sprint(f.jobs[f.next].Seq), Kind: f.jobs[f.next].Kind})
		if errors.Is(err, sim.ErrNoFit) {
			return
		}
		if err != nil {
			tb.Fatal(err)
		}
		f.next++
	}
}

func (f *fifo) makespan() time.Duration { return f.s.Now().Sub(sim.DefaultStart) }

func TestSoloDurationIsExact(t *testing.T) {
	for _, w := range []*sim.Workload{load(t, queueA), simtest.Tiny(t)} {
		for _, k := range w.Kinds {
			t.Run(k.Name, func(t *testing.T) {
				s := newSim(t, w, sim.Options{Seed: 1})
				id := s.NewApplication()
				if err := s.Submit(id, sim.AppSpec{Kind: k.Name}); err != nil {
					t.Fatal(err)
				}
				evs := s.RunUntilIdle()
				want := []sim.Event{{At: sim.DefaultStart.Add(k.SoloDuration()), AppID: id, Kind: sim.EventFinished}}
				if diff := cmp.Diff(want, evs); diff != "" {
					t.Errorf("events (-want +got):\n%s", diff)
				}
				a, _ := s.App(id)
				if a.State != sim.AppFinished || a.Progress != 1 || a.Alloc != (sim.Resources{}) {
					t.Errorf("after finishing: %+v", a)
				}
			})
		}
	}
}

func TestAppIDsAndInfo(t *testing.T) {
	s := simtest.NewTiny(t, 1)
	id := s.NewApplication()
	want := fmt.Sprintf("application_%d_0001", sim.DefaultStart.UnixMilli())
	if id != want {
		t.Errorf("first id = %q, want %q", id, want)
	}
	if _, ok := s.App(id); ok {
		t.Errorf("a reserved, unsubmitted id is known to App")
	}
	if err := s.Submit(id, sim.AppSpec{JobID: "j1", Kind: "cpu", User: "ann", Queue: "root.a", Tags: []string{"t"}}); err != nil {
		t.Fatal(err)
	}
	a, ok := s.App(id)
	if !ok {
		t.Fatal("App: not found")
	}
	want2 := sim.AppInfo{ID: id, JobID: "j1", Kind: "cpu", User: "ann", Queue: "root.a", Tags: []string{"t"},
		State: sim.AppRunning, Started: sim.DefaultStart, Containers: 8, Alloc: sim.Resources{MemoryMB: 8 * 1024, VCores: 8},
		Speed: 1, Nodes: a.Nodes, Placement: a.Placement}
	if diff := cmp.Diff(want2, a); diff != "" {
		t.Errorf("AppInfo (-want +got):\n%s", diff)
	}
	// 8 containers in groups of 3 on empty nodes: 3, 3, 2.
	var counts []int
	for _, n := range a.Nodes {
		counts = append(counts, a.Placement[n])
	}
	slices.Sort(counts)
	if diff := cmp.Diff([]int{2, 3, 3}, counts); diff != "" {
		t.Errorf("placement counts (-want +got):\n%s", diff)
	}
	if id2 := s.NewApplication(); !regexp.MustCompile(`^application_\d+_0002$`).MatchString(id2) {
		t.Errorf("second id = %q", id2)
	}
}

func TestSubmitErrors(t *testing.T) {
	s := simtest.NewTiny(t, 1)
	if err := s.Submit("application_1_0001", sim.AppSpec{Kind: "cpu"}); !errors.Is(err, sim.ErrUnknownApp) {
		t.Errorf("unreserved id: err = %v, want ErrUnknownApp", err)
	}
	id := s.NewApplication()
	if err := s.Submit(id, sim.AppSpec{Kind: "gpu"}); !errors.Is(err, sim.ErrUnknownKind) {
		t.Errorf("unknown kind: err = %v, want ErrUnknownKind", err)
	}
	if err := s.Submit(id, sim.AppSpec{Kind: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(id, sim.AppSpec{Kind: "cpu"}); !errors.Is(err, sim.ErrDuplicate) {
		t.Errorf("resubmit: err = %v, want ErrDuplicate", err)
	}
	second := s.NewApplication()
	if err := s.Submit(second, sim.AppSpec{Kind: "cpu"}); err != nil {
		t.Fatal(err)
	}
	before := s.Nodes()
	third := s.NewApplication()
	if err := s.Submit(third, sim.AppSpec{Kind: "disk"}); !errors.Is(err, sim.ErrNoFit) {
		t.Fatalf("full cluster: err = %v, want ErrNoFit", err)
	}
	if diff := cmp.Diff(before, s.Nodes()); diff != "" {
		t.Errorf("a failed submit changed the nodes (-before +after):\n%s", diff)
	}
	// The id stays reserved: it can be submitted once room frees up.
	if err := s.Kill(second); err != nil {
		t.Fatal(err)
	}
	if err := s.Submit(third, sim.AppSpec{Kind: "disk"}); err != nil {
		t.Errorf("retry after room freed: %v", err)
	}
}

func TestDeterminism(t *testing.T) {
	w := load(t, queueA)
	type run struct {
		Samples  []sim.Sample
		Finished map[string]time.Time
		Apps     []sim.AppInfo
	}
	do := func(opts sim.Options) run {
		f := runFIFO(t, w, opts, nil)
		return run{f.s.Samples(), f.finished, f.s.Apps()}
	}
	for _, jitter := range []float64{0, 0.1} {
		a := do(sim.Options{Seed: 7, Jitter: jitter})
		b := do(sim.Options{Seed: 7, Jitter: jitter})
		if diff := cmp.Diff(a, b); diff != "" {
			t.Errorf("jitter %v: same seed, different runs (-first +second):\n%s", jitter, diff)
		}
		c := do(sim.Options{Seed: 8, Jitter: jitter})
		same := 0
		for i := range a.Apps {
			if cmp.Equal(a.Apps[i].Placement, c.Apps[i].Placement) {
				same++
			}
		}
		if same == len(a.Apps) {
			t.Errorf("jitter %v: seeds 7 and 8 placed every app identically", jitter)
		}
		if jitter > 0 && cmp.Equal(a.Finished, c.Finished) {
			t.Errorf("jitter %v: seeds 7 and 8 finished every app at the same time", jitter)
		}
	}
}

// Every step of a busy run keeps reservations within capacity, and every
// sample is a valid usage within the node's limits.
func TestConservation(t *testing.T) {
	for _, tc := range []struct {
		name string
		w    *sim.Workload
		opts sim.Options
	}{
		{"queue A", load(t, queueA), sim.Options{Seed: 1}},
		{"queue B jitter", load(t, queueB), sim.Options{Seed: 2, Jitter: 0.2}},
		{"tiny groups of 2", simtest.Tiny(t), sim.Options{Seed: 3, GroupSize: 2}},
		{"queue B interference", func() *sim.Workload {
			w := load(t, queueB)
			w.Cluster.Node.Interference = sim.Interference{DiskStreams: 0.5, CPUCache: 0.2}
			return w
		}(), sim.Options{Seed: 4, Jitter: 0.1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			steps := 0
			check := func(s *sim.Sim) {
				steps++
				for _, n := range s.Nodes() {
					if n.UsedVCores > n.VCores || n.UsedMemoryMB > n.MemoryMB || n.UsedVCores < 0 || n.UsedMemoryMB < 0 {
						t.Fatalf("at %v node %s holds %d/%d vcores, %d/%d MB", s.Now(), n.Name, n.UsedVCores, n.VCores, n.UsedMemoryMB, n.MemoryMB)
					}
				}
			}
			f := runFIFO(t, tc.w, tc.opts, check)
			lim := tc.w.Cluster.Limits()
			busy := 0
			for _, sm := range f.s.Samples() {
				u := sm.Usage
				if err := u.Validate(); err != nil {
					t.Fatalf("sample %s %v: %v", sm.Node, sm.Start, err)
				}
				const slack = 1 + 1e-9
				if u.CPU+u.IOWait > 1 || u.DiskRead+u.DiskWrite > lim.DiskRead*slack ||
					u.NetRecv > lim.NetRecv*slack || u.NetSent > lim.NetSent*slack {
					t.Fatalf("sample %s %v over capacity: %+v", sm.Node, sm.Start, u)
				}
				if u.CPU > 0 {
					busy++
				}
			}
			if steps < 20 || busy == 0 {
				t.Errorf("run too trivial: %d steps, %d busy samples", steps, busy)
			}
		})
	}
}

// Queue A under FIFO: 4 jobs at once, each node hosting exactly two
// triplets (pairwise co-location), and a makespan in the paper's range.
func TestQueueAFIFO(t *testing.T) {
	w := load(t, queueA)
	f := runFIFO(t, w, sim.Options{Seed: 1}, func(s *sim.Sim) {
		for _, n := range s.Nodes() {
			if len(n.Apps) > 2 {
				t.Fatalf("at %v node %s hosts %d apps, want pairwise co-locations only", s.Now(), n.Name, len(n.Apps))
			}
		}
	})
	if got := f.makespan(); got < 2*time.Hour || got > 150*time.Minute {
		t.Errorf("FIFO makespan = %v, want 2h-2h30 (the paper: 148.5 min)", got)
	}
	for _, a := range f.s.Apps() {
		for _, n := range a.Nodes {
			if a.Placement[n] != 3 {
				t.Fatalf("%s (%s) has %d containers on %s, want triplets", a.ID, a.Kind, a.Placement[n], n)
			}
		}
	}
}

// oneNode is a 1-node cluster with a disk-heavy kind of 3 containers.
func oneNode(tb testing.TB) *sim.Workload {
	tb.Helper()
	w, err := sim.ParseWorkload([]byte(`
cluster: {nodes: 1, node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}}
kinds:
  - name: io
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{seconds: 60, cpu: 0.5, disk_read_mbps: 25}]
  - name: cpu
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{seconds: 60, cpu: 0.9}]
queue: [{kind: io, count: 2}]
`))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func meanUsage(s *sim.Sim) goodness.Usage {
	var u goodness.Usage
	n := 0.0
	for _, sm := range s.Samples() {
		if sm.Usage.CPU > 0 {
			u.CPU += sm.Usage.CPU
			u.IOWait += sm.Usage.IOWait
			u.DiskRead += sm.Usage.DiskRead
			n++
		}
	}
	return goodness.Usage{CPU: u.CPU / n, IOWait: u.IOWait / n, DiskRead: u.DiskRead / n}
}

func TestDiskInterference(t *testing.T) {
	w := oneNode(t)
	alone := newSim(t, w, sim.Options{})
	a := alone.NewApplication()
	if err := alone.Submit(a, sim.AppSpec{Kind: "io"}); err != nil {
		t.Fatal(err)
	}
	alone.RunUntilIdle()
	soloInfo, _ := alone.App(a)
	solo := soloInfo.Finished.Sub(soloInfo.Started)
	soloU := meanUsage(alone)

	both := newSim(t, w, sim.Options{})
	ids := []string{both.NewApplication(), both.NewApplication()}
	for _, id := range ids {
		if err := both.Submit(id, sim.AppSpec{Kind: "io"}); err != nil {
			t.Fatal(err)
		}
	}
	// 6 × 25 MB/s on a 100 MB/s disk: each gets 2/3 of its demand.
	if got, _ := both.App(ids[0]); math.Abs(got.Speed-2.0/3) > 1e-9 {
		t.Errorf("speed under contention = %v, want 2/3", got.Speed)
	}
	both.RunUntilIdle()
	bothU := meanUsage(both)
	for _, id := range ids {
		inf, _ := both.App(id)
		if got, want := inf.Finished.Sub(inf.Started), 90*time.Second; got != want || got <= solo {
			t.Errorf("co-located duration = %v, want %v (alone %v)", got, want, solo)
		}
	}
	// Alone: CPU 3×0.5/4, no iowait. Together: 6×0.5×(2/3)/4 busy and the
	// starved 6×0.5×(1/3)/4 as iowait.
	want := []float64{0.375, 0, 0.5, 0.25}
	got := []float64{soloU.CPU, soloU.IOWait, bothU.CPU, bothU.IOWait}
	if diff := cmp.Diff(want, got, cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) < 1e-9 })); diff != "" {
		t.Errorf("cpu alone, iowait alone, cpu together, iowait together (-want +got):\n%s", diff)
	}
	if bothU.DiskRead != 100e6 {
		t.Errorf("disk read together = %v B/s, want the full 100 MB/s", bothU.DiskRead)
	}
}

// A CPU-heavy job takes the CPU an I/O-starved job leaves: iowait only
// counts idle CPU.
func TestIOWaitOnlyCountsIdleCPU(t *testing.T) {
	w := oneNode(t)
	w.Cluster.Node.Cores = 2
	w.Cluster.Node.DiskMBps = 50 // io alone: 75 MB/s wanted, rate 2/3
	s := newSim(t, w, sim.Options{})
	for _, k := range []string{"io", "cpu"} {
		if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	s.Advance(sim.DefaultStart.Add(10 * time.Second))
	u, ok := s.Usage("node01", sim.DefaultStart, sim.DefaultStart.Add(10*time.Second))
	if !ok {
		t.Fatal("no usage")
	}
	if u.CPU+u.IOWait > 1+1e-12 {
		t.Errorf("cpu %v + iowait %v > 1", u.CPU, u.IOWait)
	}
	if u.CPU < 0.99 {
		t.Errorf("cpu = %v, want the node saturated by the CPU job taking what the I/O job leaves", u.CPU)
	}
}

// I/O pressure shows the disk stall that busy CPUs hide from iowait, and
// only when Options.Pressure asks for it.
func TestIOPressure(t *testing.T) {
	// io wants 200 MB/s of a 100 MB/s disk: rate 1/2, stalled half the
	// time; its CPU share (0.5 core) and cpu's 1.5 fill both cores, so
	// there is no idle CPU to count as iowait.
	w, err := sim.ParseWorkload([]byte(`
cluster: {nodes: 1, node: {cores: 2, vcores: 8, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}}
kinds:
  - name: io
    containers: 2
    container: {vcores: 1, memory_mb: 512}
    phases: [{seconds: 60, cpu: 0.5, disk_read_mbps: 100}]
  - name: cpu
    containers: 2
    container: {vcores: 1, memory_mb: 512}
    phases: [{seconds: 60, cpu: 1}]
queue: [{kind: io, count: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	window := func(s *sim.Sim) goodness.Usage {
		t.Helper()
		s.Advance(sim.DefaultStart.Add(10 * time.Second))
		u, ok := s.Usage("node01", sim.DefaultStart, sim.DefaultStart.Add(10*time.Second))
		if !ok {
			t.Fatal("no usage")
		}
		if err := u.Validate(); err != nil {
			t.Fatal(err)
		}
		return u
	}
	for _, pressure := range []bool{false, true} {
		s := newSim(t, w, sim.Options{Pressure: pressure, GroupSize: 2})
		for _, k := range []string{"io", "cpu"} {
			if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
				t.Fatal(err)
			}
		}
		u := window(s)
		want := 0.0
		if pressure {
			want = 0.5
		}
		if math.Abs(u.IOPressure-want) > 1e-9 || u.IOWait != 0 || math.Abs(u.CPU-1) > 1e-9 {
			t.Errorf("pressure %t: cpu %v, iowait %v, io pressure %v; want 1, 0, %v", pressure, u.CPU, u.IOWait, u.IOPressure, want)
		}
	}
	// A job alone with nothing saturated is never stalled.
	s := newSim(t, w, sim.Options{Pressure: true})
	if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "cpu"}); err != nil {
		t.Fatal(err)
	}
	if u := window(s); u.IOPressure != 0 || u.CPU != 1 {
		t.Errorf("cpu alone: cpu %v, io pressure %v; want 1, 0", u.CPU, u.IOPressure)
	}
}

// CPU pressure says how much of its CPU demand a saturated node's groups
// did not get, which its CPU usage (1) cannot; cache interference is no
// stall.
func TestCPUPressure(t *testing.T) {
	// 2 containers × 1.5 cores on 2 cores: each gets 2/3, stalled 1/3.
	for _, tc := range []struct {
		name  string
		cache float64
		want  float64
	}{{"sharing", 0, 1.0 / 3}, {"sharing, cache interference", 0.5, 1.0 / 3}} {
		w, err := sim.ParseWorkload([]byte(fmt.Sprintf(`
cluster: {nodes: 1, node: {cores: 2, vcores: 8, memory_mb: 8192, disk_mbps: 100, net_mbps: 100, interference: {cpu_cache: %v}}}
kinds:
  - name: hot
    containers: 1
    container: {vcores: 1, memory_mb: 512}
    phases: [{seconds: 60, cpu: 1.5, disk_read_mbps: 10}]
queue: [{kind: hot, count: 2}]
`, tc.cache)))
		if err != nil {
			t.Fatal(err)
		}
		for _, pressure := range []bool{false, true} {
			s := newSim(t, w, sim.Options{Pressure: pressure, GroupSize: 1})
			for range 2 {
				if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "hot"}); err != nil {
					t.Fatal(err)
				}
			}
			s.Advance(sim.DefaultStart.Add(10 * time.Second))
			u, ok := s.Usage("node01", sim.DefaultStart, sim.DefaultStart.Add(10*time.Second))
			if !ok {
				t.Fatal("no usage")
			}
			want := 0.0
			if pressure {
				want = tc.want
			}
			if math.Abs(u.CPUPressure-want) > 1e-9 || math.Abs(u.CPU-1) > 1e-9 || u.IOPressure != 0 || u.Pressure != pressure {
				t.Errorf("%s, pressure %t: cpu %v, cpu pressure %v, io pressure %v, read %t; want 1, %v, 0, %t",
					tc.name, pressure, u.CPU, u.CPUPressure, u.IOPressure, u.Pressure, want, pressure)
			}
		}
	}
}

func TestKillFreesResources(t *testing.T) {
	s := simtest.NewTiny(t, 1)
	a, b := s.NewApplication(), s.NewApplication()
	for _, id := range []string{a, b} {
		if err := s.Submit(id, sim.AppSpec{Kind: "cpu"}); err != nil {
			t.Fatal(err)
		}
	}
	s.Advance(sim.DefaultStart.Add(5 * time.Second))
	if err := s.Kill(a); err != nil {
		t.Fatal(err)
	}
	info, _ := s.App(a)
	if info.State != sim.AppKilled || info.Alloc != (sim.Resources{}) || !info.Finished.Equal(sim.DefaultStart.Add(5*time.Second)) {
		t.Errorf("killed app: %+v", info)
	}
	var used int
	for _, n := range s.Nodes() {
		used += n.UsedVCores
		if slices.Contains(n.Apps, a) {
			t.Errorf("node %s still lists killed %s", n.Name, a)
		}
	}
	if used != 8 {
		t.Errorf("used vcores after kill = %d, want 8 (the other job)", used)
	}
	if err := s.Kill(a); err != nil {
		t.Errorf("second kill: %v, want nil (idempotent)", err)
	}
	if err := s.Kill("application_0_9999"); !errors.Is(err, sim.ErrUnknownApp) {
		t.Errorf("kill unknown: %v, want ErrUnknownApp", err)
	}
	if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "disk"}); err != nil {
		t.Errorf("submit into freed room: %v", err)
	}
	for _, ev := range s.RunUntilIdle() {
		if ev.AppID == a {
			t.Errorf("killed app reported %v", ev)
		}
	}
}

// Samples are exact interval averages; Usage over a window on interval
// boundaries is the exact average, and a window inside intervals weighs
// each sample by its overlap.
func TestUsageExact(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(`
cluster: {nodes: 1, node: {cores: 4, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}}
kinds:
  - name: k
    containers: 2
    container: {vcores: 1, memory_mb: 1024}
    phases:
      - {seconds: 15, cpu: 1, disk_write_mbps: 10}
      - {seconds: 10, cpu: 0.5, net_out_mbps: 20}
queue: [{kind: k, count: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, w, sim.Options{})
	if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "k"}); err != nil {
		t.Fatal(err)
	}
	s.RunUntilIdle() // at 25 s
	s.Advance(sim.DefaultStart.Add(30 * time.Second))
	at := func(sec float64) time.Time { return sim.DefaultStart.Add(time.Duration(sec * float64(time.Second))) }
	// Per node (2 containers, 4 cores): [0,15) cpu 0.5, write 20 MB/s;
	// [15,25) cpu 0.25, sent 40 MB/s; [25,30) idle.
	want := []goodness.Usage{
		{CPU: 0.5, DiskWrite: 20e6},
		{CPU: 0.375, DiskWrite: 10e6, NetSent: 20e6},
		{CPU: 0.125, NetSent: 20e6},
	}
	var got []goodness.Usage
	for _, sm := range s.Samples() {
		got = append(got, sm.Usage)
	}
	approx := cmp.Comparer(func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(a)) })
	if diff := cmp.Diff(want, got, approx); diff != "" {
		t.Errorf("samples (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name     string
		from, to float64
		want     goodness.Usage
	}{
		{"aligned window straddling intervals", 0, 20, goodness.Usage{CPU: (15*0.5 + 5*0.25) / 20, DiskWrite: 15 * 20e6 / 20, NetSent: 5 * 40e6 / 20}},
		{"whole run", 0, 30, goodness.Usage{CPU: (15*0.5 + 10*0.25) / 30, DiskWrite: 15 * 20e6 / 30, NetSent: 10 * 40e6 / 30}},
		{"unaligned window weighs overlaps", 5, 25, goodness.Usage{CPU: (5*0.5 + 10*0.375 + 5*0.125) / 20, DiskWrite: (5*20e6 + 10*10e6) / 20, NetSent: (10*20e6 + 5*20e6) / 20}},
		{"window beyond the samples is clipped", 20, 100, goodness.Usage{CPU: 0.125, NetSent: 20e6}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			u, ok := s.Usage("node01", at(tc.from), at(tc.to))
			if !ok {
				t.Fatal("no usage")
			}
			if diff := cmp.Diff(tc.want, u, approx); diff != "" {
				t.Errorf("Usage (-want +got):\n%s", diff)
			}
		})
	}
	for _, tc := range []struct {
		name     string
		node     string
		from, to float64
	}{{"unknown node", "node99", 0, 10}, {"empty window", "node01", 10, 10}, {"before the start", "node01", -20, -10}, {"not yet sampled", "node01", 30, 40}} {
		if _, ok := s.Usage(tc.node, at(tc.from), at(tc.to)); ok {
			t.Errorf("%s: ok = true, want false", tc.name)
		}
	}
}

func TestSamplesNameApps(t *testing.T) {
	s := simtest.NewTiny(t, 1)
	id := s.NewApplication()
	s.Advance(sim.DefaultStart.Add(5 * time.Second))
	if err := s.Submit(id, sim.AppSpec{Kind: "disk"}); err != nil {
		t.Fatal(err)
	}
	s.RunUntilIdle() // 60 s of work from 5 s: ends at 65 s
	s.Advance(sim.DefaultStart.Add(80 * time.Second))
	app, _ := s.App(id)
	for _, sm := range s.Samples() {
		on := app.Placement[sm.Node] > 0
		during := sm.Start.Before(app.Finished) && sm.End.After(app.Started)
		if got, want := slices.Contains(sm.Apps, id), on && during; got != want {
			t.Errorf("sample %s [%v, %v) lists %s: %v, want %v", sm.Node, sm.Start.Sub(sim.DefaultStart), sm.End.Sub(sim.DefaultStart), id, got, want)
		}
	}
}

func TestIdle(t *testing.T) {
	s := simtest.NewTiny(t, 1)
	if _, ok := s.NextEvent(); ok {
		t.Error("NextEvent on an idle cluster: ok = true")
	}
	if evs := s.Advance(sim.DefaultStart.Add(time.Minute)); len(evs) != 0 {
		t.Errorf("idle Advance: events %v", evs)
	}
	if got, want := len(s.Samples()), 6*4; got != want {
		t.Errorf("samples = %d, want %d (6 intervals × 4 nodes)", got, want)
	}
	if !s.Now().Equal(sim.DefaultStart.Add(time.Minute)) {
		t.Errorf("Now = %v", s.Now())
	}
	if evs := s.Advance(sim.DefaultStart); len(evs) != 0 || !s.Now().Equal(sim.DefaultStart.Add(time.Minute)) {
		t.Errorf("Advance into the past moved time to %v", s.Now())
	}
}

func TestRetention(t *testing.T) {
	w := simtest.Tiny(t)
	s := newSim(t, w, sim.Options{Retention: 30 * time.Second})
	s.Advance(sim.DefaultStart.Add(10 * time.Minute))
	sm := s.Samples()
	if len(sm) == 0 || len(sm) > 4*4 {
		t.Fatalf("kept %d samples, want at most 4 intervals × 4 nodes", len(sm))
	}
	if first := sm[0].End; first.Before(s.Now().Add(-30 * time.Second)) {
		t.Errorf("oldest kept sample ends %v, before now-retention", first)
	}
}

func TestCloneIsIndependent(t *testing.T) {
	w := load(t, queueA)
	orig := newSim(t, w, sim.Options{Seed: 3, Jitter: 0.1})
	for _, k := range []string{"kmeans", "tpch-q10", "cc"} {
		if err := orig.Submit(orig.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	orig.Advance(sim.DefaultStart.Add(5 * time.Minute))
	clone := orig.Clone()
	// What-if in the clone: another job, then run to the end.
	if err := clone.Submit(clone.NewApplication(), sim.AppSpec{Kind: "kmeans"}); err != nil {
		t.Fatal(err)
	}
	clone.RunUntilIdle()
	// The original is untouched by the clone...
	if got := len(orig.Apps()); got != 3 {
		t.Errorf("original has %d apps after the clone's submit, want 3", got)
	}
	for _, a := range orig.Apps() {
		if a.State != sim.AppRunning {
			t.Errorf("original app %s is %s after the clone ran to the end", a.ID, a.State)
		}
	}
	// ...and evolves exactly like a second clone taken at the same point.
	twin := orig.Clone()
	end := sim.DefaultStart.Add(time.Hour)
	for _, s := range []*sim.Sim{orig, twin} {
		if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "tpch-q3"}); err != nil {
			t.Fatal(err)
		}
		s.Advance(end)
	}
	if diff := cmp.Diff(orig.Apps(), twin.Apps()); diff != "" {
		t.Errorf("original and twin diverged (-orig +twin):\n%s", diff)
	}
	if diff := cmp.Diff(orig.Samples(), twin.Samples()); diff != "" {
		t.Errorf("samples diverged (-orig +twin):\n%s", diff)
	}
	if cmp.Equal(orig.Apps(), clone.Apps()) {
		t.Error("the first clone's different history left no trace")
	}
}

// A clone draws the placements and jitter its original will draw (it
// foresees them); reseeded, it draws its own, and the same seed draws the
// same again.
func TestReseedForgetsTheFuture(t *testing.T) {
	w := load(t, queueA)
	orig := newSim(t, w, sim.Options{Seed: 3, Jitter: 0.1})
	// Two jobs put a triplet on every node: the third goes to 8 of the 16
	// nodes, drawn at random.
	for _, k := range []string{"kmeans", "tpch-q3"} {
		if err := orig.Submit(orig.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	placeNext := func(s *sim.Sim) map[string]int {
		id := s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{Kind: "tpch-q10"}); err != nil {
			t.Fatal(err)
		}
		a, _ := s.App(id)
		return a.Placement
	}
	seer, fresh, again := orig.Clone(), orig.Clone(), orig.Clone()
	fresh.Reseed(42)
	again.Reseed(42)
	want := placeNext(orig)
	if diff := cmp.Diff(want, placeNext(seer)); diff != "" {
		t.Errorf("a clone placed the next job elsewhere than its original (-orig +clone):\n%s", diff)
	}
	got := placeNext(fresh)
	if cmp.Equal(want, got) {
		t.Errorf("a reseeded clone placed the next job exactly where the original did: %v", got)
	}
	if diff := cmp.Diff(got, placeNext(again)); diff != "" {
		t.Errorf("the same seed placed differently (-first +second):\n%s", diff)
	}
}

// A clone without metrics runs exactly as one with them, and reports no
// samples.
func TestDiscardMetricsChangesNoRun(t *testing.T) {
	w := load(t, queueA)
	orig := newSim(t, w, sim.Options{Seed: 5, Jitter: 0.1})
	for _, k := range []string{"kmeans", "tpch-q10", "cc"} {
		if err := orig.Submit(orig.NewApplication(), sim.AppSpec{Kind: k}); err != nil {
			t.Fatal(err)
		}
	}
	orig.Advance(sim.DefaultStart.Add(7 * time.Minute))
	keep, quiet := orig.Clone(), orig.Clone()
	quiet.DiscardMetrics()
	for _, s := range []*sim.Sim{keep, quiet} {
		if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: "tpch-q3"}); err != nil {
			t.Fatal(err)
		}
		s.RunUntilIdle()
	}
	if diff := cmp.Diff(keep.Apps(), quiet.Apps()); diff != "" {
		t.Errorf("the run without metrics differs (-with +without):\n%s", diff)
	}
	if diff := cmp.Diff(keep.Progresses(nil), quiet.Progresses(nil)); diff != "" {
		t.Errorf("progress differs (-with +without):\n%s", diff)
	}
	if n := len(quiet.Samples()); n != 0 {
		t.Errorf("%d samples after DiscardMetrics, want 0", n)
	}
	if _, ok := quiet.Usage("node01", sim.DefaultStart, quiet.Now()); ok {
		t.Error("Usage found samples after DiscardMetrics")
	}
	if len(keep.Samples()) == 0 || len(orig.Samples()) == 0 {
		t.Error("the clone with metrics, or the original, lost its samples")
	}
	ps := keep.Progresses(nil)
	for i, a := range keep.Apps() {
		if ps[i].ID != a.ID || ps[i].Progress != a.Progress || ps[i].State != a.State {
			t.Errorf("Progresses[%d] = %+v, Apps says %s %s %v", i, ps[i], a.ID, a.State, a.Progress)
		}
	}
}

func TestValidateOptionsAndSpecs(t *testing.T) {
	w := simtest.Tiny(t)
	for _, tc := range []struct {
		name string
		opts sim.Options
		path string
	}{
		{"jitter", sim.Options{Jitter: 1}, "options.jitter"},
		{"retention", sim.Options{Retention: -1}, "options.retention"},
		{"metrics interval", sim.Options{MetricsInterval: time.Microsecond}, "options.metrics_interval"},
	} {
		var fe *sim.FieldError
		if _, err := w.NewSim(tc.opts); !errors.As(err, &fe) || fe.Path != tc.path {
			t.Errorf("%s: err = %v, want a FieldError at %s", tc.name, err, tc.path)
		}
	}
	kinds := slices.Clone(w.Kinds)
	kinds[1].Phases = nil
	var fe *sim.FieldError
	if _, err := sim.New(w.Cluster, kinds, sim.Options{}); !errors.As(err, &fe) || fe.Path != "kinds[1].phases" {
		t.Errorf("New with a kind without phases: err = %v", err)
	}
	cluster := w.Cluster
	cluster.Node.Interference.CPUCache = math.Inf(1)
	if _, err := sim.New(cluster, w.Kinds, sim.Options{}); !errors.As(err, &fe) || fe.Path != "cluster.node.interference.cpu_cache" {
		t.Errorf("New with an infinite cpu_cache: err = %v", err)
	}
	w.Variability.Jitter = -0.5
	if err := w.Validate(); !errors.As(err, &fe) || fe.Path != "variability.jitter" {
		t.Errorf("Validate with a negative jitter: err = %v", err)
	}
}

// TestFitsAgreesWithSubmit: Fits predicts exactly whether Submit places a
// job, on the shipped mixed-sizes workload (containers of 1, 2 and 4
// vcores), through a FIFO run where the cluster is full most of the time.
func TestFitsAgreesWithSubmit(t *testing.T) {
	w, err := sim.LoadWorkload("../configs/workloads/mixed-sizes.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s := newSim(t, w, sim.Options{Seed: 3})
	jobs := w.Jobs(nil)
	var checked, refused int
	for next := 0; next < len(jobs); {
		for next < len(jobs) {
			for _, k := range w.Kinds {
				want := s.Fits(k.Name)
				probe := s.Clone()
				err := probe.Submit(probe.NewApplication(), sim.AppSpec{Kind: k.Name})
				if got := err == nil; got != want {
					t.Fatalf("at %v: Fits(%s) = %v, Submit: %v", s.Now(), k.Name, want, err)
				}
				checked++
			}
			if !s.Fits(jobs[next].Kind) {
				refused++
				break
			}
			if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: jobs[next].Kind}); err != nil {
				t.Fatal(err)
			}
			next++
		}
		at, ok := s.NextEvent()
		if !ok {
			break
		}
		s.Advance(at)
	}
	if refused < 10 || checked < 100 {
		t.Errorf("checked %d placements with %d refusals; the test did not exercise a full cluster", checked, refused)
	}
	if s.Fits("no-such-kind") {
		t.Error("Fits of an unknown kind")
	}
}

// A resumed job sits where it was placed, reports the progress it resumed
// at, and finishes after the rest of its solo work.
func TestResume(t *testing.T) {
	w := load(t, queueA)
	s := newSim(t, w, sim.Options{Seed: 1})
	k, _ := s.Kind("kmeans")
	id := s.NewApplication()
	place := map[string]int{}
	for i := range 8 {
		place[fmt.Sprintf("node%02d", i+1)] = 3
	}
	if err := s.Resume(id, sim.AppSpec{Kind: "kmeans"}, place, 0.6); err != nil {
		t.Fatal(err)
	}
	a, _ := s.App(id)
	if diff := cmp.Diff(place, a.Placement); diff != "" {
		t.Errorf("placement (-want +got):\n%s", diff)
	}
	if math.Abs(a.Progress-0.6) > 1e-9 {
		t.Errorf("progress %v, want 0.6", a.Progress)
	}
	s.RunUntilIdle()
	a, _ = s.App(id)
	if want := 0.4 * k.SoloDuration().Seconds(); math.Abs(a.Finished.Sub(a.Started).Seconds()-want) > 1e-6 {
		t.Errorf("ran %v, want the remaining 40 %% of its solo duration, %.1f s", a.Finished.Sub(a.Started), want)
	}
	for _, tc := range []struct {
		name  string
		place map[string]int
		done  float64
		err   error
	}{
		{"unknown node", map[string]int{"node99": 24}, 0, sim.ErrInvalid},
		{"too few containers", map[string]int{"node01": 3}, 0, sim.ErrInvalid},
		{"done", place, 1, sim.ErrInvalid},
		{"no room", map[string]int{"node01": 24}, 0, sim.ErrNoFit},
	} {
		if err := s.Resume(s.NewApplication(), sim.AppSpec{Kind: "kmeans"}, tc.place, tc.done); !errors.Is(err, tc.err) {
			t.Errorf("%s: err = %v, want %v", tc.name, err, tc.err)
		}
	}
}
