package metricsource

import (
	"context"
	"errors"
	"reflect"
	"testing"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/goodness"
)

type fakeContainers struct {
	rows []collector.AppUsage
	err  error
}

func (f fakeContainers) ContainerUsage(context.Context, time.Time, time.Time) ([]collector.AppUsage, error) {
	return f.rows, f.err
}

// TestContainers: the collector's rows come back under YARN's host names
// (here: short names in the store, fully qualified in YARN), by
// application; a host YARN did not name is dropped; a read error and an
// ambiguous host mapping are errors.
func TestContainers(t *testing.T) {
	from := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	to := from.Add(time.Minute)
	r := fakeContainers{rows: []collector.AppUsage{
		{Host: "w1", AppID: "application_1_0001", CPU: 0.25, DiskRead: 1e6, DiskWrite: 2e6},
		{Host: "w1", AppID: "application_1_0002", CPU: 0.1},
		{Host: "w2", AppID: "application_1_0001", CPU: 0.3, DiskRead: 5},
		{Host: "elsewhere", AppID: "application_9_0001", CPU: 0.9},
	}}
	c, err := NewContainers(r, HostsConfig{Mode: HostsShort})
	if err != nil {
		t.Fatal(err)
	}
	got, err := c.ContainerUsage(context.Background(), []string{"w1.example.org", "w2.example.org"}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]goodness.Usage{
		"w1.example.org": {"application_1_0001": {CPU: 0.25, DiskRead: 1e6, DiskWrite: 2e6}, "application_1_0002": {CPU: 0.1}},
		"w2.example.org": {"application_1_0001": {CPU: 0.3, DiskRead: 5}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("usage %v, want %v", got, want)
	}
	boom := errors.New("influxdb down")
	c, _ = NewContainers(fakeContainers{err: boom}, HostsConfig{})
	if _, err := c.ContainerUsage(context.Background(), []string{"w1"}, from, to); !errors.Is(err, boom) {
		t.Errorf("a failing read gave %v, want it wrapped", err)
	}
	c, _ = NewContainers(r, HostsConfig{Mode: HostsShort})
	if _, err := c.ContainerUsage(context.Background(), []string{"w1.a.org", "w1.b.org"}, from, to); err == nil {
		t.Error("two YARN hosts with one short name: no error")
	}
	if _, err := NewContainers(r, HostsConfig{Mode: "bogus"}); err == nil {
		t.Error("a bad hosts mode: no error")
	}
}
