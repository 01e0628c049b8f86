package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/colocd/colocd/apiclient"
)

// ErrConfig is wrapped by errors in Deps or tokens passed to New.
var ErrConfig = errors.New("api: invalid configuration")

// PublicReasoner is an error that names a reason safe to show anyone
// (no host, user or path): /readyz shows a caller without a valid token
// only that, or "not ready" when Controller.Ready's error wraps none.
type PublicReasoner interface {
	error
	PublicReason() string
}

// publicReason is the reason err wraps, safe to show anyone; "" if none.
func publicReason(err error) string {
	var r PublicReasoner
	if errors.As(err, &r) {
		return r.PublicReason()
	}
	return ""
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
		b, _ = json.Marshal(apiclient.ErrorBody{Error: "encoding response: " + err.Error()})
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
	writeJSON(w, e.Status, apiclient.ErrorBody{Error: e.Msg, Field: e.Field})
}
