//go:build linux

package yarnclient_test

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/deadaddr"
)

// TestSubmitCommandDiesWithTheDaemon: a daemon SIGKILLed while its submit
// command runs takes the command with it, so the command cannot submit
// after a restarted daemon has looked its tags up and found nothing. The
// command here writes its "application" (a file) once the daemon has
// "restarted" (a file the test writes after killing the daemon): without
// the parent-death signal the command lives on and writes it; with it,
// it is gone before. No timing: only a command that outlives its daemon
// can submit. As a script, and as a script that execs its submitter
// (spark-submit, flink and yarn's scripts end in exec java): the signal
// is kept across the exec.
func TestSubmitCommandDiesWithTheDaemon(t *testing.T) {
	const submit = `while [ ! -e "$OUT/restarted" ]; do sleep 0.05; done; echo submitted > "$OUT/application"`
	for name, body := range map[string]string{
		"script": `echo $$ > "$OUT/pid.tmp" && mv "$OUT/pid.tmp" "$OUT/pid"
` + submit + "\n",
		"exec": `echo $$ > "$OUT/pid.tmp" && mv "$OUT/pid.tmp" "$OUT/pid"
exec sh -c '` + submit + "'\n",
	} {
		t.Run(name, func(t *testing.T) { dieWithTheDaemon(t, body) })
	}
}

func dieWithTheDaemon(t *testing.T, body string) {
	out := t.TempDir()
	sh := script(t, body)
	daemon := exec.Command(os.Args[0], "-test.run=^$")
	daemon.Env = append(os.Environ(), helperEnv+"=daemon", "HELPER_SCRIPT="+sh, "OUT="+out, "HELPER_RM_URL="+deadaddr.URL(t))
	var stderr strings.Builder
	daemon.Stderr = &stderr
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	var pid int
	t.Cleanup(func() {
		_ = daemon.Process.Kill()
		_ = daemon.Wait()
		if pid > 0 {
			_ = syscall.Kill(-pid, syscall.SIGKILL) // the command's group, should the test fail
		}
	})
	deadline := time.Now().Add(30 * time.Second)
	for {
		b, err := os.ReadFile(filepath.Join(out, "pid"))
		if err == nil {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatalf("pid file %q: %v", b, err)
			}
			break
		}
		if !errors.Is(err, os.ErrNotExist) || time.Now().After(deadline) {
			t.Fatalf("the command did not start within 30 s: %v; the daemon's stderr:\n%s", err, stderr.String())
		}
		time.Sleep(20 * time.Millisecond)
	}
	if err := daemon.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = daemon.Wait()
	if err := os.WriteFile(filepath.Join(out, "restarted"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	deadline = time.Now().Add(30 * time.Second)
	for alive(pid) {
		if time.Now().After(deadline) {
			t.Fatalf("the submit command (pid %d) still runs 30 s after its daemon was killed", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if _, err := os.Stat(filepath.Join(out, "application")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the command submitted after its daemon was killed (stat: %v)", err)
	}
}

// alive reports whether process pid runs (exists and is not a zombie: a
// container's init may reap orphans late, or never).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	s := string(b)
	i := strings.LastIndexByte(s, ')') // the state follows the command name, which may hold anything
	return i < 0 || i+2 >= len(s) || s[i+2] != 'Z'
}
