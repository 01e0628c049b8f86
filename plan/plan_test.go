package plan_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/profile"
)

// model: four 6-vcore nodes; a CPU-bound job runs a triplet on each (0.3
// cores a container: 0.9 of a node); pending, oldest first, another
// CPU-bound job and a disk-bound one, the same size.
func model() *plan.Model {
	cpu := profile.Vector{profile.CPU: 0.3, profile.DiskRead: 0.02}
	disk := profile.Vector{profile.CPU: 0.03, profile.DiskRead: 0.25, profile.DiskWrite: 0.05}
	m := &plan.Model{
		Kinds: map[string]plan.Kind{
			"cpu":  {Demand: cpu, Std: profile.Vector{profile.CPU: 0.01}, Solo: 10 * time.Minute},
			"disk": {Demand: disk, Std: profile.Vector{profile.DiskRead: 0.01}, Solo: 10 * time.Minute},
		},
		Running: []plan.Running{{Job: plan.Job{ID: "r1", Kind: "cpu", Containers: 12, VCores: 1, MemoryMB: 1024},
			Placement: map[int]int{0: 3, 1: 3, 2: 3, 3: 3}, Done: 0.2}},
		Pending: []plan.Job{
			{ID: "p1", Kind: "cpu", Containers: 12, VCores: 1, MemoryMB: 1024},
			{ID: "p2", Kind: "disk", Containers: 12, VCores: 1, MemoryMB: 1024},
		},
	}
	for range 4 {
		m.Nodes = append(m.Nodes, plan.Node{VCores: 6, MemoryMB: 6144})
	}
	return m
}

func mean(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s / float64(len(vs))
}

// Beside a CPU-bound job, the disk-bound candidate finishes the jobs
// sooner (flow, drain) and does more work over a short horizon (work), in
// every sampled future; the same seed gives the same outcomes.
func TestEvaluatePrefersTheComplement(t *testing.T) {
	for _, obj := range []plan.Objective{plan.ObjectiveFlow, plan.ObjectiveDrain} {
		cfg := plan.Config{Samples: 3, Horizon: time.Hour, Objective: obj}
		got, err := plan.Evaluate(model(), []int{0, 1}, cfg, 7)
		if err != nil {
			t.Fatal(err)
		}
		for s := range got[0].Values {
			if !(got[1].Values[s] > got[0].Values[s]) {
				t.Errorf("%s, sample %d: disk %v not better than cpu %v", obj, s, got[1].Values[s], got[0].Values[s])
			}
		}
		if !got[0].Fits || !got[1].Fits {
			t.Errorf("%s: %+v, want both to fit", obj, got)
		}
		again, _ := plan.Evaluate(model(), []int{0, 1}, cfg, 7)
		if diff := cmp.Diff(got, again); diff != "" {
			t.Errorf("%s: the same seed gave other outcomes (-first +second):\n%s", obj, diff)
		}
	}
	// Work: the complement does (nearly) its solo work beside the CPU job;
	// two CPU jobs share 1.8 cores of demand on 1.
	cfg := plan.Config{Samples: 2, Horizon: 5 * time.Minute, Objective: plan.ObjectiveWork}
	got, _ := plan.Evaluate(model(), []int{0, 1}, cfg, 1)
	if r := mean(got[1].Values) / mean(got[0].Values); r < 1.5 {
		t.Errorf("work done, disk over cpu candidate: %.2f, want ≥ 1.5 (cpu jobs at 1/1.8 speed)", r)
	}
}

func TestEvaluateRefuses(t *testing.T) {
	m := model()
	k := m.Kinds["disk"]
	k.Solo = 0
	m.Kinds["disk"] = k
	if _, err := plan.Evaluate(m, []int{0}, plan.Config{}, 1); !errors.Is(err, plan.ErrUncertain) {
		t.Errorf("a kind without a runtime: err = %v, want ErrUncertain", err)
	}
	for name, cfg := range map[string]plan.Config{
		"samples": {Samples: 65}, "horizon": {Horizon: -time.Second}, "objective": {Objective: "speed"},
		"max_uncertainty": {MaxUncertainty: -1},
	} {
		if _, err := plan.Evaluate(model(), []int{0}, cfg, 1); !errors.Is(err, plan.ErrInvalid) {
			t.Errorf("%s: err = %v, want ErrInvalid", name, err)
		}
	}
	if _, err := plan.Evaluate(model(), []int{5}, plan.Config{}, 1); !errors.Is(err, plan.ErrInvalid) {
		t.Errorf("a candidate out of range: err = %v", err)
	}
}

// MaxUncertainty: a candidate whose demand's σ is 0.6 of its mean is
// too uncertain under a bound of 0.5, not under 1 or no bound; a
// candidate known well is rolled out under the same bound.
func TestEvaluateMaxUncertainty(t *testing.T) {
	m := model()
	k := m.Kinds["disk"]
	k.Std = profile.Vector{profile.CPU: 0.6 * 0.03, profile.DiskRead: 0.6 * 0.25, profile.DiskWrite: 0.6 * 0.05}
	m.Kinds["disk"] = k
	if _, err := plan.Evaluate(m, []int{0, 1}, plan.Config{Samples: 2, MaxUncertainty: 0.5}, 1); !errors.Is(err, plan.ErrUncertain) || !strings.Contains(err.Error(), `"disk"`) {
		t.Errorf("bound 0.5: err = %v, want ErrUncertain naming disk", err)
	}
	for _, bound := range []float64{0, 1} {
		if _, err := plan.Evaluate(m, []int{0, 1}, plan.Config{Samples: 2, MaxUncertainty: bound}, 1); err != nil {
			t.Errorf("bound %v: %v", bound, err)
		}
	}
	if _, err := plan.Evaluate(m, []int{0}, plan.Config{Samples: 2, MaxUncertainty: 0.5}, 1); err != nil {
		t.Errorf("bound 0.5, only the well-known cpu candidate: %v", err)
	}
}

// Past MaxNodes the nodes with the most room are simulated, with the
// jobs running there; a job partly on the others runs as the part that
// is simulated.
func TestEvaluateBoundsNodes(t *testing.T) {
	m := model()
	for range 12 { // twelve empty nodes
		m.Nodes = append(m.Nodes, plan.Node{VCores: 6, MemoryMB: 6144})
	}
	got, err := plan.Evaluate(m, []int{0, 1}, plan.Config{Samples: 2, MaxNodes: 6, Horizon: time.Hour, Objective: plan.ObjectiveWork}, 3)
	if err != nil {
		t.Fatal(err)
	}
	// On six empty nodes neither candidate meets the running job: the same
	// work done either way.
	if d := mean(got[1].Values) - mean(got[0].Values); d < -1e-6 || d > 1e-6 {
		t.Errorf("on empty nodes the candidates differ by %v, want 0: %+v", d, got)
	}
}

// On nodes of twice the reference's CPU (Node.Size), the two CPU-bound
// jobs of model() fit together (1.8 cores of demand on 2): the CPU
// candidate's work over a short horizon is what the disk candidate's is,
// where on reference nodes it is far below it.
func TestEvaluateNodeSizes(t *testing.T) {
	m := model()
	for i := range m.Nodes {
		m.Nodes[i].Size = profile.Vector{2, 2, 1, 1, 1, 1}
	}
	cfg := plan.Config{Samples: 2, Horizon: 5 * time.Minute, Objective: plan.ObjectiveWork}
	got, err := plan.Evaluate(m, []int{0, 1}, cfg, 1)
	if err != nil {
		t.Fatal(err)
	}
	if r := mean(got[1].Values) / mean(got[0].Values); r > 1.05 {
		t.Errorf("work done on 2x nodes, disk over cpu candidate: %.2f, want ≈ 1 (nothing saturates)", r)
	}
	// Mixed sizes: half the nodes large; the model is a cluster of node
	// groups and still evaluates both candidates.
	m = model()
	m.Nodes[2].Size = profile.Vector{2, 2, 2, 2, 10, 10}
	m.Nodes[3].Size = m.Nodes[2].Size
	if got, err = plan.Evaluate(m, []int{0, 1}, cfg, 1); err != nil || !got[0].Fits || !got[1].Fits {
		t.Errorf("mixed sizes: %+v, %v; want both evaluated", got, err)
	}
}
