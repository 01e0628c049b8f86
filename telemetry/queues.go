package telemetry

import (
	"strconv"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colocd/colocd/pipeline"
)

// queueSource reports the fairness stage's queues (engine.Engine does).
type queueSource interface {
	Queues() pipeline.QueuesReport
}

// WatchQueues registers the per-queue series, read from src at scrape
// time (as of the last admission decision): colocd_queue_info{queue,
// class, guarantee, level} (1), colocd_queue_entitled, _owed, _held and
// _received{queue, resource} (shares of the cluster; entitled and owed for
// guaranteed queues only, received for configured queues), and
// colocd_queue_deficit and colocd_queue_pending{queue}. Call it once.
func (m *Metrics) WatchQueues(src queueSource) {
	if m == nil || src == nil {
		return
	}
	d := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	m.reg.MustRegister(&queuesCollector{
		src:      src,
		info:     d("colocd_queue_info", "A fairness queue: its class, admission control's guarantee (hard, soft, elastic) and its priority level (0: none).", "queue", "class", "guarantee", "level"),
		entitled: d("colocd_queue_entitled", "Rate a guaranteed queue's service curve entitles it to now, as a share of the cluster.", "queue", "resource"),
		owed:     d("colocd_queue_owed", "What a guaranteed queue lacks of its entitlement now, as a share of the cluster.", "queue", "resource"),
		held:     d("colocd_queue_held", "Allocation a queue's running applications hold, as a share of the cluster.", "queue", "resource"),
		received: d("colocd_queue_received", "A configured queue's mean allocation over the burst period, as a share of the cluster.", "queue", "resource"),
		deficit:  d("colocd_queue_deficit", "A group's DRF deficit (elastic groups; positive: owed).", "queue"),
		pending:  d("colocd_queue_pending", "A queue's jobs in the decision window.", "queue"),
	})
}

type queuesCollector struct {
	src                                                    queueSource
	info, entitled, owed, held, received, deficit, pending *prometheus.Desc
}

func (c *queuesCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.info, c.entitled, c.owed, c.held, c.received, c.deficit, c.pending} {
		ch <- d
	}
}

func (c *queuesCollector) Collect(ch chan<- prometheus.Metric) {
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	rates := func(d *prometheus.Desc, q string, r *pipeline.Rate) {
		if r != nil {
			gauge(d, r.VCores, q, "vcores")
			gauge(d, r.Memory, q, "memory")
		}
	}
	for _, s := range c.src.Queues().Queues {
		gauge(c.info, 1, s.Name, s.Class, string(s.Guarantee), strconv.Itoa(s.Level))
		rates(c.entitled, s.Name, s.Entitled)
		rates(c.owed, s.Name, s.Owed)
		rates(c.held, s.Name, &s.Held)
		rates(c.received, s.Name, s.Received)
		gauge(c.deficit, s.Deficit, s.Name)
		gauge(c.pending, float64(s.Pending), s.Name)
	}
}
