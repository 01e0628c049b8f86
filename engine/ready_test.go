package engine

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// probeCluster counts the pings Ready might send (and never answers one)
// and fails State while failing is set.
type probeCluster struct {
	Cluster
	pings   atomic.Int32
	failing atomic.Bool
}

func (c *probeCluster) Ping(ctx context.Context) error {
	c.pings.Add(1)
	<-ctx.Done()
	return ctx.Err()
}

func (c *probeCluster) State(ctx context.Context) (cluster.State, error) {
	if c.failing.Load() {
		return cluster.State{}, errors.New("Get \"http://rm1:8088/ws/v1/cluster/metrics?user.name=colocd\": connection refused")
	}
	return c.Cluster.State(ctx)
}

// readyHarness is an engine over a probeCluster, driven by a Loop stepped
// by the test, with a fake wall clock and a one-minute stall bound.
func readyHarness(t *testing.T) (*harness, *probeCluster, *Loop, *queuetest.Clock) {
	t.Helper()
	var pc *probeCluster
	h := newHarness(t, harnessOpts{noRecon: true, cluster: func(sc *simcluster.Cluster) Cluster {
		pc = &probeCluster{Cluster: sc}
		return pc
	}})
	wall := queuetest.NewClock(time.Date(2026, 11, 24, 9, 0, 0, 0, time.UTC))
	h.e.wall, h.e.stallAfter = wall.Now, time.Minute
	l := hourlyLoop(t, h.e)
	return h, pc, l, wall
}

// ready calls Ready with a deadline, so that a probe that waits on the
// cluster fails the test rather than hangs it.
func ready(h *harness) error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	return h.e.Ready(ctx)
}

// TestReadyAnswersFromLoopState: Ready never calls the cluster; it fails
// while the loop's last sync failed, naming the cluster's error, and
// recovers with the next sync that succeeds.
func TestReadyAnswersFromLoopState(t *testing.T) {
	h, pc, l, _ := readyHarness(t)
	if err := ready(h); !errors.Is(err, ErrStarting) || !errors.Is(err, ErrNotReady) {
		t.Fatalf("Ready before the loop started = %v, want ErrStarting and ErrNotReady", err)
	}
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready(h); err != nil {
		t.Fatalf("Ready after a clean iteration: %v", err)
	}
	pc.failing.Store(true)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	err := ready(h)
	if !errors.Is(err, ErrClusterSync) || !strings.Contains(err.Error(), "connection refused") {
		t.Errorf("Ready after a failed sync = %v, want ErrClusterSync with the cause", err)
	}
	pc.failing.Store(false)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready(h); err != nil {
		t.Errorf("Ready after the sync recovered: %v", err)
	}
	if n := pc.pings.Load(); n != 0 {
		t.Errorf("Ready pinged the cluster %d times, want 0", n)
	}
}

// TestReadyStalled: once the loop has completed no iteration for longer
// than the stall bound, Ready fails; the next iteration clears it.
func TestReadyStalled(t *testing.T) {
	h, _, l, wall := readyHarness(t)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	wall.Advance(59 * time.Second)
	if err := ready(h); err != nil {
		t.Fatalf("Ready within the bound: %v", err)
	}
	wall.Advance(2 * time.Second)
	if err := ready(h); !errors.Is(err, ErrStalled) || !strings.Contains(err.Error(), "1m1s") {
		t.Fatalf("Ready 61 s after the last iteration = %v, want ErrStalled naming 1m1s", err)
	}
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if err := ready(h); err != nil {
		t.Errorf("Ready after the loop moved again: %v", err)
	}
}

// TestReadyStoreWrites: a store write that fails for lack of space (the
// file may not grow: RLIMIT_FSIZE, the way a full disk fails a write)
// makes Ready fail until a later write succeeds; writes refused for the
// request's own fault do not.
func TestReadyStoreWrites(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	srv := apiOver(t, h, api.Deps{})
	if err := ready(h); err != nil {
		t.Fatal(err)
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	restore := func() {
		if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
			t.Fatalf("restoring RLIMIT_FSIZE: %v", err)
		}
	}
	fi, err := os.Stat(h.store.Path())
	if err != nil {
		t.Fatal(err)
	}
	// The Go runtime ignores SIGXFSZ, so a write past the limit fails with
	// EFBIG instead of killing the process. The limit is per process: the
	// test runner's own log (-test.testlogfile, written when go test may
	// cache the result) must stay below it, or its next line fails the run.
	cur := uint64(fi.Size())
	if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" {
		if li, err := os.Stat(f.Value.String()); err == nil {
			cur = max(cur, uint64(li.Size())+64<<10)
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: cur, Max: limit.Max}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	failed := false
	pad := strings.Repeat("x", 250)
	for i := 0; i < 200 && !failed; i++ {
		labels := make([]string, 0, 16)
		for j := range 16 {
			labels = append(labels, fmt.Sprintf(`"l%d":"%s"`, j, pad))
		}
		code, body := post(t, srv, `{"kind":"cpu","labels":{`+strings.Join(labels, ",")+`}}`)
		switch code {
		case http.StatusCreated:
		case http.StatusInternalServerError:
			failed = true
		default:
			restore()
			t.Fatalf("submit %d: %d %s", i, code, body)
		}
	}
	restore()
	if !failed {
		t.Fatal("no submit failed with the store file unable to grow")
	}
	err = ready(h)
	t.Logf("Ready with the store file unable to grow: %v", err)
	if !errors.Is(err, ErrStoreWrites) || !strings.Contains(err.Error(), "submit") {
		t.Fatalf("Ready after a failed submit = %v, want ErrStoreWrites naming the submit", err)
	}
	// A request's own fault says nothing about the disk.
	h.e.StoreWrite("cancel", fmt.Errorf("cancel: %w", queue.ErrIllegalTransition))
	if err := ready(h); !errors.Is(err, ErrStoreWrites) {
		t.Fatalf("Ready after an illegal transition = %v, still want ErrStoreWrites", err)
	}
	if code, body := post(t, srv, `{"kind":"cpu"}`); code != http.StatusCreated {
		t.Fatalf("submit with the limit lifted: %d %s", code, body)
	}
	if err := ready(h); err != nil {
		t.Errorf("Ready after a successful write: %v", err)
	}
}

// TestReadyStoreWritesPerOp: on a full disk a small write can succeed in
// pages the store already holds while submissions keep failing, so one
// success of another op does not make the daemon ready again; the failed
// op's own success does, and so does any success once no write has failed
// for writeQuiet.
func TestReadyStoreWritesPerOp(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	now := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	h.e.wall = func() time.Time { return now }
	if err := ready(h); err != nil {
		t.Fatal(err)
	}
	full := fmt.Errorf("storing job: %w", syscall.ENOSPC)
	h.e.StoreWrite("submit", full)
	h.e.StoreWrite("preferences", nil)
	if err := ready(h); !errors.Is(err, ErrStoreWrites) || !strings.Contains(err.Error(), "submit") {
		t.Fatalf("Ready after a failed submit and a saved preference = %v, want ErrStoreWrites naming the submit", err)
	}
	h.e.StoreWrite("submit", nil)
	if err := ready(h); err != nil {
		t.Fatalf("Ready after the submit succeeded: %v", err)
	}

	h.e.StoreWrite("cancel", full)
	h.e.StoreWrite("submit", full)
	now = now.Add(writeQuiet / 2)
	h.e.StoreWrite("preferences", nil)
	if err := ready(h); !errors.Is(err, ErrStoreWrites) {
		t.Fatalf("Ready %v after a failure, want ErrStoreWrites", writeQuiet/2)
	}
	h.e.StoreWrite("submit", nil) // the cancel still fails
	if err := ready(h); !errors.Is(err, ErrStoreWrites) || !strings.Contains(err.Error(), "cancel") {
		t.Fatalf("Ready with only the cancel failing = %v, want ErrStoreWrites naming the cancel", err)
	}
	now = now.Add(writeQuiet)
	h.e.StoreWrite("preferences", nil)
	if err := ready(h); err != nil {
		t.Fatalf("Ready after %v without a failure and a successful write: %v", writeQuiet, err)
	}
}

// TestReadyLowSpace: below the store's space reserve a new submission is
// 503 naming the free space and the reserve, with Retry-After, and Ready
// fails with errLowSpace; a retry of an accepted key still gets its job,
// and the jobs already accepted are still admitted. Once space comes back
// both recover at once.
func TestReadyLowSpace(t *testing.T) {
	var free atomic.Uint64
	free.Store(1 << 30)
	h := newHarness(t, harnessOpts{free: func() (uint64, error) { return free.Load(), nil }})
	srv := apiOver(t, h, api.Deps{})
	submit := func(key string) (code int, body, retryAfter string) {
		t.Helper()
		req, _ := http.NewRequest("POST", srv.URL+"/v1/jobs", strings.NewReader(`{"kind":"cpu"}`))
		req.Header.Set("Authorization", "Bearer test-admin-token")
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		res, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b), res.Header.Get("Retry-After")
	}
	if code, body, _ := submit("a"); code != http.StatusCreated {
		t.Fatalf("submit with space: %d %s", code, body)
	}
	if err := ready(h); err != nil {
		t.Fatalf("Ready with space: %v", err)
	}

	free.Store(512 << 10)
	err := ready(h)
	if !errors.Is(err, errLowSpace) || !strings.Contains(err.Error(), "512.0 KiB free, below the reserve of 1.0 MiB") {
		t.Fatalf("Ready below the reserve = %v, want errLowSpace naming 512.0 KiB and 1.0 MiB", err)
	}
	code, body, retry := submit("b")
	if code != http.StatusServiceUnavailable || retry != "30" || !strings.Contains(body, "512.0 KiB free, below the reserve of 1.0 MiB") {
		t.Fatalf("a new job below the reserve: %d (Retry-After %q) %s, want 503 naming the space", code, retry, body)
	}
	if code, body, _ := submit("a"); code != http.StatusOK {
		t.Fatalf("a retry of the accepted key below the reserve: %d %s, want 200 with the job", code, body)
	}
	if n, err := h.store.Counts(); err != nil || n[queue.StatePending] != 1 {
		t.Fatalf("pending jobs below the reserve: %v %v, want the one accepted", n, err)
	}
	if rep := h.admit(); len(rep.Admitted) != 1 {
		t.Fatalf("admission below the reserve: %+v, want the accepted job admitted", rep)
	}
	// The journal keeps the decision in memory only: the space left is the
	// accepted jobs'.
	if n := len(h.journal.Decisions(0)); n != 1 {
		t.Errorf("%d decisions journaled below the reserve, want 1 (in memory)", n)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "journal", journal.DecisionsFile)); err != nil || len(b) != 0 {
		t.Errorf("decisions file below the reserve: %d bytes (%v), want none", len(b), err)
	}

	free.Store(2 << 20)
	if err := ready(h); err != nil {
		t.Fatalf("Ready with space back: %v (a refusal under the reserve is no failing write)", err)
	}
	if code, body, _ := submit("b"); code != http.StatusCreated {
		t.Fatalf("submit with space back: %d %s", code, body)
	}
	if rep := h.admit(); len(rep.Admitted) != 1 {
		t.Fatalf("admission with space back: %+v, want the new job admitted", rep)
	}
	if b, err := os.ReadFile(filepath.Join(h.dir, "journal", journal.DecisionsFile)); err != nil || bytes.Count(b, []byte("\n")) != 1 {
		t.Errorf("decisions file with space back: %q (%v), want the one decision since", b, err)
	}
}

// TestReadyWhileWritesFail: Ready reads the failing writes while the API's
// handlers record more (run with -race: Ready once iterated the live map,
// which a concurrent StoreWrite can make a fatal error).
func TestReadyWhileWritesFail(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	full := fmt.Errorf("storing job: %w", syscall.ENOSPC)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range 2000 {
			h.e.StoreWrite(fmt.Sprintf("op%d", i%7), full)
			h.e.StoreWrite(fmt.Sprintf("op%d", (i+3)%7), nil)
		}
	}()
	failing := 0
	for range 2000 {
		if errors.Is(ready(h), ErrStoreWrites) {
			failing++
		}
	}
	<-done
	h.e.StoreWrite("op0", full)
	if err := ready(h); !errors.Is(err, ErrStoreWrites) || !strings.Contains(err.Error(), "op0") {
		t.Fatalf("Ready = %v, want ErrStoreWrites naming op0", err)
	}
	t.Logf("Ready failed %d of 2000 times while writes failed and succeeded", failing)
}

// hourlyLoop is a loop over e stepped by the test: a one-second tick,
// learning every hour.
func hourlyLoop(t *testing.T, e *Engine) *Loop {
	t.Helper()
	learn, err := ParseSchedule("@every 1h")
	if err != nil {
		t.Fatal(err)
	}
	l, err := NewLoop(e, LoopOptions{Tick: time.Second, Learn: learn})
	if err != nil {
		t.Fatal(err)
	}
	return l
}
