package engine

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colocd/colocd/telemetry"
)

// TestDominantShareForgottenWhenIdle: once a user's jobs have ended and
// nothing is pending, the user's colocd_dominant_share series is gone,
// not left at its last value.
func TestDominantShareForgottenWhenIdle(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2})
	reg := prometheus.NewRegistry()
	h.e.mx = telemetry.New(reg, nil)
	shares := func() map[string]float64 {
		t.Helper()
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		out := map[string]float64{}
		for _, mf := range mfs {
			if mf.GetName() != "colocd_dominant_share" {
				continue
			}
			for _, m := range mf.GetMetric() {
				out[m.GetLabel()[0].GetValue()] = m.GetGauge().GetValue()
			}
		}
		return out
	}
	h.submit("cpu", "disk")
	h.admit() // the second decision sees the first job running
	if s := shares(); s["ana"] <= 0 {
		t.Fatalf("while ana runs a job: shares %v, want ana > 0", s)
	}
	h.advance(200 * time.Second) // both jobs end
	if rep := h.sync(); len(rep.Finished) != 2 {
		t.Fatalf("finished %v, want 2 jobs", rep.Finished)
	}
	h.admit() // nothing pending
	if s := shares(); len(s) != 0 {
		t.Errorf("with nothing pending or running: shares %v, want none", s)
	}
}
