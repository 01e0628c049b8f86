package api

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
)

// recorder is a WriteRecorder that keeps what it is told.
type recorder struct {
	mu     sync.Mutex
	writes []string
}

func (r *recorder) StoreWrite(op string, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.writes = append(r.writes, fmt.Sprintf("%s %v", op, err))
}

func (r *recorder) Writes() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Clone(r.writes)
}

// TestStoreWritesReported: every store write of the API reaches
// Deps.Writes with its outcome, failures included. (The preference writes
// are the engine's, which reports its own.)
func TestStoreWritesReported(t *testing.T) {
	rec := &recorder{}
	h := newHarness(t, func(c *harnessCfg) { c.Writes = rec })
	v := h.submit(submitterTok, jobBody("a"), http.StatusCreated, "Idempotency-Key", "k")
	h.submit(submitterTok, jobBody("a"), http.StatusOK, "Idempotency-Key", "k") // no write
	if r := h.do("DELETE", "/v1/jobs/"+v.ID, submitterTok, ""); r.Code != 200 {
		t.Fatalf("cancel: %d %s", r.Code, r.Body)
	}
	h.submit(submitterTok, `{"kind":"a"}`, http.StatusBadRequest) // invalid: never reaches the store
	want := []string{"submit <nil>", "cancel <nil>"}
	if diff := cmp.Diff(want, rec.Writes()); diff != "" {
		t.Errorf("writes (-want +got):\n%s", diff)
	}
	// A store that fails a write: the failure is reported.
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	h.submit(submitterTok, jobBody("a"), http.StatusServiceUnavailable)
	if got := rec.Writes(); len(got) == 0 || got[len(got)-1] != "submit "+queue.ErrClosed.Error() {
		t.Errorf("writes %q, want the failed submit last", got)
	}
}

// TestReadyzDetailsNeedToken: /readyz tells anyone the reason, and only a
// caller with a valid token the details (which name the RM and its user).
func TestReadyzDetailsNeedToken(t *testing.T) {
	h := newHarness(t)
	h.ctl.mu.Lock()
	h.ctl.readyErr = fmt.Errorf("%w: sync: cluster state: Get \"http://rm1.internal:8088/ws/v1/cluster/metrics?user.name=colocd\": connection refused", testReason("cannot sync with the cluster"))
	h.ctl.mu.Unlock()
	for _, tok := range []string{"", "not-a-token"} {
		r := h.do("GET", "/readyz", tok, "")
		e := r.errBody(t)
		if r.Code != 503 || e.Error != "not ready: cannot sync with the cluster (send a token for details)" {
			t.Errorf("token %q: %d %q", tok, r.Code, e.Error)
		}
		if strings.Contains(string(r.Body), "rm1") || strings.Contains(string(r.Body), "user.name") {
			t.Errorf("token %q: details leaked: %s", tok, r.Body)
		}
	}
	r := h.do("GET", "/readyz", readerTok, "")
	if e := r.errBody(t); r.Code != 503 || !strings.Contains(e.Error, "rm1.internal:8088") {
		t.Errorf("reader token: %d %q, want the details", r.Code, e.Error)
	}
	h.ctl.mu.Lock()
	h.ctl.readyErr = errors.New("something private")
	h.ctl.mu.Unlock()
	if e := h.do("GET", "/readyz", "", "").errBody(t); e.Error != "not ready (send a token for details)" {
		t.Errorf("no public reason: %q", e.Error)
	}
}

// testReason is a reason safe to show anyone, as the engine's are.
type testReason string

func (r testReason) Error() string        { return string(r) }
func (r testReason) PublicReason() string { return string(r) }
