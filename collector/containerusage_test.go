package collector_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/influxtest"
)

// cg is one sample of the plugin's cgroup fields.
type cg struct{ cpu, read, write, cpus int64 }

// cgroup writes a yarn_containers point with tags (",k=v..."), the
// containers field and the four cgroup fields.
func (b *lp) cgroup(tags string, at int, v cg) {
	fmt.Fprintf(b, "yarn_containers%s containers=1i,cpu_usage_us=%di,io_read_bytes=%di,io_write_bytes=%di,host_cpus=%di %d\n",
		tags, v.cpu, v.read, v.write, v.cpus, sec(at))
}

// TestContainerUsage writes the plugin's cgroup counters with known
// rates on two hosts and reads them back in both languages.
//
// Window [60s, 120s), 60 s: samples at 60 … 110 count; those at 40, 50,
// 120 (= stop) and 130 do not.
func TestContainerUsage(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	app := func(host, id string) string { return ",application_id=" + id + ",host=" + host }

	// h1, application_1_0001: per 10 s, +2e6 µs CPU, +1000 B read, +500 B
	// written; host_cpus 4, then 8 in the newest sample. Its sample at 80
	// was written without the RM's answer (no kind): another series, which
	// the Flux answer gives apart. Its six samples span 50 s and stand for
	// 60 (each increase is scaled to the span plus the samples' spacing,
	// at most the window): 1e7 µs / 1e6 / 50 / 8 = 1/40 CPU; 5000/50 B/s
	// read, 2500/50 written. The samples outside the
	// window would add 1e9 µs (at 50) or more (at 120), and host_cpus 999.
	b.cgroup(app("h1", "application_1_0001")+",kind=sort", 50, cg{0, 0, 0, 999})
	for k := range 6 {
		tags := app("h1", "application_1_0001") + ",kind=sort"
		if k == 2 {
			tags = app("h1", "application_1_0001")
		}
		cpus := int64(4)
		if k == 5 {
			cpus = 8
		}
		b.cgroup(tags, 60+10*k, cg{1e9 + 2e6*int64(k), 1e6 + 1000*int64(k), 5e5 + 500*int64(k), cpus})
	}
	b.cgroup(app("h1", "application_1_0001")+",kind=sort", 120, cg{9e15, 9e15, 9e15, 999})

	// h1, application_1_0002: the plugin restarted between 80 and 90
	// (every counter drops). CPU 1e6 + 1e6 + 3e5 (the post-reset value) +
	// 1e6 + 1e6 = 4.3e6 µs over 50 s → 4.3/50/4; read 1000 + 1000 + 50 +
	// 1000 + 1000 = 4050 → 81 B/s; written 100 + 100 + 10 + 10 + 10 = 230
	// → 4.6.
	for i, v := range []cg{
		{5e6, 7000, 100, 4}, {6e6, 8000, 200, 4}, {7e6, 9000, 300, 4},
		{3e5, 50, 10, 4}, {1.3e6, 1050, 20, 4}, {2.3e6, 2050, 30, 4},
	} {
		b.cgroup(app("h1", "application_1_0002"), 60+10*i, v)
	}

	// h2, application_1_0001: 16 CPUs; per 10 s +8e6 µs → 4e7/1e6/50/16 =
	// 1/20; no reads; +1e6 B written per 10 s → 1e5.
	for k := range 6 {
		b.cgroup(app("h2", "application_1_0001"), 60+10*k, cg{8e6 * int64(k), 123, 1e6 * int64(k), 16})
	}
	// h2, application_1_0003: only from 90 on, yet over the whole 60 s:
	// its samples span 20 s and stand for 30 (one spacing before the
	// first): 6e6 µs × 30/20 = 9e6 → 9/60/16 = 0.15/16; 12000 × 1.5 / 60 =
	// 300 B/s read; 1200 × 1.5 / 60 = 30.
	for i, v := range []cg{{0, 0, 0, 16}, {3e6, 6000, 600, 16}, {6e6, 12000, 1200, 16}} {
		b.cgroup(app("h2", "application_1_0003"), 90+10*i, v)
	}

	// No reading:
	// one sample in the window;
	b.cgroup(app("h2", "application_1_0004"), 100, cg{1, 1, 1, 16})
	// samples only outside the window;
	for _, at := range []int{40, 50, 120, 130} {
		b.cgroup(app("h2", "application_1_0005"), at, cg{int64(at) * 1e6, int64(at), int64(at), 16})
	}
	// an older plugin: containers, no counters;
	for _, at := range []int{60, 70, 80} {
		b.containers("h1", "application_1_0006", "sort", at, 2)
	}
	// no host_cpus, and host_cpus 0 (with no CPU used: 0/0);
	for k := range 3 {
		fmt.Fprintf(&b, "yarn_containers%s containers=1i,cpu_usage_us=%di,io_read_bytes=1i,io_write_bytes=1i %d\n",
			app("h1", "application_1_0007"), 1e6*k, sec(60+10*k))
		b.cgroup(app("h1", "application_1_0008"), 60+10*k, cg{1e6, 1, 1, 0})
	}
	// no application_id, no host;
	for k := range 3 {
		b.cgroup(",host=h1", 60+10*k, cg{1e6 * int64(k), 1, 1, 4})
		b.cgroup(",application_id=application_1_0009", 60+10*k, cg{1e6 * int64(k), 1, 1, 4})
	}
	// the I/O counters in one sample only.
	b.cgroup(app("h2", "application_1_0010"), 60, cg{0, 0, 0, 16})
	fmt.Fprintf(&b, "yarn_containers%s containers=1i,cpu_usage_us=1000000i,host_cpus=16i %d\n", app("h2", "application_1_0010"), sec(70))
	s.Write(t, b.String())

	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	want := []collector.AppUsage{
		{Host: "h1", AppID: "application_1_0001", CPU: 1.0 / 40, DiskRead: 100, DiskWrite: 50},
		{Host: "h1", AppID: "application_1_0002", CPU: 4.3 / 50 / 4, DiskRead: 81, DiskWrite: 4.6},
		{Host: "h2", AppID: "application_1_0001", CPU: 1.0 / 20, DiskRead: 0, DiskWrite: 1e5},
		{Host: "h2", AppID: "application_1_0003", CPU: 0.15 / 16, DiskRead: 300, DiskWrite: 30},
	}
	var results [][]collector.AppUsage
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang))
			got, err := c.ContainerUsage(context.Background(), at(60), at(120))
			if err != nil {
				t.Fatalf("ContainerUsage: %v", err)
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("ContainerUsage (-want +got):\n%s", diff)
			}
			results = append(results, got)
			got, err = c.ContainerUsage(context.Background(), at(3600), at(7200))
			if err != nil || got == nil || len(got) != 0 {
				t.Errorf("ContainerUsage of a window without samples = %#v, %v; want an empty slice, nil", got, err)
			}
		})
	}
	if len(results) == 2 {
		if diff := cmp.Diff(results[0], results[1]); diff != "" {
			t.Errorf("influxql differs from flux (-flux +influxql):\n%s", diff)
		}
	}
}

// TestContainerUsageWithoutCounters: a bucket whose yarn_containers points
// carry no cgroup fields (the plugin's cgroup reading off) gives an empty
// slice and no error.
func TestContainerUsageWithoutCounters(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	for _, at := range []int{60, 70, 80} {
		b.containers("h1", "application_1_0001", "sort", at, 2)
	}
	s.Write(t, b.String())
	for _, lang := range languages {
		c := newCollector(t, s, inLanguage(lang))
		got, err := c.ContainerUsage(context.Background(), t0.Add(60*time.Second), t0.Add(90*time.Second))
		if err != nil || got == nil || len(got) != 0 {
			t.Errorf("%s: ContainerUsage = %#v, %v; want an empty slice, nil", lang, got, err)
		}
	}
}

// TestContainerUsageErrors: the read fails as Placements does, with the
// same sentinels; an empty window is refused before anything is sent; a
// caller's cancellation is not an outage.
func TestContainerUsageErrors(t *testing.T) {
	s := influxtest.Start(t)
	ctx := context.Background()
	from, to := t0, t0.Add(time.Minute)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) { cfg.Bucket = "nope/autogen" })
			if _, err := c.ContainerUsage(ctx, from, to); !errors.Is(err, collector.ErrBadQuery) {
				t.Errorf("unknown bucket: %v, want ErrBadQuery", err)
			}
			if _, err := c.ContainerUsage(ctx, to, to); !errors.Is(err, collector.ErrInvalid) {
				t.Errorf("empty window: %v, want ErrInvalid", err)
			}
			c = newCollector(t, s, inLanguage(lang))
			if _, err := c.ContainerUsage(canceled, from, to); !errors.Is(err, context.Canceled) || errors.Is(err, collector.ErrUnreachable) {
				t.Errorf("canceled: %v, want context.Canceled and not ErrUnreachable", err)
			}
		})
	}
	c := newCollector(t, s)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ContainerUsage(ctx, from, to); !errors.Is(err, collector.ErrUnreachable) {
		t.Errorf("after Stop: %v, want ErrUnreachable", err)
	}
}
