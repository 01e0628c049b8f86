package daemon

import (
	"fmt"
	"strings"

	"github.com/colocd/colocd/internal/metricsource"
)

// A metricsSource is one value of metrics.source: the config section its
// settings are under and how the daemon validates it, finds its URL and
// opens its reader. Adding a source is an entry in metricsSources (and its
// section in Config): validation, the learning tick, `colocd metrics` and
// every error naming the choices follow.
type metricsSource struct {
	name     string // the value of metrics.source
	title    string // the store's name in messages
	section  string // its config section; its URL is <section>.url
	url      func(Config) string
	validate func(Config) error // the section's owner's validation
	open     func(Config, *outboundMetrics) (metricsource.Reader, func(), error)
}

var metricsSources = []metricsSource{
	{
		name: sourceInfluxDB, title: "InfluxDB", section: "influx",
		url:      func(c Config) string { return c.Influx.URL },
		validate: func(c Config) error { return c.Influx.Validate() },
		open: func(c Config, obs *outboundMetrics) (metricsource.Reader, func(), error) {
			col, err := openInflux(c.Influx, obs)
			if err != nil {
				return nil, nil, err
			}
			return col, col.Close, nil
		},
	},
	{
		name: sourcePrometheus, title: "Prometheus", section: "prometheus",
		url:      func(c Config) string { return c.Prometheus.URL },
		validate: func(c Config) error { return c.Prometheus.Validate() },
		open: func(c Config, obs *outboundMetrics) (metricsource.Reader, func(), error) {
			p, err := openPrometheus(c.Prometheus, obs)
			if err != nil {
				return nil, nil, err
			}
			return p, p.Close, nil
		},
	},
}

// metricsSourceOf is the source metrics.source names, or a *configError
// listing the choices.
func metricsSourceOf(cfg Config) (metricsSource, error) {
	names := make([]string, len(metricsSources))
	for i, s := range metricsSources {
		if s.name == cfg.Metrics.Source {
			return s, nil
		}
		names[i] = s.name
	}
	return metricsSource{}, cfgErr("metrics.source", "must be %s, got %q", strings.Join(names, " or "), cfg.Metrics.Source)
}

// MetricsSection is the config section of the metrics source cfg names
// (influx, prometheus), for messages that point at its keys.
func MetricsSection(cfg Config) string {
	ms, err := metricsSourceOf(cfg)
	if err != nil {
		return fmt.Sprintf("metrics.source %q", cfg.Metrics.Source)
	}
	return ms.section
}
