package yarnclient

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for the zero fields of Config.
const (
	DefaultTimeout       = 30 * time.Second
	DefaultRetries       = 3
	DefaultBackoff       = 200 * time.Millisecond
	DefaultMaxBackoff    = 5 * time.Second
	DefaultNMConcurrency = 8

	// DefaultMaxAnswerBytes caps the body of one successful answer (an RM's,
	// an NM's, a NameNode's, the Timeline Server's), which is read whole
	// and decoded: at 10,000 nodes the node list is 5.7 MB and a list of
	// 10,000 applications 10.6 MB (measured on yarntest's FakeRM, which
	// serves the documented 3.x fields); 64 MiB leaves room for an RM
	// that writes two or three times more per node or application.
	DefaultMaxAnswerBytes = 64 << 20

	// maxErrorBody caps what is kept of an error answer's body (a
	// RemoteException is a few hundred bytes); the rest is not read, and
	// the error says so.
	maxErrorBody = 64 << 10
)

// Config configures a Client. Zero fields take the defaults above.
type Config struct {
	// RMURLs lists the ResourceManagers' web addresses, e.g.
	// "http://rm1:8088" (a path prefix, as behind a gateway, is kept). With
	// RM HA list every RM; the client finds the active one and remembers it.
	RMURLs []string
	// User is the user.name of Hadoop simple auth. Leave it empty when Auth
	// is set.
	User string
	// Auth, when set, authenticates every request instead of simple auth:
	// Kerberos (SPNEGO) with yarnclient/kerberos, or another scheme.
	Auth Auth
	// HTTPClient is the one client used for every request. It is copied and
	// the copy never follows redirects (a standby RM's redirect is handled
	// here). Nil builds one with Timeout and CAFile.
	HTTPClient *http.Client
	// CAFile is a PEM bundle of the CAs to trust for https RM and NM URLs.
	// Only when HTTPClient is nil.
	CAFile string
	// WrapTransport, when set, wraps the client's transport (the one built
	// or HTTPClient's): the daemon times every request with it.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Timeout bounds one HTTP exchange (when HTTPClient has no timeout).
	Timeout time.Duration
	// Retries is how many times an idempotent GET is retried after a 5xx or
	// a connection error (0 means DefaultRetries, negative means none).
	// new-application, submit and kill are never retried.
	Retries int
	// Backoff is the wait before the first retry; it doubles up to
	// MaxBackoff.
	Backoff    time.Duration
	MaxBackoff time.Duration
	// NMConcurrency bounds parallel NodeManager requests in Placement's
	// fallback.
	NMConcurrency int
	// MaxAnswerBytes caps the body of one successful answer; zero means
	// DefaultMaxAnswerBytes. A bigger answer fails the call with
	// ErrTooLarge (and is not retried: it would be as big again).
	MaxAnswerBytes int64
	// TimelineURL is the Timeline Server's (application history service)
	// web address, e.g. "http://ats:8188": where HistoryApp asks about an
	// application the RM no longer knows. Empty: no history.
	TimelineURL string
	// Logger receives failovers and retries; nil discards.
	Logger *slog.Logger
	// Sleep replaces the backoff wait (tests). Nil waits on a timer and
	// returns early when the context ends.
	Sleep func(time.Duration)
}

// Validate checks the Config without touching the network.
func (c Config) Validate() error {
	if len(c.RMURLs) == 0 {
		return fmt.Errorf("%w: RMURLs: at least one ResourceManager URL is required", ErrInvalid)
	}
	for i, s := range c.RMURLs {
		if _, err := parseRMURL(s); err != nil {
			return fmt.Errorf("%w: RMURLs[%d]: %v", ErrInvalid, i, err)
		}
	}
	if c.TimelineURL != "" {
		if _, err := parseRMURL(c.TimelineURL); err != nil {
			return fmt.Errorf("%w: TimelineURL: %v", ErrInvalid, err)
		}
	}
	if c.User != "" && c.Auth != nil {
		return fmt.Errorf("%w: User and Auth: set one, not both", ErrInvalid)
	}
	if c.HTTPClient != nil && c.CAFile != "" {
		return fmt.Errorf("%w: CAFile: not used with HTTPClient; put the CA in its transport", ErrInvalid)
	}
	if c.Timeout < 0 {
		return fmt.Errorf("%w: Timeout: %v is negative", ErrInvalid, c.Timeout)
	}
	if c.Backoff < 0 || c.MaxBackoff < 0 {
		return fmt.Errorf("%w: Backoff/MaxBackoff: must not be negative", ErrInvalid)
	}
	if c.NMConcurrency < 0 {
		return fmt.Errorf("%w: NMConcurrency: %d is negative", ErrInvalid, c.NMConcurrency)
	}
	if c.MaxAnswerBytes < 0 {
		return fmt.Errorf("%w: MaxAnswerBytes: %d is negative", ErrInvalid, c.MaxAnswerBytes)
	}
	return nil
}

// CheckURL reports whether s is a URL the client accepts for a
// ResourceManager or the Timeline Server: http or https, a host, no query,
// fragment or credentials.
func CheckURL(s string) error {
	_, err := parseRMURL(s)
	return err
}

func parseRMURL(s string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(s))
	if err != nil {
		return nil, err
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("%q: scheme must be http or https", s)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%q: no host", s)
	}
	if u.RawQuery != "" || u.Fragment != "" || u.User != nil {
		return nil, fmt.Errorf("%q: no query, fragment or credentials allowed", s)
	}
	u.Path = strings.TrimRight(u.Path, "/")
	u.RawPath = ""
	return u, nil
}

// Client talks to the YARN ResourceManager REST API (and to NodeManagers for
// placement on Hadoop 2.x). It is safe for concurrent use.
type Client struct {
	rms           []*url.URL
	timeline      *url.URL // nil: none
	http          *http.Client
	auth          Auth
	retries       int
	backoff       time.Duration
	maxBackoff    time.Duration
	nmConcurrency int
	maxAnswer     int64
	log           *slog.Logger
	sleep         func(context.Context, time.Duration) error

	active atomic.Int32 // index into rms of the RM believed active
	// noAttemptContainers is set once the RM answered the attempt-containers
	// endpoint with Jersey's "no such resource" 404 (Hadoop 2.x).
	noAttemptContainers atomic.Bool
}

// New validates cfg and builds a Client. It does no network I/O (it reads
// CAFile).
func New(cfg Config) (*Client, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	c := &Client{
		retries:       cfg.Retries,
		backoff:       cfg.Backoff,
		maxBackoff:    cfg.MaxBackoff,
		nmConcurrency: cfg.NMConcurrency,
		maxAnswer:     cfg.MaxAnswerBytes,
		log:           cfg.Logger,
		auth:          cfg.Auth,
	}
	for _, s := range cfg.RMURLs {
		u, _ := parseRMURL(s)
		c.rms = append(c.rms, u)
	}
	if cfg.TimelineURL != "" {
		c.timeline, _ = parseRMURL(cfg.TimelineURL)
	}
	if c.auth == nil {
		c.auth = SimpleAuth{User: cfg.User}
	}
	switch {
	case c.retries == 0:
		c.retries = DefaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.backoff == 0 {
		c.backoff = DefaultBackoff
	}
	if c.maxBackoff == 0 {
		c.maxBackoff = DefaultMaxBackoff
	}
	if c.maxBackoff < c.backoff {
		c.maxBackoff = c.backoff
	}
	if c.nmConcurrency == 0 {
		c.nmConcurrency = DefaultNMConcurrency
	}
	if c.maxAnswer == 0 {
		c.maxAnswer = DefaultMaxAnswerBytes
	}
	if c.log == nil {
		c.log = slog.New(slog.DiscardHandler)
	}
	c.sleep = sleepCtx
	if cfg.Sleep != nil {
		s := cfg.Sleep
		c.sleep = func(ctx context.Context, d time.Duration) error {
			s(d)
			return ctx.Err()
		}
	}
	hc, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	c.http = hc
	return c, nil
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func noRedirect(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }

func newHTTPClient(cfg Config) (*http.Client, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = DefaultTimeout
	}
	if cfg.HTTPClient != nil {
		cp := *cfg.HTTPClient
		cp.CheckRedirect = noRedirect
		if cp.Timeout == 0 {
			cp.Timeout = timeout
		}
		if cfg.WrapTransport != nil {
			cp.Transport = cfg.WrapTransport(cp.Transport)
		}
		return &cp, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	if cfg.CAFile != "" {
		pem, err := os.ReadFile(cfg.CAFile)
		if err != nil {
			return nil, fmt.Errorf("%w: CAFile: %v", ErrInvalid, err)
		}
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("%w: CAFile: %s holds no PEM certificate", ErrInvalid, cfg.CAFile)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	var rt http.RoundTripper = tr
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	return &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: noRedirect}, nil
}

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport (at shutdown, or in tests checking for leaks).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// ActiveRM returns the URL of the RM the client currently sends to.
func (c *Client) ActiveRM() string { return c.rms[c.active.Load()].String() }

// Auth returns the Auth the client authenticates with: Config.Auth, or
// SimpleAuth with Config.User.
func (c *Client) Auth() Auth { return c.auth }

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
// (ErrUnavailable). It names the call once; each cause names its RM only
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
	return target == ErrUnavailable || target == errNoActiveRM
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

func (e *tooLargeError) Unwrap() error { return ErrTooLarge }

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

// decodeWith decodes a successful answer, wrapping failures in *DecodeError.
func decodeWith[T any](resp *response, dec func([]byte) (T, error)) (T, error) {
	v, err := dec(resp.body)
	if err != nil {
		var zero T
		return zero, &DecodeError{
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
