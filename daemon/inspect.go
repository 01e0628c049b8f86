package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"time"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/telemetry"
	"github.com/colocd/colocd/yarnclient"
)

// The inspection commands (colocd metrics, yarn, store check) read through
// the same code colocd serve runs, built from the same configuration.

// storeFile is the store's file name in data_dir.
const storeFile = "colocd.db"

// StorePath is the store file of cfg: colocd.db in data_dir.
func StorePath(cfg Config) string { return filepath.Join(cfg.DataDir, storeFile) }

// CheckStore checks the store file path (StorePath(cfg) when path is
// empty) without changing it; see queue.Check.
func CheckStore(cfg Config, path string, lockTimeout time.Duration) (queue.Report, error) {
	if path == "" {
		path = StorePath(cfg)
	}
	return queue.Check(path, queue.CheckOptions{Timeout: lockTimeout})
}

// SalvageStore copies what can still be read of the store file from
// (StorePath(cfg) when empty) into the new file to; see queue.Salvage.
// A replica's store is refused (handStore).
func SalvageStore(cfg Config, from, to string, lockTimeout time.Duration, log *slog.Logger) (queue.SalvageReport, error) {
	from, err := handStore(cfg, from)
	if err != nil {
		return queue.SalvageReport{}, err
	}
	return queue.Salvage(from, to, queue.SalvageOptions{Timeout: lockTimeout, Log: log})
}

// ReleaseJob puts quarantined job id back into the store file path
// (StorePath(cfg) when empty) as a pending job, from record; see
// queue.Release. A replica's store is refused (handStore).
func ReleaseJob(cfg Config, path, id string, record []byte, lockTimeout time.Duration) (queue.Job, error) {
	path, err := handStore(cfg, path)
	if err != nil {
		return queue.Job{}, err
	}
	return queue.Release(path, id, record, queue.ReleaseOptions{Timeout: lockTimeout})
}

// handStore is the store file a command that writes it by hand works on:
// path, or StorePath(cfg). With ha it is refused: a replica's content is
// what the log gives every replica, and a replica re-joins from the
// leader's snapshot once its file is moved aside. (queue refuses a
// replica's file too, by the cluster it records, when given a path.)
func handStore(cfg Config, path string) (string, error) {
	if cfg.HA.Enabled() {
		return "", cfgErr("ha", "a replica's store is not changed by hand: its content is what the log gives every replica; "+
			"stop this replica, move %s aside and start it: it re-joins from the leader's snapshot and the log", StorePath(cfg))
	}
	if path == "" {
		path = StorePath(cfg)
	}
	return path, nil
}

// YarnClient is the ResourceManager client colocd serve builds from the
// yarn section; log may be nil. A missing yarn.rm_urls is a *configError.
func YarnClient(cfg Config, log *slog.Logger) (*YarnRM, error) {
	if len(cfg.Yarn.RMURLs) == 0 {
		return nil, cfgErr("yarn.rm_urls", "no ResourceManager: set yarn.rm_urls (--rm, COLOCD_YARN_RM_URLS)")
	}
	c, err := yarnclient.New(cfg.Yarn.ClientConfig(log))
	if err != nil {
		return nil, cfgErr("yarn", "%v", err)
	}
	return c, nil
}

// YarnRM is the ResourceManager client YarnClient returns, and
// YarnAppsFilter selects the applications its Apps lists: named here so
// that the inspection commands need nothing but the daemon.
type (
	YarnRM         = yarnclient.Client
	YarnAppsFilter = yarnclient.AppsFilter
)

// openUsage is the metrics source metrics.source names, as the learning
// tick reads it; close releases it.
func openUsage(cfg Config, log *slog.Logger, obs *outboundMetrics) (src *metricsource.Source, close func(), err error) {
	ms, err := metricsSourceOf(cfg)
	if err != nil {
		return nil, nil, err
	}
	r, closeSrc, err := ms.open(cfg, obs)
	if err != nil {
		return nil, nil, err
	}
	src, err = metricsource.New(r, metricsource.Options{Hosts: cfg.Metrics.Hosts, Logger: log})
	if err != nil {
		closeSrc()
		var fe *metricsource.FieldError
		if errors.As(err, &fe) {
			return nil, nil, cfgErr("metrics.hosts."+fe.Field, "%s", fe.Msg)
		}
		return nil, nil, err
	}
	return src, closeSrc, nil
}

// openPrometheus is the Prometheus reader of the section, over a client
// built from its connection keys (prometheusSection).
func openPrometheus(s prometheusSection, obs *outboundMetrics) (*collector.Prometheus, error) {
	hc, err := s.httpClientConfig()
	if err != nil {
		var ce *configError
		if errors.As(err, &ce) {
			return nil, err
		}
		return nil, cfgErr("prometheus", "%v", err)
	}
	c, err := outboundClient("prometheus", hc, telemetry.ServicePrometheus, obs)
	if err != nil {
		return nil, err
	}
	pc := s.PrometheusConfig
	pc.CAFile, pc.BearerToken, pc.HTTPClient = "", "", c // in the client now
	p, err := collector.NewPrometheus(pc)
	if err != nil {
		return nil, sectionErr("prometheus", err)
	}
	return p, nil
}

// openInflux is the InfluxDB reader of the section, over a client with
// its TLS and headers.
func openInflux(s influxSection, obs *outboundMetrics) (*collector.Collector, error) {
	c, err := outboundClient("influx", s.httpClientConfig(), telemetry.ServiceInfluxDB, obs)
	if err != nil {
		return nil, err
	}
	ic := s.Config
	ic.HTTPClient = c
	col, err := collector.New(ic)
	if err != nil {
		return nil, sectionErr("influx", err)
	}
	return col, nil
}

// ReadMetrics reads what the learning tick would read over [from, to):
// each host's mean usage from the configured metrics source and its
// goodness with the configured limits (engine.ReadUsage). Without hosts it
// reads the running nodes of the configured ResourceManager, named as the
// tick names them, or, when no ResourceManager is configured, every host
// the source has data for in the window. Configuration the read needs and
// lacks (influx.url or prometheus.url, a goodness limit) is a
// *configError.
func ReadMetrics(ctx context.Context, cfg Config, hosts []string, from, to time.Time) (map[string]engine.Reading, []string, error) {
	ms, err := metricsSourceOf(cfg)
	if err != nil {
		return nil, nil, err
	}
	if ms.url(cfg) == "" {
		key := ms.section + ".url"
		return nil, nil, cfgErr(key, "no %s: set %s (--%s-url or %s)", ms.title, key, ms.section, envName(key))
	}
	lim := cfg.Goodness.limits(goodness.Limits{}) // no backend default outside the simulator
	if err := lim.Validate(); err != nil {
		return nil, nil, cfgErr("goodness", "set goodness.disk_read_mbps, disk_write_mbps, net_recv_mbps and net_sent_mbps (> 0): %v", err)
	}
	src, closeSrc, err := openUsage(cfg, slog.New(slog.DiscardHandler), nil)
	if err != nil {
		return nil, nil, err
	}
	defer closeSrc()
	switch {
	case len(hosts) > 0:
	case len(cfg.Yarn.RMURLs) > 0:
		if hosts, err = yarnNodes(ctx, cfg); err != nil {
			return nil, nil, err
		}
	default:
		if hosts, err = src.Hosts(ctx, from, to); err != nil {
			return nil, nil, fmt.Errorf("list the hosts with data: %w", err)
		}
	}
	return engine.ReadUsage(ctx, src, hosts, from, to, engine.LimitsOf(lim, cfg.Goodness.nodeLimits(lim, nil)))
}

// ReadContainerUsage is what learning.container_usage reads: each
// application's own CPU and disk on each host over [from, to), from the
// colocd-telegraf-yarn plugin's cgroup counters in the influx section's
// InfluxDB, hosts named as the store names them (collector.ContainerUsage).
// A missing influx.url is a *configError.
func ReadContainerUsage(ctx context.Context, cfg Config, from, to time.Time) ([]collector.AppUsage, error) {
	if cfg.Influx.URL == "" {
		return nil, cfgErr("influx.url", "no InfluxDB: set influx.url (--influx-url or %s): the plugin's cgroup counters are read from it", envName("influx.url"))
	}
	col, err := openInflux(cfg.Influx, nil)
	if err != nil {
		return nil, err
	}
	defer col.Close()
	return col.ContainerUsage(ctx, from, to)
}

// yarnNodes lists the running nodes as the engine sees them.
func yarnNodes(ctx context.Context, cfg Config) ([]string, error) {
	yc, err := YarnClient(cfg, nil)
	if err != nil {
		return nil, err
	}
	st, err := yarncluster.New(yc, cfg.Yarn, slog.New(slog.DiscardHandler)).State(ctx)
	if err != nil {
		return nil, fmt.Errorf("list YARN nodes: %w", err)
	}
	out := make([]string, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		out = append(out, n.Name)
	}
	return out, nil
}
