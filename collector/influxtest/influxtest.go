package influxtest

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/internal/testproc"
)

// database is the database Start creates; bucket is its v2-style name.
const (
	database = "telegraf"
	bucket   = database + "/autogen"
)

// startTries bounds Start's attempts: a free port can be taken between
// probe and bind. The lifecycle bounds are testproc's defaults.
const startTries = 3

// option configures Start.
type option func(*options)

type options struct {
	user, password string
	noFlux         bool
}

// WithoutFlux starts influxd with Flux disabled ([http] flux-enabled =
// false), as many InfluxDB 1.x sites run it: /api/v2/query then refuses
// every query and only InfluxQL (/query) answers.
func WithoutFlux() option {
	return func(o *options) { o.noFlux = true }
}

// WithAuth turns on InfluxDB authentication and creates an admin user with
// the given credentials before creating the database. Server.Token returns
// "user:password", the form the v2 API of InfluxDB 1.8 accepts as a token.
func WithAuth(user, password string) option {
	return func(o *options) { o.user, o.password = user, password }
}

// Server is a running influxd.
type Server struct {
	opts   options
	dir    string
	url    string
	client *http.Client
	proc   *testproc.Proc
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
func Start(t testing.TB, opts ...option) *Server {
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
			t.Cleanup(func() { s.proc.Cleanup(t) })
			if err := s.setup(); err != nil {
				t.Fatalf("influxtest: %v\n%s", err, s.proc.LogTail())
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
	addrs, err := testproc.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	httpAddr, rpcAddr := addrs[0], addrs[1]
	conf := filepath.Join(dir, "influxd.conf")
	if err := os.WriteFile(conf, []byte(config(dir, httpAddr, rpcAddr, o.user != "", !o.noFlux)), 0o600); err != nil {
		return nil, fmt.Errorf("write config: %w", err)
	}
	s := &Server{
		opts:   o,
		dir:    dir,
		url:    "http://" + httpAddr,
		client: &http.Client{Timeout: 5 * time.Second},
	}
	s.proc, err = testproc.Start(t.Context(), testproc.Spec{
		Name:  "influxd",
		Owner: "influxtest",
		Path:  bin,
		Args:  []string{"run", "-config", conf},
		Dir:   dir,
		Env:   []string{"INFLUXDB_REPORTING_DISABLED=true"},
		Log:   filepath.Join(dir, "influxd.log"),
		Ready: testproc.Ready{URL: s.url + "/ping", Status: http.StatusNoContent},
	})
	if err != nil {
		return nil, err
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

func (s *Server) setup() error {
	if s.opts.user != "" {
		// The first admin user may be created without credentials.
		q := fmt.Sprintf("CREATE USER %s WITH PASSWORD '%s' WITH ALL PRIVILEGES",
			influxQLIdent(s.opts.user), strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(s.opts.password))
		if err := s.query(q, false); err != nil {
			return err
		}
	}
	return s.query("CREATE DATABASE "+database, true)
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
func (s *Server) Bucket() string { return bucket }

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
	u := s.url + "/write?" + url.Values{"db": {database}, "precision": {"ns"}}.Encode()
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
func (s *Server) Stop() error { return s.proc.Stop() }

// PID is the influxd process id, e.g. for reading its CPU time.
func (s *Server) PID() int { return s.proc.PID() }

// Exited is closed once the influxd process has exited.
func (s *Server) Exited() <-chan struct{} { return s.proc.Exited() }
