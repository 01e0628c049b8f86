package telemetry

import (
	"regexp"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colocd/colocd/queue"
)

// maxPendingScan bounds the pending jobs colocd_pending_jobs reads per
// scrape (in queue order): past it the counts cover the first ones and
// colocd_pending_jobs_scan_truncated is 1.
const maxPendingScan = 10000

// pendingSource is what the pending-jobs collector reads (*queue.Store).
type pendingSource interface {
	Pending(limit int) ([]queue.Job, error)
}

// WatchPending exports, at scrape time, colocd_pending_jobs{queue,kind}
// (bounded as colocd_admissions_total's labels) and
// colocd_oldest_pending_job_created_timestamp_seconds, the creation time
// of the oldest pending job (engine clock; no series when none waits),
// from the first maxPendingScan pending jobs.
func (m *Metrics) WatchPending(src pendingSource) {
	if m == nil || src == nil {
		return
	}
	m.reg.MustRegister(&pendingCollector{src: src, labels: m.labels,
		pending: prometheus.NewDesc("colocd_pending_jobs", "Pending jobs by YARN queue and job kind (the first 10,000 in queue order; labels bounded as colocd_admissions_total's).",
			[]string{"queue", "kind"}, nil),
		oldest: prometheus.NewDesc("colocd_oldest_pending_job_created_timestamp_seconds",
			"When the oldest pending job was submitted (engine clock, Unix seconds); no series while nothing waits.", nil, nil),
		truncated: prometheus.NewDesc("colocd_pending_jobs_scan_truncated",
			"1 when more jobs are pending than colocd_pending_jobs counts (10,000).", nil, nil),
	})
}

type pendingCollector struct {
	src                        pendingSource
	labels                     *labeler
	pending, oldest, truncated *prometheus.Desc
}

func (c *pendingCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- c.pending
	ch <- c.oldest
	ch <- c.truncated
}

func (c *pendingCollector) Collect(ch chan<- prometheus.Metric) {
	jobs, err := c.src.Pending(maxPendingScan + 1)
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.pending, err)
		return
	}
	trunc := 0.0
	if len(jobs) > maxPendingScan {
		jobs, trunc = jobs[:maxPendingScan], 1
	}
	type key struct{ q, k string }
	counts := map[key]int{}
	var oldest time.Time
	for _, j := range jobs {
		counts[key{c.labels.queue(j.Queue), c.labels.kind(j.Kind)}]++
		if oldest.IsZero() || j.CreatedAt.Before(oldest) {
			oldest = j.CreatedAt
		}
	}
	for k, n := range counts {
		ch <- prometheus.MustNewConstMetric(c.pending, prometheus.GaugeValue, float64(n), k.q, k.k)
	}
	if !oldest.IsZero() {
		ch <- prometheus.MustNewConstMetric(c.oldest, prometheus.GaugeValue, float64(oldest.UnixNano())/1e9)
	}
	ch <- prometheus.MustNewConstMetric(c.truncated, prometheus.GaugeValue, trunc)
}

// WatchDataDir exports colocd_data_dir_free_bytes and
// colocd_data_dir_reserve_bytes at scrape time (space: the file system's
// free bytes for colocd and data_dir_reserve_bytes; ok false: unknown).
func (m *Metrics) WatchDataDir(space func() (free, reserve uint64, ok bool)) {
	if m == nil || space == nil {
		return
	}
	read := func(i int) func() float64 {
		return func() float64 {
			free, reserve, ok := space()
			if !ok {
				return -1
			}
			return float64([]uint64{free, reserve}[i])
		}
	}
	m.reg.MustRegister(
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "colocd_data_dir_free_bytes",
			Help: "Bytes free for colocd on data_dir's file system (-1: unknown)."}, read(0)),
		prometheus.NewGaugeFunc(prometheus.GaugeOpts{Name: "colocd_data_dir_reserve_bytes",
			Help: "data_dir_reserve_bytes: below it submissions are refused and /readyz fails."}, read(1)),
	)
}

// WatchTicket exports colocd_kerberos_ticket_expiry_timestamp_seconds:
// when the Kerberos TGT colocd holds for YARN expires (the KDC's end
// time; no series before the first login). colocd renews it before; an
// expiry near at hand means renewals fail.
func (m *Metrics) WatchTicket(end func() (time.Time, bool)) {
	if m == nil || end == nil {
		return
	}
	m.reg.MustRegister(&ticketCollector{end: end, desc: prometheus.NewDesc("colocd_kerberos_ticket_expiry_timestamp_seconds",
		"When colocd's Kerberos ticket-granting ticket for YARN expires (Unix seconds); no series before its first login.", nil, nil)})
}

// ClientCertExpiry exports
// colocd_yarn_client_certificate_expiry_timestamp_seconds: when the client
// certificate colocd presents to YARN's https endpoints (yarn.cert_file,
// read at start) expires. No series when notAfter is zero (no certificate).
// A certificate renewed on disk takes effect at colocd's next start, so
// the series is the running process's.
func (m *Metrics) ClientCertExpiry(notAfter time.Time) {
	if m == nil || notAfter.IsZero() {
		return
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{Name: "colocd_yarn_client_certificate_expiry_timestamp_seconds",
		Help: "When the client certificate colocd presents to YARN (yarn.cert_file, read at start) expires (Unix seconds); no series without one."})
	g.Set(float64(notAfter.UnixNano()) / 1e9)
	m.reg.MustRegister(g)
}

type ticketCollector struct {
	end  func() (time.Time, bool)
	desc *prometheus.Desc
}

func (c *ticketCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc }

func (c *ticketCollector) Collect(ch chan<- prometheus.Metric) {
	if t, ok := c.end(); ok {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(t.UnixNano())/1e9)
	}
}

// Outbound services (colocd_outbound_request_duration_seconds{service}).
const (
	ServiceYARN       = "yarn"       // RMs, NodeManagers, NameNodes, the Timeline Server
	ServiceInfluxDB   = "influxdb"   // the metrics store
	ServicePrometheus = "prometheus" // the metrics store
)

// ObserveOutbound records one request of colocd's to service (an outside
// service: ServiceYARN, ServiceInfluxDB, ServicePrometheus) at path, its
// status (0: it failed without a response) and how long it took to the
// response's headers, in colocd_outbound_request_duration_seconds{service,
// call, outcome}; call is path with its ids and names replaced
// ("/ws/v1/cluster/apps/{id}"), a bounded set.
func (m *Metrics) ObserveOutbound(service, path string, status int, d time.Duration) {
	if m == nil {
		return
	}
	outcome := "error"
	if status > 0 {
		outcome = codeClass(status)
	}
	m.outbound.WithLabelValues(service, callOf(path), outcome).Observe(d.Seconds())
}

func codeClass(code int) string {
	return string(rune('0'+code/100)) + "xx"
}

// idSegment is a path segment that names one thing (an application, a
// container, an attempt, a node, a number) rather than a resource.
var idSegment = regexp.MustCompile(`^(application|appattempt|container|attempt|job|task)_|^[0-9]|[.:]`)

// callOf is a request path with its id segments replaced: a bounded
// label value.
func callOf(path string) string {
	segs := strings.Split(path, "/")
	n := 0
	for i, s := range segs {
		if s == "" {
			continue
		}
		n++
		if n > 6 {
			segs = segs[:i]
			break
		}
		if idSegment.MatchString(s) || len(s) > 40 {
			segs[i] = "{id}"
		}
	}
	return strings.Join(segs, "/")
}

func newOutbound() *prometheus.HistogramVec {
	return prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "colocd_outbound_request_duration_seconds",
		Help:    "Duration of colocd's requests to outside services, to the response's headers or the failure: service (yarn: RMs, NodeManagers, NameNodes, Timeline; influxdb; prometheus), call (the path, ids replaced) and outcome (2xx…5xx, error).",
		Buckets: []float64{0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30},
	}, []string{"service", "call", "outcome"})
}
