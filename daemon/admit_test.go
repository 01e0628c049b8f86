package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
)

// TestContextWeights: a running job weighs the share of the slots the next
// job's containers can take beside it, after empty nodes took one group
// each; when the empty nodes hold the whole job, nothing weighs.
func TestContextWeights(t *testing.T) {
	capa := queue.Capacity{MemoryMB: 6144, VCores: 6}
	node := func(name string, usedVC int64, usedMB int64, apps ...string) NodeState {
		return NodeState{Name: name, Capacity: capa,
			Free: queue.Capacity{MemoryMB: capa.MemoryMB - usedMB, VCores: capa.VCores - usedVC}, Apps: apps}
	}
	app := func(id string, nodes ...string) AppState {
		return AppState{ID: id, JobID: id, Kind: "k" + id, Nodes: nodes}
	}
	job := func(containers int, vcores int, mb int64) []queue.Job {
		return []queue.Job{{ID: "j", Kind: "new", Resources: queue.Resources{Containers: containers, VCores: vcores, MemoryMB: mb}}}
	}
	tests := map[string]struct {
		st      ClusterState
		pending []queue.Job
		want    []float64
	}{
		"nothing running": {ClusterState{Nodes: []NodeState{node("n1", 0, 0)}}, job(3, 1, 1024), []float64{}},
		"no pending job": {ClusterState{Nodes: []NodeState{node("n1", 3, 3072, "a")}, Apps: []AppState{app("a", "n1")}},
			nil, []float64{0}},
		"by free slots": {ClusterState{
			Nodes: []NodeState{node("n1", 3, 3072, "a"), node("n2", 4, 4096, "b"), node("n3", 6, 6144, "c")},
			Apps:  []AppState{app("a", "n1"), app("b", "n2"), app("c", "n3")},
		}, job(24, 1, 1024), []float64{0.6, 0.4, 0}},
		"memory binds": {ClusterState{
			Nodes: []NodeState{node("n1", 3, 5120, "a"), node("n2", 3, 3072, "b")},
			Apps:  []AppState{app("a", "n1"), app("b", "n2")},
		}, job(24, 1, 1024), []float64{0.25, 0.75}},
		"in units of the head's containers": {ClusterState{
			Nodes: []NodeState{node("n1", 2, 2048, "a"), node("n2", 4, 4096, "b")},
			Apps:  []AppState{app("a", "n1"), app("b", "n2")},
		}, job(24, 2, 1024), []float64{2.0 / 3, 1.0 / 3}}, // 2 vcores a container: n1 has 2 slots, n2 one

		"empty nodes hold the job": {ClusterState{
			Nodes: []NodeState{node("n1", 3, 3072, "a"), node("n2", 0, 0), node("n3", 0, 0)},
			Apps:  []AppState{app("a", "n1")},
		}, job(6, 1, 1024), []float64{0}},
		"the rest lands beside running jobs": {ClusterState{
			Nodes: []NodeState{node("n1", 3, 3072, "a"), node("n2", 0, 0)},
			Apps:  []AppState{app("a", "n1")},
		}, job(6, 1, 1024), []float64{0.5}},
		"two nodes, one app": {ClusterState{
			Nodes: []NodeState{node("n1", 3, 3072, "a", "b"), node("n2", 3, 3072, "a")},
			Apps:  []AppState{app("a", "n1", "n2"), app("b", "n1")},
		}, job(24, 1, 1024), []float64{1, 0.5}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got := contextWeights(tc.st, tc.pending)
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("weights (-want +got):\n%s", diff)
			}
		})
	}
}
