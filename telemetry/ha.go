package telemetry

import "github.com/prometheus/client_golang/prometheus"

// HAState is a replica's state as the ha series report it.
type HAState struct {
	Role    string // leader, follower or disconnected
	Epoch   uint64 // the leader's fencing epoch as this replica knows it
	Applied uint64 // the last log entry applied to this replica's store
	Lag     uint64 // entries behind the leader
}

// haRoles are colocd_ha_role's role label values.
var haRoles = []string{"leader", "follower", "disconnected"}

// WatchHA registers the replication series, read from src at scrape
// time: colocd_ha_role{role} (1 for the replica's role, 0 for the
// others), colocd_ha_epoch, colocd_ha_applied_index and
// colocd_ha_lag_entries; colocd_ha_failovers_total counts the terms this
// replica won (HAFailover).
func (m *Metrics) WatchHA(src func() HAState) {
	if m == nil || src == nil {
		return
	}
	m.failovers = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "colocd_ha_failovers_total", Help: "Leadership terms this replica won (a failover or a handover to it, or its first election).",
	})
	m.reg.MustRegister(m.failovers, &haCollector{src: src,
		role:    prometheus.NewDesc("colocd_ha_role", "1 for this replica's role (leader, follower, disconnected: no ZooKeeper session), 0 for the others.", []string{"role"}, nil),
		epoch:   prometheus.NewDesc("colocd_ha_epoch", "The leader's fencing epoch, as this replica knows it.", nil, nil),
		applied: prometheus.NewDesc("colocd_ha_applied_index", "Index of the last log entry applied to this replica's store.", nil, nil),
		lag:     prometheus.NewDesc("colocd_ha_lag_entries", "Log entries this replica is behind the leader (0 on the leader).", nil, nil),
	})
}

// HAFailover counts a term won.
func (m *Metrics) HAFailover() {
	if m != nil && m.failovers != nil {
		m.failovers.Inc()
	}
}

type haCollector struct {
	src                       func() HAState
	role, epoch, applied, lag *prometheus.Desc
}

func (c *haCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.role, c.epoch, c.applied, c.lag} {
		ch <- d
	}
}

func (c *haCollector) Collect(ch chan<- prometheus.Metric) {
	s := c.src()
	for _, r := range haRoles {
		v := 0.0
		if r == s.Role {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(c.role, prometheus.GaugeValue, v, r)
	}
	ch <- prometheus.MustNewConstMetric(c.epoch, prometheus.GaugeValue, float64(s.Epoch))
	ch <- prometheus.MustNewConstMetric(c.applied, prometheus.GaugeValue, float64(s.Applied))
	ch <- prometheus.MustNewConstMetric(c.lag, prometheus.GaugeValue, float64(s.Lag))
}
