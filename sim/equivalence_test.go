package sim

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
)

// The lazy simulator against the reference (reference_test.go), event by
// event: both are driven by the same calls (FIFO admission at arrivals and
// completions, advances to the next event and to arbitrary times, kills,
// and a Clone taken mid-run, the twin going on with either copy while the
// other is played differently), and after every call the next event, the
// finish events, the applications (placements exactly), Fits of every kind
// and a window of Usage must agree; every so many calls, and at the end,
// every sample.
//
// Floating-point arithmetic differs: the reference subtracts rate·dt from
// every group at every event of the cluster, the lazy one once per rate
// change, so completion times differ in the last bits, which a slow group
// (dividing by its rate) and interference (a rate change moved by Δt moves
// a slowed group's completion by Δt·Δrate/rate) amplify to nanoseconds.
// The tolerances below are over ten times the largest differences the
// runs show (the test logs them: 7e-8 s, 1e-10, 2e-9); an event processed
// out of order changes the placements that follow, compared exactly, and
// times and rates by far more.
const (
	timeTol  = 1e-6 // seconds, of every event, start and finish time
	relTol   = 1e-6 // of progress and speed (progress moves at most about 1/s)
	usageTol = 1e-6 // of a sample's scale: 1 for fractions, the node's capacity for rates
)

// equivStats are the largest differences seen, for the log.
type equivStats struct {
	runs, events, samples int
	maxTime, maxRel       float64
	maxUsage              float64 // relative to capacity
}

func (st *equivStats) log(tb testing.TB) {
	tb.Helper()
	tb.Logf("%d runs, %d steps, %d samples compared; largest differences: time %.3g s, progress or speed %.3g (relative), usage %.3g (of capacity)",
		st.runs, st.events, st.samples, st.maxTime, st.maxRel, st.maxUsage)
}

// twin plays a Sim and its reference side by side.
type twin struct {
	tb    testing.TB
	name  string
	s     *Sim
	r     *refSim
	rng   *rand.Rand // the driver's own choices
	jobs  []JobSpec
	next  int
	kills bool
	stats *equivStats
	other *Sim // the other copy of a Clone
	// compared is the reference's time of the last compareApps: apps that
	// ended before it were compared at their end.
	compared float64
}

func (tw *twin) fatalf(format string, args ...any) {
	tw.tb.Helper()
	tw.tb.Fatalf("%s at %.6f s: %s (largest time difference so far %.3g s)", tw.name, tw.s.now, fmt.Sprintf(format, args...), tw.stats.maxTime)
}

func (tw *twin) sameTime(what string, a, b time.Time) {
	d := math.Abs(a.Sub(b).Seconds())
	tw.stats.maxTime = max(tw.stats.maxTime, d)
	if d > timeTol {
		tw.fatalf("%s: %v vs reference %v", what, a.Sub(DefaultStart), b.Sub(DefaultStart))
	}
}

func (tw *twin) sameFloat(what string, a, b float64) {
	d := math.Abs(a-b) / max(1, math.Abs(a), math.Abs(b))
	tw.stats.maxRel = max(tw.stats.maxRel, d)
	if d > relTol {
		tw.fatalf("%s: %v vs reference %v", what, a, b)
	}
}

func (tw *twin) sameUsage(what string, a, b goodness.Usage) {
	n := tw.s.cluster.Node
	disk, net := n.DiskMBps*mb, n.NetMBps*mb
	x := []float64{a.CPU, a.IOWait, a.IOPressure, a.CPUPressure, a.DiskRead, a.DiskWrite, a.NetRecv, a.NetSent}
	y := []float64{b.CPU, b.IOWait, b.IOPressure, b.CPUPressure, b.DiskRead, b.DiskWrite, b.NetRecv, b.NetSent}
	scale := []float64{1, 1, 1, 1, disk, disk, net, net}
	for i := range x {
		d := math.Abs(x[i]-y[i]) / scale[i]
		tw.stats.maxUsage = max(tw.stats.maxUsage, d)
		if d > usageTol {
			tw.fatalf("%s: %v vs reference %v", what, a, b)
		}
	}
}

// admit submits the arrived jobs in order while the head fits.
func (tw *twin) admit() {
	for tw.next < len(tw.jobs) && !tw.s.start.Add(tw.jobs[tw.next].Arrival).After(tw.s.Now()) {
		id, rid := tw.s.NewApplication(), tw.r.newApplication()
		if id != rid {
			tw.fatalf("application id %s vs reference %s", id, rid)
		}
		j := tw.jobs[tw.next]
		for _, k := range tw.s.kindList {
			if got, want := tw.s.Fits(k.Name), tw.r.fits(k.Name, 0); got != want {
				tw.fatalf("Fits(%s) = %v, reference %v", k.Name, got, want)
			}
		}
		spec := AppSpec{JobID: fmt.Sprint(j.Seq), Kind: j.Kind, Containers: j.Containers, Scale: j.Scale}
		if got, want := tw.s.FitsApp(spec), tw.r.fits(j.Kind, j.Containers); got != want {
			tw.fatalf("FitsApp(%+v) = %v, reference %v", spec, got, want)
		}
		err := tw.s.Submit(id, spec)
		rerr := tw.r.submit(rid, j.Kind, j.Containers, j.Scale)
		if (err == nil) != (rerr == nil) || (err != nil && !errors.Is(err, ErrNoFit)) {
			tw.fatalf("submit job %d: %v vs reference %v", j.Seq, err, rerr)
		}
		if err != nil {
			return
		}
		tw.next++
	}
}

// advance moves both to the next event or, one time in four, to an
// arbitrary time before it; never past the next arrival. The next events of
// the two may differ by nanoseconds: both go to the later one, so that both
// process it before they are compared.
func (tw *twin) advance() bool {
	t, ok := tw.s.NextEvent()
	rt, rok := tw.r.nextEvent()
	if ok != rok {
		tw.fatalf("NextEvent ok %v vs reference %v", ok, rok)
	}
	if ok {
		tw.sameTime("next event", t, rt)
		t = latest(t, rt)
	}
	if tw.next < len(tw.jobs) {
		if at := tw.s.start.Add(tw.jobs[tw.next].Arrival); at.After(tw.s.Now()) && (!ok || at.Before(t)) {
			t, ok = at, true
		}
	}
	if !ok {
		return false
	}
	if tw.rng.IntN(4) == 0 {
		t = tw.s.Now().Add(time.Duration(tw.rng.Float64() * float64(t.Sub(tw.s.Now())) * 0.9))
	}
	tw.sameEvents(tw.s.Advance(t), tw.r.advance(t))
	tw.stats.events++
	return true
}

func latest(a, b time.Time) time.Time {
	if a.After(b) {
		return a
	}
	return b
}

// sameEvents compares finish events. Both list the apps that finish at the
// same time in submission order; apps whose finishes differ in the last
// bits may come in either order, but not those the reference finished at
// the same float time.
func (tw *twin) sameEvents(evs, revs []Event) {
	if len(evs) != len(revs) {
		tw.fatalf("%d finish events vs reference %d: %v vs %v", len(evs), len(revs), evs, revs)
	}
	for i := range evs {
		if evs[i].AppID == revs[i].AppID {
			continue
		}
		j := slices.IndexFunc(revs, func(e Event) bool { return e.AppID == evs[i].AppID })
		if j < 0 || tw.r.byID[evs[i].AppID].finished == tw.r.byID[revs[i].AppID].finished {
			tw.fatalf("finish events %v vs reference %v", evs, revs)
		}
	}
	for i, e := range evs {
		j := slices.IndexFunc(revs, func(r Event) bool { return r.AppID == e.AppID })
		if e.Kind != revs[j].Kind {
			tw.fatalf("event %v vs reference %v", evs[i], revs[j])
		}
		tw.sameTime("finish of "+e.AppID, e.At, revs[j].At)
	}
}

// compareApps compares the applications: all of them, or those running
// or ended since the last comparison (the others cannot change).
func (tw *twin) compareApps(all bool) {
	if len(tw.s.apps) != len(tw.r.apps) {
		tw.fatalf("%d apps vs reference %d", len(tw.s.apps), len(tw.r.apps))
	}
	for _, w := range tw.r.appStates(func(a *refApp) bool { return all || a.state == AppRunning || a.finished >= tw.compared }) {
		g, ok := tw.s.App(w.ID)
		if !ok || g.State != w.State {
			tw.fatalf("app %s: %s vs reference %s", w.ID, g.State, w.State)
		}
		tw.sameTime(g.ID+" started", g.Started, tw.r.at(w.Started))
		if w.State != AppRunning {
			tw.sameTime(g.ID+" finished", g.Finished, tw.r.at(w.Finished))
		}
		placement := make([]int, len(tw.r.nodes))
		for name, c := range g.Placement {
			placement[tw.r.nodeIdx[name]] = c
		}
		if !slices.Equal(placement, w.Placement) {
			tw.fatalf("%s placement %v vs reference %v", g.ID, placement, w.Placement)
		}
		tw.sameFloat(g.ID+" progress", g.Progress, w.Progress)
		tw.sameFloat(g.ID+" speed", g.Speed, w.Speed)
	}
	tw.compared = tw.r.now
}

// compareSamples compares every retained sample.
func (tw *twin) compareSamples() {
	got, want := tw.s.Samples(), tw.r.samples()
	if len(got) != len(want) {
		tw.fatalf("%d samples vs reference %d", len(got), len(want))
	}
	apps := map[string]AppInfo{}
	for _, a := range tw.s.Apps() {
		apps[a.ID] = a
	}
	for i := range got {
		g, w := got[i], want[i]
		if g.Node != w.Node || !g.Start.Equal(w.Start) || !g.End.Equal(w.End) || !tw.sameApps(g, w, apps) {
			tw.fatalf("sample %d: %s [%v, %v) %v vs reference %s [%v, %v) %v", i, g.Node, g.Start, g.End, g.Apps, w.Node, w.Start, w.End, w.Apps)
		}
		tw.sameUsage(fmt.Sprintf("sample %s %v", g.Node, g.Start.Sub(DefaultStart)), g.Usage, w.Usage)
	}
	var runs int
	for run := range tw.s.SampleRuns() {
		runs += run.Intervals
	}
	if runs != len(got) {
		tw.fatalf("SampleRuns cover %d intervals, Samples has %d", runs, len(got))
	}
	tw.stats.samples += len(got)
}

// sameApps reports whether samples g and w list the same apps but for
// those that start or end within the time tolerance of the interval's
// start, as both may, on either side of it.
func (tw *twin) sameApps(g, w Sample, apps map[string]AppInfo) bool {
	if slices.Equal(g.Apps, w.Apps) {
		return true
	}
	near := func(t time.Time) bool { return math.Abs(t.Sub(g.Start).Seconds()) <= timeTol }
	for _, id := range append(slices.Clone(g.Apps), w.Apps...) {
		if slices.Contains(g.Apps, id) != slices.Contains(w.Apps, id) {
			if a := apps[id]; !near(a.Started) && !near(a.Finished) {
				return false
			}
		}
	}
	return true
}

// compareUsage compares Usage over a random window of a random node.
func (tw *twin) compareUsage() {
	node := tw.r.nodes[tw.rng.IntN(len(tw.r.nodes))].name
	now := tw.s.Now()
	from := now.Add(-time.Duration(tw.rng.Float64() * float64(10*time.Minute)))
	to := from.Add(time.Duration(tw.rng.Float64() * float64(11*time.Minute)))
	if tw.rng.IntN(2) == 0 { // on interval boundaries
		i := tw.s.opts.MetricsInterval
		from, to = DefaultStart.Add(from.Sub(DefaultStart).Truncate(i)), DefaultStart.Add(to.Sub(DefaultStart).Truncate(i))
	}
	u, ok := tw.s.Usage(node, from, to)
	ru, rok := tw.r.usageOf(node, from, to)
	if ok != rok {
		tw.fatalf("Usage(%s, %v, %v) ok %v vs reference %v", node, from.Sub(DefaultStart), to.Sub(DefaultStart), ok, rok)
	}
	tw.sameUsage("Usage of "+node, u, ru)
	if tw.s.cm != nil {
		tw.appsAddUp(node, from, to, u, ok)
	}
}

// appsAddUp checks that node's per-application use over [from, to) adds up
// to its Usage u (within 1e-9, relative for the disk), found when u is.
func (tw *twin) appsAddUp(node string, from, to time.Time, u goodness.Usage, ok bool) {
	us, aok := tw.s.AppUsage(node, from, to)
	if aok != ok {
		tw.fatalf("AppUsage(%s, %v, %v) ok %v, Usage ok %v", node, from.Sub(DefaultStart), to.Sub(DefaultStart), aok, ok)
	}
	var sum goodness.Usage
	for _, a := range us {
		sum.CPU += a.CPU
		sum.DiskRead += a.DiskRead
		sum.DiskWrite += a.DiskWrite
	}
	far := func(a, b float64) bool { return math.Abs(a-b) > 1e-9*max(1, math.Abs(b)) }
	if far(sum.CPU, u.CPU) || far(sum.DiskRead, u.DiskRead) || far(sum.DiskWrite, u.DiskWrite) {
		tw.fatalf("AppUsage(%s, %v, %v) adds up to %+v, Usage is %+v", node, from.Sub(DefaultStart), to.Sub(DefaultStart), sum, u)
	}
}

// kill kills a random running application in both.
func (tw *twin) kill() {
	var running []string
	for _, a := range tw.r.apps {
		if a.state == AppRunning {
			running = append(running, a.id)
		}
	}
	if len(running) == 0 {
		return
	}
	id := running[tw.rng.IntN(len(running))]
	if err := tw.s.Kill(id); err != nil {
		tw.fatalf("kill %s: %v", id, err)
	}
	tw.r.kill(id)
}

// diverge plays the other copy of a Clone differently, in step with the
// twin (with its own random source: it diverges anyway): it must not touch
// the copy the twin plays. The twin goes on with the clone or the
// original, at random, so that state they wrongly share shows either way.
func (tw *twin) diverge() {
	o := tw.other
	if o.rng.IntN(3) == 0 {
		k := o.kindList[o.rng.IntN(len(o.kindList))].Name
		_ = o.Submit(o.NewApplication(), AppSpec{Kind: k})
	}
	if n := len(o.apps); n > 0 && o.rng.IntN(5) == 0 {
		_ = o.Kill(o.apps[o.rng.IntN(n)].id)
	}
	o.Advance(o.Now().Add(time.Duration(o.rng.IntN(120)) * time.Second))
	o.Usage(o.nodes[0].name, o.Now().Add(-time.Minute), o.Now())
}

// play runs the twin to the end, with a Clone at a random step.
func (tw *twin) play() {
	cloneAt := tw.rng.IntN(200)
	for step := 0; ; step++ {
		if tw.kills && tw.rng.IntN(40) == 0 {
			tw.kill()
		}
		tw.admit()
		if step == cloneAt {
			// Go on with the copy or the original; the other diverges.
			tw.other = tw.s.Clone()
			if tw.rng.IntN(2) == 0 {
				tw.s, tw.other = tw.other, tw.s
			}
		}
		if tw.other != nil && step < cloneAt+30 {
			tw.diverge()
		}
		if !tw.advance() {
			break
		}
		tw.compareApps(false)
		tw.compareUsage()
		if step%500 == 0 {
			tw.compareSamples()
		}
	}
	tw.compareApps(true)
	if tw.other != nil { // its last writes must not show in the twin's samples
		tw.other.RunUntilIdle()
		tw.other.Samples()
	}
	tw.compareSamples()
	if tw.next != len(tw.jobs) {
		tw.fatalf("%d of %d jobs admitted", tw.next, len(tw.jobs))
	}
	tw.stats.runs++
}

// equivCase is one run of a workload against the reference.
type equivCase struct {
	name  string
	w     *Workload
	opts  Options
	kills bool
}

func (c equivCase) play(tb testing.TB, st *equivStats) {
	tb.Helper()
	s, err := c.w.NewSim(c.opts)
	if err != nil {
		tb.Fatalf("%s: %v", c.name, err)
	}
	seed := c.opts.Seed
	tw := &twin{tb: tb, name: c.name, s: s, r: newRef(s), rng: rand.New(rand.NewPCG(seed, 99)),
		jobs: c.w.Jobs(rand.New(rand.NewPCG(seed, 0))), kills: c.kills, stats: st}
	tw.play()
}

// shippedCases are every shipped workload as shipped (seeds 1 to 3), then
// seed 1 with kills, with jitter, with interference at noisy.yaml's
// amounts and stronger, and with retention, pressure and kills.
func shippedCases(tb testing.TB) []equivCase {
	files, err := filepath.Glob("../configs/workloads/*.yaml")
	if err != nil || len(files) < 8 {
		tb.Fatalf("shipped workloads: %v %v", files, err)
	}
	variants := []struct {
		name  string
		seeds uint64
		kills bool
		edit  func(*Workload, *Options)
	}{
		{"as shipped", 3, false, func(*Workload, *Options) {}},
		{"kills", 1, true, func(*Workload, *Options) {}},
		{"jitter", 1, false, func(_ *Workload, o *Options) { o.Jitter = 0.2 }},
		{"interference", 1, false, func(w *Workload, _ *Options) {
			w.Cluster.Node.Interference = Interference{DiskStreams: 0.15, CPUCache: 0.05}
		}},
		{"strong interference", 1, false, func(w *Workload, _ *Options) {
			w.Cluster.Node.Interference = Interference{DiskStreams: 0.4, CPUCache: 0.3}
		}},
		{"retention", 1, true, func(_ *Workload, o *Options) { o.Retention = 7 * time.Minute; o.Pressure = true }},
	}
	var out []equivCase
	for _, f := range files {
		for _, v := range variants {
			for seed := range v.seeds {
				w, err := LoadWorkload(f)
				if err != nil {
					tb.Fatal(err)
				}
				c := equivCase{name: fmt.Sprintf("%s/%s/seed %d", filepath.Base(f), v.name, seed+1), w: w,
					opts: Options{Seed: seed + 1}, kills: v.kills}
				v.edit(c.w, &c.opts)
				out = append(out, c)
			}
		}
	}
	return out
}

// TestEquivalenceShipped plays shippedCases.
func TestEquivalenceShipped(t *testing.T) {
	st := &equivStats{}
	for _, c := range shippedCases(t) {
		c.play(t, st)
	}
	st.log(t)
}

// TestEquivalenceRandom plays random small workloads: clusters of 1 to 6
// nodes, 1 to 4 kinds with setup and teardown phases, batch, Poisson and
// timed arrivals, group sizes 1 to 3, metrics intervals 1 to 20 s; jitter,
// interference (up to 1 each), pressure, retention and kills on or off;
// ContainerMetrics on for even seeds.
func TestEquivalenceRandom(t *testing.T) {
	st := &equivStats{}
	n := 1000
	if testing.Short() {
		n = 100
	}
	for seed := range uint64(n) {
		rng := rand.New(rand.NewPCG(seed, 1234))
		w := randomWorkload(rng)
		if err := w.Validate(); err != nil {
			t.Fatalf("seed %d: random workload: %v", seed, err)
		}
		opts := Options{Seed: seed, GroupSize: 1 + rng.IntN(3), Pressure: rng.IntN(2) == 0,
			MetricsInterval: time.Duration(1+rng.IntN(20)) * time.Second, ContainerMetrics: seed%2 == 0}
		if rng.IntN(2) == 0 {
			opts.Jitter = rng.Float64() * 0.5
		}
		if rng.IntN(3) == 0 {
			opts.Retention = time.Duration(rng.IntN(300)) * time.Second
		}
		c := equivCase{name: fmt.Sprintf("random seed %d", seed), w: w, opts: opts, kills: rng.IntN(2) == 0}
		c.play(t, st)
	}
	st.log(t)
}

func randomWorkload(rng *rand.Rand) *Workload {
	pick := func(xs ...float64) float64 { return xs[rng.IntN(len(xs))] }
	node := NodeSpec{Cores: pick(2, 3, 4, 8), MemoryMB: 8192, DiskMBps: pick(100, 150, 300), NetMBps: pick(100, 125)}
	node.VCores = int(node.Cores) + rng.IntN(int(node.Cores)+1)
	if rng.IntN(2) == 0 {
		node.Interference = Interference{DiskStreams: rng.Float64(), CPUCache: rng.Float64()}
	}
	w := &Workload{Cluster: ClusterSpec{Nodes: 1 + rng.IntN(6), Node: node}}
	phases := func(n int) []Phase {
		var ps []Phase
		for range n {
			ps = append(ps, Phase{Seconds: pick(1, 5, 10, 15, 30, 60, 7.3, 42.5), CPU: rng.Float64() * min(node.Cores, 2),
				DiskReadMBps: rng.Float64() * node.DiskMBps / 2 * float64(rng.IntN(2)), DiskWriteMBps: rng.Float64() * node.DiskMBps / 2 * float64(rng.IntN(2)),
				NetInMBps: rng.Float64() * node.NetMBps * float64(rng.IntN(2)), NetOutMBps: rng.Float64() * node.NetMBps * float64(rng.IntN(2))})
		}
		return ps
	}
	for i := range 1 + rng.IntN(4) {
		c := ContainerSpec{VCores: 1 + rng.IntN(2), MemoryMB: 1024}
		fit := w.Cluster.Nodes * min(node.VCores/c.VCores, int(node.MemoryMB/c.MemoryMB))
		k := KindSpec{Name: fmt.Sprintf("k%d", i), Containers: 1 + rng.IntN(fit), Container: c, Repeat: 1 + rng.IntN(3), Phases: phases(1 + rng.IntN(3))}
		if rng.IntN(3) == 0 {
			k.Setup, k.Teardown = phases(1), phases(rng.IntN(2))
		}
		w.Kinds = append(w.Kinds, k)
	}
	for range 1 + rng.IntN(4) {
		q := QueueEntry{Kind: w.Kinds[rng.IntN(len(w.Kinds))].Name, Count: 1 + rng.IntN(4)}
		if rng.IntN(4) == 0 {
			q.At, q.Every, q.Bursts = time.Duration(rng.IntN(600))*time.Second, time.Duration(1+rng.IntN(900))*time.Second, 1+rng.IntN(3)
		}
		w.Queue = append(w.Queue, q)
	}
	if rng.IntN(2) == 0 {
		w.Arrivals = Arrivals{Mode: ArrivalsPoisson, RatePerHour: pick(10, 60, 200)}
	}
	return w
}
