package kdctest

import (
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"
)

// proc is the krb5kdc child process, in its own process group.
type proc struct {
	cmd      *exec.Cmd
	exited   chan struct{} // closed once it has been reaped
	waitErr  error         // valid once exited is closed
	stopOnce sync.Once
	stopErr  error
}

// startProc starts path with its output in logPath, in a new process group.
func startProc(path string, args []string, dir string, env []string, logPath string) (*proc, error) {
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, fmt.Errorf("create %s: %w", logPath, err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(path, args...)
	cmd.Dir, cmd.Env = dir, env
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", path, err)
	}
	p := &proc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	return p, nil
}

// waitReady waits until addr accepts a TCP connection (krb5kdc binds its
// UDP and TCP sockets together, before it serves either), failing at once
// when the process exits first and after readyTimeout otherwise.
func (p *proc) waitReady(addr string) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		c, err := net.DialTimeout("tcp", addr, dialTimeout)
		if err == nil {
			_ = c.Close()
			return nil
		}
		select {
		case <-p.exited:
			return fmt.Errorf("krb5kdc exited before it listened on %s: %v", addr, p.waitErr)
		case <-deadline.C:
			return fmt.Errorf("krb5kdc not listening on %s after %v: %v", addr, readyTimeout, err)
		case <-tick.C:
		}
	}
}

// stop sends SIGTERM to the process group, SIGKILL after stopTimeout, and
// waits until the process has been reaped. Later calls return the first
// call's result.
func (p *proc) stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.doStop() })
	return p.stopErr
}

func (p *proc) doStop() error {
	pgid := p.cmd.Process.Pid
	defer func() { _ = syscall.Kill(-pgid, syscall.SIGKILL) }() // anything left in the group
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := syscall.Kill(-pgid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return fmt.Errorf("signal krb5kdc: %w", err)
	}
	term := time.NewTimer(stopTimeout)
	defer term.Stop()
	select {
	case <-p.exited:
		return nil
	case <-term.C:
	}
	_ = syscall.Kill(-pgid, syscall.SIGKILL)
	kill := time.NewTimer(stopTimeout)
	defer kill.Stop()
	select {
	case <-p.exited:
		return fmt.Errorf("krb5kdc ignored SIGTERM for %v and was killed", stopTimeout)
	case <-kill.C:
		return fmt.Errorf("krb5kdc (pid %d) still running %v after SIGKILL", pgid, stopTimeout)
	}
}
