package simcluster

import (
	"context"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// TestSubmissionWaitsForRoom: a job that does not fit the free room is
// accepted and waits, as YARN keeps it ACCEPTED: App says accepted, State
// does not list it, and the first State after room frees starts it (and
// logs it then); a waiting job can be killed.
func TestSubmissionWaitsForRoom(t *testing.T) {
	wl, err := sim.ParseWorkload([]byte(refusalWorkload))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	st, s, err := Open(dir, "sum", 1, simStart, func(seed uint64, start time.Time) (*sim.Sim, error) {
		return wl.NewSim(sim.Options{Seed: seed, Start: start})
	})
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	c := New(DirectExec(s), st)
	ctx := context.Background()
	submit := func(id, kind string) (string, error) {
		t.Helper()
		app, err := c.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return app, c.Submit(ctx, app, queue.Job{ID: id, Kind: kind, User: "ana"})
	}
	phase := func(app string) cluster.Phase {
		t.Helper()
		a, err := c.App(ctx, app)
		if err != nil {
			t.Fatal(err)
		}
		return a.Phase
	}
	if _, err := submit("A", "small"); err != nil {
		t.Fatal(err)
	}
	huge, err := submit("B", "huge")
	if err != nil {
		t.Fatalf("a job larger than the free room: %v, want it accepted", err)
	}
	if got := phase(huge); got != cluster.PhaseAccepted {
		t.Errorf("the waiting job's phase %s, want accepted", got)
	}
	if err := c.Submit(ctx, huge, queue.Job{ID: "B", Kind: "huge"}); err != nil {
		t.Errorf("submitting the waiting job again: %v, want success", err)
	}
	if err := c.Submit(ctx, huge, queue.Job{ID: "X", Kind: "huge"}); !errors.Is(err, cluster.ErrStaleAppID) {
		t.Errorf("another job under the waiting id: %v, want cluster.ErrStaleAppID", err)
	}
	state, err := c.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(state.Apps) != 1 {
		t.Errorf("while B waits, State lists %d applications, want A alone", len(state.Apps))
	}
	s.Advance(s.Now().Add(time.Hour)) // A ends
	at := s.Now()
	if _, err := c.State(ctx); err != nil {
		t.Fatal(err)
	}
	if got := phase(huge); got != cluster.PhaseRunning {
		t.Errorf("once A ended, B is %s, want running", got)
	}
	entries, err := ReadLog(filepath.Join(dir, "submissions.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	last := entries[len(entries)-1]
	if last.Op != OpSubmit || last.AppID != huge || !last.At.Equal(at) {
		t.Errorf("last log entry %+v, want B's submission at %v", last, at)
	}

	waiting, err := submit("C", "huge") // B holds the room now
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Kill(ctx, waiting); err != nil {
		t.Fatalf("kill a waiting job: %v", err)
	}
	if _, err := c.App(ctx, waiting); !errors.Is(err, cluster.ErrUnknownApp) {
		t.Errorf("a killed waiting job: %v, want cluster.ErrUnknownApp (it never started)", err)
	}
}

// TestStateMatchesTheSimulator: the running applications State reports
// (partly from its cache) are what the simulator says of them, as jobs
// start and end.
func TestStateMatchesTheSimulator(t *testing.T) {
	s, err := simFactory(t, 4)(3, simStart)
	if err != nil {
		t.Fatal(err)
	}
	c := New(DirectExec(s), nil)
	ctx := context.Background()
	for round := range 6 {
		for _, k := range []string{"cpu", "disk"} {
			app, err := c.Reserve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := c.Submit(ctx, app, queue.Job{ID: app, Kind: k, User: "ana"}); err != nil {
				t.Fatal(err)
			}
		}
		got, err := c.State(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var want []cluster.App
		for _, a := range s.Apps() {
			if a.State != sim.AppRunning {
				continue
			}
			want = append(want, cluster.App{ID: a.ID, JobID: a.JobID, Kind: a.Kind, User: a.User, Queue: a.Queue,
				Alloc: pipeline.Capacity{MemoryMB: a.Alloc.MemoryMB, VCores: a.Alloc.VCores}, Nodes: a.Nodes,
				Placement: a.Placement, Starts: a.Started})
		}
		if diff := cmp.Diff(want, got.Apps, cmpopts.EquateEmpty()); diff != "" {
			t.Fatalf("round %d: running applications (-simulator +State):\n%s", round, diff)
		}
		s.Advance(s.Now().Add(90 * time.Second))
	}
}
