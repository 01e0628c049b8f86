package metricsource

import (
	"context"
	"errors"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/testing/logtest"
)

// fakeReader has data for the hosts of data (by the source's names); it
// records what it was asked.
type fakeReader struct {
	data   map[string]bool
	asked  [][]string
	allErr error
	alls   int
}

func (f *fakeReader) Usage(_ context.Context, hosts []string, _, _ time.Time) (collector.Result, error) {
	f.asked = append(f.asked, slices.Clone(hosts))
	res := collector.Result{Usage: map[string]goodness.Usage{}}
	for _, h := range hosts {
		if f.data[h] {
			res.Usage[h] = goodness.Usage{CPU: float64(len(h)) / 100}
		} else {
			res.Missing = append(res.Missing, h)
		}
	}
	return res, nil
}

func (f *fakeReader) UsageAll(context.Context, time.Time, time.Time) (collector.Result, error) {
	f.alls++
	if f.allErr != nil {
		return collector.Result{}, f.allErr
	}
	res := collector.Result{Usage: map[string]goodness.Usage{}}
	for h := range f.data {
		res.Usage[h] = goodness.Usage{}
	}
	return res, nil
}

func TestHostsMapping(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  HostsConfig
		data []string // the source's host names
		want []string // the source names asked for node1.dc.example.com, node2.dc.example.com, n3
	}{
		{"same", HostsConfig{Mode: hostsSame}, []string{"node1.dc.example.com", "n3"},
			[]string{"node1.dc.example.com", "node2.dc.example.com", "n3"}},
		{"short: YARN has FQDNs, Telegraf short names", HostsConfig{Mode: HostsShort}, []string{"node1", "n3"},
			[]string{"node1", "node2", "n3"}},
		{"domain: YARN has short names, the source FQDNs", HostsConfig{Mode: hostsDomain, Domain: "dc.example.com"}, []string{"node1.dc.example.com", "n3.dc.example.com"},
			[]string{"node1.dc.example.com", "node2.dc.example.com", "n3.dc.example.com"}},
		{"map first, then the mode", HostsConfig{Mode: HostsShort, Map: map[string]string{"node2.dc.example.com": "spare-7"}}, []string{"node1", "spare-7"},
			[]string{"node1", "spare-7", "n3"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := &fakeReader{data: map[string]bool{}}
			for _, h := range tc.data {
				f.data[h] = true
			}
			s, err := New(f, Options{Hosts: tc.cfg})
			if err != nil {
				t.Fatal(err)
			}
			yarn := []string{"node1.dc.example.com", "node2.dc.example.com", "n3"}
			u, stale, err := s.Usage(t.Context(), yarn, time.Unix(0, 0), time.Unix(60, 0))
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(f.asked[0], tc.want) {
				t.Errorf("asked the source for %v, want %v", f.asked[0], tc.want)
			}
			// Answers come back under YARN's names.
			for _, h := range yarn {
				_, ok := u[h]
				if ok == slices.Contains(stale, h) {
					t.Errorf("host %s: in usage %v, in stale %v (want exactly one)", h, ok, stale)
				}
			}
			if got := len(u) + len(stale); got != 3 {
				t.Errorf("%d answers (usage %v, stale %v), want 3 under YARN's names", got, u, stale)
			}
			if _, ok := u["node1.dc.example.com"]; !ok {
				t.Errorf("node1 not read under its YARN name: usage %v, stale %v", u, stale)
			}
		})
	}
}

func TestHostsCollision(t *testing.T) {
	s, err := New(&fakeReader{}, Options{Hosts: HostsConfig{Mode: HostsShort}})
	if err != nil {
		t.Fatal(err)
	}
	_, _, err = s.Usage(t.Context(), []string{"web1.a.example.com", "web1.b.example.com"}, time.Unix(0, 0), time.Unix(60, 0))
	if err == nil || !strings.Contains(err.Error(), "web1.a.example.com and web1.b.example.com both map to web1") {
		t.Errorf("two FQDNs with one short name: %v", err)
	}
}

func TestHostsConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		cfg   HostsConfig
		field string
	}{
		{HostsConfig{Mode: "fqdn"}, "mode"},
		{HostsConfig{Mode: hostsDomain}, "domain"},
		{HostsConfig{Mode: hostsDomain, Domain: ".example.com"}, "domain"},
		{HostsConfig{Mode: hostsSame, Domain: "example.com"}, "domain"},
		{HostsConfig{Mode: hostsSame, Map: map[string]string{"node1": "bad name"}}, "map"},
		{HostsConfig{Mode: hostsSame, CheckEvery: -time.Second}, "check_every"},
	} {
		var fe *FieldError
		if err := tc.cfg.Validate(); !errors.As(err, &fe) || fe.Field != tc.field {
			t.Errorf("%+v: %v, want a FieldError on %s", tc.cfg, err, tc.field)
		}
	}
	if err := DefaultHostsConfig().Validate(); err != nil {
		t.Errorf("the default: %v", err)
	}
	if err := (HostsConfig{Mode: hostsDomain, Domain: "dc.example.com", Map: map[string]string{"n1": "10.0.0.1"}}).Validate(); err != nil {
		t.Errorf("a valid domain config: %v", err)
	}
}

// Every host seen on one side only gets one WARN line when it appears and
// an INFO line when it is matched again, and the counts follow; the
// source's whole host list is read at most every CheckEvery of the
// windows' clock.
func TestUnmatchedHosts(t *testing.T) {
	f := &fakeReader{data: map[string]bool{"node1": true, "node2": true, "old-node": true}}
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	counts := map[string]int{}
	s, err := New(f, Options{Hosts: HostsConfig{Mode: hostsSame, CheckEvery: 10 * time.Minute}, Logger: slog.New(rec),
		Unmatched: func(side string, n int) { counts[side] = n }})
	if err != nil {
		t.Fatal(err)
	}
	t0 := time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)
	read := func(min int, hosts ...string) {
		t.Helper()
		to := t0.Add(time.Duration(min) * time.Minute)
		if _, _, err := s.Usage(t.Context(), hosts, to.Add(-time.Minute), to); err != nil {
			t.Fatal(err)
		}
	}
	read(1, "node1", "node2", "node3") // node3: YARN only; old-node: source only
	if counts[sideYARN] != 1 || counts[sideSource] != 1 || f.alls != 1 {
		t.Fatalf("counts %v after %d listings, want 1 per side after 1", counts, f.alls)
	}
	read(2, "node1", "node2", "node3")
	if f.alls != 1 {
		t.Errorf("the source's hosts were listed again after 1 minute (CheckEvery 10 min): %d listings", f.alls)
	}
	f.data["node3"] = true // Telegraf starts on node3
	delete(f.data, "old-node")
	read(12, "node1", "node2", "node3")
	if counts[sideYARN] != 0 || counts[sideSource] != 0 || f.alls != 2 {
		t.Errorf("counts %v after %d listings, want 0 per side after 2", counts, f.alls)
	}
	warns := rec.With([]string{"host", "source_host"}, "host seen by YARN only: the metrics source has no sample of it (check metrics.hosts)",
		"host seen by the metrics source only: YARN has no such running node (check metrics.hosts)")
	if len(warns) != 2 || warns[0].Attrs["host"] != "node3" || warns[1].Attrs["source_host"] != "old-node" {
		t.Errorf("WARN lines %v, want one for node3 (YARN only) and one for old-node (source only)", warns)
	}
	if again := rec.With([]string{"side", "host"}, "host matched again"); len(again) != 2 {
		t.Errorf("INFO lines %v, want node3 and old-node matched again", again)
	}

	// A failed listing is logged and retried at the next read.
	f.allErr = errors.New("influx down")
	read(30, "node1")
	read(31, "node1")
	if f.alls != 4 {
		t.Errorf("%d listings, want a retry after a failure (4)", f.alls)
	}
}

func TestHostsMapIgnoresCase(t *testing.T) {
	n := HostsConfig{Mode: HostsShort, Map: map[string]string{"Spare7.DC.example.com": "spare-7"}}.compile()
	if got := n.sourceName("spare7.dc.example.com"); got != "spare-7" {
		t.Errorf("sourceName = %q, want the exception spare-7", got)
	}
	var fe *FieldError
	err := HostsConfig{Mode: hostsSame, Map: map[string]string{"a.example.com": "a", "A.example.com": "b"}}.Validate()
	if !errors.As(err, &fe) || fe.Field != "map" || !strings.Contains(err.Error(), "ignore case") {
		t.Errorf("two keys differing in case: %v", err)
	}
}
