package collector

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/colocd/colocd/goodness"
)

// PrometheusConfig configures a Prometheus reader (colocd's config
// section prometheus, decoded straight into it by its mapstructure tags).
// It reads node_exporter's metrics: node_cpu_seconds_total,
// node_disk_read_bytes_total, node_disk_written_bytes_total,
// node_network_receive_bytes_total and node_network_transmit_bytes_total.
type PrometheusConfig struct {
	// URL is Prometheus's base URL, http(s)://host:9090, with its
	// --web.route-prefix if any; no query.
	URL string `mapstructure:"url"`
	// BearerToken, when set, is sent as "Authorization: Bearer <token>",
	// for a proxy in front of Prometheus.
	BearerToken string `mapstructure:"bearer_token"`
	// CAFile is a PEM bundle of the CAs that sign an https URL's
	// certificate; it replaces the system's roots. NewPrometheus reads it.
	CAFile string `mapstructure:"ca_file"`
	// HostLabel is the label whose value names a node ("instance").
	HostLabel string `mapstructure:"host_label"`
	// StripPort turns a host label value host:port into host, so that
	// the instance "node1:9100" is the node "node1" and "[::1]:9100" is
	// "::1". Values without a numeric port are used as they are.
	StripPort bool `mapstructure:"strip_port"`
	// Job, when set, restricts every query to series with job="<Job>".
	Job string `mapstructure:"job"`
	// Timeout bounds each call (all of one Usage's queries together, or a
	// ping) including reading the answers.
	Timeout time.Duration `mapstructure:"timeout"`
	// StaleAfter is the largest age, at the end of a window, of a host's
	// newest cpu sample for its usage to count; set it to a little more
	// than the scrape interval (e.g. 30s for 15s).
	StaleAfter time.Duration `mapstructure:"stale_after"`
	// DiskExclude, NetInclude and NetExclude are Go regular expressions
	// matched against node_exporter's whole device label, as
	// Schema.DiskExclude, Schema.NetInclude and Schema.NetExclude are
	// against Telegraf's tags; an empty NetInclude includes every
	// interface.
	DiskExclude []string `mapstructure:"disk_exclude"`
	NetInclude  []string `mapstructure:"net_include"`
	NetExclude  []string `mapstructure:"net_exclude"`
	// Pressure also reads node_pressure_io_waiting_seconds_total and
	// node_pressure_cpu_waiting_seconds_total (Linux pressure stall
	// information, io and cpu "some"; node_exporter's pressure collector,
	// on by default on kernels ≥ 4.20) as each host's
	// goodness.Usage.IOPressure and CPUPressure, with Usage.Pressure set
	// for a host that has both. The goodness counts the I/O pressure
	// beside iowait; the profile model reads both as the share of their
	// demand a saturated node's containers did not get.
	Pressure bool `mapstructure:"pressure"`
	// MaxAnswerBytes caps the body of one query's answer (cap.go), which
	// the reader decodes whole; zero means defaultPromMaxAnswerBytes. An
	// answer over it fails the read with errTooLarge.
	MaxAnswerBytes int64 `mapstructure:"max_answer_bytes"`
	// HostPatternMax is the most hosts Usage names in a host matcher (a
	// regex of the quoted names). Asked about more, it reads every host
	// and keeps the requested ones. Zero means defaultHostPatternMax.
	HostPatternMax int `mapstructure:"-"`
	// HTTPClient is used for every request when set (CAFile must then be
	// empty: the client's transport decides TLS); otherwise a client of
	// the Prometheus reader's own. Either way Timeout applies.
	HTTPClient *http.Client `mapstructure:"-"`
}

// DefaultPrometheusConfig reads a local Prometheus's node_exporter targets
// by their instance label, ports stripped, with DefaultSchema's disk and
// interface exclusions.
func DefaultPrometheusConfig() PrometheusConfig {
	s := DefaultSchema()
	return PrometheusConfig{
		URL:            "http://127.0.0.1:9090",
		HostLabel:      "instance",
		StripPort:      true,
		Timeout:        10 * time.Second,
		StaleAfter:     30 * time.Second,
		MaxAnswerBytes: defaultPromMaxAnswerBytes,
		DiskExclude:    s.DiskExclude,
		NetExclude:     s.NetExclude,
	}
}

// Validate reports the first invalid field, naming it. It does no I/O: an
// unreadable CAFile is reported by NewPrometheus.
func (c PrometheusConfig) Validate() error {
	_, err := c.compile()
	return err
}

// promCompiled is a validated PrometheusConfig with its URLs built and
// its pattern lists joined.
type promCompiled struct {
	PrometheusConfig
	queryURL, readyURL                  string
	redactedURL                         string // for messages: no password
	timeoutParam                        string // Timeout for Prometheus's own query timeout
	diskExclude, netInclude, netExclude string // "" = no pattern
}

func (c PrometheusConfig) compile() (promCompiled, error) {
	out := promCompiled{PrometheusConfig: c}
	u, err := checkURL("url", c.URL)
	if err != nil {
		return out, err
	}
	base := strings.TrimRight(c.URL, "/")
	out.queryURL, out.readyURL = base+"/api/v1/query", base+"/-/ready"
	out.redactedURL = u.Redacted()
	if !utf8.ValidString(c.BearerToken) || strings.ContainsFunc(c.BearerToken, isCTL) {
		return out, invalid("bearer_token", "is not UTF-8 without control characters") // never echo a secret
	}
	if c.CAFile != "" && c.HTTPClient != nil {
		return out, invalid("ca_file", "is set together with HTTPClient, whose transport decides TLS")
	}
	if err := checkHostLabel(c.HostLabel); err != nil {
		return out, err
	}
	if c.Job != "" {
		if err := checkName("job", c.Job); err != nil {
			return out, err
		}
	}
	if out.HostPatternMax, err = checkBounds(c.Timeout, c.StaleAfter, c.HostPatternMax); err != nil {
		return out, err
	}
	if out.MaxAnswerBytes, err = checkMaxAnswer(c.MaxAnswerBytes, defaultPromMaxAnswerBytes); err != nil {
		return out, err
	}
	out.timeoutParam = fmt.Sprintf("%dms", (c.Timeout+time.Millisecond-1)/time.Millisecond)
	if out.diskExclude, err = alternation("disk_exclude", c.DiskExclude); err != nil {
		return out, err
	}
	if out.netInclude, err = alternation("net_include", c.NetInclude); err != nil {
		return out, err
	}
	if out.netExclude, err = alternation("net_exclude", c.NetExclude); err != nil {
		return out, err
	}
	return out, nil
}

func isCTL(r rune) bool { return r < 0x20 || r == 0x7f }

// Prometheus reads node usage from Prometheus's HTTP API, where
// node_exporter's metrics are scraped. It is safe for concurrent use.
// NewPrometheus does no network I/O; Close releases idle connections.
type Prometheus struct {
	cfg       promCompiled
	client    *http.Client
	maxAnswer int64
}

// NewPrometheus validates cfg, reads CAFile, and returns a Prometheus
// reader. It does not connect.
func NewPrometheus(cfg PrometheusConfig) (*Prometheus, error) {
	cc, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	client := cc.HTTPClient
	if client == nil {
		tr := http.DefaultTransport.(*http.Transport).Clone()
		if cc.CAFile != "" {
			pem, err := os.ReadFile(cc.CAFile)
			if err != nil {
				return nil, invalid("ca_file", "%v", err)
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return nil, invalid("ca_file", "%s holds no PEM certificate", cc.CAFile)
			}
			tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
		}
		client = &http.Client{Transport: tr}
	}
	return &Prometheus{cfg: cc, client: client, maxAnswer: cc.MaxAnswerBytes}, nil
}

// Close releases the client's idle connections.
func (p *Prometheus) Close() { p.client.CloseIdleConnections() }

// Ping checks that Prometheus answers /-/ready within Timeout (200 once it
// has loaded its TSDB; 503 while starting, which is ErrUnreachable). The
// bearer token is sent, so a proxy that checks it reports errAuth;
// Prometheus itself does not check credentials there.
func (p *Prometheus) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	op := "ping prometheus " + p.cfg.redactedURL
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.cfg.readyURL, nil)
	if err != nil {
		return classifyProm(op, err)
	}
	p.authorize(req)
	resp, err := p.client.Do(req)
	if err != nil {
		return classifyProm(op, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return classifyProm(op, readPromError(resp.StatusCode, resp.Body))
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16))
	return nil
}

func (p *Prometheus) authorize(req *http.Request) {
	req.Header.Set("User-Agent", "colocd")
	if p.cfg.BearerToken != "" {
		req.Header.Set("Authorization", "Bearer "+p.cfg.BearerToken)
	}
}

// Usage returns each host's mean usage over the window [from, to], taken
// to the millisecond, with instant queries for all hosts at once (three
// for the CPU, see promQueries; one per other resource, and one per disk
// and net counter for the series present), evaluated at to over a range
// of W = to − from, run concurrently under one Timeout:
//   - CPU = Σ rate of the modes other than idle and iowait / Σ rate of
//     all modes of node_cpu_seconds_total, IOWait = iowait / Σ all modes,
//     over all of a host's CPUs, clamped to [0, 1] with CPU ≤ 1 − IOWait:
//     the same quantity as Telegraf's usage_* percentages;
//   - DiskRead/DiskWrite: the rates of node_disk_read_bytes_total and
//     node_disk_written_bytes_total summed over the devices DiskExclude
//     leaves;
//   - NetRecv/NetSent: the same over node_network_*_bytes_total of the
//     included interfaces.
//
// Why instant queries at to over [W] rather than a range query: the mean
// rate over the window is the counter's increase over it divided by W,
// and rate(x[W]) evaluated at to estimates exactly that: the increase
// between the first and last samples in the window, extrapolated to the
// window's edges (by at most about one scrape interval at each end, and
// never below the counter's zero), divided by W. A
// range query would compute a rate per step to be averaged again, costing
// a rate per series per step for a noisier estimate of the same mean.
// Counter resets are handled by rate(): a counter that went down counts
// its new value as increase since the reset, where the InfluxDB reader
// (either language) drops that step.
//
// A host is Stale, with no usage, when its newest idle-cpu sample at or
// before to is older than to − StaleAfter, or when it has cpu rates but
// no current sample (Prometheus marked the series stale: the target went
// away). It is Missing when it has no cpu sample in the window, or only
// one there, too few for a rate, or when it has series of a disk or net
// counter in the window of which none has two samples there (as the
// InfluxDB reader reads it: rate() gives such a host nothing, which would
// otherwise read as idle). A host with cpu rates but no disk or net series
// gets zero rates for them. Several targets mapping to one host (two exporters
// on one node: "node1:9100" and "node1:9200" with StripPort, or two
// instances with the same HostLabel value) are averaged, each quantity
// over the targets that report it: they read the same kernel counters, so
// a sum would count them twice. NaN and infinite values are dropped. When
// no requested host has any cpu sample in the window, Usage returns a
// Result listing every host as Missing together with an error wrapping
// ErrEmpty.
func (p *Prometheus) Usage(ctx context.Context, hosts []string, from, to time.Time) (Result, error) {
	res := Result{Usage: map[string]goodness.Usage{}}
	if err := checkWindow(from, to); err != nil {
		return res, err
	}
	hosts, err := cleanHosts(hosts)
	if err != nil || len(hosts) == 0 {
		return res, err
	}
	return p.usage(ctx, hosts, from, to)
}

// UsageAll is Usage for every host with a cpu sample in the window: no
// host matcher, no Missing host without data, and ErrEmpty with an empty
// Result when there is none.
func (p *Prometheus) UsageAll(ctx context.Context, from, to time.Time) (Result, error) {
	if err := checkWindow(from, to); err != nil {
		return Result{Usage: map[string]goodness.Usage{}}, err
	}
	return p.usage(ctx, nil, from, to)
}

// usage reads the window for hosts (nil: all) and sorts the hosts into
// fresh, stale and missing.
func (p *Prometheus) usage(ctx context.Context, hosts []string, from, to time.Time) (Result, error) {
	res := Result{Usage: map[string]goodness.Usage{}}
	from, to = from.Truncate(time.Millisecond), to.Truncate(time.Millisecond)
	if !from.Before(to) {
		return res, invalid("window", "[%s, %s] is shorter than a millisecond", rfc3339(from), rfc3339(to))
	}
	which := "all hosts"
	if hosts != nil {
		which = fmt.Sprintf("%d hosts", len(hosts))
	}
	op := fmt.Sprintf("usage of %s in [%s, %s] from prometheus %s", which, rfc3339(from), rfc3339(to), p.cfg.redactedURL)
	answers, err := p.queryAll(ctx, op, p.promQueries(hosts, to.Sub(from)), promTime(to))
	if err != nil {
		return res, err
	}
	acc := p.combine(hosts, answers)
	all := hosts == nil
	if all {
		hosts = sortedKeys(acc)
	}
	fromMs, freshMs := from.UnixMilli(), to.Add(-p.cfg.StaleAfter).UnixMilli()
	anyData := false
	for _, h := range hosts {
		a := acc[h]
		if a == nil || !a.cpuSeen && !(a.hasNewest && a.newest >= fromMs) {
			if all {
				continue // UsageAll lists only hosts with data
			}
			res.Missing = append(res.Missing, h)
			continue
		}
		anyData = true
		switch {
		case !a.hasNewest || a.newest < freshMs:
			res.Stale = append(res.Stale, h)
		case a.cpuN == 0, a.unrated():
			res.Missing = append(res.Missing, h)
		default:
			res.Usage[h] = a.usage()
		}
	}
	if !anyData {
		sel := "any job"
		if p.cfg.Job != "" {
			sel = "job=" + strconv.Quote(p.cfg.Job)
		}
		return res, fmt.Errorf("%w: %s: no %s samples for any host (host label %q, %s)", ErrEmpty, op,
			promCPUMetric, p.cfg.HostLabel, sel)
	}
	return res, nil
}

func rfc3339(t time.Time) string { return t.UTC().Format(time.RFC3339Nano) }

// promHost gathers one host's answers over the targets that map to it.
type promHost struct {
	cpuSeen            bool    // a cpu rate row, usable or not
	cpuBusy, cpuIOWait float64 // Σ over targets with usable cpu rates
	cpuN               int
	rate               [numPromQueries]float64 // disk and net: Σ over targets
	rateN              [numPromQueries]int
	seen               [numPromQueries]bool // the *Seen queries: a series with one sample in the window
	newest             int64                // ms: newest idle-cpu sample at or before to
	hasNewest          bool
}

// combine folds the answers into per-host accumulators, keeping only the
// requested hosts (all when hosts is nil).
func (p *Prometheus) combine(hosts []string, answers [numPromQueries][]promRow) map[string]*promHost {
	var want map[string]bool
	if hosts != nil {
		want = make(map[string]bool, len(hosts))
		for _, h := range hosts {
			want[h] = true
		}
	}
	acc := map[string]*promHost{}
	get := func(v string) *promHost {
		if v == "" {
			return nil // a series without the host label
		}
		h := p.cfg.hostKey(v)
		if want != nil && !want[h] {
			return nil
		}
		a := acc[h]
		if a == nil {
			a = &promHost{}
			acc[h] = a
		}
		return a
	}
	// cpu: per target, Σ rate over all modes, the busy ones (the rows of
	// the two busy queries, which carry no mode), idle and iowait.
	type modes struct{ all, busy, idle, iowait float64 }
	type key struct{ host, target string }
	cpu := map[key]*modes{}
	for _, q := range []int{promQCPU, promQCPUEven, promQCPUOther} {
		for _, r := range answers[q] {
			k := key{r.host, r.target}
			m := cpu[k]
			if m == nil {
				m = &modes{}
				cpu[k] = m
			}
			m.all += r.v
			switch r.mode {
			case "idle":
				m.idle += r.v
			case "iowait":
				m.iowait += r.v
			default:
				m.busy += r.v
			}
		}
	}
	for k, m := range cpu {
		a := get(k.host)
		if a == nil {
			continue
		}
		a.cpuSeen = true
		if m.all > 0 { // no cpu time passed: nothing to divide by
			a.cpuBusy += m.busy / m.all
			a.cpuIOWait += m.iowait / m.all
			a.cpuN++
		}
	}
	for _, q := range []int{promQDiskRead, promQDiskWrite, promQNetRecv, promQNetSent, promQIOPressure, promQCPUPressure} {
		for _, r := range answers[q] {
			if a := get(r.host); a != nil {
				a.rate[q] += r.v
				a.rateN[q]++
			}
		}
	}
	for _, q := range promSeenOf {
		for _, r := range answers[q.seen] {
			if a := get(r.host); a != nil && r.v > 0 {
				a.seen[q.seen] = true
			}
		}
	}
	for _, r := range answers[promQNewest] {
		if a := get(r.host); a != nil {
			ms := int64(math.Round(r.v * 1e3))
			if !a.hasNewest || ms > a.newest {
				a.newest, a.hasNewest = ms, true
			}
		}
	}
	return acc
}

// unrated reports whether the host has disk or net series in the window
// of which none has two samples there (no rate): missing, not idle, as the
// InfluxDB path reads it.
func (a *promHost) unrated() bool {
	for _, q := range promSeenOf {
		if a.seen[q.seen] && a.rateN[q.rate] == 0 {
			return true
		}
	}
	return false
}

// promSeenOf pairs each one-sample-series query with its counter's rate query.
var promSeenOf = [...]struct{ seen, rate int }{
	{promQDiskReadSeen, promQDiskRead}, {promQDiskWriteSeen, promQDiskWrite},
	{promQNetRecvSeen, promQNetRecv}, {promQNetSentSeen, promQNetSent},
}

// usage is the host's mean usage; cpuN must be positive.
func (a *promHost) usage() goodness.Usage {
	n := float64(a.cpuN)
	iow := clamp01(a.cpuIOWait / n)
	mean := func(q int) float64 {
		if a.rateN[q] == 0 {
			return 0
		}
		return max(a.rate[q]/float64(a.rateN[q]), 0)
	}
	return goodness.Usage{
		CPU:         min(clamp01(a.cpuBusy/n), 1-iow),
		IOWait:      iow,
		IOPressure:  clamp01(mean(promQIOPressure)), // stalled seconds per second
		CPUPressure: clamp01(mean(promQCPUPressure)),
		Pressure:    a.rateN[promQIOPressure] > 0 && a.rateN[promQCPUPressure] > 0,
		DiskRead:    mean(promQDiskRead),
		DiskWrite:   mean(promQDiskWrite),
		NetRecv:     mean(promQNetRecv),
		NetSent:     mean(promQNetSent),
	}
}

// promRow is one element of an answer's vector.
type promRow struct {
	host, target, mode string // the host, instance and mode labels' values
	v                  float64
}

// queryAll runs the queries concurrently at at under one Timeout. The
// first failure cancels the others and is the one returned.
func (p *Prometheus) queryAll(ctx context.Context, op string, qs [numPromQueries]string, at string) ([numPromQueries][]promRow, error) {
	var out [numPromQueries][]promRow
	ctx, cancel := context.WithTimeout(ctx, p.cfg.Timeout)
	defer cancel()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for i, q := range qs {
		if q == "" {
			continue // not asked for (pressure off)
		}
		wg.Go(func() {
			rows, err := p.query(ctx, q, at)
			if err != nil {
				once.Do(func() {
					first = fmt.Errorf("%s query: %w", promQueryNames[i], err)
					stop()
				})
				return
			}
			out[i] = rows
		})
	}
	wg.Wait()
	if first != nil {
		return out, classifyProm(op, first)
	}
	return out, nil
}
