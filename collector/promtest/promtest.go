package promtest

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/influxtest"
)

// Bounds on a process's lifecycle. Prometheus 2.42 is ready in about a
// second, node_exporter at once; the margins cover a loaded 2-core machine
// running -race tests, and a TSDB holding a large backfill.
const (
	readyTimeout = 60 * time.Second
	termTimeout  = 10 * time.Second // SIGTERM → SIGKILL
	killTimeout  = 5 * time.Second  // SIGKILL → reaped
	pollEvery    = 20 * time.Millisecond
	startTries   = 3 // a free port can be taken between probe and bind
)

// Retention keeps backfilled samples of any year: Prometheus deletes
// blocks older than its retention at startup, and the default is 15 days.
const Retention = "100y"

// Option configures Start.
type Option func(*options)

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
func WithSamples(s *Samples) Option { return func(o *options) { o.samples = s } }

// WithScrape adds a scrape job over the given host:port targets, scraped
// every interval (whole milliseconds) with a scrape timeout of interval.
func WithScrape(job string, interval time.Duration, targets ...string) Option {
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
func Start(t testing.TB, opts ...Option) *Server {
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
	var lastErr error
	for try := range startTries {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("promtest: %v", err)
		}
		s := &Server{dir: dir, url: "http://" + addr, client: &http.Client{Timeout: 5 * time.Second}}
		err = s.start("prometheus", bin, dir, filepath.Join(dir, fmt.Sprintf("prometheus-%d.log", try)),
			"--config.file="+conf,
			"--storage.tsdb.path="+dataDir,
			"--storage.tsdb.retention.time="+Retention,
			"--web.listen-address="+addr,
		)
		if err == nil {
			err = s.waitReady(s.client, s.url+"/-/ready")
		}
		if err == nil {
			t.Cleanup(func() { s.cleanup(t) })
			return s
		}
		_ = s.Stop()
		lastErr = fmt.Errorf("%w\n%s", err, s.logTail())
	}
	t.Fatalf("promtest: starting prometheus failed %d times: %v", startTries, lastErr)
	return nil
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
		return fmt.Errorf("backfill: %s: %w\n%s", strings.Join(cmd.Args, " "), err, tail(out))
	}
	return nil
}

// URL is the server's base URL, http://127.0.0.1:<port>.
func (s *Server) URL() string { return s.url }

// Dir is the server's temporary directory (config, data, logs).
func (s *Server) Dir() string { return s.dir }

// Sample is one element of an instant vector.
type Sample struct {
	Metric map[string]string
	Value  float64
}

// Query runs an instant query at at (now when zero) and returns its
// vector, failing the test on any error.
func (s *Server) Query(t testing.TB, q string, at time.Time) []Sample {
	t.Helper()
	v, err := s.QueryErr(context.Background(), q, at)
	if err != nil {
		t.Fatalf("promtest: %v", err)
	}
	return v
}

// QueryErr is Query returning the error, for use outside the test
// goroutine.
func (s *Server) QueryErr(ctx context.Context, q string, at time.Time) ([]Sample, error) {
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
		return nil, fmt.Errorf("query %q: status %d: %s", q, resp.StatusCode, tail(body))
	}
	out := make([]Sample, len(ans.Data.Result))
	for i, r := range ans.Data.Result {
		str, _ := r.Value[1].(string)
		v, err := strconv.ParseFloat(str, 64)
		if err != nil {
			return nil, fmt.Errorf("query %q: value %v: %w", q, r.Value[1], err)
		}
		out[i] = Sample{Metric: r.Metric, Value: v}
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
		case <-s.exited:
			t.Fatalf("promtest: prometheus exited while waiting on %s: %v", q, s.waitErr)
		case <-deadline.C:
			t.Fatalf("promtest: %s = %v (%v) after %v\n%s", q, v, err, bound, s.logTail())
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
	dir := t.TempDir()
	client := &http.Client{Timeout: 5 * time.Second}
	var lastErr error
	for try := range startTries {
		addr, err := freeAddr()
		if err != nil {
			t.Fatalf("promtest: %v", err)
		}
		n := &NodeExporter{addr: addr}
		err = n.start("node_exporter", bin, dir, filepath.Join(dir, fmt.Sprintf("node_exporter-%d.log", try)),
			"--web.listen-address="+addr,
			"--web.disable-exporter-metrics",
			"--collector.disable-defaults",
			"--collector.cpu", "--collector.diskstats", "--collector.netdev",
		)
		if err == nil {
			err = n.waitReady(client, "http://"+addr+"/metrics")
		}
		if err == nil {
			t.Cleanup(func() { n.cleanup(t) })
			return n
		}
		_ = n.Stop()
		lastErr = fmt.Errorf("%w\n%s", err, n.logTail())
	}
	t.Fatalf("promtest: starting node_exporter failed %d times: %v", startTries, lastErr)
	return nil
}

// Addr is node_exporter's listen address, 127.0.0.1:<port>, a scrape
// target.
func (n *NodeExporter) Addr() string { return n.addr }

// proc is a child process with a log file.
type proc struct {
	name    string
	logPath string

	cmd      *exec.Cmd
	exited   chan struct{} // closed once the process has been reaped
	waitErr  error         // valid after exited is closed
	stopOnce sync.Once
	stopErr  error
}

func (p *proc) start(name, bin, dir, logPath string, args ...string) error {
	p.name, p.logPath, p.exited = name, logPath, make(chan struct{})
	logf, err := os.Create(logPath)
	if err != nil {
		close(p.exited)
		return fmt.Errorf("create log: %w", err)
	}
	defer logf.Close() // the child has its own descriptor
	p.cmd = exec.Command(bin, args...)
	p.cmd.Dir = dir
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		close(p.exited)
		return fmt.Errorf("start %s: %w", bin, err)
	}
	go func() {
		p.waitErr = p.cmd.Wait()
		close(p.exited)
	}()
	return nil
}

// waitReady polls u until it answers 200.
func (p *proc) waitReady(client *http.Client, u string) error {
	deadline := time.NewTimer(readyTimeout)
	defer deadline.Stop()
	tick := time.NewTicker(pollEvery)
	defer tick.Stop()
	for {
		resp, err := client.Get(u)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("status %d", resp.StatusCode)
		}
		select {
		case <-p.exited:
			return fmt.Errorf("%s exited before it was ready: %v", p.name, p.waitErr)
		case <-deadline.C:
			return fmt.Errorf("%s not ready on %s after %v (last error: %v)", p.name, u, readyTimeout, err)
		case <-tick.C:
		}
	}
}

// Stop terminates the process (SIGTERM, then SIGKILL after a bound) and
// waits until it has exited. It is idempotent; the test cleanup calls it
// too.
func (p *proc) Stop() error {
	p.stopOnce.Do(func() { p.stopErr = p.stop() })
	return p.stopErr
}

func (p *proc) stop() error {
	if p.cmd == nil || p.cmd.Process == nil {
		return nil
	}
	select {
	case <-p.exited:
		return nil
	default:
	}
	if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil && !errors.Is(err, os.ErrProcessDone) {
		return fmt.Errorf("signal %s: %w", p.name, err)
	}
	term := time.NewTimer(termTimeout)
	defer term.Stop()
	select {
	case <-p.exited:
		return nil
	case <-term.C:
	}
	_ = p.cmd.Process.Kill()
	kill := time.NewTimer(killTimeout)
	defer kill.Stop()
	select {
	case <-p.exited:
		return fmt.Errorf("%s ignored SIGTERM for %v and was killed", p.name, termTimeout)
	case <-kill.C:
		return fmt.Errorf("%s (pid %d) did not exit %v after SIGKILL", p.name, p.cmd.Process.Pid, killTimeout)
	}
}

// PID is the process id, e.g. for reading its CPU time.
func (p *proc) PID() int { return p.cmd.Process.Pid }

// Exited is closed once the process has exited.
func (p *proc) Exited() <-chan struct{} { return p.exited }

func (p *proc) cleanup(t testing.TB) {
	if err := p.Stop(); err != nil {
		t.Errorf("promtest: %v", err)
	}
	select {
	case <-p.exited:
	default:
		t.Errorf("promtest: %s (pid %d) still running after cleanup", p.name, p.cmd.Process.Pid)
	}
	if t.Failed() {
		t.Logf("promtest: %s log tail:\n%s", p.name, p.logTail())
	}
}

// logTail is the end of the process's log, for failure messages.
func (p *proc) logTail() string {
	b, err := os.ReadFile(p.logPath)
	if err != nil {
		return fmt.Sprintf("(no %s log: %v)", p.name, err)
	}
	return tail(b)
}

func tail(b []byte) string {
	const max = 4 << 10
	if len(b) > max {
		b = b[len(b)-max:]
	}
	return string(b)
}

// freeAddr asks the kernel for a free loopback port.
func freeAddr() (string, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", fmt.Errorf("find free port: %w", err)
	}
	defer l.Close()
	return l.Addr().String(), nil
}

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
