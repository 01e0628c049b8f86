package engine

import (
	"context"
	"slices"
	"time"

	"github.com/colocd/colocd/goodness"
)

// Reading is one host's mean usage over an interval and its goodness, as
// the learning tick reads them.
type Reading struct {
	Usage goodness.Usage
	// Goodness is Eq. 1 of Usage with the tick's limits; Err says why there
	// is none (goodness.Checked refused the usage or the limits).
	Goodness float64
	Err      error
}

// ReadUsage is the learning tick's read of the metrics: each host's mean
// usage over [from, to) from src, scored with its maxima (limOf; see
// LimitsOf). Hosts without fresh data are absent from readings and
// listed, sorted, in stale; err is the source's failure (no reading
// then). `colocd metrics` prints what it returns.
func ReadUsage(ctx context.Context, src UsageSource, hosts []string, from, to time.Time, limOf func(host string) goodness.Limits) (readings map[string]Reading, stale []string, err error) {
	usage, stale, err := src.Usage(ctx, hosts, from, to)
	if err != nil {
		return nil, nil, err
	}
	staleSet := make(map[string]bool, len(stale))
	for _, h := range stale {
		staleSet[h] = true
	}
	stale = slices.Clone(stale)
	readings = make(map[string]Reading, len(usage))
	for h, u := range usage {
		if staleSet[h] {
			continue
		}
		g, err := goodness.Checked(u, limOf(h))
		readings[h] = Reading{Usage: u, Goodness: g, Err: err}
	}
	for _, h := range hosts {
		if _, ok := readings[h]; !ok && !staleSet[h] {
			stale = append(stale, h)
			staleSet[h] = true
		}
	}
	slices.Sort(stale)
	return readings, stale, nil
}
