package api

import (
	"errors"
	"net/http"
	"strings"

	"github.com/colocd/colocd/queue"
)

// retryAfterStorage is the Retry-After (seconds) of a request refused
// because the store cannot write.
const retryAfterStorage = 30

// knownFailure maps the errors a handler may return that are not the
// client's fault yet not a bug either: a store that cannot write (a full
// disk, a quota, a read-only or failing file system) is 503 with
// Retry-After — nothing was changed, and a retry with the same
// Idempotency-Key is safe; a job whose record was quarantined as damaged is
// 410 with the reason. nil for any other error.
func knownFailure(err error) *httpError {
	if e := unavailable(err); e != nil {
		return e
	}
	var q *queue.QuarantinedError
	if errors.As(err, &q) {
		return errorf(http.StatusGone, "", "job %s: its stored record was damaged and is quarantined (%s); `colocd store check` lists it, and an operator can put a pending job back with `colocd store release`", q.ID, q.Reason)
	}
	var low *queue.SpaceError
	if errors.As(err, &low) {
		e := errorf(http.StatusServiceUnavailable, "", "colocd takes no new jobs: %s (data_dir_reserve_bytes); nothing was changed; retry later with the same Idempotency-Key",
			strings.TrimPrefix(low.Error(), "queue: "))
		e.RetryAfter = retryAfterStorage
		return e
	}
	if errno, ok := storageErrno(err); ok {
		e := errorf(http.StatusServiceUnavailable, "", "the store cannot write (%v): nothing was changed; retry later with the same Idempotency-Key", errno)
		e.RetryAfter = retryAfterStorage
		return e
	}
	return nil
}
