package telemetry

import (
	"fmt"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestMetricsLint(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, nil)
	exercise(m)
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "colocd_") {
			t.Errorf("lint %s: %s", p.Metric, p.Text)
		}
	}
}

func TestNilMetricsIsSafe(t *testing.T) {
	var m *Metrics
	m.Admitted(time.Second, forcedMaxSkips, "", "k")
	m.AdmissionFailed()
	m.ObserveDecision(time.Second)
	m.LearningUpdates(1)
	m.LearningTick(time.Unix(1, 0))
	m.BackendUp(backendCluster, true)
	m.Build(BuildInfo{Version: "v1"})
	m.StaleHosts(1)
	m.DominantShare("g", 1)
	m.BackendErrors("op")
	m.ClusterBackoff(backoffSubmit, time.Second)
	m.CallsBackedOff(backoffRead)
	m.JobsBackingOff(1)
	m.Retention(1, nil, time.Unix(1, 0))
	m.ClientCertExpiry(time.Unix(1, 0))
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Errorf("nil Metrics handler: %d, want 404", rec.Code)
	}
}

// TestAdditions checks the series issue 14 added: build info, the wait
// histogram, forced admissions by reason, the learning tick and backends up.
func TestAdditions(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, nil)
	m.Build(BuildInfo{Version: "v1.2.3", Revision: "abc123", GoVersion: "go1.26"})
	m.Admitted(90*time.Second, "", "", "k")
	m.Admitted(30*time.Second, forcedReservation, "", "k")
	m.Admitted(-time.Second, "", "", "k") // a clock step back counts as no wait
	m.LearningTick(time.Unix(1700000000, 500e6))
	m.LearningTick(time.Unix(1700000300, 0))
	m.BackendUp(backendCluster, true)
	m.BackendUp(backendMetrics, true)
	m.BackendUp(backendMetrics, false)
	want := `
# HELP colocd_build_info The running colocd's version, VCS revision and Go version (always 1).
# TYPE colocd_build_info gauge
colocd_build_info{goversion="go1.26",revision="abc123",version="v1.2.3"} 1
# HELP colocd_forced_admissions_total Admissions a hard rule chose rather than the learned distribution, by reason (max_skips, reservation).
# TYPE colocd_forced_admissions_total counter
colocd_forced_admissions_total{reason="max_skips"} 0
colocd_forced_admissions_total{reason="reservation"} 1
# HELP colocd_learning_ticks_total Learning ticks that completed without error.
# TYPE colocd_learning_ticks_total counter
colocd_learning_ticks_total 2
# HELP colocd_learning_last_tick_timestamp_seconds Engine-clock time of the last learning tick that completed without error, in Unix seconds.
# TYPE colocd_learning_last_tick_timestamp_seconds gauge
colocd_learning_last_tick_timestamp_seconds 1.7000003e+09
# HELP colocd_backend_up 1 when the last call to the backend (cluster, metrics) succeeded, 0 after a failure; no series before the first call.
# TYPE colocd_backend_up gauge
colocd_backend_up{backend="cluster"} 1
colocd_backend_up{backend="metrics"} 0
`
	names := []string{"colocd_build_info", "colocd_forced_admissions_total", "colocd_learning_ticks_total",
		"colocd_learning_last_tick_timestamp_seconds", "colocd_backend_up"}
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), names...); err != nil {
		t.Error(err)
	}
	if got := testutil.CollectAndCount(m.wait); got != 1 {
		t.Errorf("wait histogram series = %d, want 1", got)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, mf := range mfs {
		if mf.GetName() != "colocd_job_wait_duration_seconds" {
			continue
		}
		h := mf.GetMetric()[0].GetHistogram()
		if h.GetSampleCount() != 3 || h.GetSampleSum() != 120 {
			t.Errorf("wait histogram: count %d sum %v, want 3 and 120", h.GetSampleCount(), h.GetSampleSum())
		}
	}
}

// TestClusterBackoff: the backoff series exist from the start (0), and
// follow what the engine reports.
func TestClusterBackoff(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, nil)
	names := []string{"colocd_cluster_backoff_seconds", "colocd_cluster_calls_backed_off_total", "colocd_cluster_backoff_jobs"}
	head := `
# HELP colocd_cluster_backoff_jobs Admitted jobs waiting out their own backoff after a submission with an unknown outcome or an unreadable application.
# TYPE colocd_cluster_backoff_jobs gauge
colocd_cluster_backoff_jobs %d
# HELP colocd_cluster_backoff_seconds Current wait of the cluster-wide backoff of calls to a failing cluster, by kind (read, submit): no such call is made before it ends; 0 when they do not back off.
# TYPE colocd_cluster_backoff_seconds gauge
colocd_cluster_backoff_seconds{calls="read"} %g
colocd_cluster_backoff_seconds{calls="submit"} %g
# HELP colocd_cluster_calls_backed_off_total Calls to the cluster not made because of a backoff, by kind (read, submit; job: an admitted job waiting out its own backoff).
# TYPE colocd_cluster_calls_backed_off_total counter
colocd_cluster_calls_backed_off_total{calls="job"} %d
colocd_cluster_calls_backed_off_total{calls="read"} %d
colocd_cluster_calls_backed_off_total{calls="submit"} %d
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(head, 0, 0.0, 0.0, 0, 0, 0)), names...); err != nil {
		t.Errorf("at start: %v", err)
	}
	m.ClusterBackoff(backoffRead, 1500*time.Millisecond)
	m.CallsBackedOff(backoffRead)
	m.CallsBackedOff(backoffRead)
	m.CallsBackedOff(backoffJob)
	m.JobsBackingOff(3)
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(head, 3, 1.5, 0.0, 1, 2, 0)), names...); err != nil {
		t.Errorf("backing off: %v", err)
	}
}

// TestRetention: a run that deleted jobs counts as ok with its jobs and
// its time; a failing run counts as an error and leaves the last
// success's time; both results are there from the start.
func TestRetention(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, nil)
	names := []string{"colocd_retention_runs_total", "colocd_retention_deleted_jobs_total", "colocd_retention_last_success_timestamp_seconds"}
	head := `
# HELP colocd_retention_deleted_jobs_total Finished jobs retention deleted.
# TYPE colocd_retention_deleted_jobs_total counter
colocd_retention_deleted_jobs_total %d
# HELP colocd_retention_last_success_timestamp_seconds When retention last ran without an error (Unix seconds, engine clock); 0 before the first.
# TYPE colocd_retention_last_success_timestamp_seconds gauge
colocd_retention_last_success_timestamp_seconds %g
# HELP colocd_retention_runs_total Runs of retention (retention.schedule, deleting finished jobs older than retention.finished_after), by result (ok, error).
# TYPE colocd_retention_runs_total counter
colocd_retention_runs_total{result="error"} %d
colocd_retention_runs_total{result="ok"} %d
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(head, 0, 0.0, 0, 0)), names...); err != nil {
		t.Errorf("at start: %v", err)
	}
	m.Retention(7, nil, time.Unix(1700000000, 0))
	m.Retention(0, fmt.Errorf("disk full"), time.Unix(1700003600, 0))
	if err := testutil.GatherAndCompare(reg, strings.NewReader(fmt.Sprintf(head, 7, 1.7e9, 1, 1)), names...); err != nil {
		t.Errorf("after an ok and a failed run: %v", err)
	}
}
