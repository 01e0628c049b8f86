package api

import (
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
)

// TestKnownFailures: a store that cannot write is 503 with Retry-After,
// whatever wraps the errno; a quarantined job is 410 naming it; anything
// else is not a known failure (500).
func TestKnownFailures(t *testing.T) {
	full := fmt.Errorf("storing job: %w", &os.PathError{Op: "write", Path: "/var/lib/colocd/colocd.db", Err: syscall.ENOSPC})
	he := knownFailure(full)
	if he == nil || he.Status != http.StatusServiceUnavailable || he.RetryAfter != retryAfterStorage {
		t.Fatalf("full disk: %+v", he)
	}
	w := httptest.NewRecorder()
	writeError(w, he)
	if w.Code != http.StatusServiceUnavailable || w.Header().Get("Retry-After") != "30" {
		t.Errorf("response: %d, Retry-After %q", w.Code, w.Header().Get("Retry-After"))
	}
	for _, e := range []syscall.Errno{syscall.EDQUOT, syscall.EROFS, syscall.EIO} {
		if he := knownFailure(fmt.Errorf("commit: %w", e)); he == nil || he.Status != http.StatusServiceUnavailable {
			t.Errorf("%v: %+v, want 503", e, he)
		}
	}
	q := fmt.Errorf("reading job X: %w", &queue.QuarantinedError{ID: "01J", Reason: "record does not decode", At: time.Now()})
	if he := knownFailure(q); he == nil || he.Status != http.StatusGone {
		t.Errorf("quarantined: %+v, want 410", he)
	}
	if he := knownFailure(fmt.Errorf("boom")); he != nil {
		t.Errorf("an unknown error: %+v, want nil (500)", he)
	}
}
