package yarnclient

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"os"
	"strings"
	"sync/atomic"
	"time"
)

// Defaults for the zero fields of Config.
const (
	defaultTimeout       = 30 * time.Second
	defaultRetries       = 3
	defaultBackoff       = 200 * time.Millisecond
	defaultMaxBackoff    = 5 * time.Second
	defaultNMConcurrency = 8

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
	// here). Nil builds one with Timeout, CAFile, CertFile and KeyFile.
	HTTPClient *http.Client
	// CAFile is a PEM bundle of the CAs to trust for https RM and NM URLs.
	// Only when HTTPClient is nil.
	CAFile string
	// CertFile and KeyFile are a PEM client certificate and its private
	// key, presented to https RMs, NMs and the Timeline Server that ask
	// for one (Hadoop's hadoop.ssl.require.client.cert). Both or neither;
	// only when HTTPClient is nil.
	CertFile, KeyFile string
	// WrapTransport, when set, wraps the client's transport (the one built
	// or HTTPClient's): the daemon times every request with it.
	WrapTransport func(http.RoundTripper) http.RoundTripper
	// Timeout bounds one HTTP exchange (when HTTPClient has no timeout).
	Timeout time.Duration
	// Retries is how many times an idempotent GET is retried after a 5xx or
	// a connection error (0 means defaultRetries, negative means none).
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
	// errTooLarge (and is not retried: it would be as big again).
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
	if (c.CertFile == "") != (c.KeyFile == "") {
		return fmt.Errorf("%w: CertFile and KeyFile: set both (a client certificate and its key) or neither", ErrInvalid)
	}
	if c.HTTPClient != nil && c.CertFile != "" {
		return fmt.Errorf("%w: CertFile: not used with HTTPClient; put the certificate in its transport", ErrInvalid)
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
	clientCert    *x509.Certificate // Config.CertFile's, as loaded; nil without
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
		c.retries = defaultRetries
	case c.retries < 0:
		c.retries = 0
	}
	if c.backoff == 0 {
		c.backoff = defaultBackoff
	}
	if c.maxBackoff == 0 {
		c.maxBackoff = defaultMaxBackoff
	}
	if c.maxBackoff < c.backoff {
		c.maxBackoff = c.backoff
	}
	if c.nmConcurrency == 0 {
		c.nmConcurrency = defaultNMConcurrency
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
	hc, cert, err := newHTTPClient(cfg)
	if err != nil {
		return nil, err
	}
	c.http, c.clientCert = hc, cert
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

func newHTTPClient(cfg Config) (*http.Client, *x509.Certificate, error) {
	timeout := cfg.Timeout
	if timeout == 0 {
		timeout = defaultTimeout
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
		return &cp, nil, nil
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	var leaf *x509.Certificate
	if cfg.CAFile != "" || cfg.CertFile != "" {
		tc := &tls.Config{MinVersion: tls.VersionTLS12}
		if cfg.CAFile != "" {
			pem, err := os.ReadFile(cfg.CAFile)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: CAFile: %v", ErrInvalid, err)
			}
			tc.RootCAs = x509.NewCertPool()
			if !tc.RootCAs.AppendCertsFromPEM(pem) {
				return nil, nil, fmt.Errorf("%w: CAFile: %s holds no PEM certificate", ErrInvalid, cfg.CAFile)
			}
		}
		if cfg.CertFile != "" {
			cert, err := tls.LoadX509KeyPair(cfg.CertFile, cfg.KeyFile)
			if err != nil {
				return nil, nil, fmt.Errorf("%w: CertFile and KeyFile: %v", ErrInvalid, err)
			}
			tc.Certificates, leaf = []tls.Certificate{cert}, cert.Leaf
		}
		tr.TLSClientConfig = tc
	}
	var rt http.RoundTripper = tr
	if cfg.WrapTransport != nil {
		rt = cfg.WrapTransport(rt)
	}
	return &http.Client{Transport: rt, Timeout: timeout, CheckRedirect: noRedirect}, leaf, nil
}

// ClientCertificate is the client certificate the client presents to
// https servers (Config.CertFile, read by New); nil without one.
func (c *Client) ClientCertificate() *x509.Certificate { return c.clientCert }

// CloseIdleConnections closes the idle keep-alive connections of the
// client's transport (at shutdown, or in tests checking for leaks).
func (c *Client) CloseIdleConnections() { c.http.CloseIdleConnections() }

// ActiveRM returns the URL of the RM the client currently sends to.
func (c *Client) ActiveRM() string { return c.rms[c.active.Load()].String() }

// Auth returns the Auth the client authenticates with: Config.Auth, or
// SimpleAuth with Config.User.
func (c *Client) Auth() Auth { return c.auth }
