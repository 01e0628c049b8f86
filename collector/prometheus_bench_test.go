package collector_test

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/promtest"
	"github.com/colocd/colocd/goodness"
)

// BenchmarkUsagePrometheus measures one learning interval's queries and
// decoding against a real Prometheus: 1,000 hosts shaped as node_exporter
// exports them (4 CPUs × 8 modes, sda and a partition, eth0 and lo), a
// 30 s window, 10 s samples. The data is backfilled once; every iteration
// is one Usage call. Besides wall time it reports the CPU time prometheus
// and this process spent per call, which stays meaningful on a loaded
// machine.
func BenchmarkUsagePrometheus(b *testing.B) {
	const hosts, cpus = 1000, 4
	var f promFixture
	names := make([]string, hosts)
	// Samples from −25 s to +35 s around an hour past promT0: those at 5,
	// 15 and 25 s fall in the window, off its edges. All of them, and the
	// 5 min before the window that the newest-sample query looks back
	// over, lie in one of promtool's 2 h blocks, as recent samples lie in
	// the head block of a live Prometheus.
	const at0 = 3600
	ats := []int{at0 - 25, at0 - 15, at0 - 5, at0 + 5, at0 + 15, at0 + 25, at0 + 35}
	for i := range hosts {
		h := fmt.Sprintf("node-%04d.rack%02d.example.com", i, i%40)
		names[i] = h
		tg := target(h+":9100", h)
		for c := range cpus {
			f.cpu(tg, strconv.Itoa(c), ats, map[string]float64{"user": 0.3, "system": 0.05, "iowait": 0.05, "idle": 0.6})
		}
		for _, dev := range []string{"sda", "sda1"} { // sda1 excluded
			f.linear("node_disk_read_bytes_total", lbl(tg, "device", dev), ats, 1e6, 200)
			f.linear("node_disk_written_bytes_total", lbl(tg, "device", dev), ats, 1e6, 400)
		}
		for _, dev := range []string{"eth0", "lo"} { // lo excluded
			f.linear("node_network_receive_bytes_total", lbl(tg, "device", dev), ats, 1e6, 500)
			f.linear("node_network_transmit_bytes_total", lbl(tg, "device", dev), ats, 1e6, 700)
		}
	}
	srv := promtest.Start(b, promtest.WithSamples(&f.Samples))
	ctx := context.Background()
	from, to := promAt(at0), promAt(at0+30)
	want := goodness.Usage{CPU: 0.35, IOWait: 0.05, DiskRead: 200, DiskWrite: 400, NetRecv: 500, NetSent: 700}

	for _, bc := range []struct {
		name      string
		n, maxPat int
	}{
		{"hosts=1000", hosts, 0},             // default: over HostPatternMax, no host matcher
		{"hosts=1000,pattern", hosts, hosts}, // the 1,000 names in the host matcher
		{"hosts=150,pattern", 150, 0},        // a subset, named in the matcher
	} {
		b.Run(bc.name, func(b *testing.B) {
			n, asked := bc.n, names[:bc.n]
			p := newProm(b, srv.URL(), func(c *collector.PrometheusConfig) { c.HostPatternMax = bc.maxPat })
			// Check the result before timing it.
			res, err := p.Usage(ctx, asked, from, to)
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Usage) != n || len(res.Stale)+len(res.Missing) != 0 {
				b.Fatalf("got %d usages, stale %d, missing %d; want %d, 0, 0", len(res.Usage), len(res.Stale), len(res.Missing), n)
			}
			for _, h := range []string{asked[0], asked[n-1]} {
				if diff := cmp.Diff(want, res.Usage[h], promApprox); diff != "" {
					b.Fatalf("%s (-want +got):\n%s", h, diff)
				}
			}
			b.ReportAllocs()
			server0, self0 := procCPU(srv.PID()), selfCPU()
			for b.Loop() {
				if _, err := p.Usage(ctx, asked, from, to); err != nil {
					b.Fatal(err)
				}
			}
			if server0 >= 0 {
				b.ReportMetric(float64(procCPU(srv.PID())-server0)/float64(time.Millisecond)/float64(b.N), "prometheus-cpu-ms/op")
			}
			b.ReportMetric(float64(selfCPU()-self0)/float64(time.Millisecond)/float64(b.N), "client-cpu-ms/op")
		})
	}
}
