package yarntest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// hdfsOption configures a FakeWebHDFS.
type hdfsOption func(*hdfsOptions)

type hdfsOptions struct {
	spnegoKeytab string
	proxy        proxyUsers
	now          func() time.Time
	rpcAddress   string
	alwaysUse    bool
}

// HDFSSPNEGO puts SPNEGO with the service keytab at keytabPath in front
// of the fake (dfs.web.authentication.kerberos.*), which turns its
// security on: it issues delegation tokens.
func HDFSSPNEGO(keytabPath string) hdfsOption {
	return func(o *hdfsOptions) { o.spnegoKeytab = keytabPath }
}

// HDFSAlwaysUseDelegationTokens issues delegation tokens with security
// off too, as the NameNode's dfs.namenode.delegation.token.always-use
// ("for testing") does. Without it or HDFSSPNEGO the fake answers
// GETDELEGATIONTOKEN with {"Token":null}, as a NameNode with security off.
func HDFSAlwaysUseDelegationTokens() hdfsOption {
	return func(o *hdfsOptions) { o.alwaysUse = true }
}

// HDFSProxyUser lets real act for users (hadoop.proxyuser.<real>.users;
// "*": anyone) through doas; any other doas, the caller's own included, is
// 403 AuthorizationException "User: <real> is not allowed to impersonate
// <user>", real being user.name or the principal's short name (the
// NameNode's JspHelper.getUGI).
func HDFSProxyUser(real string, users ...string) hdfsOption {
	return func(o *hdfsOptions) { o.proxy = o.proxy.add(real, users) }
}

// HDFSClock sets the clock that dates the tokens; the default starts at
// DefaultClusterTimestamp and advances one second per reading.
func HDFSClock(now func() time.Time) hdfsOption { return func(o *hdfsOptions) { o.now = now } }

// HDFSRPCAddress is the NameNode's RPC address, the service of the tokens
// issued without a service parameter (default 127.0.0.1:8020).
func HDFSRPCAddress(addr string) hdfsOption { return func(o *hdfsOptions) { o.rpcAddress = addr } }

// FakeWebHDFS is a NameNode's WebHDFS REST API on httptest (127.0.0.1)
// serving the one operation colocd uses, GETDELEGATIONTOKEN (WebHDFS.md,
// "Get Delegation Token"): GET /webhdfs/v1/?op=GETDELEGATIONTOKEN
// [&renewer=..][&service=..][&kind=..][&doas=..] answers
// {"Token":{"urlString":..}} with a token of kind (default "WEBHDFS
// delegation") for service (default the RPC address), renewable by
// renewer (default the caller), owned by the caller or the doas user.
// Parameter names are case-insensitive, as WebHDFS's. Errors are WebHDFS's
// RemoteException JSON: a standby NameNode (SetStandby) answers 403
// StandbyException, a refused doas 403 AuthorizationException, another op
// 400 UnsupportedOperationException. Requests counts every
// GETDELEGATIONTOKEN that reached it; Issued lists the tokens. It is
// closed by t.Cleanup and safe for concurrent use.
type FakeWebHDFS struct {
	t    testing.TB
	srv  *httptest.Server
	opts hdfsOptions
	gate *SPNEGOGate

	mu       sync.Mutex
	clock    int64
	standby  bool
	requests int
	issuer   tokenIssuer
}

// NewFakeWebHDFS starts a fake WebHDFS; it is closed by t.Cleanup.
func NewFakeWebHDFS(t testing.TB, opts ...hdfsOption) *FakeWebHDFS {
	t.Helper()
	o := hdfsOptions{rpcAddress: "127.0.0.1:8020"}
	for _, opt := range opts {
		opt(&o)
	}
	f := &FakeWebHDFS{t: t, opts: o, clock: DefaultClusterTimestamp, issuer: newTokenIssuer("the fake NameNode")}
	f.srv, f.gate = serveGated(t, o.spnegoKeytab, http.HandlerFunc(f.serve))
	t.Cleanup(f.Close)
	return f
}

// URL is the fake's base URL, e.g. http://127.0.0.1:41234.
func (f *FakeWebHDFS) URL() string { return f.srv.URL }

// Close stops the server, as a NameNode that went away.
func (f *FakeWebHDFS) Close() {
	f.srv.CloseClientConnections()
	f.srv.Close()
}

// SPNEGO is the fake's SPNEGO gate, nil without HDFSSPNEGO.
func (f *FakeWebHDFS) SPNEGO() *SPNEGOGate { return f.gate }

// SetStandby makes the NameNode a standby (or active again).
func (f *FakeWebHDFS) SetStandby(standby bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.standby = standby
}

// Requests counts the GETDELEGATIONTOKEN requests that reached the fake
// (past SPNEGO), answered or refused.
func (f *FakeWebHDFS) Requests() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.requests
}

// Issued lists the tokens the fake issued, in order.
func (f *FakeWebHDFS) Issued() []issuedToken {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issuer.list()
}

// Genuine reports whether t is a token this NameNode issued.
func (f *FakeWebHDFS) Genuine(t yarnclient.Token) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.issuer.genuine(t)
}

func (f *FakeWebHDFS) now() time.Time {
	if f.opts.now != nil {
		return f.opts.now()
	}
	f.clock += 1000
	return time.UnixMilli(f.clock)
}

// params lower-cases the parameter names, as WebHDFS's ParamFilter does.
func params(q url.Values) url.Values {
	out := url.Values{}
	for k, v := range q {
		out[strings.ToLower(k)] = append(out[strings.ToLower(k)], v...)
	}
	return out
}

func (f *FakeWebHDFS) serve(w http.ResponseWriter, r *http.Request) {
	if !strings.HasPrefix(r.URL.Path, yarnclient.PathWebHDFS) {
		http.NotFound(w, r)
		return
	}
	q := params(r.URL.Query())
	if op := q.Get("op"); r.Method != http.MethodGet || !strings.EqualFold(op, "GETDELEGATIONTOKEN") {
		f.exception(w, http.StatusBadRequest, "UnsupportedOperationException", "java.lang.UnsupportedOperationException",
			"the fake WebHDFS serves GET op=GETDELEGATIONTOKEN only, not "+r.Method+" op="+op)
		return
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.requests++
	if f.standby {
		f.exception(w, http.StatusForbidden, "StandbyException", "org.apache.hadoop.ipc.StandbyException",
			"Operation category WRITE is not supported in state standby. Visit https://s.apache.org/sbnn-error")
		return
	}
	caller := q.Get("user.name")
	if caller == "" {
		caller = "dr.who"
	}
	owner, real := caller, ""
	if _, user, ok := doAs(q); ok { // JspHelper.getUGI: a doas of the caller itself is checked too
		if !f.opts.proxy.allows(caller, user) {
			status, body := impersonationRefused(caller, user)
			f.writeJSON(w, status, body)
			return
		}
		owner, real = user, caller
	}
	if f.gate == nil && !f.opts.alwaysUse {
		f.writeJSON(w, http.StatusOK, map[string]any{"Token": nil})
		return
	}
	renewer, kind, service := q.Get("renewer"), q.Get("kind"), q.Get("service")
	if renewer == "" {
		renewer = owner
	}
	if kind == "" {
		kind = yarnclient.KindWebHDFSDelegation
	}
	if service == "" {
		service = f.opts.rpcAddress
	}
	it := f.issuer.issue(yarnclient.TokenIdentifier{Owner: owner, Renewer: renewer, RealUser: real}, f.now(), kind, service)
	f.writeJSON(w, http.StatusOK, map[string]any{"Token": map[string]string{"urlString": it.Encoded}})
}

func (f *FakeWebHDFS) exception(w http.ResponseWriter, status int, exception, javaClass, message string) {
	f.writeJSON(w, status, map[string]any{"RemoteException": map[string]string{
		"exception": exception, "javaClassName": javaClass, "message": message,
	}})
}

func (f *FakeWebHDFS) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Errorf("yarntest: encode WebHDFS answer: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
