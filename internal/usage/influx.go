package usage

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/goodness"
)

// Influx adapts the InfluxDB collector to engine.UsageSource.
type Influx struct {
	c *collector.Collector
}

// NewInflux adapts c.
func NewInflux(c *collector.Collector) *Influx { return &Influx{c: c} }

// Usage is one Flux query for all hosts. Stale and missing hosts are
// reported together; "no data for any host" (collector.ErrEmpty) is not an
// error here: every host is reported missing.
func (m *Influx) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	res, err := m.c.Usage(ctx, hosts, from, to)
	if err != nil && !errors.Is(err, collector.ErrEmpty) {
		return nil, nil, err
	}
	stale := append(slices.Clone(res.Stale), res.Missing...)
	slices.Sort(stale)
	return res.Usage, stale, nil
}
