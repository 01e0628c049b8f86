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

// sample is one yarn_containers point in the plugin's shape: tags it
// leaves out when empty, name as the string field application_name.
type sample struct {
	host, app, kind, typ, queue, name string
	at, containers                    int
}

func (b *lp) placement(s sample) {
	tags := ""
	for _, kv := range [][2]string{{"application_type", s.typ}, {"kind", s.kind}, {"queue", s.queue}} {
		if kv[1] != "" {
			tags += "," + kv[0] + "=" + kv[1]
		}
	}
	name := ""
	if s.name != "" {
		name = fmt.Sprintf(",application_name=%q", s.name)
	}
	fmt.Fprintf(b, "yarn_containers,application_id=%s,host=%s%s containers=%di,memory_mb=%di,vcores=%di%s %d\n",
		s.app, s.host, tags, s.containers, 1024*s.containers, s.containers, name, sec(s.at))
}

// TestPlacements writes the plugin's points with known means, a sample
// written while the RM was down (no tags), an old plugin's points (a kind,
// no type or queue), names that change, and points outside the window or
// without containers, and reads them back in both languages.
//
// Window [60s, 90s): samples at 60 … 89 count; 55 and 90 (= stop) do not.
func TestPlacements(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	for _, p := range []sample{
		{host: "h1", app: "application_1_0001", kind: "terasort", typ: "MAPREDUCE", queue: "default", at: 60, containers: 2},
		{host: "h1", app: "application_1_0001", kind: "terasort", typ: "MAPREDUCE", queue: "default", at: 70, containers: 2},
		{host: "h1", app: "application_1_0001", kind: "terasort", typ: "MAPREDUCE", queue: "default", at: 80, containers: 4},
		{host: "h1", app: "application_1_0002", at: 65, containers: 1}, // the RM was down: the id alone
		{host: "h1", app: "application_1_0002", kind: "pagerank", typ: "MAPREDUCE", queue: "default", at: 75, containers: 1},
		{host: "h1", app: "application_1_0002", kind: "pagerank", typ: "MAPREDUCE", queue: "default", at: 85, containers: 3},
		{host: "h1", app: "application_1_0003", typ: "SPARK", queue: "root.etl", name: "nightly etl", at: 60, containers: 1},
		{host: "h1", app: "application_1_0003", typ: "SPARK", queue: "root.etl", name: "nightly etl (retry)", at: 70, containers: 1},
		{host: "h2", app: "application_1_0004", kind: "sort", typ: "MAPREDUCE", queue: "default", at: 55, containers: 1}, // before
		{host: "h2", app: "application_1_0004", kind: "sort", typ: "MAPREDUCE", queue: "default", at: 90, containers: 1}, // at stop
		{host: "h2", app: "application_1_0005", typ: "TEZ", queue: "adhoc", name: "q", at: 70, containers: 0},            // none held
		{host: "h3", app: "application_1_0006", kind: "kmeans", at: 89, containers: 4},                                   // an old plugin
	} {
		b.placement(p)
	}
	s.Write(t, b.String())
	at := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Second) }
	want := []collector.Placement{
		{Host: "h1", AppID: "application_1_0001", Kind: "terasort", Type: "MAPREDUCE", Queue: "default",
			First: at(60), Last: at(80), Samples: 3, Containers: 8.0 / 3},
		{Host: "h1", AppID: "application_1_0002", Kind: "pagerank", Type: "MAPREDUCE", Queue: "default",
			First: at(65), Last: at(85), Samples: 3, Containers: 5.0 / 3},
		{Host: "h1", AppID: "application_1_0003", Type: "SPARK", Queue: "root.etl", Name: "nightly etl (retry)",
			First: at(60), Last: at(70), Samples: 2, Containers: 1},
		{Host: "h3", AppID: "application_1_0006", Kind: "kmeans", First: at(89), Last: at(89), Samples: 1, Containers: 4},
	}
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang))
			got, err := c.Placements(context.Background(), at(60), at(90))
			if err != nil {
				t.Fatalf("Placements: %v", err)
			}
			if diff := cmp.Diff(want, got, approx); diff != "" {
				t.Errorf("Placements (-want +got):\n%s", diff)
			}
			got, err = c.Placements(context.Background(), at(3600), at(7200))
			if err != nil || len(got) != 0 {
				t.Errorf("Placements of an empty window = %v, %v; want none, nil", got, err)
			}
		})
	}
}

// TestPlacementsWithoutNames: a bucket where no point has the name field
// (the plugin's default) reads the same in both languages, and the
// Colocations view of the same points agrees with the placements' kinds.
func TestPlacementsWithoutNames(t *testing.T) {
	s := influxtest.Start(t)
	var b lp
	for i := range 3 {
		b.placement(sample{host: "h1", app: "application_1_0001", kind: "sort", typ: "MAPREDUCE", queue: "default", at: 60 + 10*i, containers: 1})
		b.placement(sample{host: "h1", app: "application_1_0002", typ: "SPARK", queue: "etl", at: 61 + 10*i, containers: 2})
	}
	s.Write(t, b.String())
	from, to := t0.Add(60*time.Second), t0.Add(90*time.Second)
	var results [][]collector.Placement
	for _, lang := range languages {
		c := newCollector(t, s, inLanguage(lang))
		got, err := c.Placements(context.Background(), from, to)
		if err != nil {
			t.Fatalf("%s: %v", lang, err)
		}
		if len(got) != 2 || got[1].Type != "SPARK" || got[1].Containers != 2 || got[1].Name != "" {
			t.Errorf("%s: placements %+v, want sort's and the SPARK application's, without a name", lang, got)
		}
		results = append(results, got)
		colos, err := c.Colocations(context.Background(), from, to)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string][]string{"h1": {"sort"}}, colos); diff != "" {
			t.Errorf("%s: Colocations (-want +got):\n%s", lang, diff)
		}
	}
	if diff := cmp.Diff(results[0], results[1]); diff != "" {
		t.Errorf("influxql differs from flux (-flux +influxql):\n%s", diff)
	}
}

// TestPlacementsErrors: the read fails as Usage does, with the same
// sentinels; an empty window is refused before anything is sent.
func TestPlacementsErrors(t *testing.T) {
	s := influxtest.Start(t)
	ctx := context.Background()
	from, to := t0, t0.Add(time.Minute)
	for _, lang := range languages {
		t.Run(lang, func(t *testing.T) {
			c := newCollector(t, s, inLanguage(lang), func(cfg *collector.Config) { cfg.Bucket = "nope/autogen" })
			if _, err := c.Placements(ctx, from, to); !errors.Is(err, collector.ErrBadQuery) {
				t.Errorf("unknown bucket: %v, want ErrBadQuery", err)
			}
			if _, err := c.Placements(ctx, to, to); !errors.Is(err, collector.ErrInvalid) {
				t.Errorf("empty window: %v, want ErrInvalid", err)
			}
		})
	}
	c := newCollector(t, s)
	if err := s.Stop(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Placements(ctx, from, to); !errors.Is(err, collector.ErrUnreachable) {
		t.Errorf("after Stop: %v, want ErrUnreachable", err)
	}
}
