package childproc

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestStartStop: the child's output goes to its log (appended when asked);
// a child that ends on SIGTERM stops without error and counts as killed; a
// child that ignores SIGTERM is killed after the timeout, with an error
// saying so; a second Stop returns the first's result; a child that exits
// on its own is done, not killed.
func TestStartStop(t *testing.T) {
	dir := t.TempDir()
	log := filepath.Join(dir, "out.log")
	if err := os.WriteFile(log, []byte("before\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	p, err := Start("sleeper", "/bin/sh", []string{"-c", "echo started; exec sleep 60"}, Options{Dir: dir, LogPath: log, AppendLog: true})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { b, _ := os.ReadFile(log); return strings.Contains(string(b), "started") })
	if b, _ := os.ReadFile(log); !strings.HasPrefix(string(b), "before\n") {
		t.Errorf("log %q: the earlier output was not kept", b)
	}
	if p.Done() {
		t.Fatal("done while sleeping")
	}
	if err := p.Stop(10 * time.Second); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	if !p.Done() || !p.Killed() {
		t.Errorf("after SIGTERM: done %v, killed %v; want both", p.Done(), p.Killed())
	}

	stubborn, err := Start("stubborn", "/bin/sh", []string{"-c", `trap "" TERM; echo trapped; while :; do sleep 1; done`},
		Options{Dir: dir, LogPath: filepath.Join(dir, "stubborn.log")})
	if err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool {
		b, _ := os.ReadFile(filepath.Join(dir, "stubborn.log"))
		return strings.Contains(string(b), "trapped")
	})
	err = stubborn.Stop(200 * time.Millisecond)
	if err == nil || !strings.Contains(err.Error(), "stubborn ignored SIGTERM") || !stubborn.Killed() {
		t.Errorf("Stop of a child that ignores SIGTERM: %v (killed %v), want it killed and said so", err, stubborn.Killed())
	}
	if again := stubborn.Stop(time.Second); again != err {
		t.Errorf("a second Stop returned %v, want the first's %v", again, err)
	}

	quick, err := Start("quick", "/bin/sh", []string{"-c", "exit 3"}, Options{Dir: dir, LogPath: filepath.Join(dir, "quick.log")})
	if err != nil {
		t.Fatal(err)
	}
	<-quick.Exited()
	if quick.Err() == nil || quick.Killed() || !quick.Done() {
		t.Errorf("a child that exits 3: err %v, killed %v, done %v", quick.Err(), quick.Killed(), quick.Done())
	}
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met after 30 s")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
