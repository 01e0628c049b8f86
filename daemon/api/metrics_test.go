package api

import (
	"net/http"
	"strings"
	"testing"
	"time"
)

func TestMetricsEndpoint(t *testing.T) {
	h := newHarness(t)
	h.submit(submitterTok, jobBody("a"), http.StatusCreated)
	h.submit(submitterTok, jobBody("b"), http.StatusCreated)
	h.runJobStart(h.submit(submitterTok, jobBody("c"), http.StatusCreated).ID)
	h.do("GET", "/v1/jobs", "", "") // a 401
	h.do("GET", "/", "", "")        // the status page
	h.do("GET", "/nope", "", "")    // the catch-all 404

	m := h.metrics
	m.Admitted(time.Minute, "", "", "k")
	m.Admitted(time.Hour, "max_skips", "", "k")
	m.AdmissionFailed()
	m.ObserveDecision(3 * time.Millisecond)
	m.LearningUpdates(7)
	m.StaleHosts(2)
	m.DominantShare("sam", 0.25)
	m.BackendErrors("submit")

	r := h.do("GET", "/metrics", readerTok, "")
	if r.Code != 200 {
		t.Fatalf("GET /metrics: %d %s", r.Code, r.Body)
	}
	body := string(r.Body)
	for _, want := range []string{
		`colocd_jobs{state="pending"} 2`,
		`colocd_jobs{state="running"} 1`,
		`colocd_jobs{state="cancelled"} 0`,
		`colocd_jobs{state="parked"} 0`,
		`colocd_store_quarantined_records 0`,
		`colocd_admissions_total{kind="k",queue="default"} 2`,
		`colocd_admission_failures_total 1`,
		`colocd_decision_duration_seconds_count 1`,
		`colocd_job_wait_duration_seconds_count{kind="k",queue="default"} 2`,
		`colocd_forced_admissions_total{reason="max_skips"} 1`,
		`colocd_learning_updates_total 7`,
		`colocd_stale_hosts 2`,
		`colocd_dominant_share{group="sam"} 0.25`,
		`colocd_backend_errors_total{op="submit"} 1`,
		`colocd_api_requests_total{code="201",route="/v1/jobs"} 3`,
		`colocd_api_requests_total{code="401",route="/v1/jobs"} 1`,
		`colocd_api_request_duration_seconds_bucket{route="/v1/jobs",le=`,
		`colocd_api_requests_total{code="200",route="/"} 1`,
		`colocd_api_requests_total{code="404",route="other"} 1`,
		`go_goroutines `,
		`process_resident_memory_bytes `,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	// The route label is the pattern, never the raw path.
	if strings.Contains(body, `route="/v1/jobs/0`) {
		t.Error("a raw job path leaked into the route label")
	}
	// Nor Go's pattern syntax for "this path exactly".
	if strings.Contains(body, `{$}`) {
		t.Error("a route label shows the mux's {$}")
	}
}

func TestPublicMetrics(t *testing.T) {
	h := newHarness(t, func(c *harnessCfg) { c.PublicMetrics = true })
	if r := h.do("GET", "/metrics", "", ""); r.Code != 200 {
		t.Errorf("public /metrics without a token: %d", r.Code)
	}
	if r := h.do("GET", "/v1/jobs", "", ""); r.Code != 401 {
		t.Errorf("PublicMetrics opened /v1/jobs: %d", r.Code)
	}
}
