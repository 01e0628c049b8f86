package apiclient

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
)

// Defaults of Options.
const (
	DefaultTimeout       = 30 * time.Second // of the whole request, reply included
	DefaultMaxReplyBytes = 64 << 20
)

var (
	// ErrBaseURL is wrapped by New's error for a base URL that is not
	// http:// or https:// with a host.
	ErrBaseURL = errors.New("apiclient: base URL must be http(s)://host[:port][/prefix]")
	// ErrReplyTooLarge is wrapped by the error of a request whose reply
	// is over Options.MaxReplyBytes; nothing of it is decoded.
	ErrReplyTooLarge = errors.New("apiclient: reply over the size limit")
	// ErrDecode is wrapped by the error of a 2xx reply that does not
	// decode into its type.
	ErrDecode = errors.New("apiclient: undecodable reply")
)

// Options are a Client's settings; the zero value is the defaults.
type Options struct {
	// HTTPClient sends every request; nil means one with DefaultTimeout.
	// Share one per process: it holds the connection pool. Its Transport
	// carries the TLS settings (a CA bundle, a client certificate).
	HTTPClient *http.Client
	// MaxReplyBytes caps the body read of any reply; zero means
	// DefaultMaxReplyBytes.
	MaxReplyBytes int64
	// Auth, when set, authenticates every request instead of the bearer
	// token: Kerberos SPNEGO from a person's ticket cache or a keytab
	// (yarnclient/kerberos.Auth is one). When it is also a Refresher, a
	// 401 makes the client refresh it and send the request once more.
	Auth Authenticator
	// Retries is how many times a request safe to repeat (a read, a
	// submission with an idempotency key) is sent again after a 503 that
	// carries Retry-After, waiting what it says (at most MaxRetryAfter);
	// zero means DefaultRetries, negative none.
	Retries int
	// Wait waits d or until ctx ends (a 503's Retry-After); nil: a timer.
	Wait func(ctx context.Context, d time.Duration) error
}

// Retry bounds.
const (
	DefaultRetries = 3
	MaxRetryAfter  = time.Minute
)

// Authenticator sets a request's credentials (Authorization).
type Authenticator interface {
	Authenticate(req *http.Request) error
}

// Refresher is an Authenticator whose credentials for a server may be
// stale (a Kerberos service ticket): Refresh drops them and names them.
type Refresher interface {
	Refresh(u *url.URL) string
}

// Client talks to colocd — one server, or the replicas of a replicated
// colocd — with one bearer token. It is safe for concurrent use.
type Client struct {
	doAs     string   // ?doAs= on every request; "": none
	bases    []string // without a trailing slash
	cur      atomic.Int32
	token    string
	auth     Authenticator
	hc       *http.Client
	maxReply int64
	retries  int
	wait     func(ctx context.Context, d time.Duration) error
}

// New returns a client of the API at baseURL (such as
// http://127.0.0.1:8080; a path prefix is kept) that sends token as
// "Authorization: Bearer <token>" (an empty token sends none: the server
// then refuses everything but /healthz and /readyz). It does no I/O.
//
// baseURL may list the replicas of a replicated colocd, comma-separated
// (as yarn.rm_urls lists an RM pair): any of them answers (followers
// forward writes to the leader), and a request goes to the next when one
// cannot be reached — always when the connection was refused, and after
// any failure to get an answer when the request is safe to repeat (a
// read, or a submission with an idempotency key).
func New(baseURL, token string, o Options) (*Client, error) {
	var bases []string
	for _, b := range strings.Split(baseURL, ",") {
		b = strings.TrimSpace(b)
		u, err := url.Parse(b)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%w: got %q", ErrBaseURL, b)
		}
		bases = append(bases, strings.TrimRight(b, "/"))
	}
	if o.MaxReplyBytes < 0 {
		return nil, fmt.Errorf("apiclient: Options.MaxReplyBytes is %d, want >= 0", o.MaxReplyBytes)
	}
	c := &Client{bases: bases, token: token, auth: o.Auth, hc: o.HTTPClient, maxReply: o.MaxReplyBytes, retries: o.Retries, wait: o.Wait}
	if c.hc == nil {
		c.hc = &http.Client{Timeout: DefaultTimeout}
	}
	if c.maxReply == 0 {
		c.maxReply = DefaultMaxReplyBytes
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.wait == nil {
		c.wait = func(ctx context.Context, d time.Duration) error {
			t := time.NewTimer(d)
			defer t.Stop()
			select {
			case <-t.C:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		}
	}
	return c, nil
}

// As returns a client that acts for user: every request carries
// ?doAs=user, which the server allows only when a proxy rule
// (api.proxy_users) lets the caller act for user, and audits. The jobs it
// submits are user's. It shares c's connections and credentials.
func (c *Client) As(user string) *Client {
	return &Client{doAs: user, bases: c.bases, token: c.token, auth: c.auth, hc: c.hc, maxReply: c.maxReply, retries: c.retries, wait: c.wait}
}

// Reply is a 2xx reply: its status, its body as the server sent it (what a
// client prints for --json) and that body decoded.
type Reply[T any] struct {
	Status int
	Raw    json.RawMessage
	Body   T
}

// Error is a non-2xx reply: the server's {"error", "code", "field",
// "rule"}, or its body (or status text) when that is not JSON.
type Error struct {
	Status  int
	Message string
	Code    string // stable: CodeForbidden, CodeUnknownParameter, ...; "" from a server before codes
	Field   string // the request field at fault; "" if none
	Rule    string // the rule behind a 403; "" if none
	// RetryAfter is the server's Retry-After (a 503 for a store that cannot
	// write: nothing was changed, retry with the same idempotency key); 0
	// when it sent none.
	RetryAfter time.Duration
}

func (e *Error) Error() string {
	msg := e.Message
	if e.Field != "" && !strings.Contains(msg, e.Field) {
		msg += " (field " + e.Field + ")"
	}
	if e.Rule != "" && !strings.Contains(msg, e.Rule) {
		msg += " (rule " + e.Rule + ")"
	}
	return fmt.Sprintf("server: %s (HTTP %d)", msg, e.Status)
}

// request is one call to the API.
type request struct {
	method string
	path   string // from /v1/...
	query  url.Values
	body   []byte // JSON; nil: none
	header map[string]string
	accept string // "": application/json
}

// do sends r and returns the status and body of a 2xx reply, or an *Error.
// A request safe to repeat is sent again after a 503 with Retry-After,
// waiting what it says (Options.Retries).
func (c *Client) do(ctx context.Context, r request) (int, []byte, error) {
	for try := 0; ; try++ {
		status, b, err := c.doOnce(ctx, r)
		var e *Error
		if try >= c.retries || !repeatable(r) || !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || e.RetryAfter <= 0 {
			return status, b, err
		}
		if werr := c.wait(ctx, min(e.RetryAfter, MaxRetryAfter)); werr != nil {
			return status, b, err
		}
	}
}

// doOnce sends r once. With several servers it starts at the last that
// answered and goes on to the next one when a server cannot be reached
// (see New).
func (c *Client) doOnce(ctx context.Context, r request) (int, []byte, error) {
	n := len(c.bases)
	first := int(c.cur.Load())
	for i := 0; ; i++ {
		at := (first + i) % n
		status, b, sent, err := c.doAt(ctx, c.bases[at], r)
		if sent || i+1 == n || ctx.Err() != nil || !(refused(err) || repeatable(r)) {
			if sent {
				c.cur.Store(int32(at))
			}
			return status, b, err
		}
	}
}

// refused reports a connection that never opened: nothing was sent.
func refused(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// repeatable reports whether r may be sent again after an unknown
// outcome: a read, or a write the server deduplicates by its key.
func repeatable(r request) bool {
	return r.method == http.MethodGet || r.method == http.MethodHead || r.header["Idempotency-Key"] != ""
}

// doAt sends r to the server at base; sent reports that a reply came. A
// 401 with a Refresher sends it once more with fresh credentials.
func (c *Client) doAt(ctx context.Context, base string, r request) (status int, body []byte, sent bool, err error) {
	status, body, sent, err = c.doAtOnce(ctx, base, r)
	var e *Error
	if rf, ok := c.auth.(Refresher); ok && errors.As(err, &e) && e.Status == http.StatusUnauthorized {
		if u, perr := url.Parse(base); perr == nil {
			rf.Refresh(u)
			return c.doAtOnce(ctx, base, r)
		}
	}
	return status, body, sent, err
}

func (c *Client) doAtOnce(ctx context.Context, base string, r request) (status int, body []byte, sent bool, err error) {
	path := r.path
	q := r.query
	if c.doAs != "" {
		q = url.Values{}
		for k, v := range r.query {
			q[k] = v
		}
		q.Set("doAs", c.doAs)
	}
	if len(q) > 0 {
		path += "?" + q.Encode()
	}
	var rd io.Reader
	if r.body != nil {
		rd = bytes.NewReader(r.body)
	}
	req, err := http.NewRequestWithContext(ctx, r.method, base+path, rd)
	if err != nil {
		return 0, nil, false, fmt.Errorf("building request: %w", err)
	}
	switch {
	case c.auth != nil:
		if err := c.auth.Authenticate(req); err != nil {
			return 0, nil, false, fmt.Errorf("%s %s: authenticating: %w", r.method, base+path, err)
		}
	case c.token != "":
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	accept := r.accept
	if accept == "" {
		accept = "application/json"
	}
	req.Header.Set("Accept", accept)
	if r.body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range r.header {
		req.Header.Set(k, v)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, false, fmt.Errorf("%s %s: %w", r.method, base+path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, c.maxReply+1))
	if err != nil {
		return res.StatusCode, nil, true, fmt.Errorf("%s %s: reading reply: %w", r.method, path, err)
	}
	if int64(len(b)) > c.maxReply {
		return res.StatusCode, nil, true, fmt.Errorf("%s %s: %w: more than %d bytes (HTTP %d)", r.method, path, ErrReplyTooLarge, c.maxReply, res.StatusCode)
	}
	if res.StatusCode/100 != 2 {
		return res.StatusCode, nil, true, replyError(res, b)
	}
	return res.StatusCode, b, true, nil
}

// replyError is the *Error of a non-2xx reply with body b.
func replyError(res *http.Response, b []byte) *Error {
	e := &Error{Status: res.StatusCode}
	if s, err := strconv.Atoi(res.Header.Get("Retry-After")); err == nil && s > 0 {
		e.RetryAfter = time.Duration(s) * time.Second
	}
	var eb v1.ErrorBody
	if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
		e.Message, e.Code, e.Field, e.Rule = eb.Error, eb.Code, eb.Field, eb.Rule
		return e
	}
	e.Message = strings.TrimSpace(string(b))
	if e.Message == "" {
		e.Message = http.StatusText(res.StatusCode)
	}
	return e
}

// call sends r and decodes the reply into T. On ErrDecode the Reply still
// has the status and the body as sent.
func call[T any](ctx context.Context, c *Client, r request) (Reply[T], error) {
	status, b, err := c.do(ctx, r)
	if err != nil {
		return Reply[T]{}, err
	}
	rep := Reply[T]{Status: status, Raw: b}
	if err := json.Unmarshal(b, &rep.Body); err != nil {
		return rep, fmt.Errorf("%w: %s %s: %w", ErrDecode, r.method, r.path, err)
	}
	return rep, nil
}

// send is call with v encoded as the JSON body.
func send[T any](ctx context.Context, c *Client, r request, v any) (Reply[T], error) {
	b, err := json.Marshal(v)
	if err != nil {
		return Reply[T]{}, fmt.Errorf("encoding the body of %s %s: %w", r.method, r.path, err)
	}
	r.body = b
	return call[T](ctx, c, r)
}
