package simcluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// faultyLog is the sim log's file with a disk that fills up: once budget
// (>= 0) bytes are used, a write stores what still fits and fails with
// ENOSPC, as write(2) does on a full file system. failCut makes Truncate
// fail too.
type faultyLog struct {
	*os.File
	budget  int
	failCut bool
}

func (f *faultyLog) Write(b []byte) (int, error) {
	if f.budget >= 0 && len(b) > f.budget {
		n, _ := f.File.Write(b[:f.budget])
		f.budget -= n
		return n, syscall.ENOSPC
	}
	if f.budget >= 0 {
		f.budget -= len(b)
	}
	return f.File.Write(b)
}

func (f *faultyLog) Truncate(n int64) error {
	if f.failCut {
		return syscall.EIO
	}
	return f.File.Truncate(n)
}

func openFaulty(t *testing.T, dir string, newSim func(uint64, time.Time) (*sim.Sim, error)) (*State, *sim.Sim, *Cluster, *faultyLog) {
	t.Helper()
	st, s, err := Open(dir, "sum1", 42, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	f := &faultyLog{File: st.f.(*os.File), budget: -1}
	st.f = f
	return st, s, New(DirectExec(s), st), f
}

// TestSimStateDiskFull: while the disk is full every change fails with an
// error wrapping ENOSPC and leaves the simulator as it was; when space
// returns the same calls succeed, and a crash (no Close) and restart then
// replays exactly the simulator that ran.
func TestSimStateDiskFull(t *testing.T) {
	dir := t.TempDir()
	newSim := simFactory(t, 3)
	_, s, c, disk := openFaulty(t, dir, newSim)
	ctx := context.Background()
	var apps []string
	for i := range 3 {
		app, err := c.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		apps = append(apps, app)
		if i < 2 {
			if err := c.Submit(ctx, app, queue.Job{ID: fmt.Sprintf("JOB%d", i), Kind: "cpu", User: "ana"}); err != nil {
				t.Fatal(err)
			}
		}
		s.Advance(s.Now().Add(10 * time.Second))
	}

	disk.budget = 17 // the disk fills up: the next record is torn
	next := s.NextApplicationID()
	if _, err := c.Reserve(ctx); !errors.Is(err, syscall.ENOSPC) || !errors.Is(err, errSimState) {
		t.Errorf("reserve on a full disk: %v, want errSimState wrapping ENOSPC", err)
	}
	if err := c.Submit(ctx, apps[2], queue.Job{ID: "JOB2", Kind: "disk", User: "ana"}); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("submit on a full disk: %v, want ENOSPC", err)
	}
	if err := c.Kill(ctx, apps[0]); !errors.Is(err, syscall.ENOSPC) {
		t.Errorf("kill on a full disk: %v, want ENOSPC", err)
	}
	if got := s.NextApplicationID(); got != next {
		t.Errorf("a failed reserve moved the next id to %s, want %s still", got, next)
	}
	if _, ok := s.App(apps[2]); ok {
		t.Errorf("a failed submit started %s in the simulator", apps[2])
	}
	if a, _ := s.App(apps[0]); a.State != sim.AppRunning {
		t.Errorf("a failed kill ended %s: %s", apps[0], a.State)
	}

	disk.budget = -1 // space returns
	if got, err := c.Reserve(ctx); err != nil || got != next {
		t.Errorf("reserve after space returned: %q, %v; want %s", got, err, next)
	}
	if err := c.Submit(ctx, apps[2], queue.Job{ID: "JOB2", Kind: "disk", User: "ana"}); err != nil {
		t.Errorf("submit after space returned: %v", err)
	}
	if err := c.Kill(ctx, apps[0]); err != nil {
		t.Errorf("kill after space returned: %v", err)
	}
	s.Advance(s.Now().Add(30 * time.Second))
	if err := c.Checkpoint(); err != nil {
		t.Fatal(err)
	}

	// A SIGKILL now: the state is reopened without closing the old one.
	entries, err := ReadLog(filepath.Join(dir, "submissions.jsonl"))
	if err != nil {
		t.Fatalf("the log has a torn record among others: %v", err)
	}
	st2, s2, err := Open(dir, "sum1", 1, simStart, newSim)
	if err != nil {
		t.Fatalf("restart after a full disk: %v", err)
	}
	defer st2.Close()
	if st2.Replayed != len(entries) || len(entries) != 8 {
		t.Errorf("replayed %d of %d entries, want 8", st2.Replayed, len(entries))
	}
	ignore := cmpopts.IgnoreFields(sim.AppInfo{}, "Progress", "Speed")
	if diff := cmp.Diff(s.Apps(), s2.Apps(), ignore, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
		t.Errorf("replayed applications (-ran +replayed):\n%s", diff)
	}
	if got, want := s2.NextApplicationID(), s.NextApplicationID(); got != want {
		t.Errorf("next id after replay %s, want %s", got, want)
	}
}

// TestSimStateCutFails: when the torn record cannot even be cut, every
// later change fails (and changes nothing) until the cut succeeds; the log
// then holds only whole records.
func TestSimStateCutFails(t *testing.T) {
	dir := t.TempDir()
	newSim := simFactory(t, 2)
	_, s, c, disk := openFaulty(t, dir, newSim)
	ctx := context.Background()
	if _, err := c.Reserve(ctx); err != nil {
		t.Fatal(err)
	}
	disk.budget, disk.failCut = 9, true
	if _, err := c.Reserve(ctx); !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("reserve on a full disk: %v", err)
	}
	disk.budget = -1 // space is back, the cut still fails
	next := s.NextApplicationID()
	if _, err := c.Reserve(ctx); !errors.Is(err, errSimState) || !errors.Is(err, syscall.EIO) {
		t.Errorf("reserve while the torn record cannot be cut: %v, want errSimState wrapping EIO", err)
	}
	if got := s.NextApplicationID(); got != next {
		t.Errorf("next id moved to %s while the log was broken", got)
	}
	disk.failCut = false
	if _, err := c.Reserve(ctx); err != nil {
		t.Errorf("reserve once the cut works: %v", err)
	}
	entries, err := ReadLog(filepath.Join(dir, "submissions.jsonl"))
	if err != nil || len(entries) != 2 {
		t.Errorf("log: %d entries, %v; want 2 whole records", len(entries), err)
	}
}

const refusalWorkload = `
cluster:
  nodes: 5
  node: {cores: 4, vcores: 6, memory_mb: 6144, disk_mbps: 200, net_mbps: 125}
kinds:
  - name: small
    containers: 3
    container: {vcores: 1, memory_mb: 1024}
    phases: [{name: work, seconds: 300, cpu: 1}]
  - name: huge
    containers: 28
    container: {vcores: 1, memory_mb: 1024}
    phases: [{name: work, seconds: 300, cpu: 1}]
queue:
  - {kind: small, count: 1}
`

// TestSimStateReplaysRefusals: a submission that waits for room changes
// nothing yet, not even the simulator's random stream (sim.Submit would
// draw from it to fail), so after a restart the jobs placed after it land
// where they landed before.
func TestSimStateReplaysRefusals(t *testing.T) {
	wl, err := sim.ParseWorkload([]byte(refusalWorkload))
	if err != nil {
		t.Fatal(err)
	}
	newSim := func(seed uint64, start time.Time) (*sim.Sim, error) {
		return wl.NewSim(sim.Options{Seed: seed, Start: start})
	}
	ctx := context.Background()
	for seed := uint64(1); seed <= 8; seed++ {
		dir := t.TempDir()
		st, s, err := Open(dir, "sum", seed, simStart, newSim)
		if err != nil {
			t.Fatal(err)
		}
		c := New(DirectExec(s), st)
		submit := func(id, kind string) error {
			app, err := c.Reserve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return c.Submit(ctx, app, queue.Job{ID: id, Kind: kind, User: "ana"})
		}
		if err := submit("A", "small"); err != nil {
			t.Fatal(err)
		}
		if err := submit("B", "huge"); err != nil {
			t.Fatalf("seed %d: a job larger than the free room: %v, want it accepted to wait", seed, err)
		}
		for _, id := range []string{"C", "D"} {
			if err := submit(id, "small"); err != nil {
				t.Fatal(err)
			}
		}
		st.Close()
		st2, s2, err := Open(dir, "sum", seed, simStart, newSim)
		if err != nil {
			t.Fatalf("seed %d: replay with a refused submission: %v", seed, err)
		}
		st2.Close()
		ignore := cmpopts.IgnoreFields(sim.AppInfo{}, "Progress", "Speed")
		if diff := cmp.Diff(s.Apps(), s2.Apps(), ignore, cmpopts.EquateApproxTime(time.Millisecond)); diff != "" {
			t.Errorf("seed %d: placements after replay (-ran +replayed):\n%s", seed, diff)
		}
	}
}

// TestSimStateCheckStore: a store that has held fewer jobs than the
// simulator log submitted (a lost or replaced colocd.db) is refused.
func TestSimStateCheckStore(t *testing.T) {
	dir := t.TempDir()
	newSim := simFactory(t, 2)
	st, s, err := Open(dir, "sum1", 1, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	c := New(DirectExec(s), st)
	for i := range 3 {
		app, err := c.Reserve(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if err := c.Submit(context.Background(), app, queue.Job{ID: fmt.Sprintf("J%d", i), Kind: "cpu"}); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	st2, _, err := Open(dir, "sum1", 1, simStart, newSim)
	if err != nil {
		t.Fatal(err)
	}
	defer st2.Close()
	if st2.Submits != 3 {
		t.Fatalf("Submits = %d, want 3", st2.Submits)
	}
	for _, n := range []uint64{3, 10} {
		if err := st2.CheckStore(n, "colocd.db"); err != nil {
			t.Errorf("a store that held %d jobs: %v", n, err)
		}
	}
	for _, n := range []uint64{0, 2} {
		err := st2.CheckStore(n, "colocd.db")
		if !errors.Is(err, errSimState) || !strings.Contains(err.Error(), "lists 3 submissions") {
			t.Errorf("a store that held %d jobs: %v, want errSimState naming the 3 submissions", n, err)
		}
	}
}
