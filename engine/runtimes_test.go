package engine

import (
	"math"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// A job credited at half speed for the two minutes the ticks saw of its
// four-minute run did two minutes of solo work in those two, so four in
// all: its kind runs two alone. Later jobs move the estimate by α.
func TestRuntimesFromPredictedSpeed(t *testing.T) {
	r := newRuntimes()
	at := time.Unix(0, 0)
	r.credit("j1", "k", 0.5, 60, at.Add(time.Minute))
	r.credit("j1", "k", 0.5, 60, at.Add(2*time.Minute))
	if done, end, ok := r.done("j1"); !ok || done != 60 || !end.Equal(at.Add(2*time.Minute)) {
		t.Errorf("done %v at %v (%t), want 60 s at 2 min", done, end, ok)
	}
	if _, ok := r.solo("k"); ok {
		t.Error("a solo runtime before any job finished")
	}
	r.finish("j1", 4*time.Minute)
	if s, ok := r.solo("k"); !ok || s != 2*time.Minute {
		t.Errorf("solo %v (%t), want 2m: 60 s credited over 120 s tracked of a 240 s run", s, ok)
	}
	r.credit("j2", "k", 1, 100, at)
	r.finish("j2", 100*time.Second)
	if s, _ := r.solo("k"); math.Abs(s.Seconds()-(120+runtimeAlpha*(100-120))) > 1e-9 {
		t.Errorf("solo %v, want the EWMA 114 s", s)
	}
	r.credit("j3", "k", 1, 100, at)
	r.drop("j3")
	r.finish("j3", time.Hour)
	if s, _ := r.solo("k"); math.Abs(s.Seconds()-114) > 1e-9 {
		t.Errorf("a dropped job moved the estimate to %v", s)
	}
}

// The planner's model of a snapshot: colocd's running jobs where they run,
// with the share of their solo work the ticks credited (and since then at
// their pace); kinds with the profiles and the solo runtimes (the runtime
// history where no job finished since the start); the window in order.
func TestPlannerModel(t *testing.T) {
	rt := newRuntimes()
	t0 := time.Unix(1000, 0)
	rt.credit("old", "a", 1, 100, t0)
	rt.finish("old", 100*time.Second) // a: 100 s alone
	rt.credit("r1", "a", 0.5, 40, t0) // 20 s of its 100 done at t0
	profs := profile.Fixed{"a": {0.2}, "b": {0.1}}
	mp := &modelPlanner{profiles: profs, runtimes: rt}
	snap := &pipeline.Snapshot{
		Now: t0.Add(10 * time.Second),
		Nodes: []pipeline.NodeFree{
			{Name: "n1", Capacity: pipeline.Capacity{VCores: 6, MemoryMB: 6144}, Jobs: []pipeline.NodeJob{{JobID: "r1", Kind: "a", Containers: 3}, {JobID: "", Kind: "foreign", Containers: 2}}},
			{Name: "n2", Capacity: pipeline.Capacity{VCores: 6, MemoryMB: 6144}, Jobs: []pipeline.NodeJob{{JobID: "r1", Kind: "a", Containers: 3}}},
		},
		Running: []pipeline.Running{{JobID: "r1", Kind: "a", Alloc: pipeline.Capacity{VCores: 6, MemoryMB: 6144}, Started: t0.Add(-time.Minute)}},
		Pending: []queue.Job{
			{ID: "p1", Kind: "b", Resources: queue.Resources{Containers: 4, VCores: 1, MemoryMB: 1024}},
			{ID: "p2", Kind: "a", Resources: queue.Resources{Containers: 6, VCores: 1, MemoryMB: 1024}},
		},
		History: map[string]queue.KindHistory{"b": {Kind: "b", Runs: 2, EWMARuntime: 5 * time.Minute}},
	}
	m, idx, err := mp.model(snap, []string{"p2", "p1"})
	if err != nil {
		t.Fatal(err)
	}
	if len(m.Running) != 1 || m.Running[0].Containers != 6 || m.Running[0].Placement[0] != 3 || m.Running[0].Placement[1] != 3 ||
		m.Running[0].VCores != 1 || m.Running[0].MemoryMB != 1024 {
		t.Errorf("running %+v, want r1: 3 + 3 containers of 1 vcore, 1024 MB (the foreign app not modelled)", m.Running)
	}
	if want := (20 + 0.5*10) / 100.0; math.Abs(m.Running[0].Done-want) > 1e-9 {
		t.Errorf("done %v, want %v: 20 s credited, 10 s since at half speed, of 100", m.Running[0].Done, want)
	}
	if m.Kinds["a"].Solo != 100*time.Second || m.Kinds["b"].Solo != 5*time.Minute || m.Kinds["a"].Demand[profile.CPU] != 0.2 {
		t.Errorf("kinds %+v", m.Kinds)
	}
	if len(m.Pending) != 2 || m.Pending[0].ID != "p1" || idx[0] != 1 || idx[1] != 0 {
		t.Errorf("pending %+v, candidates %v", m.Pending, idx)
	}
	if _, _, err := mp.model(snap, []string{"p9"}); err == nil {
		t.Error("a candidate outside the window was accepted")
	}
}
