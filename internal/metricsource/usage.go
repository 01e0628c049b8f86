package metricsource

import (
	"context"
	"errors"
	"log/slog"
	"maps"
	"slices"
	"sync"
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

// Source adapts a Reader to engine.UsageSource: it reads YARN's hosts under
// the names the metrics source knows them by (HostsConfig) and reports the
// hosts seen on one side only.
type Source struct {
	r          Reader
	hosts      hostNames
	checkEvery time.Duration
	log        *slog.Logger
	count      func(side string, n int)

	mu        sync.Mutex
	yarnOnly  map[string]bool // YARN hosts the source had no sample of, last read
	srcOnly   map[string]bool // source hosts YARN does not have, last check
	lastCheck time.Time       // the window end of the last whole-source check
}

// Options configure a Source.
type Options struct {
	// Hosts maps YARN's host names to the source's; the zero value is
	// hostsSame and never lists the source's hosts.
	Hosts HostsConfig
	// Logger gets a WARN line for every host newly seen on one side only
	// and an INFO line when it is matched again; nil discards.
	Logger *slog.Logger
	// Unmatched, when set, is told after each read how many hosts are seen
	// on one side only: side sideYARN (YARN has them, the source has no
	// sample) or sideSource (the source has data, YARN has no such node).
	Unmatched func(side string, n int)
}

// The sides of Options.Unmatched.
const (
	sideYARN   = "yarn"
	sideSource = "metrics"
)

// New adapts r.
func New(r Reader, o Options) (*Source, error) {
	if o.Hosts.Mode == "" {
		o.Hosts.Mode = hostsSame
	}
	if err := o.Hosts.Validate(); err != nil {
		return nil, err
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return &Source{r: r, hosts: o.Hosts.compile(), checkEvery: o.Hosts.CheckEvery, log: o.Logger, count: o.Unmatched,
		yarnOnly: map[string]bool{}, srcOnly: map[string]bool{}}, nil
}

// Usage is one read for all hosts, named as YARN names them. Stale and
// missing hosts are reported together; "no data for any host"
// (collector.ErrEmpty) is not an error here: every host is reported
// missing.
func (s *Source) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	names, back, err := s.hosts.names(hosts)
	if err != nil {
		return nil, nil, err
	}
	res, err := s.r.Usage(ctx, names, from, to)
	if err != nil && !errors.Is(err, collector.ErrEmpty) {
		return nil, nil, err
	}
	yarn := func(n string) string {
		if h, ok := back[n]; ok {
			return h
		}
		return n
	}
	out := make(map[string]goodness.Usage, len(res.Usage))
	for n, u := range res.Usage {
		out[yarn(n)] = u
	}
	stale := make([]string, 0, len(res.Stale)+len(res.Missing))
	missing := make([]string, 0, len(res.Missing))
	for _, n := range res.Missing {
		missing = append(missing, yarn(n))
	}
	for _, n := range res.Stale {
		stale = append(stale, yarn(n))
	}
	stale = append(stale, missing...)
	slices.Sort(stale)
	s.noteYARNOnly(missing)
	if s.checkDue(to) {
		s.checkSourceOnly(ctx, back, from, to)
	}
	return out, stale, nil
}

// SetUnmatched sets Options.Unmatched (for a counter created after the
// source).
func (s *Source) SetUnmatched(f func(side string, n int)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.count = f
}

// noteYARNOnly records the YARN hosts the read found no sample of.
func (s *Source) noteYARNOnly(missing []string) {
	now := map[string]bool{}
	for _, h := range missing {
		now[h] = true
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.report(sideYARN, s.yarnOnly, now, func(h string) string { return s.hosts.sourceName(h) })
	s.yarnOnly = now
}

// checkDue reports whether the source's hosts are to be listed for a read
// of a window ending at to.
func (s *Source) checkDue(to time.Time) bool {
	if s.checkEvery <= 0 {
		return false
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lastCheck.IsZero() || to.Sub(s.lastCheck) >= s.checkEvery
}

// checkSourceOnly lists every host of the source in the window and
// records those that are none of YARN's (back: source name → YARN host).
// A failed listing is logged and retried at the next read.
func (s *Source) checkSourceOnly(ctx context.Context, back map[string]string, from, to time.Time) {
	all, err := s.Hosts(ctx, from, to)
	if err != nil && !errors.Is(err, collector.ErrEmpty) {
		s.log.Warn("listing the metrics source's hosts to match them with YARN's", "err", err)
		return
	}
	now := map[string]bool{}
	for _, n := range all {
		if _, ok := back[n]; !ok {
			now[n] = true
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.lastCheck = to
	s.report(sideSource, s.srcOnly, now, nil)
	s.srcOnly = now
}

// report logs the hosts that joined or left one side's unmatched set and
// counts them. s.mu is held.
func (s *Source) report(side string, was, now map[string]bool, alias func(string) string) {
	for _, h := range slices.Sorted(maps.Keys(now)) {
		if was[h] {
			continue
		}
		if side == sideYARN {
			s.log.Warn("host seen by YARN only: the metrics source has no sample of it (check metrics.hosts)",
				"host", h, "source_name", alias(h))
		} else {
			s.log.Warn("host seen by the metrics source only: YARN has no such running node (check metrics.hosts)", "source_host", h)
		}
	}
	for _, h := range slices.Sorted(maps.Keys(was)) {
		if !now[h] {
			s.log.Info("host matched again", "side", side, "host", h)
		}
	}
	if s.count != nil {
		s.count(side, len(now))
	}
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

// Ping asks the reader whether it answers, when it can be asked (the
// InfluxDB and Prometheus readers can); nil when it cannot.
func (s *Source) Ping(ctx context.Context) error {
	if p, ok := s.r.(interface{ Ping(context.Context) error }); ok {
		return p.Ping(ctx)
	}
	return nil
}
