package daemon

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestMetricsSources: every registered source is a valid metrics.source
// whose missing URL is named by its own key, and a source that is not
// registered is refused with the choices listed.
func TestMetricsSources(t *testing.T) {
	for _, ms := range metricsSources {
		cfg := DefaultConfig()
		cfg.Metrics.Source = ms.name
		cfg.Influx.URL, cfg.Prometheus.URL = "", ""
		cfg.Goodness.DiskReadMBps, cfg.Goodness.DiskWriteMBps, cfg.Goodness.NetRecvMBps, cfg.Goodness.NetSentMBps = 1, 1, 1, 1
		if got := MetricsSection(cfg); got != ms.section {
			t.Errorf("%s: section %q, want %q", ms.name, got, ms.section)
		}
		_, _, err := ReadMetrics(context.Background(), cfg, []string{"h1"}, time.Unix(0, 0), time.Unix(60, 0))
		var ce *configError
		if !errors.As(err, &ce) || ce.Key != ms.section+".url" || !strings.Contains(ce.Reason, ms.title) {
			t.Errorf("%s without a URL: %v; want a config error naming %s.url", ms.name, err, ms.section)
		}
	}
	cfg := DefaultConfig()
	cfg.Metrics.Source = "graphite"
	err := cfg.validateMetrics()
	var ce *configError
	if !errors.As(err, &ce) || ce.Key != "metrics.source" || !strings.Contains(err.Error(), `must be influxdb or prometheus, got "graphite"`) {
		t.Errorf("an unknown source: %v", err)
	}
}
