package metricsource

import (
	"context"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
)

// ContainerReader is the collector's read of each application's own use
// of each host (collector.Collector.ContainerUsage: the Telegraf plugin's
// cgroup counters), named as the metrics source names the hosts.
type ContainerReader interface {
	ContainerUsage(ctx context.Context, from, to time.Time) ([]collector.AppUsage, error)
}

// Containers adapts a ContainerReader to engine.ContainerUsageSource under
// YARN's host names, mapped as Source maps them (HostsConfig); hosts YARN
// did not name are dropped.
type Containers struct {
	r     ContainerReader
	hosts hostNames
}

var _ engine.ContainerUsageSource = (*Containers)(nil)

// NewContainers adapts r with the host names of hosts (the zero value is
// hostsSame). A bad setting is a *FieldError.
func NewContainers(r ContainerReader, hosts HostsConfig) (*Containers, error) {
	if hosts.Mode == "" {
		hosts.Mode = hostsSame
	}
	if err := hosts.Validate(); err != nil {
		return nil, err
	}
	return &Containers{r: r, hosts: hosts.compile()}, nil
}

// ContainerUsage reads every application's own use of hosts (YARN's
// names) over [from, to): per host, by application id, CPU as a share of
// the host's CPU time and the disk in bytes per second. Two YARN hosts the
// config gives one source name are an error, as for Usage.
func (c *Containers) ContainerUsage(ctx context.Context, hosts []string, from, to time.Time) (map[string]map[string]goodness.Usage, error) {
	_, back, err := c.hosts.names(hosts)
	if err != nil {
		return nil, err
	}
	rows, err := c.r.ContainerUsage(ctx, from, to)
	if err != nil {
		return nil, err
	}
	out := map[string]map[string]goodness.Usage{}
	for _, r := range rows {
		node, ok := back[r.Host]
		if !ok {
			continue // a host YARN does not run, or another cluster's
		}
		if out[node] == nil {
			out[node] = map[string]goodness.Usage{}
		}
		out[node][r.AppID] = goodness.Usage{CPU: r.CPU, DiskRead: r.DiskRead, DiskWrite: r.DiskWrite}
	}
	return out, nil
}
