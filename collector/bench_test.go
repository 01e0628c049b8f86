package collector_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/goodness"
	"github.com/google/go-cmp/cmp"
)

// BenchmarkUsage measures one learning interval's query and decode:
// 1,000 hosts, a 30 s window, Telegraf's 10 s points, with per-CPU series,
// a partition and loopback present (and filtered out) as on real nodes.
// The data is written once; every iteration is one Usage call. Besides
// wall time it reports the CPU time influxd and this process spent per
// call, which stays meaningful on a loaded machine.
func BenchmarkUsage(b *testing.B) {
	const hosts = 1000
	s := influxtest.Start(b)
	names := writeUsageFixture(b, s, hosts)

	from, to := t0, t0.Add(30*time.Second)
	// 2 disks × (100, 200)/s, eth0 only (lo excluded).
	want := goodness.Usage{CPU: 0.35, IOWait: 0.05, DiskRead: 200, DiskWrite: 400, NetRecv: 500, NetSent: 700}

	for _, bc := range []struct {
		name      string
		n, maxPat int
	}{
		{"hosts=1000", hosts, 0},             // default: over HostPatternMax, no host predicate
		{"hosts=1000,pattern", hosts, hosts}, // the 1,000 names in the storage predicate
		{"hosts=150,pattern", 150, 0},        // a subset, named in the predicate
	} {
		for _, lang := range languages {
			b.Run(lang+"/"+bc.name, func(b *testing.B) {
				benchUsage(b, s, lang, bc.maxPat, names[:bc.n], from, to, want)
			})
		}
	}
}

// BenchmarkUsage10k is BenchmarkUsage's default case at 10,000 hosts:
// what one learning tick's read costs on the largest clusters colocd
// fronts (docs/performance.md, "Scaling model").
func BenchmarkUsage10k(b *testing.B) {
	const hosts = 10000
	s := influxtest.Start(b)
	names := writeUsageFixture(b, s, hosts)
	want := goodness.Usage{CPU: 0.35, IOWait: 0.05, DiskRead: 200, DiskWrite: 400, NetRecv: 500, NetSent: 700}
	for _, lang := range languages {
		b.Run(lang+"/hosts=10000", func(b *testing.B) {
			benchUsage(b, s, lang, 0, names, t0, t0.Add(30*time.Second), want)
		})
	}
}

// writeUsageFixture writes Telegraf's points of hosts nodes for the usage
// benchmarks, from −30 s to +30 s around t0 (the window's stop, excluded),
// and returns the host names.
func writeUsageFixture(b *testing.B, s *influxtest.Server, hosts int) []string {
	names := make([]string, hosts)
	var lines strings.Builder
	flush := func() {
		s.Write(b, lines.String())
		lines.Reset()
	}
	for i := range hosts {
		h := fmt.Sprintf("node-%05d.rack%02d.example.com", i, i%40)
		names[i] = h
		for step := -3; step <= 3; step++ {
			at := t0.Add(time.Duration(step) * 10 * time.Second).UnixNano()
			k := int64(step + 3)
			for _, cpu := range []string{"cpu-total", "cpu0", "cpu1"} {
				fmt.Fprintf(&lines, "cpu,cpu=%s,host=%s usage_idle=60,usage_iowait=5,usage_user=30,usage_system=5 %d\n", cpu, h, at)
			}
			for _, dev := range []string{"sda", "sda1", "nvme0n1"} {
				fmt.Fprintf(&lines, "diskio,host=%s,name=%s read_bytes=%di,write_bytes=%di,reads=%di,writes=%di %d\n", h, dev, 1000*k, 2000*k, k, k, at)
			}
			for _, ifc := range []string{"eth0", "lo"} {
				fmt.Fprintf(&lines, "net,host=%s,interface=%s bytes_recv=%di,bytes_sent=%di,packets_recv=%di %d\n", h, ifc, 5000*k, 7000*k, k, at)
			}
		}
		if i%100 == 99 {
			flush()
		}
	}
	flush()
	return names
}

// benchUsage times Usage of asked in one language, and reports the bytes
// of its answer (what influx.max_answer_bytes is sized from).
func benchUsage(b *testing.B, s *influxtest.Server, lang string, maxPat int, asked []string, from, to time.Time, want goodness.Usage) {
	n := len(asked)
	ctx := context.Background()
	cfg := collector.DefaultConfig()
	cfg.URL, cfg.Bucket, cfg.HostPatternMax, cfg.Language = s.URL(), s.Bucket(), maxPat, lang
	counted := &countingTransport{base: http.DefaultTransport}
	cfg.HTTPClient = &http.Client{Transport: counted}
	c, err := collector.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	// Check the result before timing it.
	res, err := c.Usage(ctx, asked, from, to)
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Usage) != n || len(res.Stale)+len(res.Missing) != 0 {
		b.Fatalf("got %d usages, stale %d, missing %d; want %d, 0, 0", len(res.Usage), len(res.Stale), len(res.Missing), n)
	}
	for _, h := range []string{asked[0], asked[n-1]} {
		if diff := cmp.Diff(want, res.Usage[h], approx); diff != "" {
			b.Fatalf("%s (-want +got):\n%s", h, diff)
		}
	}
	answer := counted.bytes.Load()
	b.ReportAllocs()
	server0, self0 := procCPU(s.PID()), selfCPU()
	for b.Loop() {
		if _, err := c.Usage(ctx, asked, from, to); err != nil {
			b.Fatal(err)
		}
	}
	if server0 >= 0 {
		b.ReportMetric(float64(procCPU(s.PID())-server0)/float64(time.Millisecond)/float64(b.N), "influxd-cpu-ms/op")
	}
	b.ReportMetric(float64(selfCPU()-self0)/float64(time.Millisecond)/float64(b.N), "client-cpu-ms/op")
	b.ReportMetric(float64(answer), "answer-bytes/op")
}

// countingTransport counts the body bytes of the answers through it.
type countingTransport struct {
	base  http.RoundTripper
	bytes atomic.Int64
}

func (t *countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.base.RoundTrip(req)
	if err == nil {
		resp.Body = &countingBody{ReadCloser: resp.Body, n: &t.bytes}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	n *atomic.Int64
}

func (b *countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.n.Add(int64(n))
	return n, err
}

// procCPU is a process's user+system CPU time from /proc, -1 if unknown.
func procCPU(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// Fields after the parenthesised command name; utime and stime are
	// fields 14 and 15, in clock ticks of 1/100 s on Linux.
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	if len(f) < 13 {
		return -1
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	st, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return -1
	}
	return time.Duration(u+st) * 10 * time.Millisecond
}

func selfCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
