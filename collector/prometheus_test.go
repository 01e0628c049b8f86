package collector_test

import (
	"context"
	"encoding/pem"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/promtest"
	"github.com/colocd/colocd/goodness"
)

// promT0 anchors the backfilled data; promAt(n) is promT0 + n seconds.
var promT0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func promAt(n int) time.Time { return promT0.Add(time.Duration(n) * time.Second) }

var promApprox = cmpopts.EquateApprox(0, 1e-9)

// promFixture writes node_exporter-shaped counters.
type promFixture struct{ promtest.Samples }

// lbl is base plus the key/value pairs kv.
func lbl(base map[string]string, kv ...string) map[string]string {
	out := make(map[string]string, len(base)+len(kv)/2)
	for k, v := range base {
		out[k] = v
	}
	for i := 0; i+1 < len(kv); i += 2 {
		out[kv[i]] = kv[i+1]
	}
	return out
}

// linear adds metric{labels} = base + perSec·n at promAt(n) for n in ats.
func (f *promFixture) linear(metric string, labels map[string]string, ats []int, base, perSec float64) {
	for _, n := range ats {
		f.Add(metric, labels, promAt(n), base+perSec*float64(n))
	}
}

// values adds metric{labels} = vals[i] at promAt(ats[i]).
func (f *promFixture) values(metric string, labels map[string]string, ats []int, vals []float64) {
	for i, n := range ats {
		f.Add(metric, labels, promAt(n), vals[i])
	}
}

var promModes = []string{"user", "nice", "system", "idle", "iowait", "irq", "softirq", "steal"}

// cpu adds node_exporter's eight mode counters of one CPU, each growing
// at rates[mode] seconds per second (0 when absent) from 1000 s.
func (f *promFixture) cpu(labels map[string]string, cpu string, ats []int, rates map[string]float64) {
	for _, m := range promModes {
		f.linear("node_cpu_seconds_total", lbl(labels, "cpu", cpu, "mode", m), ats, 1000, rates[m])
	}
}

// target is the labels of one scrape target: instance, job and node (the
// node's name, for host_label = "node").
func target(instance, node string) map[string]string {
	return map[string]string{"instance": instance, "job": "node", "node": node}
}

func newProm(t testing.TB, u string, mod ...func(*collector.PrometheusConfig)) *collector.Prometheus {
	t.Helper()
	cfg := collector.DefaultPrometheusConfig()
	cfg.URL, cfg.Job, cfg.StaleAfter = u, "node", 20*time.Second
	for _, m := range mod {
		m(&cfg)
	}
	p, err := collector.NewPrometheus(cfg)
	if err != nil {
		t.Fatalf("NewPrometheus: %v", err)
	}
	t.Cleanup(p.Close)
	return p
}

// promUsageData is TestPrometheusUsage's data. Window [60 s, 90 s],
// StaleAfter 20 s. Samples sit at 45, 55, 65, 75, 85 and 95 s, off the
// window's edges, so rate() over [60, 90] sees 65, 75 and 85, and its
// extrapolation by 5 s at each end (less than 1.1 × the 10 s interval)
// makes the rate exactly Δ/20 s: the slope of a linear counter. Every
// counter starts far enough from zero (≥ 4 × its increase) that rate()
// does not cut the extrapolation at the counter's zero. Prometheus 3's
// left-open range gives the same.
func promUsageData() *promtest.Samples {
	var f promFixture
	ats := []int{45, 55, 65, 75, 85, 95}
	// h1: two CPUs. Σ all modes 2/s; busy user+system 0.3+0.1+0.5+0.1 =
	// 1.0/s → CPU 0.5; iowait 0.1/s → IOWait 0.05.
	h1 := target("h1:9100", "h1")
	f.cpu(h1, "0", ats, map[string]float64{"user": 0.3, "system": 0.1, "iowait": 0.1, "idle": 0.5})
	f.cpu(h1, "1", ats, map[string]float64{"user": 0.5, "system": 0.1, "idle": 0.4})
	// sda reads 100/s. Its write counter resets (a reboot) between 75
	// and 85: in the window 1e6, 1e6+2000, 500 → rate() counts 2000 then
	// 500 from zero → 2500/20 s = 125/s. nvme0n1 writes 25/s.
	f.linear("node_disk_read_bytes_total", lbl(h1, "device", "sda"), ats, 1e6, 100)
	f.values("node_disk_written_bytes_total", lbl(h1, "device", "sda"), ats, []float64{998e3, 999e3, 1e6, 1e6 + 2000, 500, 1500})
	f.linear("node_disk_read_bytes_total", lbl(h1, "device", "nvme0n1"), ats, 1e6, 0)
	f.linear("node_disk_written_bytes_total", lbl(h1, "device", "nvme0n1"), ats, 1e6, 25)
	// Partitions and stacked devices repeat the disks' bytes: excluded.
	for _, dev := range []string{"sda1", "dm-0", "loop3", "nvme0n1p1"} {
		f.linear("node_disk_read_bytes_total", lbl(h1, "device", dev), ats, 1e9, 1e6)
		f.linear("node_disk_written_bytes_total", lbl(h1, "device", dev), ats, 1e9, 1e6)
	}
	// eth0 1000/s in, 200/s out; eth1 100/s in; loopback and container
	// plumbing excluded.
	f.linear("node_network_receive_bytes_total", lbl(h1, "device", "eth0"), ats, 1e6, 1000)
	f.linear("node_network_transmit_bytes_total", lbl(h1, "device", "eth0"), ats, 1e6, 200)
	f.linear("node_network_receive_bytes_total", lbl(h1, "device", "eth1"), ats, 1e6, 100)
	f.linear("node_network_transmit_bytes_total", lbl(h1, "device", "eth1"), ats, 1e6, 0)
	for _, dev := range []string{"lo", "veth12ab", "docker0"} {
		f.linear("node_network_receive_bytes_total", lbl(h1, "device", dev), ats, 1e9, 1e6)
		f.linear("node_network_transmit_bytes_total", lbl(h1, "device", dev), ats, 1e9, 1e6)
	}
	// PSI io and cpu "some": 0.25 and 0.4 s stalled per second (read with
	// Pressure only); memory pressure is another metric, never read.
	f.linear("node_pressure_io_waiting_seconds_total", h1, ats, 1e3, 0.25)
	f.linear("node_pressure_cpu_waiting_seconds_total", h1, ats, 1e3, 0.4)
	f.linear("node_pressure_memory_waiting_seconds_total", h1, ats, 1e3, 0.5)
	// Another job on h1's instance: counted only without the job matcher.
	f.linear("node_disk_read_bytes_total", lbl(h1, "job", "other", "device", "sdz"), ats, 1e6, 7)
	// h2: stopped after 68 s (< 90 − 20): stale, though it has a rate.
	f.cpu(target("h2:9100", "h2"), "0", []int{45, 55, 63, 68}, map[string]float64{"user": 0.1, "idle": 0.9})
	// h4: cpu only, idle: zero everything.
	f.cpu(target("h4:9100", "h4"), "0", ats, map[string]float64{"idle": 1})
	// h5: two exporters on one node, averaged: CPU (0.2+0.4)/2, disk
	// (100+300)/2, net only from 9100.
	h5a, h5b := target("h5:9100", "h5"), target("h5:9200", "h5")
	f.cpu(h5a, "0", ats, map[string]float64{"user": 0.2, "idle": 0.8})
	f.cpu(h5b, "0", ats, map[string]float64{"user": 0.4, "idle": 0.6})
	f.linear("node_disk_read_bytes_total", lbl(h5a, "device", "sda"), ats, 1e6, 100)
	f.linear("node_disk_read_bytes_total", lbl(h5b, "device", "sda"), ats, 1e6, 300)
	f.linear("node_network_receive_bytes_total", lbl(h5a, "device", "eth0"), ats, 1e6, 50)
	// An IPv6 target: instance [::1]:9100 is the node ::1.
	f.cpu(target("[::1]:9100", "::1"), "0", ats, map[string]float64{"user": 0.25, "idle": 0.75})
	// h6: has data, not asked for. Its CPU's label has no digit: the
	// busy modes are read by CPU label in two complementary queries (h1's
	// CPUs 0 and 1 fall one in each), and this one is in the second.
	f.cpu(target("h6:9100", "h6"), "cpu-x", ats, map[string]float64{"user": 1})
	// h7: only data before the window: missing.
	f.cpu(target("h7:9100", "h7"), "0", []int{15, 25, 35, 45}, map[string]float64{"idle": 1})
	// h8: one sample in the window, too few for a rate: missing.
	f.cpu(target("h8:9100", "h8"), "0", []int{45, 75}, map[string]float64{"idle": 1})
	// h9: cpu rates, but its disk's read counter has one sample in the
	// window (its exporter's disk collector just came up): missing, not
	// a host that reads nothing. Its write counter has none at all.
	h9 := target("h9:9100", "h9")
	f.cpu(h9, "0", ats, map[string]float64{"user": 0.5, "idle": 0.5})
	f.linear("node_disk_read_bytes_total", lbl(h9, "device", "sda"), []int{85}, 1e6, 100)
	return &f.Samples
}

// TestPrometheusUsage checks every mean against values worked out by hand
// from Prometheus's rate(), through a host matcher and the client-side
// filter, by instance and by another label, with and without the job
// matcher, and for every host.
func TestPrometheusUsage(t *testing.T) {
	srv := promtest.Start(t, promtest.WithSamples(promUsageData()))
	ctx := context.Background()
	from, to := promAt(60), promAt(90)
	asked := []string{"h1", "h2", "h3", "h4", "h5", "::1", "h7", "h8", "h9", "h1"}
	h1 := goodness.Usage{CPU: 0.5, IOWait: 0.05, DiskRead: 100, DiskWrite: 150, NetRecv: 1100, NetSent: 200}
	usage := map[string]goodness.Usage{
		"h1":  h1,
		"h4":  {},
		"h5":  {CPU: 0.3, DiskRead: 200, NetRecv: 50},
		"::1": {CPU: 0.25},
	}
	want := collector.Result{Usage: usage, Stale: []string{"h2"}, Missing: []string{"h3", "h7", "h8", "h9"}}
	check := func(t *testing.T, want, got collector.Result) {
		t.Helper()
		if diff := cmp.Diff(want, got, promApprox); diff != "" {
			t.Errorf("Usage (-want +got):\n%s", diff)
		}
		for h, u := range got.Usage {
			if err := u.Validate(); err != nil {
				t.Errorf("host %s: %v", h, err)
			}
		}
	}
	for name, mod := range map[string]func(*collector.PrometheusConfig){
		"matcher":            func(c *collector.PrometheusConfig) {},
		"client filter":      func(c *collector.PrometheusConfig) { c.HostPatternMax = 1 },
		"node label":         func(c *collector.PrometheusConfig) { c.HostLabel, c.StripPort = "node", false },
		"node label, filter": func(c *collector.PrometheusConfig) { c.HostLabel, c.StripPort, c.HostPatternMax = "node", false, 1 },
	} {
		t.Run(name, func(t *testing.T) {
			got, err := newProm(t, srv.URL(), mod).Usage(ctx, asked, from, to)
			if err != nil {
				t.Fatalf("Usage: %v", err)
			}
			check(t, want, got)
		})
	}
	t.Run("all hosts", func(t *testing.T) {
		got, err := newProm(t, srv.URL()).UsageAll(ctx, from, to)
		if err != nil {
			t.Fatalf("UsageAll: %v", err)
		}
		wantAll := collector.Result{Usage: map[string]goodness.Usage{"h6": {CPU: 1}}, Stale: []string{"h2"}, Missing: []string{"h8", "h9"}}
		for h, u := range usage {
			wantAll.Usage[h] = u
		}
		check(t, wantAll, got)
	})
	t.Run("no job matcher", func(t *testing.T) {
		got, err := newProm(t, srv.URL(), func(c *collector.PrometheusConfig) { c.Job = "" }).Usage(ctx, []string{"h1"}, from, to)
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		h1 := h1
		h1.DiskRead += 7 // job="other"'s sdz
		check(t, collector.Result{Usage: map[string]goodness.Usage{"h1": h1}}, got)
	})
	t.Run("pressure", func(t *testing.T) {
		got, err := newProm(t, srv.URL(), func(c *collector.PrometheusConfig) { c.Pressure = true }).Usage(ctx, []string{"h1", "h4"}, from, to)
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		h1 := h1
		h1.IOPressure, h1.CPUPressure, h1.Pressure = 0.25, 0.4, true
		// h4 has no PSI: 0, and not read.
		check(t, collector.Result{Usage: map[string]goodness.Usage{"h1": h1, "h4": {}}}, got)
	})
	t.Run("custom exclusions", func(t *testing.T) {
		p := newProm(t, srv.URL(), func(c *collector.PrometheusConfig) {
			c.DiskExclude = append(c.DiskExclude, "nvme0n1")
			c.NetInclude, c.NetExclude = []string{"eth[0-9]+", "lo"}, []string{"eth1"}
		})
		got, err := p.Usage(ctx, []string{"h1"}, from, to)
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		h1 := goodness.Usage{CPU: 0.5, IOWait: 0.05, DiskRead: 100, DiskWrite: 125, NetRecv: 1000 + 1e6, NetSent: 200 + 1e6}
		check(t, collector.Result{Usage: map[string]goodness.Usage{"h1": h1}}, got)
	})
}

// TestPrometheusEmpty: a window without data is ErrEmpty, listing every
// requested host as missing; bad arguments are FieldErrors sent nowhere.
func TestPrometheusEmpty(t *testing.T) {
	var f promFixture
	f.cpu(target("h6:9100", "h6"), "0", []int{65, 75, 85}, map[string]float64{"user": 1})
	srv := promtest.Start(t, promtest.WithSamples(&f.Samples))
	ctx := context.Background()
	from, to := promAt(60), promAt(90)
	t.Run("empty", func(t *testing.T) {
		p := newProm(t, srv.URL())
		got, err := p.Usage(ctx, []string{"nobody", "h6"}, promAt(400), promAt(430))
		if !errors.Is(err, collector.ErrEmpty) {
			t.Fatalf("Usage with no data: err %v, want ErrEmpty", err)
		}
		if diff := cmp.Diff([]string{"h6", "nobody"}, got.Missing); diff != "" {
			t.Errorf("Missing (-want +got):\n%s", diff)
		}
		got, err = p.UsageAll(ctx, promAt(400), promAt(430))
		if !errors.Is(err, collector.ErrEmpty) || len(got.Usage)+len(got.Stale)+len(got.Missing) != 0 {
			t.Errorf("UsageAll with no data = %+v, %v; want empty, ErrEmpty", got, err)
		}
	})
	t.Run("arguments", func(t *testing.T) {
		p := newProm(t, srv.URL())
		got, err := p.Usage(ctx, nil, from, to)
		if err != nil || len(got.Usage)+len(got.Stale)+len(got.Missing) != 0 {
			t.Errorf("Usage(nil hosts) = %+v, %v; want empty, nil", got, err)
		}
		for name, tc := range map[string]struct {
			hosts    []string
			from, to time.Time
			field    string
		}{
			"empty host":   {[]string{"h1", ""}, from, to, "hosts[1]"},
			"bad utf8":     {[]string{"\xff"}, from, to, "hosts[0]"},
			"backwards":    {[]string{"h1"}, to, from, "window"},
			"sub-ms":       {[]string{"h1"}, from, from.Add(time.Microsecond), "window"},
			"before 1678+": {[]string{"h1"}, time.Time{}, to, "window"},
		} {
			_, err := p.Usage(ctx, tc.hosts, tc.from, tc.to)
			var fe *collector.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, collector.ErrInvalid) {
				t.Errorf("%s: err = %v, want a FieldError naming %s", name, err, tc.field)
			}
		}
	})
}

// TestPrometheusEscaping sends host names full of PromQL, regex and
// OpenMetrics metacharacters through the real server, as instance:port
// and as a label of their own.
func TestPrometheusEscaping(t *testing.T) {
	hosts := []string{
		`a.b`, `axb`, `we"ird`, `back\slash`, `ünïcödé`, `sp ace`, `a|b`, `star*`, `[class]`, `paren(`,
		`^$`, `{brace}`, "tab\tx", "new\nline", `dollar${x}`, `com,ma`, `eq=ual`, `::ffff:10.0.0.1`, `fe80::1%eth0`,
	}
	var f promFixture
	for i, h := range hosts {
		inst := h + ":9100"
		if strings.Contains(h, ":") {
			inst = "[" + h + "]:9100"
		}
		busy := float64(i+1) / 100
		f.cpu(target(inst, h), "0", []int{65, 75, 85}, map[string]float64{"user": busy, "idle": 1 - busy})
	}
	srv := promtest.Start(t, promtest.WithSamples(&f.Samples))
	from, to := promAt(60), promAt(90)
	for name, mod := range map[string]func(*collector.PrometheusConfig){
		"instance":      func(c *collector.PrometheusConfig) {},
		"node label":    func(c *collector.PrometheusConfig) { c.HostLabel, c.StripPort = "node", false },
		"client filter": func(c *collector.PrometheusConfig) { c.HostPatternMax = 1 },
	} {
		t.Run(name, func(t *testing.T) {
			p := newProm(t, srv.URL(), mod)
			all := collector.Result{Usage: map[string]goodness.Usage{}}
			for i, h := range hosts {
				want := collector.Result{Usage: map[string]goodness.Usage{h: {CPU: float64(i+1) / 100}}}
				all.Usage[h] = want.Usage[h]
				got, err := p.Usage(context.Background(), []string{h}, from, to)
				if err != nil {
					t.Errorf("host %q: %v", h, err)
					continue
				}
				if diff := cmp.Diff(want, got, promApprox); diff != "" {
					t.Errorf("host %q (-want +got):\n%s", h, diff)
				}
			}
			got, err := p.Usage(context.Background(), hosts, from, to)
			if err != nil {
				t.Fatalf("all hosts: %v", err)
			}
			if diff := cmp.Diff(all, got, promApprox); diff != "" {
				t.Errorf("all hosts (-want +got):\n%s", diff)
			}
		})
	}
}

// TestPrometheusNodeExporter reads a real node_exporter scraped every
// second while one goroutine spins, and compares CPU with this machine's
// own /proc/stat over the same span.
func TestPrometheusNodeExporter(t *testing.T) {
	ne := promtest.StartNodeExporter(t)
	srv := promtest.Start(t, promtest.WithScrape("node", time.Second, ne.Addr()))
	srv.WaitScrapes(t, 2)
	var stop atomic.Bool
	done := make(chan struct{})
	go func() { // a steady load for both measures to see
		defer close(done)
		for x := 0.0; !stop.Load(); x = x*0.5 + 1 {
		}
	}()
	defer func() { stop.Store(true); <-done }()
	from := time.Now()
	busy0, total0 := procStatCPU(t)
	srv.WaitScrapes(t, 7) // five more: a rate over about five seconds
	to := time.Now()
	busy1, total1 := procStatCPU(t)
	want := (busy1 - busy0) / (total1 - total0)

	p := newProm(t, srv.URL(), func(c *collector.PrometheusConfig) { c.StaleAfter = 30 * time.Second })
	got, err := p.Usage(context.Background(), []string{"127.0.0.1"}, from, to)
	if err != nil {
		t.Fatalf("Usage: %v", err)
	}
	u, ok := got.Usage["127.0.0.1"]
	if !ok {
		t.Fatalf("Usage = %+v, want a usage for 127.0.0.1", got)
	}
	if err := u.Validate(); err != nil {
		t.Errorf("usage %+v: %v", u, err)
	}
	// Both read the kernel's counters, at slightly different instants.
	if d := u.CPU - want; d < -0.15 || d > 0.15 {
		t.Errorf("CPU = %.3f, /proc/stat says %.3f over the same span", u.CPU, want)
	}
	t.Logf("usage %+v; /proc/stat busy %.3f", u, want)

	// node_exporter goes away: at its next scrape Prometheus marks its
	// series stale, so the window still has rates but no current sample.
	if err := ne.Stop(); err != nil {
		t.Fatalf("Stop node_exporter: %v", err)
	}
	srv.WaitDown(t)
	got, err = p.Usage(context.Background(), []string{"127.0.0.1"}, from, time.Now())
	if err != nil {
		t.Fatalf("Usage after node_exporter stopped: %v", err)
	}
	if diff := cmp.Diff(collector.Result{Usage: map[string]goodness.Usage{}, Stale: []string{"127.0.0.1"}}, got); diff != "" {
		t.Errorf("Usage after node_exporter stopped (-want +got):\n%s", diff)
	}
}

// procStatCPU is the busy and total CPU seconds×USER_HZ in /proc/stat's
// cpu line, counted as node_exporter's modes are (guest time is inside
// user and nice).
func procStatCPU(t testing.TB) (busy, total float64) {
	t.Helper()
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		t.Skipf("no /proc/stat: %v", err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 9 || f[0] != "cpu" {
		t.Fatalf("/proc/stat starts %q", line)
	}
	var v [8]float64 // user nice system idle iowait irq softirq steal
	for i := range v {
		if v[i], err = strconv.ParseFloat(f[i+1], 64); err != nil {
			t.Fatalf("/proc/stat %q: %v", line, err)
		}
		total += v[i]
	}
	return total - v[3] - v[4], total
}

// TestPrometheusErrors: credentials checked by a proxy, TLS with and
// without the CA, an outage, and a server that never answers.
func TestPrometheusErrors(t *testing.T) {
	var f promFixture
	f.cpu(target("h1:9100", "h1"), "0", []int{65, 75, 85}, map[string]float64{"user": 0.5, "idle": 0.5})
	srv := promtest.Start(t, promtest.WithSamples(&f.Samples))
	ctx := context.Background()
	from, to := promAt(60), promAt(90)
	want := collector.Result{Usage: map[string]goodness.Usage{"h1": {CPU: 0.5}}}
	const token = "s3cret"
	target, err := url.Parse(srv.URL())
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(target)
	guard := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Header.Get("Authorization") {
		case "Bearer " + token:
			proxy.ServeHTTP(w, r)
		case "":
			http.Error(w, "Unauthorized", http.StatusUnauthorized)
		default:
			http.Error(w, "Forbidden", http.StatusForbidden)
		}
	})
	plain, tlsSrv := httptest.NewServer(guard), httptest.NewUnstartedServer(guard)
	tlsSrv.Config.ErrorLog = log.New(io.Discard, "", 0) // "https, no ca" fails the handshake on purpose
	tlsSrv.StartTLS()
	t.Cleanup(plain.Close)
	t.Cleanup(tlsSrv.Close)
	caFile := filepath.Join(t.TempDir(), "ca.pem")
	block := &pem.Block{Type: "CERTIFICATE", Bytes: tlsSrv.Certificate().Raw}
	if err := os.WriteFile(caFile, pem.EncodeToMemory(block), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		url, token, ca string
		want           error // nil: the usage
	}{
		"token":          {plain.URL, token, "", nil},
		"no token":       {plain.URL, "", "", collector.ErrAuth},
		"wrong token":    {plain.URL, "nope", "", collector.ErrAuth},
		"https with ca":  {tlsSrv.URL, token, caFile, nil},
		"https, no ca":   {tlsSrv.URL, token, "", collector.ErrUnreachable},
		"https, no auth": {tlsSrv.URL, "", caFile, collector.ErrAuth},
	} {
		t.Run(name, func(t *testing.T) {
			p := newProm(t, tc.url, func(c *collector.PrometheusConfig) { c.BearerToken, c.CAFile = tc.token, tc.ca })
			got, err := p.Usage(ctx, []string{"h1"}, from, to)
			if tc.want != nil {
				if !errors.Is(err, tc.want) {
					t.Errorf("Usage error = %v, want %v", err, tc.want)
				}
				return
			}
			if err != nil {
				t.Fatalf("Usage: %v", err)
			}
			if diff := cmp.Diff(want, got, promApprox); diff != "" {
				t.Errorf("Usage (-want +got):\n%s", diff)
			}
			if err := p.Ping(ctx); err != nil {
				t.Errorf("Ping: %v", err)
			}
		})
	}

	t.Run("outage", func(t *testing.T) {
		const timeout = 5 * time.Second
		p := newProm(t, srv.URL(), func(c *collector.PrometheusConfig) { c.Timeout = timeout })
		if _, err := p.Usage(ctx, []string{"h1"}, from, to); err != nil {
			t.Fatalf("Usage before the outage: %v", err)
		}
		if err := srv.Stop(); err != nil {
			t.Fatalf("Stop: %v", err)
		}
		for name, call := range map[string]func() error{
			"usage":     func() error { _, err := p.Usage(ctx, []string{"h1"}, from, to); return err },
			"usage all": func() error { _, err := p.UsageAll(ctx, from, to); return err },
			"ping":      func() error { return p.Ping(ctx) },
		} {
			start := time.Now()
			err := call()
			if elapsed := time.Since(start); elapsed > timeout/2 {
				t.Errorf("%s after Stop took %v; a refused connection should fail at once", name, elapsed)
			}
			if !errors.Is(err, collector.ErrUnreachable) {
				t.Errorf("%s after Stop: err = %v, want ErrUnreachable", name, err)
			}
		}
	})
}

// TestPrometheusHungServer: a listener that accepts connections and never
// answers costs one Timeout, then ErrUnreachable wrapping
// DeadlineExceeded; the caller's own cancellation is not an outage.
func TestPrometheusHungServer(t *testing.T) {
	url := hungServer(t)
	const timeout = 300 * time.Millisecond
	p := newProm(t, url, func(c *collector.PrometheusConfig) { c.Timeout = timeout })
	for name, call := range map[string]func(context.Context) error{
		"usage": func(ctx context.Context) error {
			_, err := p.Usage(ctx, []string{"h1"}, promT0, promAt(60))
			return err
		},
		"ping": p.Ping,
	} {
		start := time.Now()
		err := call(context.Background())
		elapsed := time.Since(start)
		if !errors.Is(err, collector.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("%s: err = %v, want ErrUnreachable wrapping context.DeadlineExceeded", name, err)
		}
		if elapsed < timeout || elapsed > 10*timeout {
			t.Errorf("%s took %v, want about the %v timeout", name, elapsed, timeout)
		}
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		err = call(ctx)
		if !errors.Is(err, context.Canceled) || errors.Is(err, collector.ErrUnreachable) {
			t.Errorf("%s cancelled: err = %v, want context.Canceled and not ErrUnreachable", name, err)
		}
	}
}

func TestPrometheusConfigValidate(t *testing.T) {
	caDir := t.TempDir()
	garbage := filepath.Join(caDir, "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		mod      func(*collector.PrometheusConfig)
		field    string // "" = valid
		readOnly bool   // NewPrometheus fails where Validate (no I/O) does not
	}{
		"default":            {func(*collector.PrometheusConfig) {}, "", false},
		"https with prefix":  {func(c *collector.PrometheusConfig) { c.URL = "https://prom.example:9090/prom/" }, "", false},
		"job and label":      {func(c *collector.PrometheusConfig) { c.Job, c.HostLabel = `n"o\de`, "nodename" }, "", false},
		"no exclusions":      {func(c *collector.PrometheusConfig) { c.DiskExclude, c.NetExclude = nil, nil }, "", false},
		"http client":        {func(c *collector.PrometheusConfig) { c.HTTPClient = &http.Client{} }, "", false},
		"empty url":          {func(c *collector.PrometheusConfig) { c.URL = "" }, "url", false},
		"bad url":            {func(c *collector.PrometheusConfig) { c.URL = "http://[::1" }, "url", false},
		"ftp url":            {func(c *collector.PrometheusConfig) { c.URL = "ftp://x" }, "url", false},
		"url without host":   {func(c *collector.PrometheusConfig) { c.URL = "http:///x" }, "url", false},
		"url with query":     {func(c *collector.PrometheusConfig) { c.URL = "http://x/?a=b" }, "url", false},
		"token with newline": {func(c *collector.PrometheusConfig) { c.BearerToken = "a\nb" }, "bearer_token", false},
		"empty host label":   {func(c *collector.PrometheusConfig) { c.HostLabel = "" }, "host_label", false},
		"dash in label":      {func(c *collector.PrometheusConfig) { c.HostLabel = "host-name" }, "host_label", false},
		"reserved label":     {func(c *collector.PrometheusConfig) { c.HostLabel = "__name__" }, "host_label", false},
		"mode label":         {func(c *collector.PrometheusConfig) { c.HostLabel = "mode" }, "host_label", false},
		"control in job":     {func(c *collector.PrometheusConfig) { c.Job = "a\x00" }, "job", false},
		"zero timeout":       {func(c *collector.PrometheusConfig) { c.Timeout = 0 }, "timeout", false},
		"negative stale":     {func(c *collector.PrometheusConfig) { c.StaleAfter = -time.Second }, "stale_after", false},
		"negative host max":  {func(c *collector.PrometheusConfig) { c.HostPatternMax = -1 }, "host_pattern_max", false},
		"bad disk regex":     {func(c *collector.PrometheusConfig) { c.DiskExclude = []string{"sd[a-z]+", "sd", "("} }, "disk_exclude[2]", false},
		"empty net include":  {func(c *collector.PrometheusConfig) { c.NetInclude = []string{""} }, "net_include[0]", false},
		"bad net exclude":    {func(c *collector.PrometheusConfig) { c.NetExclude = []string{"a**"} }, "net_exclude[0]", false},
		"ca with client":     {func(c *collector.PrometheusConfig) { c.CAFile, c.HTTPClient = garbage, &http.Client{} }, "ca_file", false},
		"missing ca file":    {func(c *collector.PrometheusConfig) { c.CAFile = filepath.Join(caDir, "none.pem") }, "ca_file", true},
		"ca without pem":     {func(c *collector.PrometheusConfig) { c.CAFile = garbage }, "ca_file", true},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := collector.DefaultPrometheusConfig()
			tc.mod(&cfg)
			err := cfg.Validate()
			p, newErr := collector.NewPrometheus(cfg)
			if p != nil {
				p.Close()
			}
			if tc.readOnly {
				if err != nil {
					t.Errorf("Validate() = %v, want nil (it reads no file)", err)
				}
				err = newErr
			} else if (err == nil) != (newErr == nil) {
				t.Fatalf("Validate() = %v but NewPrometheus() = %v", err, newErr)
			}
			if tc.field == "" {
				if err != nil {
					t.Fatalf("Validate() = %v, want nil", err)
				}
				return
			}
			var fe *collector.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, collector.ErrInvalid) {
				t.Fatalf("error %v is not a *FieldError wrapping ErrInvalid", err)
			}
			if fe.Field != tc.field {
				t.Errorf("field = %q, want %q (%v)", fe.Field, tc.field, err)
			}
		})
	}
}
