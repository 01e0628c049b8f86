package yarnclient

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
)

// request is one logical call.
type request struct {
	method     string
	path       string // below the RM base, e.g. /ws/v1/cluster/apps
	query      url.Values
	body       []byte
	idempotent bool           // may be retried and failed over after it was sent
	ok         func(int) bool // statuses that mean success
	as         string         // act for this user (As); "": the client itself
	doAsParam  string         // the proxy-user parameter; "": doAsRM
}

func status200(s int) bool { return s == http.StatusOK }
func status2xx(s int) bool { return s >= 200 && s < 300 }

type response struct {
	status int
	header http.Header
	body   []byte
	method string
	url    string // without the query
	// refused names the credentials a server refused twice (Refresher),
	// for the 401's error.
	refused string
	// cut: the body of this error answer is its first maxErrorBody bytes.
	cut bool
}

// transportError is a failure to get an answer at all. dial marks failures
// before anything was sent (connection refused, unknown host), after which
// even a non-idempotent call may go to another RM.
type transportError struct {
	method, url string
	dial        bool
	tries       int   // set by withRetries when it gave up after more than one
	err         error // the cause alone: it does not repeat the method or URL
}

func (e *transportError) Error() string {
	return fmt.Sprintf("yarnclient: %s %s: %s%v", e.method, e.url, afterTries(e.tries), e.err)
}

func (e *transportError) Unwrap() error { return e.err }

// unavailableError is a pass over every RM that found none able to answer
// (errUnavailable). It names the call once; each cause names its RM only
// when there are several.
type unavailableError struct {
	method, url string // url: the RM's and the path with one RM, the path alone with several
	what        string // what was unavailable; "": "resource manager"
	tries       int
	causes      []error
}

func (e *unavailableError) Error() string {
	var b strings.Builder
	what := e.what
	if what == "" {
		what = "resource manager"
	}
	fmt.Fprintf(&b, "yarnclient: %s %s: %s unavailable", e.method, e.url, what)
	if e.tries > 1 {
		b.WriteString(" " + strings.TrimSuffix(afterTries(e.tries), ": "))
	}
	for i, c := range e.causes {
		if i == 0 {
			b.WriteString(": ")
		} else {
			b.WriteString("; ")
		}
		b.WriteString(c.Error())
	}
	return b.String()
}

func (e *unavailableError) Is(target error) bool {
	return target == errUnavailable || target == errNoActiveRM
}

func (e *unavailableError) Unwrap() []error { return e.causes }

// afterTries is the note "after n tries: " of a call retried before it
// failed; empty for one try.
func afterTries(n int) string {
	if n <= 1 {
		return ""
	}
	return fmt.Sprintf("after %d tries: ", n)
}

// withTries notes on err, when it names its call, how many tries it took;
// other errors are wrapped once with the call.
func withTries(r request, err error, tries int) error {
	var te *transportError
	var ue *unavailableError
	switch {
	case errors.As(err, &ue):
		ue.tries = tries
		return ue
	case errors.As(err, &te):
		te.tries = tries
		return te
	}
	return fmt.Errorf("yarnclient: %s %s: %w", r.method, r.path, err)
}

// callError wraps err, a cause that does not name the call, with it; an
// error that already names it is returned as it is.
func callError(r request, err error) error {
	var te *transportError
	var ue *unavailableError
	var re *RemoteError
	if errors.As(err, &te) || errors.As(err, &ue) || errors.As(err, &re) {
		return err
	}
	return fmt.Errorf("yarnclient: %s %s: %w", r.method, r.path, err)
}

func isDialError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// rmCall runs r against the RMs: failover across them, retries with backoff
// for idempotent calls, and the RemoteException decoding of a failed answer.
func (c *Client) rmCall(ctx context.Context, r request) (*response, error) {
	resp, err := c.withRetries(ctx, r, func(ctx context.Context) (*response, error) {
		return c.tryRMs(ctx, r)
	})
	if err != nil {
		return nil, err
	}
	if !r.ok(resp.status) {
		return nil, remoteError(resp)
	}
	return resp, nil
}

// urlCall runs r against one fixed base URL (a NodeManager): retries but no
// failover.
func (c *Client) urlCall(ctx context.Context, base *url.URL, r request) (*response, error) {
	resp, err := c.withRetries(ctx, r, func(ctx context.Context) (*response, error) {
		return c.send(ctx, base, r)
	})
	if err != nil {
		return nil, err
	}
	if !r.ok(resp.status) {
		return nil, remoteError(resp)
	}
	return resp, nil
}

// withRetries retries an idempotent call after a transport error, an
// all-RMs-unavailable error or a 5xx answer, waiting Backoff·2^i between
// tries. Non-idempotent calls get exactly one try.
func (c *Client) withRetries(ctx context.Context, r request, try func(context.Context) (*response, error)) (*response, error) {
	for i := 0; ; i++ {
		resp, err := try(ctx)
		if err == nil && resp.status < 500 {
			return resp, nil
		}
		if cerr := ctx.Err(); cerr != nil {
			if err == nil {
				err = cerr
			}
			return nil, callError(r, err)
		}
		transient := err == nil || isTransient(err)
		if !r.idempotent || !transient || i >= c.retries {
			if err != nil {
				if i > 0 {
					return nil, withTries(r, err, i+1)
				}
				return nil, err
			}
			return resp, nil
		}
		wait := c.backoff << i
		if wait > c.maxBackoff || wait <= 0 {
			wait = c.maxBackoff
		}
		if err != nil {
			c.log.Warn("yarn call failed; retrying", "method", r.method, "path", r.path, "attempt", i+1, "wait", wait, "err", err)
		} else {
			c.log.Warn("yarn call answered 5xx; retrying", "method", r.method, "path", r.path, "status", resp.status, "attempt", i+1, "wait", wait)
		}
		if err := c.sleep(ctx, wait); err != nil {
			return nil, callError(r, err)
		}
	}
}

func isTransient(err error) bool {
	var te *transportError
	return errors.As(err, &te) || errors.Is(err, errNoActiveRM)
}

// errNoActiveRM marks the error of a pass over every RM that found none able
// to answer; it is transient, so idempotent calls retry it.
var errNoActiveRM = errors.New("no active resource manager")

// tryRMs sends r to the active RM and, when it is standby or unreachable, to
// the others, remembering the one that answered. A non-idempotent call moves
// on only when the previous RM cannot have acted on it: it refused the
// connection, or it answered as a standby.
func (c *Client) tryRMs(ctx context.Context, r request) (*response, error) {
	n := len(c.rms)
	start := int(c.active.Load())
	tried := make([]bool, n)
	next := start
	var errs []error
	var order []int // the RM of each of errs
	for k := 0; k < n && next >= 0; k++ {
		i := next
		tried[i] = true
		order = append(order, i)
		resp, err := c.send(ctx, c.rms[i], r)
		if err != nil {
			if ctx.Err() != nil {
				return nil, err
			}
			var te *transportError
			if !errors.As(err, &te) || !(te.dial || r.idempotent) {
				return nil, err
			}
			errs = append(errs, te.err)
			next = nextUntried(tried, i)
			if next >= 0 {
				c.log.Info("resource manager unreachable; trying the next one", "rm", c.rms[i].String(), "next", c.rms[next].String(), "err", err)
			}
			continue
		}
		if standby, location := standbyAnswer(resp); standby {
			errs = append(errs, fmt.Errorf("standby (HTTP %d: %s)", resp.status, snippet(resp.body, 120)))
			next = nextUntried(tried, i)
			if j := c.rmIndex(location); j >= 0 && !tried[j] {
				next = j
			}
			if next >= 0 {
				c.log.Info("resource manager is standby; trying the next one", "rm", c.rms[i].String(), "next", c.rms[next].String(), "redirect", location)
			}
			continue
		}
		if i != start {
			c.active.Store(int32(i))
			c.log.Info("active resource manager", "rm", c.rms[i].String())
		}
		return resp, nil
	}
	ue := &unavailableError{method: r.method, url: r.path, causes: errs}
	if n == 1 {
		ue.url = c.rms[0].String() + r.path
	} else {
		for k, i := range order {
			ue.causes[k] = fmt.Errorf("%s: %w", c.rms[i], errs[k])
		}
	}
	return nil, ue
}

func nextUntried(tried []bool, i int) int {
	n := len(tried)
	for k := 1; k <= n; k++ {
		if j := (i + k) % n; !tried[j] {
			return j
		}
	}
	return -1
}

// rmIndex returns the index of the configured RM that location (a redirect
// target) points at, or -1.
func (c *Client) rmIndex(location string) int {
	if location == "" {
		return -1
	}
	u, err := url.Parse(location)
	if err != nil {
		return -1
	}
	for i, rm := range c.rms {
		if strings.EqualFold(rm.Host, u.Host) && rm.Scheme == u.Scheme {
			return i
		}
	}
	return -1
}

// standbyAnswer recognises a standby RM. Hadoop 3.x's RMWebAppFilter answers
// 307 Temporary Redirect with Location set to the active RM and the body
// "This is standby RM. The redirect url is: ..."; Hadoop 2.x answers 200 with
// "This is standby RM. Redirecting to the current active RM: <url>" and a
// Refresh header; with no active RM known either says "Can not find any
// active RM..." or "There is no active RM right now.". Any redirect is treated
// the same way: the REST API itself never redirects.
func standbyAnswer(resp *response) (bool, string) {
	if resp.status >= 300 && resp.status < 400 {
		return true, resp.header.Get("Location")
	}
	b := trimSpace(resp.body)
	if len(b) > 0 && (b[0] == '{' || b[0] == '[') {
		return false, ""
	}
	head := string(b[:min(len(b), 1024)])
	for _, marker := range []string{"This is standby RM", "Can not find any active RM", "There is no active RM right now"} {
		if strings.Contains(head, marker) {
			loc := ""
			if _, after, ok := strings.Cut(head, "Redirecting to the current active RM: "); ok {
				loc = strings.Fields(after + " ")[0]
			}
			return true, loc
		}
	}
	return false, ""
}

// send makes one HTTP exchange with base+r.path, and a second one when the
// server refused the request's SPNEGO credentials and the Auth could
// refresh them.
func (c *Client) send(ctx context.Context, base *url.URL, r request) (*response, error) {
	u := *base
	u.Path = base.Path + r.path
	u.RawPath = ""
	u.RawQuery = r.query.Encode()
	resp, err := c.exchange(ctx, &u, r)
	if err != nil || resp.status != http.StatusUnauthorized || !negotiate(resp.header) {
		return resp, err
	}
	rf, ok := c.auth.(Refresher)
	if !ok {
		return resp, nil
	}
	what := rf.Refresh(&u)
	if what == "" {
		return resp, nil
	}
	c.log.Info("server refused the request's credentials; retrying once with fresh ones", "method", r.method, "url", resp.url, "credentials", what)
	if resp, err = c.exchange(ctx, &u, r); err == nil && resp.status == http.StatusUnauthorized {
		resp.refused = what
	}
	return resp, err
}

// negotiate reports whether a 401's WWW-Authenticate asks for SPNEGO.
func negotiate(h http.Header) bool {
	for _, v := range h.Values("WWW-Authenticate") {
		if strings.HasPrefix(strings.TrimSpace(v), "Negotiate") {
			return true
		}
	}
	return false
}

// exchange makes one HTTP exchange with u.
func (c *Client) exchange(ctx context.Context, u *url.URL, r request) (*response, error) {
	shown := *u
	shown.RawQuery = ""
	var body io.Reader
	if r.body != nil {
		body = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, u.String(), body)
	if err != nil {
		return nil, fmt.Errorf("yarnclient: %s %s: %w", r.method, shown.String(), err)
	}
	req.Header.Set("Accept", "application/json")
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if err := c.authenticate(req, r); err != nil {
		return nil, fmt.Errorf("yarnclient: %s %s: authenticate: %w", r.method, shown.String(), err)
	}
	hresp, err := c.http.Do(req)
	if err != nil {
		// *url.Error repeats the method and the URL, with its query (the
		// user name): keep its cause only.
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, &transportError{method: r.method, url: shown.String(), dial: isDialError(err), err: err}
	}
	defer hresp.Body.Close()
	b, cut, err := c.readBody(hresp)
	if err != nil {
		var tl *tooLargeError
		if errors.As(err, &tl) {
			return nil, fmt.Errorf("yarnclient: %s %s: %w", r.method, shown.String(), err)
		}
		return nil, &transportError{method: r.method, url: shown.String(), err: fmt.Errorf("reading the %d answer: %w", hresp.StatusCode, err)}
	}
	return &response{status: hresp.StatusCode, header: hresp.Header, body: b, cut: cut, method: r.method, url: shown.String()}, nil
}

// readBody reads an answer's body: a successful one whole, up to the
// client's MaxAnswerBytes (over it, or declared over it, a
// *tooLargeError); of any other the first maxErrorBody bytes, cut
// reporting that there was more (the status says what failed; the body
// only why).
func (c *Client) readBody(resp *http.Response) (b []byte, cut bool, err error) {
	limit := c.maxAnswer
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		limit = maxErrorBody
	} else if resp.ContentLength > limit {
		return nil, false, &tooLargeError{status: resp.StatusCode, limit: limit, declared: resp.ContentLength}
	}
	b, err = io.ReadAll(io.LimitReader(resp.Body, limit+1))
	if err != nil || int64(len(b)) <= limit {
		return b, false, err
	}
	if limit == maxErrorBody {
		return b[:limit], true, nil
	}
	return nil, false, &tooLargeError{status: resp.StatusCode, limit: limit}
}

// tooLargeError is a successful answer over the client's cap.
type tooLargeError struct {
	status   int
	limit    int64
	declared int64 // its Content-Length, when it declared one over the cap
}

func (e *tooLargeError) Error() string {
	s := fmt.Sprintf("the %d answer is over %d bytes (MaxAnswerBytes, yarn.max_answer_bytes)", e.status, e.limit)
	if e.declared > 0 {
		s += fmt.Sprintf(": it declared Content-Length %d", e.declared)
	}
	return s
}

func (e *tooLargeError) Unwrap() error { return errTooLarge }

// remoteError turns a failed answer into a *RemoteError.
func remoteError(resp *response) error {
	e := &RemoteError{StatusCode: resp.status, Method: resp.method, URL: resp.url}
	if exc, cls, msg, ok := decodeRemoteException(resp.body); ok {
		e.Exception, e.JavaClassName, e.Message = exc, cls, msg
	} else {
		e.Message = snippet(resp.body, 200)
	}
	if resp.cut {
		e.Message += fmt.Sprintf(" (the error answer was longer than %d bytes: the rest was not read)", maxErrorBody)
	}
	if resp.status == http.StatusUnauthorized && negotiate(resp.header) {
		hint := "the server asks for Kerberos (SPNEGO), which needs a Kerberos Auth (yarnclient/kerberos)"
		if resp.refused != "" {
			hint = "the server refused " + resp.refused + ", also after a retry with a fresh one"
		}
		if e.Message != "" {
			hint += "; " + e.Message
		}
		e.Message = hint
	}
	return e
}

// decodeWith decodes a successful answer, wrapping failures in *decodeError.
func decodeWith[T any](resp *response, dec func([]byte) (T, error)) (T, error) {
	v, err := dec(resp.body)
	if err != nil {
		var zero T
		return zero, &decodeError{
			StatusCode:  resp.status,
			ContentType: resp.header.Get("Content-Type"),
			Method:      resp.method,
			URL:         resp.url,
			Snippet:     snippet(resp.body, 200),
			Err:         err,
		}
	}
	return v, nil
}
