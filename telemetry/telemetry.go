package telemetry

import (
	"fmt"
	"net/http"
	"runtime"
	"strconv"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/colocd/colocd/queue"
)

// states lists every job state, so colocd_jobs always exposes all of them
// (a state with no jobs reads 0 rather than vanishing).
var states = queue.States

// Metrics holds colocd's Prometheus series, registered on one registry
// passed in (never the global one). The daemon calls its methods from the
// admission and learning loops; the API records its own requests. All
// methods are safe on a nil *Metrics (they do nothing).
type Metrics struct {
	failovers prometheus.Counter // WatchHA; nil without replication

	reg *prometheus.Registry

	admissions  *prometheus.CounterVec
	failures    prometheus.Counter
	wait        *prometheus.HistogramVec
	labels      *labeler // bounded queue and kind label values
	outbound    *prometheus.HistogramVec
	forced      *prometheus.CounterVec
	decision    prometheus.Histogram
	learning    prometheus.Counter
	ticks       prometheus.Counter
	lastTick    prometheus.Gauge
	stale       prometheus.Gauge
	partsHosts  *prometheus.GaugeVec // nodes of the last tick, by whether fitted in parts
	unmatched   *prometheus.GaugeVec
	dominant    *prometheus.GaugeVec
	backendErrs *prometheus.CounterVec
	backendUp   *prometheus.GaugeVec
	backoff     *prometheus.GaugeVec
	backedOff   *prometheus.CounterVec
	jobsBackoff prometheus.Gauge
	requests    *prometheus.CounterVec
	reqSeconds  *prometheus.HistogramVec
	quarantined *prometheus.CounterVec
	retention   *prometheus.CounterVec // runs by result
	retained    prometheus.Counter     // finished jobs deleted
	retainedAt  prometheus.Gauge       // the last run without an error
}

// Retention results (colocd_retention_runs_total{result}).
const (
	retentionOK    = "ok"
	retentionError = "error"
)

// Forced-admission reasons (colocd_forced_admissions_total{reason}).
const (
	forcedMaxSkips    = "max_skips"   // starvation: the job was passed over max_skips times
	forcedReservation = "reservation" // the job held a reservation
)

// Backends (colocd_backend_up{backend}).
const (
	backendCluster = "cluster" // the resource manager (or the simulator)
	backendMetrics = "metrics" // the usage source the learning tick reads
)

// Learned-state sections (colocd_learned_state_quarantined_total{section}):
// queue.SectionPreferences and queue.SectionProfiles.
var learnedSections = []string{string(queue.SectionPreferences), string(queue.SectionProfiles)}

// Cluster backoffs (colocd_cluster_backoff_seconds{calls},
// colocd_cluster_calls_backed_off_total{calls}): engine.backoffRead,
// engine.backoffSubmit and, for the counter, engine.backoffJob.
const (
	backoffRead   = "read"
	backoffSubmit = "submit"
	backoffJob    = "job"
)

// New registers colocd's series, a collector reading store.Counts()
// at scrape time (colocd_jobs{state}), and the Go and process collectors on
// reg. store may be nil (no colocd_jobs). It panics if reg already holds
// any of them, a programming error.
func New(reg *prometheus.Registry, store *queue.Store) *Metrics {
	m := &Metrics{reg: reg, labels: newLabeler(), outbound: newOutbound()}
	m.admissionMetrics()
	m.backendMetrics()
	reg.MustRegister(m.outbound, m.admissions, m.failures, m.wait, m.forced, m.decision, m.learning,
		m.ticks, m.lastTick, m.stale, m.partsHosts, m.unmatched, m.dominant, m.backendErrs, m.backendUp, m.backoff, m.backedOff, m.jobsBackoff, m.requests, m.reqSeconds, m.quarantined,
		m.retention, m.retained, m.retainedAt,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	for _, r := range []string{forcedMaxSkips, forcedReservation} {
		m.forced.WithLabelValues(r) // 0 from the start, so rate() sees the first one
	}
	for _, sec := range learnedSections {
		m.quarantined.WithLabelValues(sec) // 0 from the start: an alert on > 0 needs the series
	}
	for _, c := range []string{backoffRead, backoffSubmit} {
		m.backoff.WithLabelValues(c)
		m.backedOff.WithLabelValues(c)
	}
	m.backedOff.WithLabelValues(backoffJob)
	for _, r := range []string{retentionOK, retentionError} {
		m.retention.WithLabelValues(r) // 0 from the start: the alert compares both
	}
	if store != nil {
		reg.MustRegister(&jobsCollector{store: store, desc: prometheus.NewDesc(
			"colocd_jobs", "Jobs in the store by state.", []string{"state"}, nil),
			quarantined: prometheus.NewDesc("colocd_store_quarantined_records",
				"Damaged store records moved to quarantine (colocd store check lists them).", nil, nil)})
	}
	return m
}

// admissionMetrics makes the admission and learning series.
func (m *Metrics) admissionMetrics() {
	m.admissions = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_admissions_total", Help: fmt.Sprintf("Jobs admitted to the cluster, by YARN queue and job kind (the first "+
			"%d queues and %d kinds seen; later ones are %q).", maxQueueLabels, maxKindLabels, otherLabel),
	}, []string{"queue", "kind"})
	m.failures = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "colocd_admission_failures_total", Help: "Admissions that failed and were rolled back.",
	})
	m.wait = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "colocd_job_wait_duration_seconds",
		Help:    "Time an admitted job waited pending, from its submission to its admission (engine clock), by YARN queue and job kind (bounded as colocd_admissions_total's).",
		Buckets: prometheus.ExponentialBuckets(0.1, 4, 10), // 100ms .. ~7h
	}, []string{"queue", "kind"})
	m.forced = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_forced_admissions_total", Help: "Admissions a hard rule chose rather than the learned distribution, by reason (max_skips, reservation).",
	}, []string{"reason"})
	m.decision = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "colocd_decision_duration_seconds",
		Help:    "Time to compute one admission decision (ordering pipeline).",
		Buckets: prometheus.ExponentialBuckets(50e-6, 4, 10), // 50µs .. ~13s
	})
	m.learning = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "colocd_learning_updates_total", Help: "Preference (bandit) updates applied.",
	})
	m.ticks = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "colocd_learning_ticks_total", Help: "Learning ticks that completed without error.",
	})
	m.lastTick = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "colocd_learning_last_tick_timestamp_seconds", Help: "Engine-clock time of the last learning tick that completed without error, in Unix seconds.",
	})
	m.stale = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "colocd_stale_hosts", Help: "Hosts skipped in the last learning tick for stale or missing metrics.",
	})
	m.partsHosts = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "colocd_learning_container_usage_hosts",
		Help: "With learning.container_usage, the nodes the last learning tick saw running something: fitted=\"apart\" from each kind's own usage, fitted=\"whole\" from the node's sum (no series without it).",
	}, []string{"fitted"})
	m.unmatched = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "colocd_unmatched_hosts",
		Help: "Hosts seen on one side only: side=\"yarn\" YARN runs them and the metrics source has no sample of them; side=\"metrics\" the source has data and YARN has no such running node (see metrics.hosts).",
	}, []string{"side"})
	m.dominant = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "colocd_dominant_share", Help: "Dominant resource share of running jobs per user or group (DRF); no series for one that runs nothing.",
	}, []string{"group"})
}

// backendMetrics makes the series of the backends, the cluster's backoff
// and the API.
func (m *Metrics) backendMetrics() {
	m.backendErrs = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_backend_errors_total", Help: "Errors from the cluster or metrics backend, by operation.",
	}, []string{"op"})
	m.backendUp = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "colocd_backend_up", Help: "1 when the last call to the backend (cluster, metrics) succeeded, 0 after a failure; no series before the first call.",
	}, []string{"backend"})
	m.backoff = prometheus.NewGaugeVec(prometheus.GaugeOpts{
		Name: "colocd_cluster_backoff_seconds",
		Help: "Current wait of the cluster-wide backoff of calls to a failing cluster, by kind (read, submit): no such call is made before it ends; 0 when they do not back off.",
	}, []string{"calls"})
	m.backedOff = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_cluster_calls_backed_off_total",
		Help: "Calls to the cluster not made because of a backoff, by kind (read, submit; job: an admitted job waiting out its own backoff).",
	}, []string{"calls"})
	m.jobsBackoff = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "colocd_cluster_backoff_jobs",
		Help: "Admitted jobs waiting out their own backoff after a submission with an unknown outcome or an unreadable application.",
	})
	m.requests = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_api_requests_total", Help: "HTTP API requests by route pattern and status code.",
	}, []string{"route", "code"})
	m.reqSeconds = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "colocd_api_request_duration_seconds",
		Help:    "HTTP API request latency by route pattern.",
		Buckets: prometheus.ExponentialBuckets(250e-6, 4, 9), // 250µs .. ~16s
	}, []string{"route"})
	m.retention = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_retention_runs_total",
		Help: "Runs of retention (retention.schedule, deleting finished jobs older than retention.finished_after), by result (ok, error).",
	}, []string{"result"})
	m.retained = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "colocd_retention_deleted_jobs_total", Help: "Finished jobs retention deleted.",
	})
	m.retainedAt = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "colocd_retention_last_success_timestamp_seconds",
		Help: "When retention last ran without an error (Unix seconds, engine clock); 0 before the first.",
	})
	m.quarantined = prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "colocd_learned_state_quarantined_total",
		Help: "Learned state (section: preferences, profiles) that did not restore at start and was quarantined; that model started fresh (colocd store check lists it).",
	}, []string{"section"})
}

// BuildInfo labels colocd_build_info. The caller fills it from what the
// binary knows of itself (cmd/colocd's version and the VCS stamp); an
// empty GoVersion means runtime.Version().
type BuildInfo struct {
	Version, Revision, GoVersion string
}

// Build registers colocd_build_info{version, revision, goversion} = 1.
// Call it once.
func (m *Metrics) Build(b BuildInfo) {
	if m == nil {
		return
	}
	if b.GoVersion == "" {
		b.GoVersion = runtime.Version()
	}
	g := prometheus.NewGauge(prometheus.GaugeOpts{
		Name:        "colocd_build_info",
		Help:        "The running colocd's version, VCS revision and Go version (always 1).",
		ConstLabels: prometheus.Labels{"version": b.Version, "revision": b.Revision, "goversion": b.GoVersion},
	})
	g.Set(1)
	m.reg.MustRegister(g)
}

// Handler serves the registry in the Prometheus exposition formats.
func (m *Metrics) Handler() http.Handler {
	if m == nil {
		return http.NotFoundHandler()
	}
	return promhttp.HandlerFor(m.reg, promhttp.HandlerOpts{
		Registry:            m.reg, // promhttp_metric_handler_errors_total
		ErrorHandling:       promhttp.ContinueOnError,
		MaxRequestsInFlight: 4,
	})
}

// ObserveDecision records how long one decision took.
func (m *Metrics) ObserveDecision(d time.Duration) {
	if m != nil {
		m.decision.Observe(d.Seconds())
	}
}

// Admitted counts one admitted job that waited wait pending (submission
// to admission, on the engine's clock), and, when forced is not "", the
// hard rule that chose it (forcedMaxSkips, forcedReservation).
func (m *Metrics) Admitted(wait time.Duration, forced, queue, kind string) {
	if m == nil {
		return
	}
	q, k := m.labels.queue(queue), m.labels.kind(kind)
	m.admissions.WithLabelValues(q, k).Inc()
	m.wait.WithLabelValues(q, k).Observe(max(wait, 0).Seconds())
	if forced != "" {
		m.forced.WithLabelValues(forced).Inc()
	}
}

// AdmissionFailed counts one failed (rolled back) admission.
func (m *Metrics) AdmissionFailed() {
	if m != nil {
		m.failures.Inc()
	}
}

// LearningUpdates counts n preference updates.
func (m *Metrics) LearningUpdates(n int) {
	if m != nil && n > 0 {
		m.learning.Add(float64(n))
	}
}

// LearningTick records a learning tick that completed without error at
// at (the engine's clock).
func (m *Metrics) LearningTick(at time.Time) {
	if m != nil {
		m.ticks.Inc()
		m.lastTick.Set(float64(at.UnixNano()) / 1e9)
	}
}

// StaleHosts sets how many hosts the last learning tick skipped.
func (m *Metrics) StaleHosts(n int) {
	if m != nil {
		m.stale.Set(float64(n))
	}
}

// ContainerUsageHosts sets, with learning.container_usage, how many
// nodes that ran something the last learning tick fitted from each kind's
// own usage (apart) and from the node's sum (whole).
func (m *Metrics) ContainerUsageHosts(apart, whole int) {
	if m != nil {
		m.partsHosts.WithLabelValues("apart").Set(float64(apart))
		m.partsHosts.WithLabelValues("whole").Set(float64(whole))
	}
}

// UnmatchedHosts sets how many hosts are seen on one side only (side
// "yarn" or "metrics"; internal/metricsource.Options.Unmatched).
func (m *Metrics) UnmatchedHosts(side string, n int) {
	if m != nil {
		m.unmatched.WithLabelValues(side).Set(float64(n))
	}
}

// DominantShare sets a user's (or group's) dominant share.
func (m *Metrics) DominantShare(group string, v float64) {
	if m != nil {
		m.dominant.WithLabelValues(group).Set(v)
	}
}

// ForgetDominantShare deletes a user's (or group's) dominant-share series:
// it runs nothing, and a user who never comes back leaves no series behind.
func (m *Metrics) ForgetDominantShare(group string) {
	if m != nil {
		m.dominant.DeleteLabelValues(group)
	}
}

// BackendErrors counts one backend error of operation op (e.g. "submit",
// "state", "usage"). Keep op to a small fixed set: it is a label.
func (m *Metrics) BackendErrors(op string) {
	if m != nil {
		m.backendErrs.WithLabelValues(op).Inc()
	}
}

// LearnedStateQuarantined counts a section of the learned state
// quarantined at start (engine.RestoreOrQuarantine).
func (m *Metrics) LearnedStateQuarantined(section string) {
	if m != nil {
		m.quarantined.WithLabelValues(section).Inc()
	}
}

// BackendUp records whether the last call to backend (backendCluster,
// backendMetrics) succeeded.
func (m *Metrics) BackendUp(backend string, up bool) {
	if m == nil {
		return
	}
	v := 0.0
	if up {
		v = 1
	}
	m.backendUp.WithLabelValues(backend).Set(v)
}

// ClusterBackoff sets the wait of the cluster-wide backoff of calls
// (backoffRead, backoffSubmit); zero when they do not back off.
func (m *Metrics) ClusterBackoff(calls string, wait time.Duration) {
	if m != nil {
		m.backoff.WithLabelValues(calls).Set(wait.Seconds())
	}
}

// CallsBackedOff counts one call to the cluster not made because of a
// backoff (backoffRead, backoffSubmit, backoffJob).
func (m *Metrics) CallsBackedOff(calls string) {
	if m != nil {
		m.backedOff.WithLabelValues(calls).Inc()
	}
}

// JobsBackingOff sets how many admitted jobs wait out their own backoff.
func (m *Metrics) JobsBackingOff(n int) {
	if m != nil {
		m.jobsBackoff.Set(float64(n))
	}
}

// Retention records one run of retention at the engine clock's time at:
// the finished jobs it deleted, or its error.
func (m *Metrics) Retention(deleted int, err error, at time.Time) {
	if m == nil {
		return
	}
	if err != nil {
		m.retention.WithLabelValues(retentionError).Inc()
		return
	}
	m.retention.WithLabelValues(retentionOK).Inc()
	m.retained.Add(float64(deleted))
	m.retainedAt.Set(float64(at.UnixNano()) / 1e9)
}

// APIRequest records one API request by route pattern (never the raw path,
// which would make the label unbounded).
func (m *Metrics) APIRequest(route string, code int, d time.Duration) {
	if m != nil {
		m.requests.WithLabelValues(route, strconv.Itoa(code)).Inc()
		m.reqSeconds.WithLabelValues(route).Observe(d.Seconds())
	}
}

// jobsCollector reads the store's counts at scrape time.
type jobsCollector struct {
	store       *queue.Store
	desc        *prometheus.Desc
	quarantined *prometheus.Desc
}

func (c *jobsCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc; ch <- c.quarantined }

func (c *jobsCollector) Collect(ch chan<- prometheus.Metric) {
	if q, err := c.store.Quarantined(); err != nil {
		ch <- prometheus.NewInvalidMetric(c.quarantined, err)
	} else {
		ch <- prometheus.MustNewConstMetric(c.quarantined, prometheus.GaugeValue, float64(len(q)))
	}
	counts, err := c.store.Counts()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(c.desc, err)
		return
	}
	for _, s := range states {
		ch <- prometheus.MustNewConstMetric(c.desc, prometheus.GaugeValue, float64(counts[s]), string(s))
	}
}
