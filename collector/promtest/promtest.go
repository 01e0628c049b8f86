package promtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/collector/internal/testproc"
)

// Bounds on starting a process; the rest are testproc's defaults.
// Prometheus 2.42 is ready in about a second, node_exporter at once; the
// ready margin, twice testproc's, covers a loaded 2-core machine running
// -race tests and a TSDB holding a large backfill.
const (
	readyTimeout = 60 * time.Second
	startTries   = 3 // a free port can be taken between probe and bind
)

// retention keeps backfilled samples of any year: Prometheus deletes
// blocks older than its retention at startup, and the default is 15 days.
const retention = "100y"

// option configures Start.
type option func(*options)

type options struct {
	samples *Samples
	scrapes []scrape
}

type scrape struct {
	job      string
	interval time.Duration
	targets  []string
}

// WithSamples backfills s into the TSDB with promtool before Prometheus
// starts.
func WithSamples(s *Samples) option { return func(o *options) { o.samples = s } }

// WithScrape adds a scrape job over the given host:port targets, scraped
// every interval (whole milliseconds) with a scrape timeout of interval.
func WithScrape(job string, interval time.Duration, targets ...string) option {
	return func(o *options) {
		o.scrapes = append(o.scrapes, scrape{job: job, interval: interval, targets: targets})
	}
}

// Server is a running prometheus.
type Server struct {
	proc
	dir    string
	url    string
	client *http.Client
}

// Start runs prometheus for the duration of the test and returns once it
// answers /-/ready, with any WithSamples data backfilled.
func Start(t testing.TB, opts ...option) *Server {
	t.Helper()
	bin := influxtest.Tool(t, "prometheus")
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	dir := t.TempDir()
	dataDir := filepath.Join(dir, "data")
	if o.samples != nil {
		if err := backfill(influxtest.Tool(t, "promtool"), dir, dataDir, o.samples); err != nil {
			t.Fatalf("promtest: %v", err)
		}
	}
	conf := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(conf, []byte(config(o)), 0o600); err != nil {
		t.Fatalf("promtest: write config: %v", err)
	}
	p, addr := run(t, "prometheus", bin, dir, "/-/ready", func(addr string) []string {
		return []string{
			"--config.file=" + conf,
			"--storage.tsdb.path=" + dataDir,
			"--storage.tsdb.retention.time=" + retention,
			"--web.listen-address=" + addr,
		}
	})
	return &Server{proc: proc{p}, dir: dir, url: "http://" + addr, client: &http.Client{Timeout: 5 * time.Second}}
}

// config is a prometheus.yml with the WithScrape jobs, if any.
func config(o options) string {
	var b strings.Builder
	b.WriteString("global:\n  evaluation_interval: 1m\n")
	if len(o.scrapes) > 0 {
		b.WriteString("scrape_configs:\n")
	}
	for _, sc := range o.scrapes {
		iv := fmt.Sprintf("%dms", sc.interval.Milliseconds())
		targets := make([]string, len(sc.targets))
		for i, tg := range sc.targets {
			targets[i] = strconv.Quote(tg)
		}
		fmt.Fprintf(&b, "  - job_name: %s\n    scrape_interval: %s\n    scrape_timeout: %s\n",
			strconv.Quote(sc.job), iv, iv)
		fmt.Fprintf(&b, "    static_configs:\n      - targets: [%s]\n", strings.Join(targets, ", "))
	}
	return b.String()
}

// backfill writes s as OpenMetrics into dir and turns it into TSDB blocks
// in dataDir.
func backfill(promtool, dir, dataDir string, s *Samples) error {
	in := filepath.Join(dir, "backfill.om")
	f, err := os.Create(in)
	if err != nil {
		return fmt.Errorf("backfill: %w", err)
	}
	_, werr := s.WriteTo(f)
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("backfill: write %s: %w", in, err)
	}
	cmd := exec.Command(promtool, "tsdb", "create-blocks-from", "openmetrics", in, dataDir)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("backfill: %s: %w\n%s", strings.Join(cmd.Args, " "), err, testproc.Tail(out))
	}
	return nil
}

// URL is the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.url }

// Dir is the server's temporary directory (config, data, logs).
func (s *Server) Dir() string { return s.dir }

// sample is one element of an instant vector.
type sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query at at (now when zero) and returns its
// vector, failing the test on any error.
func (s *Server) Query(t testing.TB, q string, at time.Time) []sample {
	t.Helper()
	v, err := s.QueryErr(context.Background(), q, at)
	if err != nil {
		t.Fatalf("promtest: %v", err)
	}
	return v
}

// QueryErr is Query returning the error, for use outside the test
// goroutine.
func (s *Server) QueryErr(ctx context.Context, q string, at time.Time) ([]sample, error) {
	form := url.Values{"query": {q}}
	if !at.IsZero() {
		form.Set("time", strconv.FormatFloat(float64(at.UnixMilli())/1e3, 'f', 3, 64))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url+"/api/v1/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := s.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", q, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("query %q: %w", q, err)
	}
	var ans struct {
		Status string `json:"status"`
		Data   struct {
			ResultType string `json:"resultType"`
			Result     []struct {
				Metric map[string]string `json:"metric"`
				Value  [2]any            `json:"value"`
			} `json:"result"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &ans); err != nil || ans.Status != "success" || ans.Data.ResultType != "vector" {
		return nil, fmt.Errorf("query %q: status %d: %s", q, resp.StatusCode, testproc.Tail(body))
	}
	out := make([]sample, len(ans.Data.Result))
	for i, r := range ans.Data.Result {
		str, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", q, r.Value[1], err)
		}
		out[i] = sample{Metric: r.Metric, Value: v}
	}
	return out, nil
}

// WaitScrapes waits until every scrape target has been scraped
// successfully at least n times, failing the test after a bound of 30 s
// plus n scrape intervals of 1 s.
func (s *Server) WaitScrapes(t testing.TB, n int) {
	t.Helper()
	// Successful scrapes per target: up is 1 after each of them.
	s.waitQuery(t, "min(sum_over_time(up[1h]))", 30*time.Second+time.Duration(n)*time.Second,
		func(v float64) bool { return v >= float64(n) })
}

// WaitDown waits until the latest scrape of every target has failed, so
// Prometheus has marked the targets' series stale, failing the test after
// 30 s.
func (s *Server) WaitDown(t testing.TB) {
	t.Helper()
	s.waitQuery(t, "max(up)", 30*time.Second, func(v float64) bool { return v == 0 })
}

func (s *Server) waitQuery(t testing.TB, q string, bound time.Duration, ok func(float64) bool) {
	t.Helper()
	deadline := time.NewTimer(bound)
	defer deadline.Stop()
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	for {
		v, err := s.QueryErr(context.Background(), q, time.Time{})
		if err == nil && len(v) == 1 && ok(v[0].Value) {
			return
		}
		select {
		case <-s.Exited():
			t.Fatalf("promtest: prometheus exited while waiting on %s: %v", q, s.p.ExitErr())
		case <-deadline.C:
			t.Fatalf("promtest: %s = %v (%v) after %v\n%s", q, v, err, bound, s.p.LogTail())
		case <-tick.C:
		}
	}
}

// NodeExporter is a running node_exporter with the cpu, diskstats and
// netdev collectors.
type NodeExporter struct {
	proc
	addr string
}

// StartNodeExporter runs node_exporter for the duration of the test and
// returns once it serves /metrics.
func StartNodeExporter(t testing.TB) *NodeExporter {
	t.Helper()
	bin := influxtest.Tool(t, "node_exporter")
	p, addr := run(t, "node_exporter", bin, t.TempDir(), "/metrics", func(addr string) []string {
		return []string{
			"--web.listen-address=" + addr,
			"--web.disable-exporter-metrics",
			"--collector.disable-defaults",
			"--collector.cpu", "--collector.diskstats", "--collector.netdev",
		}
	})
	return &NodeExporter{proc: proc{p}, addr: addr}
}

// Addr is node_exporter's listen address, 127.0.0.1:<port>, a scrape
// target.
func (n *NodeExporter) Addr() string { return n.addr }

// run starts name on a free loopback address, in dir with a log there,
// and returns once GET readyPath answers 200, trying again when another
// process took the address first. The test cleanup stops it.
func run(t testing.TB, name, bin, dir, readyPath string, args func(addr string) []string) (*testproc.Proc, string) {
	t.Helper()
	var lastErr error
	for try := range startTries {
		addr, err := testproc.FreeAddr()
		if err != nil {
			t.Fatalf("promtest: %v", err)
		}
		p, err := testproc.Start(t.Context(), testproc.Spec{
			Name:  name,
			Owner: "promtest",
			Path:  bin,
			Args:  args(addr),
			Dir:   dir,
			Log:   filepath.Join(dir, fmt.Sprintf("%s-%d.log", name, try)),
			Ready: testproc.Ready{URL: "http://" + addr + readyPath, Status: http.StatusOK},
		}, testproc.WithReadyTimeout(readyTimeout))
		if err == nil {
			t.Cleanup(func() { p.Cleanup(t) })
			return p, addr
		}
		lastErr = err
	}
	t.Fatalf("promtest: starting %s failed %d times: %v", name, startTries, lastErr)
	return nil, ""
}

// proc gives Server and NodeExporter the methods of their process.
type proc struct{ p *testproc.Proc }

// Stop terminates the process (SIGTERM, then SIGKILL after a bound) and
// waits until it has exited. It is idempotent; the test cleanup calls it
// too.
func (p *proc) Stop() error { return p.p.Stop() }

// PID is the process id, e.g. for reading its CPU time.
func (p *proc) PID() int { return p.p.PID() }

// Exited is closed once the process has exited.
func (p *proc) Exited() <-chan struct{} { return p.p.Exited() }

// Samples collects samples of series and writes them as the OpenMetrics
// text `promtool tsdb create-blocks-from openmetrics` reads: one line per
// sample with its timestamp in seconds, the samples of a metric name
// together, each series' in time order, then "# EOF". No TYPE lines, so
// every family is "unknown", which Prometheus stores like any other. The
// zero value is empty and ready to use.
type Samples struct {
	names  []string            // metric names in first-added order
	series map[string][]string // metric name → series keys in first-added order
	points map[string]map[int64]float64
}

// Add records value v of the series name{labels} at at, to the
// millisecond; a second value at the same millisecond replaces the first.
// Names and label names must be valid Prometheus names (promtool reports
// those that are not); label values may hold any UTF-8.
func (s *Samples) Add(name string, labels map[string]string, at time.Time, v float64) {
	if s.series == nil {
		s.series, s.points = map[string][]string{}, map[string]map[int64]float64{}
	}
	key := seriesKey(name, labels)
	pts := s.points[key]
	if pts == nil {
		pts = map[int64]float64{}
		s.points[key] = pts
		if _, ok := s.series[name]; !ok {
			s.names = append(s.names, name)
		}
		s.series[name] = append(s.series[name], key)
	}
	pts[at.UnixMilli()] = v
}

// Len is the number of samples.
func (s *Samples) Len() int {
	n := 0
	for _, pts := range s.points {
		n += len(pts)
	}
	return n
}

// WriteTo writes the OpenMetrics text.
func (s *Samples) WriteTo(w io.Writer) (int64, error) {
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<16)
	for _, name := range s.names {
		for _, key := range s.series[name] {
			pts := s.points[key]
			times := make([]int64, 0, len(pts))
			for ms := range pts {
				times = append(times, ms)
			}
			slices.Sort(times)
			for _, ms := range times {
				bw.WriteString(key)
				bw.WriteByte(' ')
				bw.WriteString(strconv.FormatFloat(pts[ms], 'g', -1, 64))
				bw.WriteByte(' ')
				bw.WriteString(strconv.FormatFloat(float64(ms)/1e3, 'f', -1, 64))
				bw.WriteByte('\n')
			}
		}
	}
	bw.WriteString("# EOF\n")
	err := bw.Flush()
	return cw.n, err
}

// String is the OpenMetrics text.
func (s *Samples) String() string {
	var b strings.Builder
	_, _ = s.WriteTo(&b)
	return b.String()
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.n += int64(n)
	return n, err
}

// seriesKey is name{a="1",b="2"} with the labels sorted and the values
// escaped as OpenMetrics requires (backslash, double quote, line feed).
func seriesKey(name string, labels map[string]string) string {
	keys := make([]string, 0, len(labels))
	for k := range labels {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('{')
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteString(`="`)
		b.WriteString(labelEscaper.Replace(labels[k]))
		b.WriteByte('"')
	}
	b.WriteByte('}')
	return b.String()
}

var labelEscaper = strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`)
