package testproc_test

import (
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/colocd/colocd/collector/internal/testproc"
)

// The test binary is also the child process: childEnv selects what it does
// instead of running the tests.
//
//	serve  write padding, listen on addrEnv, answer every request with
//	       statusEnv and the header X-Pid; with ignoreTermEnv=1 ignore SIGTERM
//	exit   write "boom" to stderr and exit with status 3
//
// Not COLOCD_* names: only the child reads them, and colocd serve refuses
// COLOCD_* variables it does not know (daemon.TestEnvNotKeysComplete).
const (
	childEnv      = "TESTPROC_CHILD"
	addrEnv       = "TESTPROC_ADDR"
	statusEnv     = "TESTPROC_STATUS"
	ignoreTermEnv = "TESTPROC_IGNORE_TERM"
	padBytes      = 5000 // more than the 4 KiB LogTail keeps
)

func TestMain(m *testing.M) {
	switch os.Getenv(childEnv) {
	case "":
		goleak.VerifyTestMain(m)
	case "serve":
		serve()
	case "exit":
		fmt.Fprintln(os.Stderr, "boom")
		os.Exit(3)
	default:
		fmt.Fprintf(os.Stderr, "unknown %s=%q\n", childEnv, os.Getenv(childEnv))
		os.Exit(2)
	}
}

func serve() {
	if os.Getenv(ignoreTermEnv) == "1" {
		signal.Ignore(syscall.SIGTERM) // before listening: ready means ignoring
	}
	status, err := strconv.Atoi(os.Getenv(statusEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	fmt.Fprintln(os.Stderr, "child starting")
	fmt.Println(strings.Repeat("x", padBytes))
	l, err := net.Listen("tcp", os.Getenv(addrEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, "child:", err)
		os.Exit(2)
	}
	fmt.Println("serving")
	pid := strconv.Itoa(os.Getpid())
	err = http.Serve(l, http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("X-Pid", pid)
		w.WriteHeader(status)
	}))
	fmt.Fprintln(os.Stderr, "child:", err)
	os.Exit(2)
}

// child is a Spec running the test binary in mode, with a log in a
// temporary directory.
func child(t *testing.T, mode string, env ...string) testproc.Spec {
	t.Helper()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	return testproc.Spec{
		Name:  "child",
		Owner: "testproc_test",
		Path:  bin,
		Args:  []string{"-test.run=^$"},
		Dir:   dir,
		Env:   append([]string{childEnv + "=" + mode}, env...),
		Log:   filepath.Join(dir, "child.log"),
	}
}

// server is a Spec for a child serving status on a free address, ready
// when its root answers ready.
func server(t *testing.T, status, ready int, ignoreTerm bool) testproc.Spec {
	t.Helper()
	addr, err := testproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := child(t, "serve", addrEnv+"="+addr, statusEnv+"="+strconv.Itoa(status))
	if ignoreTerm {
		s.Env = append(s.Env, ignoreTermEnv+"=1")
	}
	s.Ready = testproc.Ready{URL: "http://" + addr + "/", Status: ready}
	return s
}

// start is testproc.Start with the cleanup registered.
func start(t *testing.T, s testproc.Spec, opts ...testproc.Option) *testproc.Proc {
	t.Helper()
	p, err := testproc.Start(t.Context(), s, opts...)
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { p.Cleanup(t) })
	return p
}

// get is one request without keep-alive, so no connection outlives it.
func get(url string) (*http.Response, error) {
	c := &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}
	resp, err := c.Get(url)
	if err != nil {
		return nil, err
	}
	return resp, resp.Body.Close()
}

func TestStartReady(t *testing.T) {
	for name, tc := range map[string]struct {
		serve, ready int
		wantErr      error
	}{
		"204 like influxd /ping":     {serve: 204, ready: 204},
		"200 like prometheus":        {serve: 200, ready: 200},
		"503 is not ready within 1s": {serve: 503, ready: 200, wantErr: testproc.ErrNotReady},
	} {
		t.Run(name, func(t *testing.T) {
			s := server(t, tc.serve, tc.ready, false)
			p, err := testproc.Start(t.Context(), s, testproc.WithReadyTimeout(time.Second))
			if !errors.Is(err, tc.wantErr) {
				t.Fatalf("Start: %v, want %v", err, tc.wantErr)
			}
			if err != nil {
				if !strings.Contains(err.Error(), "status 503, want 200") || !strings.Contains(err.Error(), "serving") {
					t.Errorf("Start error lacks the last status or the log tail: %v", err)
				}
				return
			}
			t.Cleanup(func() { p.Cleanup(t) })
			resp, err := get(s.Ready.URL)
			if err != nil {
				t.Fatal(err)
			}
			got := []string{strconv.Itoa(resp.StatusCode), resp.Header.Get("X-Pid")}
			want := []string{strconv.Itoa(tc.serve), strconv.Itoa(p.PID())}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("status and pid (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStartExitEarly: a child that exits before its ready URL answers fails
// Start with its exit error at once, not with ErrNotReady after the default
// ready timeout.
func TestStartExitEarly(t *testing.T) {
	addr, err := testproc.FreeAddr()
	if err != nil {
		t.Fatal(err)
	}
	s := child(t, "exit")
	s.Ready = testproc.Ready{URL: "http://" + addr + "/", Status: 200}
	_, err = testproc.Start(t.Context(), s)
	if !errors.Is(err, testproc.ErrExited) {
		t.Fatalf("Start: %v, want ErrExited", err)
	}
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.ExitCode() != 3 {
		t.Errorf("Start: %v, want exit status 3", err)
	}
	if !strings.HasPrefix(err.Error(), "child exited before it was ready: exit status 3\n") ||
		!strings.HasSuffix(err.Error(), "boom\n") {
		t.Errorf("Start: %q, want the name, the exit status and the log (stderr) tail", err)
	}
}

func TestStartMissingBinary(t *testing.T) {
	s := child(t, "exit")
	s.Path = filepath.Join(t.TempDir(), "no-such-binary")
	if _, err := testproc.Start(t.Context(), s); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Start: %v, want os.ErrNotExist", err)
	}
}

func TestStopTwice(t *testing.T) {
	p := start(t, server(t, 204, 204, false))
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i := range errs {
		wg.Go(func() { errs[i] = p.Stop() })
	}
	wg.Wait()
	if err := p.Stop(); err != nil || errs[0] != nil || errs[1] != nil {
		t.Errorf("Stop: %v, %v, then %v; want nil", errs[0], errs[1], err)
	}
	select {
	case <-p.Exited():
	default:
		t.Fatal("Exited not closed after Stop")
	}
	var exit *exec.ExitError
	if !errors.As(p.ExitErr(), &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGTERM {
		t.Errorf("ExitErr() = %v, want signal: terminated", p.ExitErr())
	}
}

// TestStopKillsIgnoringTERM: a child that ignores SIGTERM is killed once
// the term timeout passes.
func TestStopKillsIgnoringTERM(t *testing.T) {
	p, err := testproc.Start(t.Context(), server(t, 204, 204, true),
		testproc.WithStopTimeouts(100*time.Millisecond, testproc.DefaultKillTimeout))
	if err != nil {
		t.Fatalf("Start: %v", err)
	}
	t.Cleanup(func() { _ = p.Stop() }) // not Cleanup: it would report the ErrKilled this test wants
	err = p.Stop()
	if !errors.Is(err, testproc.ErrKilled) {
		t.Fatalf("Stop: %v, want ErrKilled", err)
	}
	if got, want := err.Error(), "child ignored SIGTERM for 100ms and was killed"; got != want {
		t.Errorf("Stop: %q, want %q", got, want)
	}
	var exit *exec.ExitError
	if !errors.As(p.ExitErr(), &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("ExitErr() = %v, want signal: killed", p.ExitErr())
	}
	if again := p.Stop(); again != err {
		t.Errorf("second Stop: %v, want the first's %v", again, err)
	}
}

func TestLogTail(t *testing.T) {
	s := server(t, 204, 204, false)
	p := start(t, s)
	// The child writes to stderr, then the padding and "serving" to stdout
	// before it listens, so all of it is in the log once Start returns.
	b, err := os.ReadFile(s.Log)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(string(b), "child starting\n") {
		t.Errorf("log starts %q, want stderr's \"child starting\"", b[:min(len(b), 20)])
	}
	got := p.LogTail()
	if want := string(b[len(b)-4<<10:]); got != want || !strings.HasSuffix(got, "xxx\nserving\n") {
		t.Errorf("LogTail() = %d bytes ending %q; want the log's last 4096, ending in the padding and \"serving\\n\"",
			len(got), got[max(len(got)-20, 0):])
	}
	if err := os.Remove(s.Log); err != nil {
		t.Fatal(err)
	}
	if got := p.LogTail(); !strings.HasPrefix(got, "(no child log: ") {
		t.Errorf("LogTail() without a log = %q, want it to say so", got)
	}
}

func TestTail(t *testing.T) {
	long := strings.Repeat("a", 10) + strings.Repeat("b", 4<<10)
	for name, tc := range map[string]struct{ in, want string }{
		"empty":         {"", ""},
		"short":         {"abc\n", "abc\n"},
		"exactly 4 KiB": {long[10:], long[10:]},
		"longer, cut":   {long, long[10:]},
		"one byte over": {"a" + long[10:], long[10:]},
	} {
		t.Run(name, func(t *testing.T) {
			if got := testproc.Tail([]byte(tc.in)); got != tc.want {
				t.Errorf("Tail(%d bytes) = %d bytes, want %d", len(tc.in), len(got), len(tc.want))
			}
		})
	}
}

// recordTB records what Cleanup reports instead of reporting it.
type recordTB struct {
	testing.TB
	failed       bool
	errors, logs []string
}

func (r *recordTB) Errorf(format string, args ...any) {
	r.errors = append(r.errors, fmt.Sprintf(format, args...))
}

func (r *recordTB) Logf(format string, args ...any) {
	r.logs = append(r.logs, fmt.Sprintf(format, args...))
}

func (r *recordTB) Failed() bool { return r.failed || len(r.errors) > 0 }

func TestCleanup(t *testing.T) {
	for name, failed := range map[string]bool{"passed": false, "failed": true} {
		t.Run(name, func(t *testing.T) {
			p := start(t, server(t, 204, 204, false))
			rec := &recordTB{TB: t, failed: failed}
			p.Cleanup(rec)
			select {
			case <-p.Exited():
			default:
				t.Fatal("Cleanup left the process running")
			}
			if !failed && len(rec.logs) > 0 {
				t.Errorf("logs %q, want none", rec.logs)
			}
			if failed {
				checkKeptLog(t, p, rec.logs)
			}
			if len(rec.errors) > 0 {
				t.Errorf("errors: %q, want none", rec.errors)
			}
		})
	}
}

// checkKeptLog: a failed test's cleanup logs one line naming where the
// child's whole log was kept, with its end; the kept file is the log.
func checkKeptLog(t *testing.T, p *testproc.Proc, logs []string) {
	t.Helper()
	if len(logs) != 1 {
		t.Fatalf("logs %q, want one", logs)
	}
	prefix := fmt.Sprintf("child-%d output, whole in ", p.PID())
	path, end, ok := strings.Cut(strings.TrimPrefix(logs[0], prefix), "; its end:\n")
	if !strings.HasPrefix(logs[0], prefix) || !ok {
		t.Fatalf("log %q, want %q, the path and the end", logs[0], prefix)
	}
	t.Cleanup(func() { os.Remove(path) })
	kept, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if tail := p.LogTail(); !strings.HasSuffix(string(kept), tail) || !strings.HasSuffix(tail, end) || end == "" {
		t.Errorf("kept %q; the log ends %q; the end shown: %q", kept, tail, end)
	}
}

func TestFreeAddrs(t *testing.T) {
	addrs, err := testproc.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		host, _, err := net.SplitHostPort(a)
		if err != nil || host != "127.0.0.1" || seen[a] {
			t.Errorf("FreeAddrs(3) = %q: %q is not a new 127.0.0.1 address", addrs, a)
		}
		seen[a] = true
		l, err := net.Listen("tcp", a) // free again once FreeAddrs returns
		if err != nil {
			t.Errorf("listen on %s: %v", a, err)
			continue
		}
		_ = l.Close()
	}
}
