package usage

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/goodness"
)

// Reader is a collector reader: collector.Collector (InfluxDB, Flux or
// InfluxQL) or collector.Prometheus.
type Reader interface {
	Usage(ctx context.Context, hosts []string, from, to time.Time) (collector.Result, error)
	UsageAll(ctx context.Context, from, to time.Time) (collector.Result, error)
}

// Source adapts a Reader to engine.UsageSource.
type Source struct {
	r Reader
}

// New adapts r.
func New(r Reader) *Source { return &Source{r: r} }

// Usage is one read for all hosts. Stale and missing hosts are reported
// together; "no data for any host" (collector.ErrEmpty) is not an error
// here: every host is reported missing.
func (s *Source) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	res, err := s.r.Usage(ctx, hosts, from, to)
	if err != nil && !errors.Is(err, collector.ErrEmpty) {
		return nil, nil, err
	}
	stale := append(slices.Clone(res.Stale), res.Missing...)
	slices.Sort(stale)
	return res.Usage, stale, nil
}

// Hosts lists, sorted, every host that has data in [from, to) (fresh,
// stale or incomplete). No data at all is an error wrapping
// collector.ErrEmpty.
func (s *Source) Hosts(ctx context.Context, from, to time.Time) ([]string, error) {
	res, err := s.r.UsageAll(ctx, from, to)
	if err != nil {
		return nil, err
	}
	hosts := make([]string, 0, len(res.Usage)+len(res.Stale)+len(res.Missing))
	for h := range res.Usage {
		hosts = append(hosts, h)
	}
	hosts = append(append(hosts, res.Stale...), res.Missing...)
	slices.Sort(hosts)
	return slices.Compact(hosts), nil
}
