package testproc

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/testlogs"
)

// Bounds on a process's lifecycle unless an option changes them. influxd 1.8
// answers /ping in about a second; the margins cover a loaded 2-core CI
// machine running -race tests.
const (
	defaultReadyTimeout = 30 * time.Second
	defaultTermTimeout  = 10 * time.Second // SIGTERM → SIGKILL
	defaultKillTimeout  = 5 * time.Second  // SIGKILL → reaped
)

const (
	pollEvery    = 20 * time.Millisecond // between two ready probes
	probeTimeout = 5 * time.Second       // one ready probe
	tailBytes    = 4 << 10               // what Tail and LogTail keep
)

var (
	// errExited is returned by Start when the process exited before its
	// ready URL answered; the error wraps the exit error too (an
	// *exec.ExitError when the process ran).
	errExited = errors.New("exited before it was ready")
	// errNotReady is returned by Start when the ready URL did not answer
	// the expected status within the ready timeout.
	errNotReady = errors.New("not ready")
	// errKilled is returned by Stop when the process ignored SIGTERM for
	// the term timeout and was killed.
	errKilled = errors.New("ignored SIGTERM")
)

// Spec is what Start runs.
type Spec struct {
	Name  string   // the tool, naming the process in errors: "influxd"
	Owner string   // the helper running it, prefixing what Cleanup reports: "influxtest"
	Path  string   // the binary
	Args  []string // its arguments, without the program name
	Dir   string   // its working directory; "" is the test's
	Env   []string // KEY=value pairs added to the test's environment
	Log   string   // the file Start creates for its stdout and stderr
	Ready Ready    // what Start waits for; the zero Ready waits for nothing
}

// Ready is a readiness check: GET URL answers Status.
type Ready struct {
	URL    string
	Status int
}

// option changes a bound of Start.
type option func(*options)

type options struct {
	ready, term, kill time.Duration
}

// WithReadyTimeout bounds the wait for Spec.Ready by d instead of
// defaultReadyTimeout.
func WithReadyTimeout(d time.Duration) option {
	return func(o *options) { o.ready = d }
}

// withStopTimeouts has Stop send SIGKILL term after SIGTERM and give up kill
// after SIGKILL, instead of defaultTermTimeout and defaultKillTimeout.
func withStopTimeouts(term, kill time.Duration) option {
	return func(o *options) { o.term, o.kill = term, kill }
}

// Proc is a running child process with a log file.
type Proc struct {
	spec Spec
	opts options
	cmd  *exec.Cmd

	exited   chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after exited is closed
	stopOnce sync.Once
	stopErr  error
}

// Start runs s and, when s.Ready has a URL, returns once the URL answers
// s.Ready.Status. ctx bounds only that wait: the process runs until Stop.
// When the process exits first, the error wraps errExited and the exit
// error; when the bound passes, errNotReady; either way the process has been
// stopped and the error ends with the tail of its log.
func Start(ctx context.Context, s Spec, opts ...option) (*Proc, error) {
	o := options{ready: defaultReadyTimeout, term: defaultTermTimeout, kill: defaultKillTimeout}
	for _, opt := range opts {
		opt(&o)
	}
	if s.Owner == "" {
		s.Owner = "testproc"
	}
	logf, err := os.Create(s.Log)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	cmd := exec.Command(s.Path, s.Args...)
	cmd.Dir = s.Dir
	cmd.Stdout, cmd.Stderr = logf, logf
	if len(s.Env) > 0 {
		cmd.Env = append(os.Environ(), s.Env...)
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", s.Path, err)
	}
	p := &Proc{spec: s, opts: o, cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.waitErr = cmd.Wait()
		close(p.exited)
	}()
	if s.Ready.URL == "" {
		return p, nil
	}
	if err := p.waitReady(ctx); err != nil {
		_ = p.Stop()
		return nil, fmt.Errorf("%w\n%s", err, p.LogTail())
	}
	return p, nil
}

// waitReady polls the ready URL until it answers the ready status, the
// process exits, the ready timeout passes or ctx is done.
func (p *Proc) waitReady(ctx context.Context) error {
	r := p.spec.Ready
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, r.URL, nil)
	if err != nil {
		return fmt.Errorf("%s ready check: %w", p.spec.Name, err)
	}
	// No keep-alive: nothing of the polling outlives it.
	client := &http.Client{Timeout: probeTimeout, Transport: &http.Transport{DisableKeepAlives: true}}
	deadline := time.NewTimer(p.opts.ready)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		err := probe(client, req, r.Status)
		if err == nil {
			return nil
		}
		select {
		case <-p.exited:
			if p.waitErr == nil {
				return fmt.Errorf("%s %w: exit status 0", p.spec.Name, errExited)
			}
			return fmt.Errorf("%s %w: %w", p.spec.Name, errExited, p.waitErr)
		case <-deadline.C:
			return fmt.Errorf("%s %w on %s after %v (last error: %v)", p.spec.Name, errNotReady, r.URL, p.opts.ready, err)
		case <-ctx.Done():
			return fmt.Errorf("%s not ready on %s: %w", p.spec.Name, r.URL, ctx.Err())
		case <-tick.C:
		}
	}
}

// probe sends req once and checks the status it answers.
func probe(client *http.Client, req *http.Request, status int) error {
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	if resp.StatusCode != status {
		return fmt.Errorf("status %d, want %d", resp.StatusCode, status)
	}
	return nil
}

// Stop terminates the process (SIGTERM, then SIGKILL after the term timeout)
// and waits, at most the kill timeout after SIGKILL, until it has been
// reaped. It is idempotent: later calls return the first call's error.
func (p *Proc) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *Proc) stop() error {
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.spec.Name, err)
	}
	term := time.NewTimer(p.opts.term)
	defer term.Stop()
	select {
	case <-p.exited:
		return nil
	case <-term.C:
	}
	_ = p.cmd.Process.Kill()
	kill := time.NewTimer(p.opts.kill)
	defer kill.Stop()
	select {
	case <-p.exited:
		return fmt.Errorf("%s %w for %v and was killed", p.spec.Name, errKilled, p.opts.term)
	case <-kill.C:
		return fmt.Errorf("%s (pid %d) did not exit %v after SIGKILL", p.spec.Name, p.PID(), p.opts.kill)
	}
}

// PID is the process id, e.g. for reading its CPU time.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited and been reaped.
func (p *Proc) Exited() <-chan struct{} { return p.exited }

// ExitErr is what waiting for the process returned: nil for exit status 0,
// an *exec.ExitError otherwise. It is valid once Exited is closed.
func (p *Proc) ExitErr() error { return p.waitErr }

// Cleanup is the test cleanup: it stops the process, reports an error from
// Stop or a process still running, and logs the tail of the log when the test
// has failed. Register it with t.Cleanup(func() { p.Cleanup(t) }).
func (p *Proc) Cleanup(t testing.TB) {
	if err := p.Stop(); err != nil {
		t.Errorf("%s: %v", p.spec.Owner, err)
	}
	select {
	case <-p.exited:
	default:
		t.Errorf("%s: %s (pid %d) still running after cleanup", p.spec.Owner, p.spec.Name, p.PID())
	}
	if t.Failed() {
		b, err := os.ReadFile(p.spec.Log)
		if err != nil {
			t.Logf("%s: no %s log: %v", p.spec.Owner, p.spec.Name, err)
			return
		}
		testlogs.Log(t, fmt.Sprintf("%s-%d", p.spec.Name, p.PID()), b)
	}
}

// LogTail is the last 4 KiB of the process's log, for failure messages.
func (p *Proc) LogTail() string {
	b, err := os.ReadFile(p.spec.Log)
	if err != nil {
		return fmt.Sprintf("(no %s log: %v)", p.spec.Name, err)
	}
	return Tail(b)
}

// Tail is the last 4 KiB of b, for failure messages.
func Tail(b []byte) string { return testlogs.Tail(b, tailBytes) }

// FreeAddrs asks the kernel for n distinct free loopback addresses,
// "127.0.0.1:<port>". Another process can take one before the child binds
// it, so a caller retries Start with new addresses.
func FreeAddrs(n int) ([]string, error) {
	addrs := make([]string, 0, n)
	var ls []net.Listener
	defer func() {
		for _, l := range ls {
			_ = l.Close()
		}
	}()
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("find free port: %w", err)
		}
		ls = append(ls, l)
		addrs = append(addrs, l.Addr().String())
	}
	return addrs, nil
}

// FreeAddr is one free loopback address, as FreeAddrs.
func FreeAddr() (string, error) {
	addrs, err := FreeAddrs(1)
	if err != nil {
		return "", err
	}
	return addrs[0], nil
}
