package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/testlogs"
	"go.uber.org/goleak"
)

// The process tests run the real colocd binary, built once (without -race)
// into a temporary directory the first time a test needs it.
var (
	binMu   sync.Mutex
	binDir  string
	binPath = map[string]string{} // build tags → binary
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		os.RemoveAll(binDir)
	}
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintln(os.Stderr, "goleak:", err)
			code = 1
		}
	}
	os.Exit(code)
}

// colocdBinary builds ./cmd/colocd once.
func colocdBinary(tb testing.TB) string {
	tb.Helper()
	return colocdBinaryTags(tb, "")
}

// colocdBinaryTags builds ./cmd/colocd with the build tags once (a build
// that fails is tried again by the next test that needs it, and fails it
// too).
func colocdBinaryTags(tb testing.TB, tags string) string {
	tb.Helper()
	if testing.Short() {
		tb.Skip("builds and runs the colocd binary; skipped with -short")
	}
	binMu.Lock()
	defer binMu.Unlock()
	if p, ok := binPath[tags]; ok {
		return p
	}
	if binDir == "" {
		d, err := os.MkdirTemp("", "colocd-bin-")
		if err != nil {
			tb.Fatal(err)
		}
		binDir = d
	}
	p := filepath.Join(binDir, "colocd")
	if tags != "" {
		p += "-" + strings.ReplaceAll(tags, ",", "-")
	}
	cmd := exec.Command("go", "build", "-tags", tags, "-o", p, "./cmd/colocd")
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		tb.Fatalf("go build -tags %q ./cmd/colocd: %v\n%s", tags, err, out)
	}
	binPath[tags] = p
	return p
}

// freeAddr returns a 127.0.0.1 address that was free a moment ago.
func freeAddr(tb testing.TB) string {
	tb.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		tb.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// syncBuffer is a bytes.Buffer safe for concurrent use.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a running `colocd serve`.
type proc struct {
	tb    testing.TB
	cmd   *exec.Cmd
	out   *syncBuffer
	base  string // http://addr
	token string
	done  chan struct{}
	err   error // after done
}

// startServe runs `colocd serve --config cfg` in dir with extra env.
func startServe(tb testing.TB, dir, cfg, addr, token string, env ...string) *proc {
	tb.Helper()
	return startServeBin(tb, colocdBinary(tb), dir, cfg, addr, token, env...)
}

// startServeBin is startServe with the binary bin.
func startServeBin(tb testing.TB, bin, dir, cfg, addr, token string, env ...string) *proc {
	tb.Helper()
	p := &proc{tb: tb, out: &syncBuffer{}, base: "http://" + addr, token: token, done: make(chan struct{})}
	p.cmd = exec.Command(bin, "serve", "--config", cfg)
	p.cmd.Dir = dir
	p.cmd.Env = append(cleanEnv(), env...)
	p.cmd.Stdout = p.out
	p.cmd.Stderr = p.out
	if err := p.cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	go func() { p.err = p.cmd.Wait(); close(p.done) }()
	tb.Cleanup(func() {
		select {
		case <-p.done:
		default:
			p.cmd.Process.Kill()
			<-p.done
		}
		if tb.Failed() {
			testlogs.Log(tb, fmt.Sprintf("colocd-%d", p.cmd.Process.Pid), p.out.Bytes())
		}
	})
	return p
}

func (s *syncBuffer) Bytes() []byte {
	s.mu.Lock()
	defer s.mu.Unlock()
	return bytes.Clone(s.b.Bytes())
}

// cleanEnv is the environment without COLOCD_* config variables, so the
// developer's shell cannot change the daemon under test.
func cleanEnv() []string {
	var out []string
	for _, kv := range os.Environ() {
		if strings.HasPrefix(kv, "COLOCD_") {
			continue
		}
		out = append(out, kv)
	}
	return out
}

// poll calls f every interval until it returns true or the deadline passes.
func poll(tb testing.TB, what string, deadline time.Duration, f func() bool) {
	tb.Helper()
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	timeout := time.After(deadline)
	for !f() {
		select {
		case <-tick.C:
		case <-timeout:
			tb.Fatalf("timed out after %v waiting for %s", deadline, what)
		}
	}
}

// waitReady polls /readyz.
func (p *proc) waitReady(deadline time.Duration) {
	p.tb.Helper()
	poll(p.tb, "colocd /readyz", deadline, func() bool {
		select {
		case <-p.done:
			p.tb.Fatalf("colocd exited: %v\n%s", p.err, testlogs.Tail(p.out.Bytes(), 4000))
		default:
		}
		resp, err := http.Get(p.base + "/readyz")
		if err != nil {
			return false
		}
		resp.Body.Close()
		return resp.StatusCode == http.StatusOK
	})
}

// kill sends SIGKILL and waits for the process.
func (p *proc) kill() {
	p.tb.Helper()
	p.cmd.Process.Signal(syscall.SIGKILL)
	<-p.done
}

// stop sends SIGTERM and returns how long the process took to exit and the
// exit error (nil for status 0).
func (p *proc) stop(deadline time.Duration) (time.Duration, error) {
	p.tb.Helper()
	t0 := time.Now()
	p.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-p.done:
	case <-time.After(deadline):
		// SIGQUIT makes the Go runtime write every goroutine's stack to
		// the process's output (kept in the test's log) before it exits.
		p.cmd.Process.Signal(syscall.SIGQUIT)
		select {
		case <-p.done:
		case <-time.After(10 * time.Second):
		}
		p.tb.Fatalf("colocd did not exit within %v of SIGTERM (its goroutines, after SIGQUIT, are in its output)", deadline)
	}
	return time.Since(t0), p.err
}

// do sends an authenticated request; body may be nil.
func (p *proc) do(method, path string, body any) (int, []byte) {
	p.tb.Helper()
	var r io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			p.tb.Fatal(err)
		}
		r = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, p.base+path, r)
	if err != nil {
		p.tb.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+p.token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		p.tb.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}

// getJSON GETs path into v, failing on a non-200.
func (p *proc) getJSON(path string, v any) {
	p.tb.Helper()
	code, b := p.do(http.MethodGet, path, nil)
	if code != http.StatusOK {
		p.tb.Fatalf("GET %s: %d %s", path, code, b)
	}
	if err := json.Unmarshal(b, v); err != nil {
		p.tb.Fatalf("GET %s: %v in %.500s", path, err, b)
	}
}

// apiJob is the part of a job the tests read.
type apiJob struct {
	ID    string `json:"id"`
	Kind  string `json:"kind"`
	State string `json:"state"`
	AppID string `json:"app_id"`
}

func (p *proc) job(id string) apiJob {
	var j apiJob
	p.getJSON("/v1/jobs/"+id, &j)
	return j
}

func (p *proc) counts() map[string]int {
	var l struct {
		Counts map[string]int `json:"counts"`
	}
	p.getJSON("/v1/jobs?limit=1", &l)
	return l.Counts
}
