package yarnclient

import (
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// Sentinel errors. Test with errors.Is; *RemoteError, *decodeError and
// *commandError match the ones that describe them.
var (
	// ErrNotFound: the RM (or NM) answered 404, e.g. an unknown application id.
	ErrNotFound = errors.New("yarnclient: not found")
	// errNoTimeline: HistoryApp was called on a client without TimelineURL.
	errNoTimeline = errors.New("yarnclient: no timeline server configured")
	// errBadRequest: the RM answered 400 (BadRequestException), e.g. a bad id
	// or an invalid target state.
	errBadRequest = errors.New("yarnclient: bad request")
	// ErrUnauthorized: 401; simple auth needs a user name, a Kerberos cluster
	// needs an Auth that speaks SPNEGO (yarnclient/kerberos), and a
	// kerberized server that refuses its ticket, also after one retry with
	// a fresh one (Refresher), answers it too.
	ErrUnauthorized = errors.New("yarnclient: unauthorized")
	// ErrForbidden: 403; the user may not do this (ACLs, static user).
	ErrForbidden = errors.New("yarnclient: forbidden")
	// ErrConflict: 409, or the RM's "already present! Cannot add a duplicate!"
	// answer to a concurrent second submission of the same application id.
	ErrConflict = errors.New("yarnclient: conflict")
	// errUnavailable: no ResourceManager could serve the call now: every RM was
	// unreachable or standby, or the active one answered 5xx.
	errUnavailable = errors.New("yarnclient: resource manager unavailable")
	// errDecode: a 2xx answer whose body is not the documented JSON.
	errDecode = errors.New("yarnclient: cannot decode response")
	// errTooLarge: a 2xx answer over Config.MaxAnswerBytes (or declaring
	// a Content-Length over it); nothing of it was decoded.
	errTooLarge = errors.New("yarnclient: answer over its size cap")
	// ErrInvalid: a bad Config or argument; the message names the field.
	ErrInvalid = errors.New("yarnclient: invalid argument")
	// ErrNoToken: a NameNode issued no delegation token ({"Token":null}):
	// its security is off, and no token is needed.
	ErrNoToken = errors.New("yarnclient: no delegation token issued (security is off)")
	// ErrCommandFailed: a submission command exited non-zero or could not start.
	ErrCommandFailed = errors.New("yarnclient: submit command failed")
	// errCommandTimeout: a submission command ran past its timeout and was
	// killed with its process group.
	errCommandTimeout = errors.New("yarnclient: submit command timed out")
)

// RemoteError is a non-2xx answer of the RM or an NM. Exception,
// JavaClassName and Message come from YARN's RemoteException body
// ({"RemoteException":{"exception":..,"message":..,"javaClassName":..}});
// when the body is not one, Message holds a snippet of it.
type RemoteError struct {
	StatusCode    int
	Exception     string // e.g. NotFoundException, BadRequestException
	JavaClassName string // e.g. org.apache.hadoop.yarn.webapp.NotFoundException
	Message       string
	Method        string
	URL           string // without the query, so no user name leaks into logs
}

func (e *RemoteError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "yarnclient: %s %s: %d %s", e.Method, e.URL, e.StatusCode, http.StatusText(e.StatusCode))
	if e.Exception != "" {
		fmt.Fprintf(&b, ": %s", e.Exception)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	}
	return b.String()
}

// Is maps the status code (and the RM's duplicate-submission message) to the
// sentinel errors.
func (e *RemoteError) Is(target error) bool {
	switch target {
	case ErrNotFound:
		return e.StatusCode == http.StatusNotFound
	case errBadRequest:
		return e.StatusCode == http.StatusBadRequest
	case ErrUnauthorized:
		return e.StatusCode == http.StatusUnauthorized
	case ErrForbidden:
		return e.StatusCode == http.StatusForbidden
	case ErrConflict:
		return e.StatusCode == http.StatusConflict ||
			strings.Contains(e.Message, "Cannot add a duplicate")
	case errUnavailable:
		return e.StatusCode >= 500
	}
	return false
}

// decodeError is a 2xx answer that is not the documented JSON: an HTML login
// page from a proxy, a truncated body, an unexpected shape.
type decodeError struct {
	StatusCode  int
	ContentType string
	Method      string
	URL         string
	Snippet     string // the first bytes of the body
	Err         error
}

func (e *decodeError) Error() string {
	return fmt.Sprintf("yarnclient: %s %s: cannot decode %d answer (Content-Type %q): %v; body starts %q",
		e.Method, e.URL, e.StatusCode, e.ContentType, e.Err, e.Snippet)
}

func (e *decodeError) Unwrap() []error { return []error{errDecode, e.Err} }

// commandError is a failed or timed-out submission command.
type commandError struct {
	Argv     []string // after placeholder expansion
	ExitCode int      // -1 when killed or not started
	TimedOut bool
	Output   []byte // tail of the combined stdout and stderr
	Err      error
}

func (e *commandError) Error() string {
	name := ""
	if len(e.Argv) > 0 {
		name = e.Argv[0]
	}
	if e.TimedOut {
		return fmt.Sprintf("yarnclient: submit command %q timed out and was killed: %v", name, e.Err)
	}
	return fmt.Sprintf("yarnclient: submit command %q failed (exit code %d): %v", name, e.ExitCode, e.Err)
}

func (e *commandError) Unwrap() []error {
	if e.TimedOut {
		return []error{errCommandTimeout, e.Err}
	}
	return []error{ErrCommandFailed, e.Err}
}

// snippet returns the first n bytes of b as text, for error messages.
func snippet(b []byte, n int) string {
	s := strings.TrimSpace(string(b))
	return truncate(s, n)
}
