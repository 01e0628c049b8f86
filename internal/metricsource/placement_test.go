package metricsource

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/engine"
)

// fakePlacementReader answers set placements, named as the source names
// the hosts, or fails.
type fakePlacementReader struct {
	rows []collector.Placement
	err  error
}

func (f fakePlacementReader) Placements(context.Context, time.Time, time.Time) ([]collector.Placement, error) {
	return f.rows, f.err
}

// TestPlacementsHostNames: the source's host names come back as YARN's,
// mapped as Usage maps them; hosts YARN did not name are dropped; a read
// error and a name collision are errors.
func TestPlacementsHostNames(t *testing.T) {
	t0 := time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)
	r := fakePlacementReader{rows: []collector.Placement{
		{Host: "node1", AppID: "application_1_0001", Kind: "sort", Type: "MAPREDUCE", Queue: "default", First: t0, Last: t0, Samples: 1, Containers: 2},
		{Host: "spare-7", AppID: "application_1_0002", Type: "SPARK", Queue: "etl", Name: "n", First: t0, Last: t0, Samples: 1, Containers: 1},
		{Host: "old-node", AppID: "application_1_0003", Kind: "sort", First: t0, Last: t0, Samples: 1, Containers: 1},
		{Host: "node1", AppID: "application_1_0004", First: t0, Last: t0, Samples: 1, Containers: 1},
	}}
	p, err := NewPlacements(r, HostsConfig{Mode: HostsShort, Map: map[string]string{"node2.dc.example.com": "spare-7"}}, DefaultForeignConfig())
	if err != nil {
		t.Fatal(err)
	}
	got, err := p.Placements(t.Context(), []string{"node1.dc.example.com", "node2.dc.example.com"}, t0, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	want := []engine.Placement{
		{Node: "node1.dc.example.com", App: "application_1_0001", Kind: "sort", First: t0, Last: t0, Samples: 1, Containers: 2},
		{Node: "node2.dc.example.com", App: "application_1_0002", Kind: "foreign.spark.etl", Foreign: true, First: t0, Last: t0, Samples: 1, Containers: 1},
		{Node: "node1.dc.example.com", App: "application_1_0004", Unknown: true, First: t0, Last: t0, Samples: 1, Containers: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placements (-want +got):\n%s", diff)
	}

	if _, err := p.Placements(t.Context(), []string{"web1.a.example.com", "web1.b.example.com"}, t0, t0.Add(time.Minute)); err == nil ||
		!strings.Contains(err.Error(), "both map to web1") {
		t.Errorf("two YARN hosts with one source name: %v", err)
	}
	failing, err := NewPlacements(fakePlacementReader{err: collector.ErrUnreachable}, HostsConfig{}, DefaultForeignConfig())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := failing.Placements(t.Context(), []string{"node1"}, t0, t0.Add(time.Minute)); !errors.Is(err, collector.ErrUnreachable) {
		t.Errorf("a failing read: %v, want ErrUnreachable", err)
	}
	var fe *FieldError
	if _, err := NewPlacements(r, HostsConfig{Mode: "fqdn"}, DefaultForeignConfig()); !errors.As(err, &fe) || fe.Field != "mode" {
		t.Errorf("a bad hosts config: %v, want a FieldError on mode", err)
	}
	if _, err := NewPlacements(r, HostsConfig{}, ForeignConfig{Mode: "queue", Prefix: "foreign."}); !errors.As(err, &fe) || fe.Field != "foreign.kind" {
		t.Errorf("a bad foreign config: %v, want a FieldError on foreign.kind", err)
	}
}
