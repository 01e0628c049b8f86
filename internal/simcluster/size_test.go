package simcluster

import (
	"context"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// sizedWorkload has a big node group and a small one, and one kind of 6
// containers that takes 100 s.
const sizedWorkload = `
cluster:
  groups:
    - {name: big, nodes: 1, node: {cores: 8, vcores: 8, memory_mb: 16384, disk_mbps: 400, net_mbps: 200}}
    - {name: small, nodes: 2, node: {cores: 4, vcores: 4, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}}
kinds:
  - name: k
    containers: 6
    container: {vcores: 1, memory_mb: 1024}
    phases:
      - {seconds: 100, cpu: 0.5, disk_read_mbps: 10}
queue:
  - {kind: k, count: 1}
`

// sizedCluster is the cluster of sizedWorkload, seed 1, stepped directly.
func sizedCluster(t *testing.T) *Cluster {
	t.Helper()
	wl, err := sim.ParseWorkload([]byte(sizedWorkload))
	if err != nil {
		t.Fatal(err)
	}
	s, err := wl.NewSim(sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	return New(DirectExec(s), nil)
}

// Prepare accepts another container count of the kind's container size and
// a {"scale": x} submission spec, and refuses what the simulator cannot run.
func TestPrepareJobSizes(t *testing.T) {
	c := sizedCluster(t)
	for _, tc := range []struct {
		name string
		job  queue.Job
		ok   bool
	}{
		{"defaults", queue.Job{Kind: "k"}, true},
		{"another count", queue.Job{Kind: "k", Resources: queue.Resources{Containers: 9, MemoryMB: 1024, VCores: 1}}, true},
		{"a scale", queue.Job{Kind: "k", Submit: json.RawMessage(`{"scale": 2.5}`)}, true},
		{"another container size", queue.Job{Kind: "k", Resources: queue.Resources{Containers: 6, MemoryMB: 2048, VCores: 1}}, false},
		{"zero containers", queue.Job{Kind: "k", Resources: queue.Resources{MemoryMB: 1024, VCores: 1}}, false},
		{"unknown spec key", queue.Job{Kind: "k", Submit: json.RawMessage(`{"scale": 2, "input": "x"}`)}, false},
		{"scale out of bounds", queue.Job{Kind: "k", Submit: json.RawMessage(`{"scale": -1}`)}, false},
		{"spec not an object", queue.Job{Kind: "k", Submit: json.RawMessage(`[1]`)}, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			j := tc.job
			err := c.Prepare(&j)
			var fe *queue.FieldError
			switch {
			case tc.ok && err != nil:
				t.Errorf("Prepare: %v, want it accepted", err)
			case !tc.ok && !errors.As(err, &fe):
				t.Errorf("Prepare: %v, want a *queue.FieldError", err)
			}
		})
	}
}

// A sized job runs as submitted: its containers, its work times its scale;
// and the log replays it so.
func TestSubmitJobSizesReplay(t *testing.T) {
	wl, err := sim.ParseWorkload([]byte(sizedWorkload))
	if err != nil {
		t.Fatal(err)
	}
	newSim := func(seed uint64, start time.Time) (*sim.Sim, error) {
		return wl.NewSim(sim.Options{Seed: seed, Start: start})
	}
	dir := t.TempDir()
	st, s, err := Open(dir, "sum", 1, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	c := New(DirectExec(s), st)
	ctx := context.Background()
	j := queue.Job{ID: "J", Kind: "k", Submit: json.RawMessage(`{"scale":2.5}`)}
	j.Resources = queue.Resources{Containers: 9, MemoryMB: 1024, VCores: 1}
	if err := c.Prepare(&j); err != nil {
		t.Fatal(err)
	}
	app, err := c.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Submit(ctx, app, j); err != nil {
		t.Fatal(err)
	}
	s.RunUntilIdle()
	a, _ := s.App(app)
	if a.Containers != 9 || a.Finished.Sub(a.Started) != 250*time.Second {
		t.Errorf("containers %d, runtime %v; want 9 and 250s (2.5 × 100 s, nothing saturated)", a.Containers, a.Finished.Sub(a.Started))
	}
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	st2, s2, err := Open(dir, "sum", 1, time.Time{}, newSim)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	b, _ := s2.App(app)
	if b.Containers != 9 || !b.Finished.Equal(a.Finished) {
		t.Errorf("replayed: containers %d, finished %v; want 9, %v", b.Containers, b.Finished, a.Finished)
	}
}

// The reference node is the first group's; NodeLimits lists the nodes
// whose disk or network differ from it, and nothing for one node type.
func TestNodeLimits(t *testing.T) {
	c := sizedCluster(t)
	if got := c.ReferenceVCores(); got != 8 {
		t.Errorf("ReferenceVCores = %d, want the big group's 8", got)
	}
	small := goodness.Limits{DiskRead: 100e6, DiskWrite: 100e6, NetRecv: 100e6, NetSent: 100e6}
	got := c.NodeLimits()
	if len(got) != 2 || got["node02"] != small || got["node03"] != small {
		t.Errorf("NodeLimits = %v, want node02 and node03 at %+v", got, small)
	}
	one, err := simFactory(t, 3)(1, simStart)
	if err != nil {
		t.Fatal(err)
	}
	if got := New(DirectExec(one), nil).NodeLimits(); len(got) != 0 {
		t.Errorf("NodeLimits of one node type = %v, want none", got)
	}
}
