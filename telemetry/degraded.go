package telemetry

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
)

// dependencies are the outside services colocd reports the state of
// (colocd_dependency_degraded{dependency}): the cluster's RM, the metrics
// store, the Kerberos KDC and data_dir's disk.
var dependencies = []string{"cluster", "metrics", "kdc", "disk"}

// WatchDegraded exports, at scrape time, the dependencies src says are
// failing: colocd_dependency_degraded{dependency} 1 or 0 for each name in
// dependencies, and colocd_dependency_degraded_since_timestamp_seconds
// {dependency} for those that are (when their failures began).
func (m *Metrics) WatchDegraded(src func() map[string]time.Time) {
	if m == nil || src == nil {
		return
	}
	m.reg.MustRegister(&degradedCollector{
		src: src,
		degraded: prometheus.NewDesc("colocd_dependency_degraded",
			"1 while the dependency (cluster: the RM; metrics: the metrics store; kdc: the Kerberos KDC; disk: data_dir below its reserve) is failing, 0 otherwise; colocd serves on.",
			[]string{"dependency"}, nil),
		since: prometheus.NewDesc("colocd_dependency_degraded_since_timestamp_seconds",
			"When the dependency's current run of failures began (Unix time); no series while it is fine.",
			[]string{"dependency"}, nil),
	})
}

type degradedCollector struct {
	src             func() map[string]time.Time
	degraded, since *prometheus.Desc
}

func (c *degradedCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.degraded
	ch <- c.since
}

func (c *degradedCollector) Collect(ch chan<- prometheus.Metric) {
	now := c.src()
	for _, d := range dependencies {
		v := 0.0
		if t, ok := now[d]; ok {
			v = 1
			ch <- prometheus.MustNewConstMetric(c.since, prometheus.GaugeValue, float64(t.UnixNano())/1e9, d)
		}
		ch <- prometheus.MustNewConstMetric(c.degraded, prometheus.GaugeValue, v, d)
	}
}
