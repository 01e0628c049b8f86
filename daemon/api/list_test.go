package api

import (
	"encoding/json"
	"net/http/httptest"
	"testing"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/queue"
)

// TestListJobsReadsOnlyWhatItReturns: GET /v1/jobs?state=cancelled&limit=1
// reads one job, however many are cancelled: its allocations do not grow
// with the state's size.
func TestListJobsReadsOnlyWhatItReturns(t *testing.T) {
	h := newHarness(t)
	handler := h.srv.Config.Handler
	var last string
	cancelJobs := func(n int) {
		for range n {
			j, _, err := h.store.Submit(t.Context(), queue.Job{Kind: "a", User: "sam", Queue: "q",
				Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := h.store.Cancel(j.ID); err != nil {
				t.Fatal(err)
			}
			last = j.ID
		}
	}
	list := func() float64 {
		req := httptest.NewRequest("GET", "/v1/jobs?state=cancelled&limit=1", nil)
		req.Header.Set("Authorization", "Bearer "+readerTok)
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		var l v1.JobList
		if err := json.Unmarshal(rec.Body.Bytes(), &l); err != nil || len(l.Jobs) != 1 || l.Jobs[0].ID != last {
			t.Fatalf("listing: %v %s, want only the newest cancelled job %s", err, rec.Body, last)
		}
		return testing.AllocsPerRun(5, func() { handler.ServeHTTP(httptest.NewRecorder(), req) })
	}
	cancelJobs(10)
	few := list()
	cancelJobs(1000)
	many := list()
	if many > few+50 {
		t.Errorf("limit=1 allocates %.0f times over 1,010 cancelled jobs, %.0f over 10: it reads the whole state", many, few)
	}
}
