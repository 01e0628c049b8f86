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
	m.DominantShare("g", 1)
	m.BackendErrors("op")
	m.APIRequest("/x", 200, time.Millisecond)
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
	m.Admitted()
	m.AdmissionFailed()
	m.ObserveDecision(time.Second)
	m.LearningUpdates(1)
	m.StaleHosts(1)
	m.DominantShare("g", 1)
	m.BackendErrors("op")
	rec := httptest.NewRecorder()
	m.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/metrics", nil))
	if rec.Code != 404 {
		t.Errorf("nil Metrics handler: %d, want 404", rec.Code)
	}
}
