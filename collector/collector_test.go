package collector_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/goodness"
)

// t0 anchors the synthetic data; sec(n) is t0 + n seconds in nanoseconds.
var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func sec(n int) int64 { return t0.Add(time.Duration(n) * time.Second).UnixNano() }

// lp builds line protocol in Telegraf's shape.
type lp struct{ strings.Builder }

func (b *lp) cpu(host, cpu string, at int, idle, iowait float64) {
	fmt.Fprintf(b, "cpu,cpu=%s,host=%s usage_idle=%v,usage_iowait=%v,usage_user=%v %d\n",
		cpu, host, idle, iowait, 100-idle-iowait, sec(at))
}

func (b *lp) disk(host, name string, at int, read, write int64) {
	fmt.Fprintf(b, "diskio,host=%s,name=%s read_bytes=%di,write_bytes=%di,reads=1i %d\n", host, name, read, write, sec(at))
}

func (b *lp) net(host, iface string, at int, recv, sent int64) {
	fmt.Fprintf(b, "net,host=%s,interface=%s bytes_recv=%di,bytes_sent=%di,packets_recv=1i %d\n", host, iface, recv, sent, sec(at))
}

func (b *lp) containers(host, app, kind string, at int, n int) {
	kindTag := ""
	if kind != "" {
		kindTag = ",kind=" + kind
	}
	fmt.Fprintf(b, "yarn_containers,application_id=%s,host=%s%s containers=%di,memory_mb=%di,vcores=%di %d\n",
		app, host, kindTag, n, 1024*n, n, sec(at))
}

func newCollector(t testing.TB, s *influxtest.Server, mod ...func(*collector.Config)) *collector.Collector {
	t.Helper()
	cfg := collector.DefaultConfig()
	cfg.URL, cfg.Bucket, cfg.Token = s.URL(), s.Bucket(), s.Token()
	cfg.StaleAfter = 20 * time.Second
	for _, m := range mod {
		m(&cfg)
	}
	c, err := collector.New(cfg)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(c.Close)
	return c
}

var approx = cmpopts.EquateApprox(0, 1e-9)

// languages are the query languages every InfluxDB test runs in.
var languages = []string{collector.LanguageFlux, collector.LanguageInfluxQL}

// inLanguage sets the query language.
func inLanguage(lang string) func(*collector.Config) {
	return func(cfg *collector.Config) { cfg.Language = lang }
}

// TestUsageExact writes Telegraf-shaped data with known rates, a counter
// reset, excluded devices and interfaces, stale, missing and short hosts,
// and checks every mean against values worked out by hand.
//
// Window [60s, 90s), StaleAfter 20s, Telegraf's 10 s samples: the samples
// at 60, 70 and 80 count; the ones at 40, 50 and 90 (= stop) do not.
func TestUsageExact(t *testing.T) {
	s := influxtest.Start(t)
	var b lp

	// h1: everything.
	for _, p := range []struct {
		at           int
		idle, iowait float64
	}{{40, 99, 0}, {50, 98, 1}, {60, 50, 10}, {70, 40, 20}, {80, 30, 0}, {90, 0, 0}} {
		b.cpu("h1", "cpu-total", p.at, p.idle, p.iowait)
		b.cpu("h1", "cpu0", p.at, 0, 100) // per-CPU: ignored
	}
	// cpu-total in window: idle 50, 40, 30 → 40; iowait 10, 20, 0 → 10.
	// CPU = (100−40−10)/100 = 0.5, IOWait = 0.1.
	for i, at := range []int{40, 50, 60, 70, 80, 90} {
		k := int64(i)
		// sda read at 60, 70, 80: 4000, 7000, 11000 → 300, 400 /s → 350.
		reads := []int64{1000, 2000, 4000, 7000, 11000, 1e12}
		// sda write resets (a reboot) between 60 and 70:
		// 1e9+2000, 500, 1500 → (dropped), 100 /s → 100. Taking the reset
		// as a step from zero would give 50/s, and from the old value
		// a huge negative rate.
		writes := []int64{1e9, 1e9 + 1000, 1e9 + 2000, 500, 1500, 1e12}
		b.disk("h1", "sda", at, reads[i], writes[i])
		b.disk("h1", "sdb", at, 500*k, 0) // 50/s read, no writes
		// Partitions and stacked devices repeat the disks' bytes: excluded.
		for _, dev := range []string{"sda1", "sdb2", "dm-0", "md0", "loop3", "nvme0n1p1", "zram0"} {
			b.disk("h1", dev, at, 1e9*k, 1e9*k)
		}
		b.disk("h1", "nvme0n1", at, 0, 250*k) // whole NVMe disk: 25/s write
		// eth0: 1000/s in, 200/s out; eth1: 100/s in.
		b.net("h1", "eth0", at, 10000*k, 2000*k)
		b.net("h1", "eth1", at, 1000*k, 0)
		// Loopback, container plumbing and Telegraf's "all": excluded.
		for _, ifc := range []string{"lo", "veth12ab", "docker0", "br-0f3c", "cali9", "flannel.1", "all"} {
			b.net("h1", ifc, at, 1e9*k, 1e9*k)
		}
	}
	// h2: stopped reporting at 60 (< 90−20): stale, though it has data.
	for _, at := range []int{40, 50, 60} {
		b.cpu("h2", "cpu-total", at, 10, 0)
		b.disk("h2", "sda", at, int64(at)*1000, 0)
	}
	// h4: cpu only, fully idle; no diskio or net series → zero rates.
	for _, at := range []int{60, 70, 80} {
		b.cpu("h4", "cpu-total", at, 100, 0)
	}
	// h5: last sample at exactly 90−20 = 70: still fresh. idle 80, 60 → 70.
	// One in-window step on ens3: 100 → 2100 in 10 s = 200/s.
	for i, at := range []int{40, 50, 60, 70} {
		b.cpu("h5", "cpu-total", at, []float64{0, 0, 80, 60}[i], 0)
		b.net("h5", "ens3", at, []int64{5e9, 6e9, 100, 2100}[i], 0)
	}
	// h6: has data, not asked for.
	b.cpu("h6", "cpu-total", 70, 0, 0)
	// h7: only data before the window: missing.
	b.cpu("h7", "cpu-total", 10, 0, 0)
	// h8: fresh cpu, but its disk has one sample in the window: no rate
	// can be known, so missing rather than a made-up zero.
	for _, at := range []int{60, 70, 80} {
		b.cpu("h8", "cpu-total", at, 50, 0)
	}
	b.disk("h8", "sda", 80, 1000, 1000)
	s.Write(t, b.String())

	want := collector.Result{
		Usage: map[string]goodness.Usage{
			"h1": {CPU: 0.5, IOWait: 0.1, DiskRead: 400, DiskWrite: 125, NetRecv: 1100, NetSent: 200},
			"h4": {},
			"h5": {CPU: 0.3, NetRecv: 200},
		},
		Stale:   []string{"h2"},
		Missing: []string{"h3", "h7", "h8"},
	}
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) { checkUsageExact(t, s, lang, want) })
	}
}

// checkUsageExact runs TestUsageExact's checks in one language.
func checkUsageExact(t *testing.T, s *influxtest.Server, lang string, want collector.Result) {
	c := newCollector(t, s, inLanguage(lang))
	// Few hosts are named in the storage predicate; many are filtered by
	// the decoder. Both must give the same answer.
	for _, maxPattern := range []int{0, 1} {
		t.Run(fmt.Sprintf("HostPatternMax=%d", maxPattern), func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) { cfg.HostPatternMax = maxPattern })
			got, err := c.Usage(context.Background(), []string{"h1", "h2", "h3", "h4", "h5", "h7", "h8", "h1"},
				t0.Add(60*time.Second), t0.Add(90*time.Second))
			if err != nil {
				t.Fatalf("Usage: %v", err)
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("Usage (-want +got):\n%s", diff)
			}
			for h, u := range got.Usage {
				if err := u.Validate(); err != nil {
					t.Errorf("host %s: %v", h, err)
				}
			}
		})
	}

	t.Run("custom exclusions", func(t *testing.T) {
		c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) {
			sch := collector.DefaultSchema()
			sch.DiskExclude = append(sch.DiskExclude, "sdb")
			sch.NetInclude = []string{"eth[0-9]+", "lo"}
			sch.NetExclude = []string{"eth1"}
			cfg.Schema = sch
		})
		got, err := c.Usage(context.Background(), []string{"h1"}, t0.Add(60*time.Second), t0.Add(90*time.Second))
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		// Disk without sdb: 350 read; net: eth0 plus lo (1e9 per 10 s step).
		want := goodness.Usage{CPU: 0.5, IOWait: 0.1, DiskRead: 350, DiskWrite: 125, NetRecv: 1000 + 1e8, NetSent: 200 + 1e8}
		if diff := cmp.Diff(want, got.Usage["h1"], approx); diff != "" {
			t.Errorf("h1 (-want +got):\n%s", diff)
		}
	})

	t.Run("all hosts", func(t *testing.T) {
		got, err := c.UsageAll(context.Background(), t0.Add(60*time.Second), t0.Add(90*time.Second))
		if err != nil {
			t.Fatalf("UsageAll: %v", err)
		}
		// Every host with a cpu sample in the window: h3 has no data, h7
		// none in the window; h6 (idle 0 at 70) is listed too.
		wantAll := collector.Result{Usage: maps.Clone(want.Usage), Stale: want.Stale, Missing: []string{"h8"}}
		wantAll.Usage["h6"] = goodness.Usage{CPU: 1}
		if diff := cmp.Diff(wantAll, got, approx); diff != "" {
			t.Errorf("UsageAll (-want +got):\n%s", diff)
		}
	})

	t.Run("empty", func(t *testing.T) {
		got, err := c.Usage(context.Background(), []string{"nobody", "h6"}, t0.Add(200*time.Second), t0.Add(230*time.Second))
		if !errors.Is(err, collector.ErrEmpty) {
			t.Fatalf("Usage with no data: err %v, want ErrEmpty", err)
		}
		if diff := cmp.Diff([]string{"h6", "nobody"}, got.Missing); diff != "" {
			t.Errorf("Missing (-want +got):\n%s", diff)
		}
	})

	t.Run("no hosts", func(t *testing.T) {
		got, err := c.Usage(context.Background(), nil, t0, t0.Add(time.Minute))
		if err != nil || len(got.Usage)+len(got.Stale)+len(got.Missing) != 0 {
			t.Errorf("Usage(nil hosts) = %+v, %v; want empty, nil", got, err)
		}
	})
}

func TestColocations(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	b.containers("h1", "application_1_0001", "terasort", 65, 2)
	b.containers("h1", "application_1_0002", "pagerank", 66, 1)
	b.containers("h1", "application_1_0003", "", 67, 3) // not colocd's: no kind
	b.containers("h1", "application_1_0001", "terasort", 75, 2)
	b.containers("h1", "application_1_0004", "terasort", 76, 1)
	b.containers("h2", "application_1_0005", "wordcount", 55, 1) // before the window
	b.containers("h2", "application_1_0006", "sort", 70, 0)      // no containers
	b.containers("h4", "application_1_0007", "kmeans", 89, 4)
	b.containers("h5", "application_1_0008", "late", 90, 1) // at stop: outside
	s.Write(t, b.String())

	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang))
			got, err := c.Colocations(context.Background(), t0.Add(60*time.Second), t0.Add(90*time.Second))
			if err != nil {
				t.Fatalf("Colocations: %v", err)
			}
			want := map[string][]string{"h1": {"pagerank", "terasort"}, "h4": {"kmeans"}}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("Colocations (-want +got):\n%s", diff)
			}

			got, err = c.Colocations(context.Background(), t0.Add(time.Hour), t0.Add(2*time.Hour))
			if err != nil || len(got) != 0 {
				t.Errorf("Colocations on an empty window = %v, %v; want empty, nil", got, err)
			}
		})
	}
}

// TestEscapingRealServer sends host names and schema names full of Flux,
// regex and line-protocol metacharacters through the real server.
func TestEscapingRealServer(t *testing.T) {
	s := influxtest.Start(t)
	hosts := []string{
		`a.b`, `axb`, `we"ird`, `dollar${x}`, `$`, `sl/ash`, `sl\/ash`, `back\slash`,
		`ünïcödé`, `sp ace`, `com,ma`, `eq=ual`, `paren(`, `star*`, `[class]`, `a|b`, `^$`, `tab	x`,
	}
	lpEscape := strings.NewReplacer(`,`, `\,`, ` `, `\ `, `=`, `\=`)
	var b strings.Builder
	for i, h := range hosts {
		for _, at := range []int{60, 70} {
			fmt.Fprintf(&b, "cpu,cpu=cpu-total,host=%s usage_idle=%d,usage_iowait=0 %d\n", lpEscape.Replace(h), i, sec(at))
			// A measurement and tag named with metacharacters, for a custom schema.
			fmt.Fprintf(&b, "we\\ird\\,cpu,c\"p$u=to${t}al,host=%s i\\=dle=%d,io\"wait=0 %d\n", lpEscape.Replace(h), i, sec(at))
		}
	}
	s.Write(t, b.String())
	from, to := t0.Add(60*time.Second), t0.Add(80*time.Second)

	check := func(t *testing.T, c *collector.Collector) {
		t.Helper()
		for i, h := range hosts {
			got, err := c.Usage(context.Background(), []string{h}, from, to)
			if err != nil {
				t.Errorf("host %q: %v", h, err)
				continue
			}
			want := collector.Result{Usage: map[string]goodness.Usage{h: {CPU: 1 - float64(i)/100}}}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("host %q (-want +got):\n%s", h, diff)
			}
		}
		got, err := c.Usage(context.Background(), hosts, from, to)
		if err != nil {
			t.Fatalf("all hosts: %v", err)
		}
		if len(got.Usage) != len(hosts) || len(got.Missing)+len(got.Stale) != 0 {
			t.Errorf("all hosts: %d usages, missing %q, stale %q; want %d, none", len(got.Usage), got.Missing, got.Stale, len(hosts))
		}
	}
	for _, lang := range languages {
		t.Run(lang+"/default schema", func(t *testing.T) { check(t, newCollector(t, s, inLanguage(lang))) })
		t.Run(lang+"/odd schema names", func(t *testing.T) {
			check(t, newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) {
				sch := collector.DefaultSchema()
				sch.CPUMeasurement, sch.CPUTag, sch.CPUTotal = `we\ird,cpu`, `c"p$u`, `to${t}al`
				sch.CPUIdleField, sch.CPUIOWaitField = `i=dle`, `io"wait`
				sch.DiskExclude = []string{`a/b`, `\/x`, `[/]y`, `\\/z`}
				sch.NetInclude = []string{`e.*/`}
				cfg.Schema = sch
			}))
		})
	}
}

func TestErrors(t *testing.T) {
	s := influxtest.Start(t, influxtest.WithAuth("colocd", "s3cret"))
	var b lp
	b.cpu("h1", "cpu-total", 60, 50, 0)
	s.Write(t, b.String())
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) { checkErrors(t, s, lang) })
	}
}

// checkErrors runs TestErrors's checks in one language.
func checkErrors(t *testing.T, s *influxtest.Server, lang string) {
	from, to := t0.Add(55*time.Second), t0.Add(65*time.Second)
	ctx := context.Background()
	t.Run("good token", func(t *testing.T) {
		c := newCollector(t, s, inLanguage(lang))
		got, err := c.Usage(ctx, []string{"h1"}, from, to)
		if err != nil {
			t.Fatalf("Usage: %v", err)
		}
		if diff := cmp.Diff(goodness.Usage{CPU: 0.5}, got.Usage["h1"], approx); diff != "" {
			t.Errorf("h1 (-want +got):\n%s", diff)
		}
		if err := c.Ping(ctx); err != nil {
			t.Errorf("Ping: %v", err)
		}
	})
	for name, tc := range map[string]struct {
		mod  func(*collector.Config)
		want error
	}{
		"wrong password": {func(c *collector.Config) { c.Token = "colocd:wrong" }, collector.ErrAuth},
		"no token":       {func(c *collector.Config) { c.Token = "" }, collector.ErrAuth},
		"unknown bucket": {func(c *collector.Config) { c.Bucket = "nope/autogen" }, collector.ErrBadQuery},
		"bad field name": {func(c *collector.Config) { c.Schema = collector.DefaultSchema(); c.Schema.CPUIdleField = "nope" }, collector.ErrEmpty},
	} {
		t.Run(name, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang), tc.mod)
			_, err := c.Usage(ctx, []string{"h1"}, from, to)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Usage error = %v, want %v", err, tc.want)
			}
			_, err = c.Colocations(ctx, from, to)
			if tc.want != collector.ErrEmpty && !errors.Is(err, tc.want) {
				t.Errorf("Colocations error = %v, want %v", err, tc.want)
			}
		})
	}
}

// TestOutage stops InfluxDB between two calls: the second gets
// ErrUnreachable at once, well inside the timeout, and never hangs.
func TestOutage(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	b.cpu("h1", "cpu-total", 60, 50, 0)
	s.Write(t, b.String())
	const timeout = 5 * time.Second
	ctx := context.Background()
	from, to := t0.Add(55*time.Second), t0.Add(65*time.Second)
	calls := map[string]func() error{}
	for _, lang := range languages {
		c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) { cfg.Timeout = timeout })
		if _, err := c.Usage(ctx, []string{"h1"}, from, to); err != nil {
			t.Fatalf("%s: Usage before the outage: %v", lang, err)
		}
		calls[lang+"/usage"] = func() error { _, err := c.Usage(ctx, []string{"h1"}, from, to); return err }
		calls[lang+"/colocations"] = func() error { _, err := c.Colocations(ctx, from, to); return err }
		calls[lang+"/ping"] = func() error { return c.Ping(ctx) }
	}
	if err := s.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	for name, call := range calls {
		start := time.Now()
		err := call()
		elapsed := time.Since(start)
		if !errors.Is(err, collector.ErrUnreachable) {
			t.Errorf("%s after Stop: err = %v, want ErrUnreachable", name, err)
		}
		if elapsed > timeout/2 {
			t.Errorf("%s after Stop took %v; a refused connection should fail at once", name, elapsed)
		}
	}
}

// TestHungServer: a server that accepts connections and never answers
// costs one Timeout, then ErrUnreachable wrapping DeadlineExceeded.
func TestHungServer(t *testing.T) {
	url := hungServer(t)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) { checkHung(t, url, lang) })
	}
}

// checkHung runs TestHungServer's checks in one language.
func checkHung(t *testing.T, url, lang string) {
	const timeout = 300 * time.Millisecond
	cfg := collector.DefaultConfig()
	cfg.URL, cfg.Timeout, cfg.Language = url, timeout, lang
	c, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	start := time.Now()
	_, err = c.Usage(context.Background(), []string{"h1"}, t0, t0.Add(time.Minute))
	elapsed := time.Since(start)
	if !errors.Is(err, collector.ErrUnreachable) || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("err = %v, want ErrUnreachable wrapping context.DeadlineExceeded", err)
	}
	if elapsed < timeout || elapsed > 10*timeout {
		t.Errorf("took %v, want about the %v timeout", elapsed, timeout)
	}

	// A caller's cancellation is not an outage.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Usage(ctx, []string{"h1"}, t0, t0.Add(time.Minute))
	if !errors.Is(err, context.Canceled) || errors.Is(err, collector.ErrUnreachable) {
		t.Errorf("cancelled: err = %v, want context.Canceled and not ErrUnreachable", err)
	}
}

// TestLanguagesAgree writes random Telegraf-shaped data (float CPU
// percentages, integer counters with resets, several disks and
// interfaces, hosts that stop part-way) and checks that Flux and InfluxQL
// give exactly the same Result, bit for bit, over several windows.
func TestLanguagesAgree(t *testing.T) {
	s := influxtest.Start(t)
	rng := rand.New(rand.NewPCG(13, 1))
	var b lp
	var hosts []string
	for i := range 40 {
		h := fmt.Sprintf("node-%02d", i)
		hosts = append(hosts, h)
		stop := 200 - 10*rng.IntN(8) // some hosts stop early: stale in late windows
		counters := map[string]int64{}
		for at := 0; at < stop; at += 10 {
			idle := 100 * rng.Float64()
			b.cpu(h, "cpu-total", at, idle, (100-idle)*rng.Float64())
			for _, dev := range []string{"sda", "sdb", "sda1"} {
				if rng.IntN(40) == 0 {
					counters[dev] = 0 // a reset
				}
				counters[dev] += rng.Int64N(1 << 40)
				b.disk(h, dev, at, counters[dev], counters[dev]/3)
			}
			for _, ifc := range []string{"eth0", "eth1", "lo"} {
				counters[ifc] += rng.Int64N(1 << 30)
				b.net(h, ifc, at, counters[ifc], counters[ifc]/7)
			}
		}
	}
	s.Write(t, b.String())
	flux := newCollector(t, s, inLanguage(collector.LanguageFlux))
	influxQL := newCollector(t, s, inLanguage(collector.LanguageInfluxQL))
	ctx := context.Background()
	for _, w := range []struct{ from, to int }{{0, 30}, {25, 95}, {100, 200}, {150, 210}, {0, 200}} {
		from, to := t0.Add(time.Duration(w.from)*time.Second), t0.Add(time.Duration(w.to)*time.Second)
		want, err := flux.Usage(ctx, hosts, from, to)
		if err != nil {
			t.Fatalf("[%d, %d) flux: %v", w.from, w.to, err)
		}
		if len(want.Usage) == 0 {
			t.Fatalf("[%d, %d): no usage: the comparison would be empty", w.from, w.to)
		}
		got, err := influxQL.Usage(ctx, hosts, from, to)
		if err != nil {
			t.Fatalf("[%d, %d) influxql: %v", w.from, w.to, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("[%d, %d): influxql differs from flux (-flux +influxql):\n%s", w.from, w.to, diff)
		}
	}
}

// TestFluxDisabled: an InfluxDB 1.x with Flux turned off, as many sites
// run it. The InfluxQL path reads it; the Flux path fails with
// ErrBadQuery naming the server's reason, not a hang or an empty read.
func TestFluxDisabled(t *testing.T) {
	s := influxtest.Start(t, influxtest.WithoutFlux())
	var b lp
	b.cpu("h1", "cpu-total", 60, 50, 10)
	b.cpu("h1", "cpu-total", 70, 30, 10)
	s.Write(t, b.String())
	from, to := t0.Add(55*time.Second), t0.Add(75*time.Second)
	got, err := newCollector(t, s, inLanguage(collector.LanguageInfluxQL)).Usage(context.Background(), []string{"h1"}, from, to)
	if err != nil {
		t.Fatalf("influxql: %v", err)
	}
	if diff := cmp.Diff(goodness.Usage{CPU: 0.5, IOWait: 0.1}, got.Usage["h1"], approx); diff != "" {
		t.Errorf("influxql h1 (-want +got):\n%s", diff)
	}
	_, err = newCollector(t, s, inLanguage(collector.LanguageFlux)).Usage(context.Background(), []string{"h1"}, from, to)
	if !errors.Is(err, collector.ErrBadQuery) || !strings.Contains(strings.ToLower(err.Error()), "flux") {
		t.Errorf("flux on a Flux-disabled server: err = %v, want ErrBadQuery mentioning Flux", err)
	}
}

// TestPressure reads Telegraf's inputs.kernel PSI series (collect =
// ["psi"]) in both languages: resource io and cpu of type some count, as
// stalled microseconds per second, and a host with both has Pressure set;
// off by default.
func TestPressure(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	psi := func(host, resource, typ string, at int, total int64) {
		fmt.Fprintf(&b, "pressure,host=%s,resource=%s,type=%s total=%di %d\n", host, resource, typ, total, sec(at))
		fmt.Fprintf(&b, "pressure,host=%s,resource=%s,type=%s avg10=12.5,avg60=3,avg300=1 %d\n", host, resource, typ, sec(at))
	}
	for i, at := range []int{60, 70, 80} {
		k := int64(i)
		b.cpu("h1", "cpu-total", at, 50, 0)
		b.cpu("h2", "cpu-total", at, 50, 0)
		b.cpu("h3", "cpu-total", at, 50, 0)
		psi("h1", "io", "some", at, 1e9+k*2_500_000) // 250 ms stalled per s: 0.25
		psi("h1", "io", "full", at, k*9_000_000)     // other series: ignored
		psi("h1", "cpu", "some", at, k*4_000_000)    // 0.4
		psi("h1", "cpu", "full", at, k*8_000_000)
		psi("h1", "memory", "some", at, k*9_000_000)
		psi("h3", "io", "some", at, k*1_000_000) // io only: values, not Pressure
	}
	// h2: no PSI (an old kernel, or inputs.kernel without psi): 0.
	s.Write(t, b.String())
	from, to := t0.Add(60*time.Second), t0.Add(90*time.Second)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			for _, on := range []bool{false, true} {
				c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) { cfg.Pressure = on })
				got, err := c.Usage(context.Background(), []string{"h1", "h2", "h3"}, from, to)
				if err != nil {
					t.Fatalf("pressure %t: %v", on, err)
				}
				want := map[string]goodness.Usage{"h1": {CPU: 0.5}, "h2": {CPU: 0.5}, "h3": {CPU: 0.5}}
				if on {
					want["h1"] = goodness.Usage{CPU: 0.5, IOPressure: 0.25, CPUPressure: 0.4, Pressure: true}
					want["h3"] = goodness.Usage{CPU: 0.5, IOPressure: 0.1}
				}
				if diff := cmp.Diff(want, got.Usage, approx); diff != "" {
					t.Errorf("pressure %t (-want +got):\n%s", on, diff)
				}
			}
		})
	}
}

// hungServer listens on 127.0.0.1, accepts connections and never answers,
// until the test ends; it returns its http:// URL.
func hungServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var conns []net.Conn
	go func() {
		defer close(done)
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			conns = append(conns, conn) // hold it open, say nothing
		}
	}()
	t.Cleanup(func() {
		_ = ln.Close()
		<-done
		for _, c := range conns {
			_ = c.Close()
		}
	})
	return "http://" + ln.Addr().String()
}
