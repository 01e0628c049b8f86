package api

import (
	"net/http"
	"strings"
	"testing"

	v1 "github.com/colocd/colocd/api/v1"
)

// TestResolveParkedJob: only an admin resolves a parked job, with a known
// outcome and a reason; requeue puts it back in the queue and kicks the
// engine; a job that is not parked cannot be resolved; DELETE of a parked
// job says how to resolve it instead.
func TestResolveParkedJob(t *testing.T) {
	h := newHarness(t)
	a := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	b := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	c := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	for _, id := range []string{a.ID, b.ID} {
		if _, err := h.store.Admit(id, "application_1_"+id[:4], nil, nil, nil); err != nil {
			t.Fatal(err)
		}
		if _, err := h.store.Park(id, "the RM restarted"); err != nil {
			t.Fatal(err)
		}
	}
	path := "/v1/jobs/" + a.ID + "/resolve"
	if r := h.do(http.MethodPost, path, submitterTok, `{"outcome":"requeue","reason":"x"}`); r.Code != http.StatusForbidden {
		t.Errorf("submitter: %d, want 403", r.Code)
	}
	for body, field := range map[string]string{
		`{"outcome":"retry","reason":"x"}`:   "outcome",
		`{"outcome":"requeue"}`:              "reason",
		`{"outcome":"requeue","reason":" "}`: "reason",
	} {
		r := h.do(http.MethodPost, path, adminTok, body)
		if r.Code != http.StatusBadRequest || !strings.Contains(string(r.Body), field) || r.errBody(t).Field != field {
			t.Errorf("%s: %d %s, want 400 naming %s", body, r.Code, r.Body, field)
		}
	}
	if r := h.do(http.MethodDelete, "/v1/jobs/"+a.ID, adminTok, ""); r.Code != http.StatusConflict || !strings.Contains(string(r.Body), "resolve") {
		t.Errorf("DELETE a parked job: %d %s, want 409 saying how to resolve it", r.Code, r.Body)
	}
	kicks := h.ctl.kickCount()
	r := h.do(http.MethodPost, path, adminTok, `{"outcome":"requeue","reason":"the history server says it never ran"}`)
	var v v1.Job
	r.decode(t, &v)
	if r.Code != http.StatusOK || v.State != v1.StatePending || v.AppID != "" || !strings.Contains(v.Diagnostics, "resolved by ada") {
		t.Errorf("requeue: %d %+v", r.Code, v)
	}
	if h.ctl.kickCount() == kicks {
		t.Error("requeueing a job did not kick the engine")
	}
	r = h.do(http.MethodPost, "/v1/jobs/"+b.ID+"/resolve", adminTok, `{"outcome":"failed","reason":"its output is incomplete"}`)
	if r.decode(t, &v); r.Code != http.StatusOK || v.State != v1.StateFailed || v.FinishedAt == nil {
		t.Errorf("resolve as failed: %d %+v", r.Code, v)
	}
	for _, id := range []string{b.ID, c.ID} {
		if r := h.do(http.MethodPost, "/v1/jobs/"+id+"/resolve", adminTok, `{"outcome":"requeue","reason":"x"}`); r.Code != http.StatusConflict {
			t.Errorf("resolve job %s that is not parked: %d %s, want 409", id, r.Code, r.Body)
		}
	}
	if r := h.do(http.MethodPost, "/v1/jobs/NOSUCHJOB/resolve", adminTok, `{"outcome":"requeue","reason":"x"}`); r.Code != http.StatusNotFound {
		t.Errorf("unknown job: %d, want 404", r.Code)
	}
}

func (c *fakeController) kickCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kicks
}
