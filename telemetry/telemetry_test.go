package telemetry

import (
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
	m.Admitted(time.Second, ForcedMaxSkips)
	m.AdmissionFailed()
	m.ObserveDecision(time.Second)
	m.LearningUpdates(1)
	m.LearningTick(time.Unix(1, 0))
	m.BackendUp(BackendCluster, true)
	m.Build(BuildInfo{Version: "v1"})
	m.StaleHosts(1)
	m.DominantShare("g", 1)
	m.BackendErrors("op")
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
	m.Admitted(90*time.Second, "")
	m.Admitted(30*time.Second, ForcedReservation)
	m.Admitted(-time.Second, "") // a clock step back counts as no wait
	m.LearningTick(time.Unix(1700000000, 500e6))
	m.LearningTick(time.Unix(1700000300, 0))
	m.BackendUp(BackendCluster, true)
	m.BackendUp(BackendMetrics, true)
	m.BackendUp(BackendMetrics, false)
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
