package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLockDataDir: the lock is exclusive, the refusal names the holder's
// pid and the file, and a released lock can be taken again.
func TestLockDataDir(t *testing.T) {
	dir := t.TempDir()
	release, err := lockDataDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, lockFileName))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := strings.TrimSpace(string(b)), strconv.Itoa(os.Getpid()); got != want {
		t.Errorf("lock file holds %q, want this pid %s", got, want)
	}
	// A second open file description of the same file: as a second process.
	_, err = lockDataDir(dir)
	var le *dataDirLockedError
	if !errors.As(err, &le) || !errors.Is(err, errDataDirLocked) {
		t.Fatalf("second lock: %v, want a *dataDirLockedError", err)
	}
	if diff := cmp.Diff(dataDirLockedError{Dir: dir, PID: os.Getpid()}, *le); diff != "" {
		t.Errorf("refusal (-want +got):\n%s", diff)
	}
	if msg := err.Error(); !strings.Contains(msg, "pid "+strconv.Itoa(os.Getpid())) || !strings.Contains(msg, filepath.Join(dir, lockFileName)) {
		t.Errorf("refusal %q: want the holder's pid and the lock file", msg)
	}
	if b2, _ := os.ReadFile(filepath.Join(dir, lockFileName)); string(b2) != string(b) {
		t.Errorf("the refused lock rewrote the file: %q, was %q", b2, b)
	}
	if err := release(); err != nil {
		t.Fatal(err)
	}
	release, err = lockDataDir(dir)
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	release()
}

// TestSecondDaemonLeavesTheFirstsDataDirAlone runs two real daemons on one
// data_dir (simulator backend): the second exits with an error naming the
// first's pid, and the first's simulator state — the clock runs /v1/clock
// shows, the submission log it appends to — is byte for byte as it was.
func TestSecondDaemonLeavesTheFirstsDataDirAlone(t *testing.T) {
	dataDir, addr := t.TempDir(), freeAddr(t)
	first := startDemo(t, dataDir, addr)
	submitQueue(t, first, paperQueueA(t)[:2])
	waitFinished(t, first, 2)
	var clock struct{ Runs []any }
	first.getJSON("/v1/clock", &clock)

	files := []string{filepath.Join("sim", "runs.json"), filepath.Join("sim", "submissions.jsonl"),
		filepath.Join("sim", "state.json")}
	read := func() map[string]string {
		out := map[string]string{}
		for _, f := range files {
			b, err := os.ReadFile(filepath.Join(dataDir, f))
			if err != nil {
				t.Fatal(err)
			}
			out[f] = string(b)
		}
		return out
	}
	before := read()
	if before[filepath.Join("sim", "submissions.jsonl")] == "" {
		t.Fatal("the first daemon's submission log is empty: nothing to protect")
	}

	t0 := time.Now()
	code, out := serveOnce(t, dataDir)
	t.Logf("second daemon: exit %d after %v: %s", code, time.Since(t0).Round(time.Millisecond), strings.TrimSpace(out))
	if pid := strconv.Itoa(first.cmd.Process.Pid); code == 0 || !strings.Contains(out, "data_dir is in use") || !strings.Contains(out, "pid "+pid) {
		t.Errorf("second daemon: exit %d, output %q: want a refusal naming pid %s", code, out, pid)
	}
	if diff := cmp.Diff(before, read()); diff != "" {
		t.Errorf("the first daemon's files changed (-before +after):\n%s", diff)
	}
	var after struct{ Runs []any }
	first.getJSON("/v1/clock", &after)
	if len(after.Runs) != len(clock.Runs) {
		t.Errorf("/v1/clock shows %d runs, was %d", len(after.Runs), len(clock.Runs))
	}
	first.waitReady(10 * time.Second)
	if _, err := first.stop(15 * time.Second); err != nil {
		t.Errorf("the first daemon's shutdown: %v", err)
	}
}
