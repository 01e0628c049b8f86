package metricsource

import (
	"context"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/engine"
)

// PlacementReader is the collector's placement read
// (collector.Collector.Placements): every host's applications in a window,
// named as the metrics source names the hosts.
type PlacementReader interface {
	Placements(ctx context.Context, from, to time.Time) ([]collector.Placement, error)
}

// Placements adapts a PlacementReader to engine.PlacementSource: it reads
// the source's hosts under YARN's names, mapped as Source maps them
// (HostsConfig), and drops the hosts YARN did not name.
type Placements struct {
	r     PlacementReader
	hosts hostNames
}

var _ engine.PlacementSource = (*Placements)(nil)

// NewPlacements adapts r, with the host names of hosts (the zero value is
// hostsSame).
func NewPlacements(r PlacementReader, hosts HostsConfig) (*Placements, error) {
	if hosts.Mode == "" {
		hosts.Mode = hostsSame
	}
	if err := hosts.Validate(); err != nil {
		return nil, err
	}
	return &Placements{r: r, hosts: hosts.compile()}, nil
}

// Placements reads every application on hosts (YARN's names) in [from,
// to). Two YARN hosts the config gives one source name are an error, as
// for Usage.
func (p *Placements) Placements(ctx context.Context, hosts []string, from, to time.Time) ([]engine.Placement, error) {
	_, back, err := p.hosts.names(hosts)
	if err != nil {
		return nil, err
	}
	rows, err := p.r.Placements(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := make([]engine.Placement, 0, len(rows))
	for _, r := range rows {
		node, ok := back[r.Host]
		if !ok {
			continue // a host YARN does not run, or another cluster's
		}
		out = append(out, engine.Placement{Node: node, App: r.AppID, Kind: r.Kind, Type: r.Type, Queue: r.Queue, Name: r.Name,
			First: r.First, Last: r.Last, Samples: r.Samples, Containers: r.Containers})
	}
	return out, nil
}
