package simcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

func simFactory(tb testing.TB, nodes int) func(uint64, time.Time) (*sim.Sim, error) {
	tb.Helper()
	wl, err := sim.ParseWorkload([]byte(simtest.ThreeKindsYAML(nodes)))
	if err != nil {
		tb.Fatal(err)
	}
	return func(seed uint64, start time.Time) (*sim.Sim, error) {
		return wl.NewSim(sim.Options{Seed: seed, Start: start})
	}
}

var simStart = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

// TestSimStateReplay drives a durable simulator through reservations,
// submissions (one never submitted), a kill and a checkpoint, then rebuilds
// it from the directory: the same applications in the same states, and the
// same next application id.
func TestSimStateReplay(t *testing.T) {
	dir := t.TempDir()
	newSim := simFactory(t, 3)
	st, s, err := Open(dir, "sum1", 42, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	if st.Seed != 42 || !s.Now().Equal(simStart) {
		t.Fatalf("new state: seed %d now %v", st.Seed, s.Now())
	}
	c := New(DirectExec(s), st)
	ctx := context.Background()
	var apps []string
	for i, k := range []string{"cpu", "disk", "net", "cpu"} {
		app, err := c.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		apps = append(apps, app)
		if i == 3 {
			break // reserved, never submitted (a crash before submit)
		}
		if err := c.Submit(ctx, app, queue.Job{ID: fmt.Sprintf("JOB%d", i), Kind: k, User: "ana", Queue: "q"}); err != nil {
			t.Fatal(err)
		}
		s.Advance(s.Now().Add(37 * time.Second))
	}
	if err := c.Kill(ctx, apps[1]); err != nil {
		t.Fatal(err)
	}
	s.Advance(s.Now().Add(100 * time.Second)) // the first job ends
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}

	st2, s2, err := Open(dir, "sum1", 7 /* ignored: the stored seed wins */, time.Time{}, newSim)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.Seed != 42 || st2.Replayed != 8 {
		t.Errorf("reopened: seed %d, replayed %d; want 42 and 8 entries", st2.Seed, st2.Replayed)
	}
	if !s2.Now().Equal(s.Now()) {
		t.Errorf("virtual time %v after replay, want the checkpoint %v", s2.Now(), s.Now())
	}
	ignore := cmpopts.IgnoreFields(sim.AppInfo{}, "Progress", "Speed")
	if diff := cmp.Diff(s.Apps(), s2.Apps(), ignore, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
		t.Errorf("replayed applications (-original +replayed):\n%s", diff)
	}
	// The reserved but unsubmitted id can still be submitted, once.
	c2 := New(DirectExec(s2), st2)
	j := queue.Job{ID: "JOB3", Kind: "cpu", User: "ana"}
	if err := c2.Submit(ctx, apps[3], j); err != nil {
		t.Fatalf("submit the reserved id after replay: %v", err)
	}
	if err := c2.Submit(ctx, apps[3], j); err != nil {
		t.Errorf("a repeated submit of the same job is not an error: %v", err)
	}
	if err := c2.Submit(ctx, apps[3], queue.Job{ID: "OTHER", Kind: "cpu"}); !errors.Is(err, cluster.ErrStaleAppID) {
		t.Errorf("another job under a used id: %v, want cluster.ErrStaleAppID", err)
	}
	if got, want := s2.NewApplication(), s.NewApplication(); got != want {
		t.Errorf("next id after replay %s, want %s", got, want)
	}
}

func TestSimStateTornAndForeign(t *testing.T) {
	dir := t.TempDir()
	newSim := simFactory(t, 1)
	st, s, err := Open(dir, "sum1", 1, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	c := New(DirectExec(s), st)
	if _, err := c.Reserve(context.Background()); err != nil {
		t.Fatal(err)
	}
	st.Close()
	logPath := filepath.Join(dir, "submissions.jsonl")
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"op":"submit","app_id":"appl`) // a crash mid-append
	f.Close()

	st2, s2, err := Open(dir, "sum1", 1, simStart, newSim)
	if err != nil {
		t.Fatalf("torn last line: %v", err)
	}
	if st2.Replayed != 1 {
		t.Errorf("replayed %d entries, want 1", st2.Replayed)
	}
	c2 := New(DirectExec(s2), st2)
	if _, err := c2.Reserve(context.Background()); err != nil {
		t.Fatal(err)
	}
	st2.Close()
	entries, err := ReadLog(logPath)
	if err != nil || len(entries) != 2 {
		t.Fatalf("log after the torn line: %d entries, %v; want 2 parseable", len(entries), err)
	}

	if _, _, err := Open(dir, "sum2", 1, simStart, newSim); !errors.Is(err, errSimState) {
		t.Errorf("another workload: %v, want errSimState", err)
	}
	if err := os.WriteFile(logPath, []byte("{\"op\":\"reserve\"}\nnot json\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, _, err := Open(dir, "sum1", 1, simStart, newSim); !errors.Is(err, errSimState) {
		t.Errorf("corrupt log: %v, want errSimState", err)
	}
}
