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
// (HostsConfig), drops the hosts YARN did not name, and names other
// tenants' applications as foreign kinds (ForeignConfig), so that the
// engine receives every placement with its kind.
type Placements struct {
	r       PlacementReader
	hosts   hostNames
	foreign *foreignNamer
}

var _ engine.PlacementSource = (*Placements)(nil)

// NewPlacements adapts r, with the host names of hosts (the zero value is
// hostsSame) and the foreign kinds of foreign. A bad setting is a
// *FieldError; a foreign one's Field starts with "foreign.".
func NewPlacements(r PlacementReader, hosts HostsConfig, foreign ForeignConfig) (*Placements, error) {
	if hosts.Mode == "" {
		hosts.Mode = hostsSame
	}
	if err := hosts.Validate(); err != nil {
		return nil, err
	}
	fn, err := newForeignNamer(foreign)
	if err != nil {
		if fe, ok := err.(*FieldError); ok {
			return nil, &FieldError{"foreign." + fe.Field, fe.Msg}
		}
		return nil, err
	}
	return &Placements{r: r, hosts: hosts.compile(), foreign: fn}, nil
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
		pl := engine.Placement{Node: node, App: r.AppID, Kind: r.Kind, First: r.First, Last: r.Last, Samples: r.Samples, Containers: r.Containers}
		switch {
		case r.Kind != "": // colocd's
		case r.Type == "" && r.Queue == "" && r.Name == "":
			pl.Unknown = true // the sampler never had the RM's answer for it
		default:
			pl.Kind = p.foreign.kind(r.Type, r.Queue, r.Name)
			pl.Foreign = pl.Kind != ""
		}
		out = append(out, pl)
	}
	return out, nil
}
