package sim_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim"
)

func shippedWorkloads(tb testing.TB) map[string]*sim.Workload {
	tb.Helper()
	files, err := filepath.Glob("../configs/workloads/*.yaml")
	if err != nil || len(files) < 8 {
		tb.Fatalf("shipped workloads: %v %v", files, err)
	}
	out := map[string]*sim.Workload{}
	for _, f := range files {
		if w := load(tb, f); len(w.Cluster.Groups) == 0 { // Scaled refuses node groups
			out[filepath.Base(f)] = w
		}
	}
	return out
}

// multiplicity is how many times an entry's count is submitted.
func multiplicity(w *sim.Workload, q sim.QueueEntry) int {
	if q.Timed {
		return max(q.Bursts, 1)
	}
	return max(w.Repeat, 1)
}

// TestScaledIdentity: scaling a workload to its own nodes and jobs changes
// nothing, and scaling leaves the original alone.
func TestScaledIdentity(t *testing.T) {
	for name, w := range shippedWorkloads(t) {
		orig := load(t, "../configs/workloads/"+name)
		got, err := w.Scaled(w.Cluster.Nodes, len(w.Jobs(nil)))
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(w, got); diff != "" {
			t.Errorf("%s: Scaled to itself (-want +got):\n%s", name, diff)
		}
		if _, err := w.Scaled(10*w.Cluster.Nodes, 5*len(w.Jobs(nil))); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if diff := cmp.Diff(orig, w); diff != "" {
			t.Errorf("%s: Scaled changed the original (-before +after):\n%s", name, diff)
		}
	}
}

// TestScaledTotals checks the rules on shipped shapes: multiplicities of 1
// (eight-kinds), repeat 3 (paper-queue-a), a timed entry of 6 bursts
// (bursty-tenants), Poisson arrivals (poisson-mixed), and a cluster too
// small for the jobs (containers capped).
func TestScaledTotals(t *testing.T) {
	ws := shippedWorkloads(t)
	for _, tc := range []struct {
		file        string
		nodes, jobs int
		wantJobs    int
		factor      int // containers multiplied by
	}{
		{"eight-kinds.yaml", 10000, 2000, 2000, 22}, // sqrt(500) = 22.4
		{"eight-kinds.yaml", 1000, 200, 200, 7},     // sqrt(50) = 7.07
		{"eight-kinds.yaml", 80, 27, 27, 2},         // one job per entry
		{"eight-kinds.yaml", 29, 82, 82, 1},         // sqrt(1.45) = 1.2
		{"paper-queue-a.yaml", 160, 500, 498, 3},    // repeat 3: multiples of 3
		{"paper-queue-a.yaml", 16, 31, 30, 1},
		{"bursty-tenants.yaml", 120, 400, 400, 3},
		{"poisson-mixed.yaml", 1200, 700, 700, 10},
	} {
		w := ws[tc.file]
		got, err := w.Scaled(tc.nodes, tc.jobs)
		if err != nil {
			t.Fatalf("%s to %d:%d: %v", tc.file, tc.nodes, tc.jobs, err)
		}
		if n := len(got.Jobs(nil)); n != tc.wantJobs {
			t.Errorf("%s to %d:%d: %d jobs, want %d", tc.file, tc.nodes, tc.jobs, n, tc.wantJobs)
		}
		if got.Cluster.Nodes != tc.nodes {
			t.Errorf("%s to %d:%d: %d nodes", tc.file, tc.nodes, tc.jobs, got.Cluster.Nodes)
		}
		for i, k := range got.Kinds {
			if want := w.Kinds[i].Containers * tc.factor; k.Containers != want {
				t.Errorf("%s to %d:%d: %s has %d containers, want %d", tc.file, tc.nodes, tc.jobs, k.Name, k.Containers, want)
			}
		}
		if w.Arrivals.Mode == sim.ArrivalsPoisson {
			want := w.Arrivals.RatePerHour * float64(tc.wantJobs) / float64(len(w.Jobs(nil)))
			if r := got.Arrivals.RatePerHour; math.Abs(r-want) > 1e-9*want {
				t.Errorf("%s to %d:%d: %v jobs per hour, want %v", tc.file, tc.nodes, tc.jobs, r, want)
			}
		}
	}
	// Two nodes hold 12 containers of 2 vcores: every kind is capped.
	got, err := ws["eight-kinds.yaml"].Scaled(2, 27)
	if err != nil {
		t.Fatal(err)
	}
	for _, k := range got.Kinds {
		if k.Containers != 12 {
			t.Errorf("eight-kinds on 2 nodes: %s has %d containers, want 12 (what 2 nodes hold)", k.Name, k.Containers)
		}
	}
}

// TestScaledProperties scales every shipped workload to random sizes: the
// result is valid, keeps its entries' kinds and tenants in order with at
// least one job each, and its total is within one entry's multiplicity of
// the target (exact when all multiplicities are 1).
func TestScaledProperties(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 7))
	for name, w := range shippedWorkloads(t) {
		floor, maxMult := 0, 1
		for _, q := range w.Queue {
			floor += multiplicity(w, q)
			maxMult = max(maxMult, multiplicity(w, q))
		}
		for range 50 {
			nodes, jobs := 1+rng.IntN(sim.MaxNodes), floor+rng.IntN(5000)
			got, err := w.Scaled(nodes, jobs)
			if err != nil {
				t.Fatalf("%s to %d:%d: %v", name, nodes, jobs, err)
			}
			if err := got.Validate(); err != nil {
				t.Fatalf("%s to %d:%d: %v", name, nodes, jobs, err)
			}
			total := len(got.Jobs(nil))
			if d := total - jobs; d < 0 && -d >= maxMult || d > 0 || maxMult == 1 && d != 0 {
				t.Errorf("%s to %d:%d: %d jobs", name, nodes, jobs, total)
			}
			for i, q := range got.Queue {
				o := w.Queue[i]
				if q.Count < 1 || q.Kind != o.Kind || q.User != o.User || q.Queue != o.Queue || q.At != o.At || q.Every != o.Every || q.Bursts != o.Bursts {
					t.Fatalf("%s to %d:%d: entry %d %+v from %+v", name, nodes, jobs, i, q, o)
				}
			}
		}
	}
}

func TestScaledRefusals(t *testing.T) {
	w := shippedWorkloads(t)["eight-kinds.yaml"] // 27 entries
	for _, tc := range []struct {
		name        string
		nodes, jobs int
		path        string
	}{
		{"no nodes", 0, 100, "cluster.nodes"},
		{"too many nodes", sim.MaxNodes + 1, 100, "cluster.nodes"},
		{"no jobs", 20, 0, "queue"},
		{"fewer jobs than entries", 20, 26, "queue"},
		{"too many jobs", 20, sim.MaxJobs + 1, "queue"},
	} {
		_, err := w.Scaled(tc.nodes, tc.jobs)
		var fe *sim.FieldError
		if !errors.As(err, &fe) || fe.Path != tc.path || !errors.Is(err, sim.ErrInvalid) {
			t.Errorf("%s: Scaled(%d, %d) = %v, want a FieldError at %s", tc.name, tc.nodes, tc.jobs, err, tc.path)
		}
	}
}
