package influxtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Database is the database Start creates; Bucket is its v2-style name.
const (
	Database = "telegraf"
	Bucket   = Database + "/autogen"
)

// Bounds on the server's lifecycle. influxd 1.8 answers /ping in about a
// second; the margins cover a loaded 2-core CI machine running -race tests.
const (
	readyTimeout = 30 * time.Second
	termTimeout  = 10 * time.Second // SIGTERM → SIGKILL
	killTimeout  = 5 * time.Second  // SIGKILL → reaped
	pollEvery    = 20 * time.Millisecond
	startTries   = 3 // a free port can be taken between probe and bind
)

// Option configures Start.
type Option func(*options)

type options struct {
	user, password string
	noFlux         bool
}

// WithoutFlux starts influxd with Flux disabled ([http] flux-enabled =
// false), as many InfluxDB 1.x sites run it: /api/v2/query then refuses
// every query and only InfluxQL (/query) answers.
func WithoutFlux() Option {
	return func(o *options) { o.noFlux = true }
}

// WithAuth turns on InfluxDB authentication and creates an admin user with
// the given credentials before creating the database. Server.Token returns
// "user:password", the form the v2 API of InfluxDB 1.8 accepts as a token.
func WithAuth(user, password string) Option {
	return func(o *options) { o.user, o.password = user, password }
}

// Server is a running influxd.
type Server struct {
	opts    options
	dir     string
	url     string
	logPath string
	client  *http.Client

	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after exited is closed
	stopOnce sync.Once
	stopErr  error
}

// Tool returns the path of an integration binary ("influxd", "telegraf"):
// env COLOCD_<NAME> first, then $HOME/.cache/colocd/tools/bin/<name>, then
// /root/.cache/colocd/bin/<name>. When none exists the test is skipped, or
// failed if COLOCD_REQUIRE_TOOLS=1.
func Tool(t testing.TB, name string) string {
	t.Helper()
	env := "COLOCD_" + strings.ToUpper(name)
	var candidates []string
	if p := os.Getenv(env); p != "" {
		candidates = append(candidates, p)
	}
	if home, err := os.UserHomeDir(); err == nil {
		candidates = append(candidates, filepath.Join(home, ".cache", "colocd", "tools", "bin", name))
	}
	candidates = append(candidates, filepath.Join("/root/.cache/colocd/bin", name))
	for _, p := range candidates {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() && fi.Mode()&0o111 != 0 {
			return p
		}
	}
	msg := fmt.Sprintf("%s not found (set %s or run scripts/install-tools.sh); looked in %s",
		name, env, strings.Join(candidates, ", "))
	if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// Start runs influxd for the duration of the test and returns once it
// answers /ping and the "telegraf" database exists.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	bin := Tool(t, "influxd")
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	var lastErr error
	for try := 0; try < startTries; try++ {
		s, err := start(t, bin, o)
		if err == nil {
			t.Cleanup(func() { s.cleanup(t) })
			if err := s.setup(); err != nil {
				t.Fatalf("influxtest: %v\n%s", err, s.logTail())
			}
			return s
		}
		lastErr = err
	}
	t.Fatalf("influxtest: starting influxd failed %d times: %v", startTries, lastErr)
	return nil
}

func start(t testing.TB, bin string, o options) (*Server, error) {
	dir := t.TempDir()
	ports, err := freePorts(2)
	if err != nil {
		return nil, err
	}
	httpAddr := fmt.Sprintf("127.0.0.1:%d", ports[0])
	rpcAddr := fmt.Sprintf("127.0.0.1:%d", ports[1])
	conf := filepath.Join(dir, "influxd.conf")
	if err := os.WriteFile(conf, []byte(config(dir, httpAddr, rpcAddr, o.user != "", !o.noFlux)), 0o600); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	s := &Server{
		opts:    o,
		dir:     dir,
		url:     "http://" + httpAddr,
		logPath: filepath.Join(dir, "influxd.log"),
		client:  &http.Client{Timeout: 5 * time.Second},
		exited:  make(chan struct{}),
	}
	logf, err := os.Create(s.logPath)
	if err != nil {
		return nil, fmt.Errorf("create log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	s.cmd = exec.Command(bin, "run", "-config", conf)
	s.cmd.Dir = dir
	s.cmd.Stdout, s.cmd.Stderr = logf, logf
	s.cmd.Env = append(os.Environ(), "INFLUXDB_REPORTING_DISABLED=true")
	if err := s.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		s.waitErr = s.cmd.Wait()
		close(s.exited)
	}()
	if err := s.waitReady(); err != nil {
		_ = s.Stop()
		return nil, fmt.Errorf("%w\n%s", err, s.logTail())
	}
	return s, nil
}

// config is an influxd 1.8 configuration confined to dir and loopback.
func config(dir, httpAddr, rpcAddr string, auth, flux bool) string {
	q := func(p string) string { return fmt.Sprintf("%q", filepath.Join(dir, p)) }
	return fmt.Sprintf(`reporting-disabled = true
bind-address = %q

[meta]
  dir = %s
  logging-enabled = false

[data]
  dir = %s
  wal-dir = %s
  wal-fsync-delay = "0s"
  query-log-enabled = false
  trace-logging-enabled = false

[retention]
  enabled = false

[shard-precreation]
  enabled = false

[monitor]
  store-enabled = false

[subscriber]
  enabled = false

[continuous_queries]
  enabled = false
  log-enabled = false

[http]
  enabled = true
  bind-address = %q
  auth-enabled = %t
  log-enabled = false
  suppress-write-log = true
  write-tracing = false
  flux-enabled = %t
  flux-log-enabled = false
  pprof-enabled = false

[logging]
  level = "error"
  suppress-logo = true
`, rpcAddr, q("meta"), q("data"), q("wal"), httpAddr, auth, flux)
}

// freePorts asks the kernel for n distinct free loopback ports.
func freePorts(n int) ([]int, error) {
	ports := make([]int, 0, n)
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
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func (s *Server) waitReady() error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		resp, err := s.client.Get(s.url + "/ping")
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusNoContent {
				return nil
			}
		}
		select {
		case <-s.exited:
			return fmt.Errorf("influxd exited before it was ready: %v", s.waitErr)
		case <-deadline.C:
			return fmt.Errorf("influxd not ready on %s after %v (last error: %v)", s.url, readyTimeout, err)
		case <-tick.C:
		}
	}
}

func (s *Server) setup() error {
	if s.opts.user != "" {
		// The first admin user may be created without credentials.
		q := fmt.Sprintf("CREATE USER %s WITH PASSWORD '%s' WITH ALL PRIVILEGES",
			influxQLIdent(s.opts.user), strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s.opts.password))
		if err := s.query(q, false); err != nil {
			return err
		}
	}
	return s.query("CREATE DATABASE "+Database, true)
}

func influxQLIdent(s string) string {
	return `"` + strings.NewReplacer(`\`, `\\`, `"`, `\"`).Replace(s) + `"`
}

func (s *Server) query(q string, auth bool) error {
	form := url.Values{"q": {q}}
	req, err := http.NewRequest(http.MethodPost, s.url+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	if auth && s.opts.user != "" {
		req.SetBasicAuth(s.opts.user, s.opts.password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("query %q: %w", q, err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"error"`) {
		return fmt.Errorf("query %q: status %d: %s", q, resp.StatusCode, body)
	}
	return nil
}

// URL is the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.url }

// Bucket is "telegraf/autogen", the v2 API name of the database Start made.
func (s *Server) Bucket() string { return Bucket }

// Token is the v2 API token for this server: "user:password" with WithAuth,
// otherwise "".
func (s *Server) Token() string {
	if s.opts.user == "" {
		return ""
	}
	return s.opts.user + ":" + s.opts.password
}

// Dir is the server's temporary directory (config, data, log).
func (s *Server) Dir() string { return s.dir }

// Write stores line protocol (nanosecond timestamps) in the "telegraf"
// database through the 1.x /write endpoint, failing the test on error.
func (s *Server) Write(t testing.TB, lines string) {
	t.Helper()
	if err := s.WriteErr(context.Background(), lines); err != nil {
		t.Fatalf("influxtest: %v", err)
	}
}

// WriteErr is Write returning the error instead of failing the test, for use
// outside the test goroutine.
func (s *Server) WriteErr(ctx context.Context, lines string) error {
	u := s.url + "/write?" + url.Values{"db": {Database}, "precision": {"ns"}}.Encode()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(lines))
	if err != nil {
		return err
	}
	if s.opts.user != "" {
		req.SetBasicAuth(s.opts.user, s.opts.password)
	}
	resp, err := s.client.Do(req)
	if err != nil {
		return fmt.Errorf("write: %w", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusNoContent {
		return fmt.Errorf("write: status %d: %s", resp.StatusCode, body)
	}
	return nil
}

// Stop terminates influxd (SIGTERM, then SIGKILL after a bound) and waits
// until it has exited. It is idempotent; the test cleanup calls it too.
func (s *Server) Stop() error {
	s.stopOnce.Do(func() { s.stopErr = s.stop() })
	return s.stopErr
}

func (s *Server) stop() error {
	select {
	case <-s.exited:
		return nil
	default:
	}
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal influxd: %w", err)
	}
	term := time.NewTimer(termTimeout)
	defer term.Stop()
	select {
	case <-s.exited:
		return nil
	case <-term.C:
	}
	_ = s.cmd.Process.Kill()
	kill := time.NewTimer(killTimeout)
	defer kill.Stop()
	select {
	case <-s.exited:
		return fmt.Errorf("influxd ignored SIGTERM for %v and was killed", termTimeout)
	case <-kill.C:
		return fmt.Errorf("influxd (pid %d) did not exit %v after SIGKILL", s.cmd.Process.Pid, killTimeout)
	}
}

// PID is the influxd process id, e.g. for reading its CPU time.
func (s *Server) PID() int { return s.cmd.Process.Pid }

// Exited is closed once the influxd process has exited.
func (s *Server) Exited() <-chan struct{} { return s.exited }

func (s *Server) cleanup(t testing.TB) {
	if err := s.Stop(); err != nil {
		t.Errorf("influxtest: %v", err)
	}
	select {
	case <-s.exited:
	default:
		t.Errorf("influxtest: influxd (pid %d) still running after cleanup", s.cmd.Process.Pid)
	}
	if t.Failed() {
		t.Logf("influxtest: influxd log tail:\n%s", s.logTail())
	}
}

// logTail is the end of influxd's log, for failure messages.
func (s *Server) logTail() string {
	b, err := os.ReadFile(s.logPath)
	if err != nil {
		return fmt.Sprintf("(no influxd log: %v)", err)
	}
	const max = 4 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}
