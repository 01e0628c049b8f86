package engine

import (
	"context"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// TestContextWeights: a running job weighs the share of the slots the next
// job's containers can take beside it, after empty nodes took one group
// each; when the empty nodes hold the whole job, nothing weighs.
func TestContextWeights(t *testing.T) {
	capa := pipeline.Capacity{MemoryMB: 6144, VCores: 6}
	node := func(name string, usedVC int64, usedMB int64, apps ...string) cluster.Node {
		return cluster.Node{Name: name, Capacity: capa,
			Free: pipeline.Capacity{MemoryMB: capa.MemoryMB - usedMB, VCores: capa.VCores - usedVC}, Apps: apps}
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

// countingCluster counts State calls and can hold submissions back: with
// hold set, Submit succeeds without reaching the cluster, as a YARN
// application stays ACCEPTED, holding nothing, until it is allocated.
type countingCluster struct {
	Cluster
	states int
	hold   bool
}

func (c *countingCluster) State(ctx context.Context) (cluster.State, error) {
	c.states++
	return c.Cluster.State(ctx)
}

func (c *countingCluster) Prepare(j *queue.Job) error { return c.Cluster.(JobPreparer).Prepare(j) }

func (c *countingCluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	if c.hold {
		return nil
	}
	return c.Cluster.Submit(ctx, appID, j)
}

func countingHarness(t *testing.T, nodes int) (*harness, *countingCluster) {
	t.Helper()
	cc := &countingCluster{}
	h := newHarness(t, harnessOpts{nodes: nodes, cluster: func(sc *simcluster.Cluster) Cluster {
		cc.Cluster = sc
		return cc
	}})
	return h, cc
}

// TestAdmitPassReadsTheClusterOnce: a pass that admits several jobs reads
// the cluster once, and its local picture keeps it from admitting more
// than fits (every admitted job runs at once: none waits for room).
func TestAdmitPassReadsTheClusterOnce(t *testing.T) {
	h, cc := countingHarness(t, 2) // 12 containers: four jobs of 3
	ids := h.submit("cpu", "disk", "net", "cpu", "disk", "net")
	rep := h.admit()
	if len(rep.Admitted) != 4 || rep.Stopped != "nothing fits" {
		t.Fatalf("admitted %v (%s), want 4 jobs, then nothing fits", rep.Admitted, rep.Stopped)
	}
	if cc.states != 1 {
		t.Errorf("the pass read the cluster %d times, want once", cc.states)
	}
	for _, id := range rep.Admitted {
		j, err := h.store.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if a, ok := h.s.App(j.AppID); !ok || a.JobID != id {
			t.Errorf("job %s: application %s not running (%+v): the pass admitted more than fits", id, j.AppID, a)
		}
	}
	if got := h.state(ids[5]); got != queue.StatePending {
		t.Errorf("the sixth job is %s, want pending", got)
	}
}

// TestLoopStepAdmitsOnItsSyncState: a loop step reads the cluster once
// for its sync and admission pass, and once more to see what it admitted.
func TestLoopStepAdmitsOnItsSyncState(t *testing.T) {
	h, cc := countingHarness(t, 2)
	l := hourlyLoop(t, h.e)
	h.submit("cpu", "disk")
	it, err := l.Step(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(it.Admit.Admitted) != 2 || cc.states != 2 {
		t.Errorf("a step that admitted %d jobs read the cluster %d times, want 2 jobs and 2 reads", len(it.Admit.Admitted), cc.states)
	}
	cc.states = 0
	if it, err = l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if len(it.Admit.Admitted) != 0 || cc.states != 1 {
		t.Errorf("a step that admitted %d jobs read the cluster %d times, want none and 1 read", len(it.Admit.Admitted), cc.states)
	}
}

// TestAdmittedButNotHolding: a job an earlier pass admitted whose
// application holds nothing yet (YARN: ACCEPTED) is in the next pass's
// picture as it will run: among the running jobs with its whole
// allocation, off the free room, and on the nodes its containers are
// predicted to take.
func TestAdmittedButNotHolding(t *testing.T) {
	h, cc := countingHarness(t, 2)
	cc.hold = true
	id := h.submit("cpu")[0]
	if rep := h.admit(); len(rep.Admitted) != 1 {
		t.Fatalf("admitted %v, want the job", rep.Admitted)
	}
	snap := h.passSnapshot()
	wantRunning := []pipeline.Running{{JobID: id, Kind: "cpu", User: "ana", Queue: "default", Alloc: pipeline.Capacity{MemoryMB: 3072, VCores: 3}}}
	if diff := cmp.Diff(wantRunning, snap.Running); diff != "" {
		t.Errorf("running (-want +got):\n%s", diff)
	}
	if want := (pipeline.Capacity{MemoryMB: 2*6144 - 3072, VCores: 12 - 3}); snap.Free != want {
		t.Errorf("free %+v, want %+v", snap.Free, want)
	}
	var on []pipeline.NodeJob
	for _, n := range snap.Nodes {
		on = append(on, n.Jobs...)
	}
	if diff := cmp.Diff([]pipeline.NodeJob{{JobID: id, Kind: "cpu", Containers: 3}}, on); diff != "" {
		t.Errorf("jobs on the nodes (-want +got):\n%s", diff)
	}
}

// TestArrive: an arriving job takes a group on each empty node first,
// then groups where the placement rule expects its containers, never
// beyond a node's room; the picture's free room, applications and nodes
// follow.
func TestArrive(t *testing.T) {
	capa := pipeline.Capacity{MemoryMB: 6144, VCores: 6}
	st := &cluster.State{
		Capacity: pipeline.Capacity{MemoryMB: 3 * 6144, VCores: 18},
		Free:     pipeline.Capacity{MemoryMB: 3*6144 - 3072, VCores: 15},
		Nodes: []cluster.Node{
			{Name: "n1", Capacity: capa, Free: pipeline.Capacity{MemoryMB: 3072, VCores: 3}, Apps: []string{"app-a"}},
			{Name: "n2", Capacity: capa, Free: capa},
			{Name: "n3", Capacity: capa, Free: capa},
		},
		Apps: []cluster.App{{ID: "app-a", JobID: "A", Kind: "disk", Alloc: pipeline.Capacity{MemoryMB: 3072, VCores: 3},
			Nodes: []string{"n1"}, Placement: map[string]int{"n1": 3}}},
	}
	v := &passView{st: st}
	v.arrive(queue.Job{ID: "B", Kind: "cpu", User: "ana", Queue: "q",
		Resources: queue.Resources{Containers: 9, MemoryMB: 1024, VCores: 1}}, "app-b")
	want := cluster.App{ID: "app-b", JobID: "B", Kind: "cpu", User: "ana", Queue: "q",
		Alloc: pipeline.Capacity{MemoryMB: 9216, VCores: 9}, Nodes: []string{"n1", "n2", "n3"},
		Placement: map[string]int{"n1": 3, "n2": 3, "n3": 3}}
	if diff := cmp.Diff(want, st.Apps[1]); diff != "" {
		t.Errorf("the arriving application (-want +got):\n%s", diff)
	}
	if want := (pipeline.Capacity{MemoryMB: 3*6144 - 3072 - 9216, VCores: 6}); st.Free != want {
		t.Errorf("free %+v, want %+v", st.Free, want)
	}
	for _, n := range st.Nodes {
		if n.Free.VCores != 3*boolInt(n.Name != "n1") || !slices.Contains(n.Apps, "app-b") {
			t.Errorf("node %s: free %+v, apps %v; want 3 of its containers on it", n.Name, n.Free, n.Apps)
		}
	}
}

func boolInt(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// TestSnapshotCountsPending: a decision's snapshot carries the window and
// how many jobs are pending in all, which the tail stage compares to know
// whether the window holds the whole queue.
func TestSnapshotCountsPending(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.submit("cpu", "disk", "net", "cpu", "disk", "net", "cpu", "disk", "net", "cpu")
	snap := h.passSnapshot()
	if len(snap.Pending) != pipeline.DefaultWindow || snap.PendingTotal != 10 {
		t.Errorf("window of %d jobs, %d pending in all; want %d and 10", len(snap.Pending), snap.PendingTotal, pipeline.DefaultWindow)
	}
}
