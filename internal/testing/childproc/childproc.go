// Package childproc runs a test's server process (krb5kdc, a ZooKeeper
// JVM) in its own process group with its output in a log file, reaps it,
// and stops it: SIGTERM to the group, SIGKILL after a while. The helpers
// that run real servers for tests (kdctest, zktest) share it.
package childproc

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sync"
	"sync/atomic"
	"syscall"
	"time"
)

// Proc is a running child process, the leader of its own process group.
type Proc struct {
	name     string
	cmd      *exec.Cmd
	exited   chan struct{} // closed once it has been reaped
	waitErr  error         // valid once exited is closed
	stopOnce sync.Once
	stopErr  error
	sigkill  atomic.Bool // Stop had to SIGKILL it
}

// Options says how to start a child: its directory and environment (nil:
// the test's), where its output goes, and whether that file is appended to
// (a restarted server's earlier output kept) or created afresh.
type Options struct {
	Dir       string
	Env       []string
	LogPath   string
	AppendLog bool
}

// Start starts path with args; name is what errors call it.
func Start(name, path string, args []string, o Options) (*Proc, error) {
	flags := os.O_CREATE | os.O_WRONLY | os.O_TRUNC
	if o.AppendLog {
		flags = os.O_CREATE | os.O_WRONLY | os.O_APPEND
	}
	logf, err := os.OpenFile(o.LogPath, flags, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", o.LogPath, err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = o.Dir, o.Env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	p := &Proc{name: name, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// Exited is closed once the process has been reaped; Err is then its
// exit error.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// Err is how the process ended (nil for exit status 0); valid once Exited
// is closed.
func (p *Proc) Err() error { return p.waitErr }

// Done reports whether the process has been reaped.
func (p *Proc) Done() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}

// Pid is the process's id, and its group's.
func (p *Proc) Pid() int { return p.cmd.Process.Pid }

// Signal sends sig to the process group.
func (p *Proc) Signal(sig syscall.Signal) error { return syscall.Kill(-p.Pid(), sig) }

// Killed reports that the process ended by a signal (a test's, or Stop's
// SIGKILL), not on its own.
func (p *Proc) Killed() bool {
	var ee *exec.ExitError
	if errors.As(p.waitErr, &ee) {
		if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
			return true
		}
	}
	return p.sigkill.Load()
}

// Stop sends SIGTERM to the process group, SIGKILL after timeout, and
// waits until the process has been reaped (another timeout at most);
// anything left in the group is killed. Later calls return the first
// call's result.
func (p *Proc) Stop(timeout time.Duration) error {
	p.stopOnce.Do(func() { p.stopErr = p.stop(timeout) })
	return p.stopErr
}

func (p *Proc) stop(timeout time.Duration) error {
	defer func() { _ = p.Signal(syscall.SIGKILL) }() // anything left in the group
	if p.Done() {
		return nil
	}
	if err := p.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	term := time.NewTimer(timeout)
	defer term.Stop()
	select {
	case <-p.exited:
		return nil
	case <-term.C:
	}
	p.sigkill.Store(true)
	_ = p.Signal(syscall.SIGKILL)
	kill := time.NewTimer(timeout)
	defer kill.Stop()
	select {
	case <-p.exited:
		return fmt.Errorf("%s ignored SIGTERM for %v and was killed", p.name, timeout)
	case <-kill.C:
		return fmt.Errorf("%s (pid %d) still running %v after SIGKILL", p.name, p.Pid(), timeout)
	}
}
