package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"
)

// Sentinel errors of this package.
var (
	// ErrConfig is wrapped by errors in Deps or tokens passed to New.
	ErrConfig = errors.New("api: invalid configuration")

	// Why Controller.Ready fails: its error wraps one of these. /readyz
	// shows a caller without a valid token only that reason ("not ready"
	// when it wraps none), never the rest of the error, which may name
	// hosts, users and paths.
	//
	// ErrStarting: not reconciled with the cluster yet.
	ErrStarting = errors.New("starting")
	// ErrStoreUnavailable: the store does not answer reads.
	ErrStoreUnavailable = errors.New("store unavailable")
	// ErrStoreWrites: the last store write failed (a full disk) and none
	// has succeeded since.
	ErrStoreWrites = errors.New("store writes failing")
	// ErrClusterSync: the loop's last sync with the cluster failed.
	ErrClusterSync = errors.New("cannot sync with the cluster")
	// ErrStalled: the admission loop has completed no iteration for too long.
	ErrStalled = errors.New("admission loop stalled")
)

// readyReasons are the errors /readyz may name without a token.
var readyReasons = []error{ErrStarting, ErrStoreUnavailable, ErrStoreWrites, ErrClusterSync, ErrStalled}

// publicReason is the reason err wraps, safe to show anyone; "" if none.
func publicReason(err error) string {
	for _, r := range readyReasons {
		if errors.Is(err, r) {
			return r.Error()
		}
	}
	return ""
}

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Error string `json:"error"`
	Field string `json:"field,omitempty"`
}

// httpError is an error with the status and field it is reported with.
type httpError struct {
	Status     int
	Field      string
	Msg        string
	RetryAfter int // seconds; 0: no Retry-After header
}

func (e *httpError) Error() string { return e.Msg }

func errorf(status int, field, format string, args ...any) *httpError {
	return &httpError{Status: status, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// writeJSON writes v with status. Encoding errors can only come from a
// broken connection at this point; they are ignored.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(errorBody{Error: "encoding response: " + err.Error()})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *httpError) {
	switch e.Status {
	case http.StatusUnauthorized:
		w.Header().Set("WWW-Authenticate", `Bearer realm="colocd"`)
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	writeJSON(w, e.Status, errorBody{Error: e.Msg, Field: e.Field})
}
