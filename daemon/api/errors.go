package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	v1 "github.com/colocd/colocd/api/v1"
)

// errConfig is wrapped by errors in Deps or tokens passed to New.
var errConfig = errors.New("api: invalid configuration")

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

// Every error reply carries a stable machine-readable "code"
// (apiclient.Code*, listed in the OpenAPI description) beside its message,
// which is for people and may change.

// codeFor is the code of an error reply with status and no code of its own.
func codeFor(status int) string {
	switch status {
	case http.StatusBadRequest:
		return v1.CodeBadRequest
	case http.StatusUnauthorized:
		return v1.CodeUnauthenticated
	case http.StatusForbidden:
		return v1.CodeForbidden
	case http.StatusNotFound:
		return v1.CodeNotFound
	case http.StatusMethodNotAllowed:
		return v1.CodeMethodNotAllowed
	case http.StatusRequestTimeout:
		return v1.CodeTimeout
	case http.StatusConflict:
		return v1.CodeConflict
	case http.StatusGone:
		return v1.CodeGone
	case http.StatusRequestEntityTooLarge:
		return v1.CodeTooLarge
	case http.StatusUnsupportedMediaType:
		return v1.CodeUnsupportedMediaType
	case http.StatusUnprocessableEntity:
		return v1.CodeRefused
	case http.StatusBadGateway:
		return v1.CodeLeaderUnreachable
	case http.StatusServiceUnavailable:
		return v1.CodeUnavailable
	}
	return v1.CodeInternal
}

// httpError is an error with the status and field it is reported with.
type httpError struct {
	Status     int
	Field      string
	Msg        string
	RetryAfter int    // seconds; 0: no Retry-After header
	Code       string // "": codeFor(Status)
	Rule       string // the rule behind a 403 (a config key, "owner")
	// challenge adds a 401's WWW-Authenticate headers; nil: Bearer.
	challenge func(http.Header)
}

func (e *httpError) Error() string { return e.Msg }

func errorf(status int, field, format string, args ...any) *httpError {
	return &httpError{Status: status, Field: field, Msg: fmt.Sprintf(format, args...)}
}

// forbidden is a 403 naming the rule that refused it.
func forbidden(rule, format string, args ...any) *httpError {
	e := errorf(http.StatusForbidden, "", format, args...)
	e.Code, e.Rule = v1.CodeForbidden, rule
	return e
}

// writeJSON writes v with status. Encoding errors can only come from a
// broken connection at this point; they are ignored.
func writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		status = http.StatusInternalServerError
		b, _ = json.Marshal(v1.ErrorBody{Error: "encoding response: " + err.Error(), Code: v1.CodeInternal})
	}
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}

func writeError(w http.ResponseWriter, e *httpError) {
	if e.Status == http.StatusUnauthorized {
		if e.challenge != nil {
			w.Header().Del("WWW-Authenticate")
			e.challenge(w.Header())
		} else if w.Header().Get("WWW-Authenticate") == "" {
			w.Header().Set("WWW-Authenticate", `Bearer realm="colocd"`)
		}
	}
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.RetryAfter))
	}
	code := e.Code
	if code == "" {
		code = codeFor(e.Status)
	}
	writeJSON(w, e.Status, v1.ErrorBody{Error: e.Msg, Code: code, Field: e.Field, Rule: e.Rule})
}
