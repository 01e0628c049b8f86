package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
)

// TestContextWeights: a running job weighs the share of the slots the next
// job's containers can take beside it, after empty nodes took one group
// each; when the empty nodes hold the whole job, nothing weighs.
func TestContextWeights(t *testing.T) {
	capa := queue.Capacity{MemoryMB: 6144, VCores: 6}
	node := func(name string, usedVC int64, usedMB int64, apps ...string) cluster.Node {
		return cluster.Node{Name: name, Capacity: capa,
			Free: queue.Capacity{MemoryMB: capa.MemoryMB - usedMB, VCores: capa.VCores - usedVC}, Apps: apps}
	}
	app := func(id string, nodes ...string) cluster.App {
		return cluster.App{ID: id, JobID: id, Kind: "k" + id, Nodes: nodes}
	}
	job := func(containers int, vcores int, mb int64) []queue.Job {
		return []queue.Job{{ID: "j", Kind: "new", Resources: queue.Resources{Containers: containers, VCores: vcores, MemoryMB: mb}}}
	}
	tests := map[string]struct {
		st      cluster.State
		pending []queue.Job
		want    []float64
	}{
		"nothing running": {cluster.State{Nodes: []cluster.Node{node("n1", 0, 0)}}, job(3, 1, 1024), []float64{}},
		"no pending job": {cluster.State{Nodes: []cluster.Node{node("n1", 3, 3072, "a")}, Apps: []cluster.App{app("a", "n1")}},
			nil, []float64{0}},
		"by free slots": {cluster.State{
			Nodes: []cluster.Node{node("n1", 3, 3072, "a"), node("n2", 4, 4096, "b"), node("n3", 6, 6144, "c")},
			Apps:  []cluster.App{app("a", "n1"), app("b", "n2"), app("c", "n3")},
		}, job(24, 1, 1024), []float64{0.6, 0.4, 0}},
		"memory binds": {cluster.State{
			Nodes: []cluster.Node{node("n1", 3, 5120, "a"), node("n2", 3, 3072, "b")},
			Apps:  []cluster.App{app("a", "n1"), app("b", "n2")},
		}, job(24, 1, 1024), []float64{0.25, 0.75}},
		"in units of the head's containers": {cluster.State{
			Nodes: []cluster.Node{node("n1", 2, 2048, "a"), node("n2", 4, 4096, "b")},
			Apps:  []cluster.App{app("a", "n1"), app("b", "n2")},
		}, job(24, 2, 1024), []float64{2.0 / 3, 1.0 / 3}}, // 2 vcores a container: n1 has 2 slots, n2 one

		"empty nodes hold the job": {cluster.State{
			Nodes: []cluster.Node{node("n1", 3, 3072, "a"), node("n2", 0, 0), node("n3", 0, 0)},
			Apps:  []cluster.App{app("a", "n1")},
		}, job(6, 1, 1024), []float64{0}},
		"the rest lands beside running jobs": {cluster.State{
			Nodes: []cluster.Node{node("n1", 3, 3072, "a"), node("n2", 0, 0)},
			Apps:  []cluster.App{app("a", "n1")},
		}, job(6, 1, 1024), []float64{0.5}},
		"two nodes, one app": {cluster.State{
			Nodes: []cluster.Node{node("n1", 3, 3072, "a", "b"), node("n2", 3, 3072, "a")},
			Apps:  []cluster.App{app("a", "n1", "n2"), app("b", "n1")},
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
