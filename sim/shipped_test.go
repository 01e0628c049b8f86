package sim_test

import (
	"errors"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/colocd/colocd/sim"
)

// shippedRun is one FIFO replay of a shipped workload.
type shippedRun struct {
	s    *sim.Sim
	jobs []sim.JobSpec
	// maxApps is the most applications one node held throughout a metrics
	// interval (Sample.Apps also lists the apps that ended or started
	// during it, so it counts three at every hand-over between two jobs).
	maxApps int
}

// shippedChecks are the shapes the workloads beside the paper queues
// promise in their headers, keyed by file name.
var shippedChecks = map[string]func(t *testing.T, w *sim.Workload, r shippedRun){
	"poisson-mixed.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		if w.Arrivals.Mode != sim.ArrivalsPoisson || !(w.Arrivals.RatePerHour > 0) {
			t.Errorf("arrivals = %+v, want poisson with a rate", w.Arrivals)
		}
		if last := r.jobs[len(r.jobs)-1].Arrival; last < time.Hour {
			t.Errorf("last arrival at %v, want the arrivals spread over the run (> 1h)", last)
		}
		if run := longestRun(r.jobs); run > 2 {
			t.Errorf("%d jobs of one kind in a row, want the kinds interleaved (at most 2)", run)
		}
	},
	"eight-kinds.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		if n := len(distinctKinds(r.jobs)); n < 8 || n != len(w.Kinds) {
			t.Errorf("the queue uses %d of %d kinds, want all of at least 8", n, len(w.Kinds))
		}
		for i, q := range w.Queue {
			if q.Count < 2 || q.Count > 4 || (i > 0 && w.Queue[i-1].Kind == q.Kind) {
				t.Errorf("queue[%d] = %+v, want blocks of 2-4 jobs of one kind, the next block another kind", i, q)
			}
		}
	},
	"mixed-sizes.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		sizes := map[int]bool{}
		for _, k := range w.Kinds {
			sizes[k.Container.VCores] = true
		}
		if !sizes[1] || !sizes[2] || !sizes[4] {
			t.Errorf("container vcores %v, want 1, 2 and 4", sizes)
		}
		if r.maxApps < 3 {
			t.Errorf("at most %d applications on a node through a metrics interval, want >= 3", r.maxApps)
		}
	},
	"new-kinds.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		half := len(r.jobs) / 2
		old, later := distinctKinds(r.jobs[:half]), distinctKinds(r.jobs[half:])
		var unseen []string
		for _, k := range later {
			if !slices.Contains(old, k) {
				unseen = append(unseen, k)
			}
		}
		if len(old) != 3 || len(unseen) != 3 || len(later) != 6 {
			t.Errorf("first half kinds %v, second half %v (unseen before: %v); want 3, then those 3 and 3 new", old, later, unseen)
		}
	},
	"hetero-sizes.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		types := map[sim.NodeSpec]bool{}
		for _, g := range w.Cluster.NodeGroups() {
			types[g.Node] = true
		}
		if len(types) < 2 {
			t.Errorf("%d node types, want a heterogeneous cluster (>= 2)", len(types))
		}
		containers, scales := map[string]map[int]bool{}, map[string]map[float64]bool{}
		for _, j := range r.jobs {
			if containers[j.Kind] == nil {
				containers[j.Kind], scales[j.Kind] = map[int]bool{}, map[float64]bool{}
			}
			containers[j.Kind][j.Containers] = true
			scales[j.Kind][j.Scale] = true
		}
		for _, k := range w.Kinds {
			if len(containers[k.Name]) < 3 || len(scales[k.Name]) < 3 {
				t.Errorf("kind %s: container counts %v, scales %v; want >= 3 of each within the kind", k.Name, containers[k.Name], scales[k.Name])
			}
		}
		// The scales reach the jobs: within a kind, runtimes differ.
		runtime := map[string][2]time.Duration{}
		for _, a := range r.s.Apps() {
			d := a.Finished.Sub(a.Started)
			mm, ok := runtime[a.Kind]
			if !ok {
				mm = [2]time.Duration{d, d}
			}
			runtime[a.Kind] = [2]time.Duration{min(mm[0], d), max(mm[1], d)}
		}
		for k, mm := range runtime {
			if mm[1] < 3*mm[0] {
				t.Errorf("kind %s: runtimes %v to %v, want the longest >= 3x the shortest (scales 0.5-2.5)", k, mm[0], mm[1])
			}
		}
	},
	"noisy.yaml": func(t *testing.T, w *sim.Workload, r shippedRun) {
		inf := w.Cluster.Node.Interference
		if w.Variability.Jitter <= 0 || inf.DiskStreams <= 0 || inf.CPUCache <= 0 {
			t.Errorf("jitter %v, interference %+v: want all three > 0", w.Variability.Jitter, inf)
		}
	},
}

// Every shipped workload parses, every kind's job alone takes its solo
// duration (nothing saturates), and a FIFO replay honouring the arrivals
// finishes every job within the benchmark's 1-4 simulated hours; the
// workloads of shippedChecks also keep the shape their headers promise.
func TestShippedWorkloadsRun(t *testing.T) {
	files, err := filepath.Glob("../configs/workloads/*.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for name := range shippedChecks {
		if !slices.Contains(files, "../configs/workloads/"+name) {
			t.Errorf("%s is not in configs/workloads", name)
		}
	}
	for _, path := range files {
		name := filepath.Base(path)
		t.Run(name, func(t *testing.T) {
			w := load(t, path)
			for _, k := range w.Kinds {
				if got, want := soloRun(t, w, k.Name), k.SoloDuration(); got != want {
					t.Errorf("%s alone took %v, want its solo duration %v (something saturates)", k.Name, got, want)
				}
			}
			const seed = 1
			r := replayFIFO(t, w, seed)
			finished := 0
			for _, a := range r.s.Apps() {
				if a.State == sim.AppFinished {
					finished++
				}
			}
			if finished != len(r.jobs) {
				t.Errorf("seed %d: %d of %d jobs finished", seed, finished, len(r.jobs))
			}
			if m := r.s.Now().Sub(sim.DefaultStart); m < time.Hour || m > 4*time.Hour {
				t.Errorf("seed %d: FIFO makespan %v, want 1h-4h", seed, m)
			}
			if check := shippedChecks[name]; check != nil {
				check(t, w, r)
			}
		})
	}
}

// soloRun is how long one job of kind takes alone on w's empty cluster,
// without jitter.
func soloRun(tb testing.TB, w *sim.Workload, kind string) time.Duration {
	tb.Helper()
	exact := *w
	exact.Variability.Jitter = 0
	s := newSim(tb, &exact, sim.Options{Seed: 1})
	id := s.NewApplication()
	if err := s.Submit(id, sim.AppSpec{Kind: kind}); err != nil {
		tb.Fatal(err)
	}
	s.RunUntilIdle()
	a, _ := s.App(id)
	return a.Finished.Sub(a.Started)
}

// replayFIFO plays w's queue under FIFO with its arrivals (drawn from
// seed): at every arrival and completion, submit the jobs that have arrived
// in queue order while the head fits; advance to the next completion or
// arrival, whichever comes first.
func replayFIFO(tb testing.TB, w *sim.Workload, seed uint64) shippedRun {
	tb.Helper()
	s := newSim(tb, w, sim.Options{Seed: seed})
	jobs := w.Jobs(rand.New(rand.NewPCG(seed, 0)))
	start := s.Now()
	next, id := 0, ""
	for {
		for next < len(jobs) && !start.Add(jobs[next].Arrival).After(s.Now()) {
			if id == "" {
				id = s.NewApplication()
			}
			err := s.Submit(id, sim.AppSpec{JobID: strconv.Itoa(jobs[next].Seq), Kind: jobs[next].Kind,
				Containers: jobs[next].Containers, Scale: jobs[next].Scale})
			if errors.Is(err, sim.ErrNoFit) {
				break
			}
			if err != nil {
				tb.Fatalf("seed %d: job %d: %v", seed, next, err)
			}
			next, id = next+1, ""
		}
		t, running := s.NextEvent()
		if next < len(jobs) {
			switch at := start.Add(jobs[next].Arrival); {
			case at.After(s.Now()) && (!running || at.Before(t)):
				t, running = at, true
			case !running:
				tb.Fatalf("seed %d: job %d (%s) does not fit the idle cluster", seed, next, jobs[next].Kind)
			}
		}
		if !running {
			break
		}
		s.Advance(t)
	}
	r := shippedRun{s: s, jobs: jobs}
	apps := map[string]sim.AppInfo{}
	for _, a := range s.Apps() {
		apps[a.ID] = a
	}
	for _, sm := range s.Samples() {
		n := 0
		for _, id := range sm.Apps {
			if a := apps[id]; !a.Started.After(sm.Start) && !a.Finished.Before(sm.End) {
				n++
			}
		}
		r.maxApps = max(r.maxApps, n)
	}
	return r
}

// distinctKinds lists the kinds of jobs in order of first appearance.
func distinctKinds(jobs []sim.JobSpec) []string {
	var out []string
	for _, j := range jobs {
		if !slices.Contains(out, j.Kind) {
			out = append(out, j.Kind)
		}
	}
	return out
}

// longestRun is the most consecutive jobs of one kind.
func longestRun(jobs []sim.JobSpec) int {
	best, run := 0, 0
	for i, j := range jobs {
		if i > 0 && jobs[i-1].Kind == j.Kind {
			run++
		} else {
			run = 1
		}
		best = max(best, run)
	}
	return best
}
