package engine

import (
	"context"
	"errors"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
)

type usageFunc func(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error)

func (f usageFunc) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	return f(ctx, hosts, from, to)
}

// TestReadUsage: fresh hosts are scored with Eq. 1, a host the source calls
// stale is dropped even if it has usage, a host the source is silent about
// is stale too, invalid usage carries its error, a failing source fails.
func TestReadUsage(t *testing.T) {
	lim := goodness.Limits{DiskRead: 100e6, DiskWrite: 100e6, NetRecv: 100e6, NetSent: 100e6}
	good := goodness.Usage{CPU: 0.5, IOWait: 0.02, DiskRead: 20e6, DiskWrite: 5e6, NetRecv: 10e6, NetSent: 1e6}
	srcStale := []string{"c"}
	src := usageFunc(func(_ context.Context, hosts []string, _, _ time.Time) (map[string]goodness.Usage, []string, error) {
		return map[string]goodness.Usage{"a": good, "b": {CPU: math.NaN()}, "c": good}, srcStale, nil
	})
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r, stale, err := ReadUsage(context.Background(), src, []string{"a", "b", "c", "d"}, t0, t0.Add(time.Minute), LimitsOf(lim, nil))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(stale, []string{"c", "d"}) {
		t.Errorf("stale %v, want [c d]", stale)
	}
	if got, want := r["a"].Goodness, goodness.Score(good, lim); r["a"].Err != nil || got != want {
		t.Errorf("a: %v %v, want goodness %v", got, r["a"].Err, want)
	}
	if r["b"].Err == nil {
		t.Error("b: NaN usage has no error")
	}
	if _, ok := r["c"]; ok {
		t.Error("c is stale but has a reading")
	}
	if !slices.Equal(srcStale, []string{"c"}) {
		t.Errorf("the source's stale slice was changed: %v", srcStale)
	}
	boom := errors.New("boom")
	failing := usageFunc(func(context.Context, []string, time.Time, time.Time) (map[string]goodness.Usage, []string, error) {
		return nil, nil, boom
	})
	if _, _, err := ReadUsage(context.Background(), failing, []string{"a"}, t0, t0.Add(time.Minute), LimitsOf(lim, nil)); !errors.Is(err, boom) {
		t.Errorf("failing source: %v", err)
	}
}
