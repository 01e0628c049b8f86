package yarnclient

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"unicode"
)

// Auth authenticates one outgoing request (to the RM or an NM) just before it
// is sent. It is called again for every retry and every failover, on a fresh
// request, so an implementation may put a one-time token on it.
// Implementations must be safe for concurrent use.
//
// Kerberos is one: kerberos.Auth (package yarnclient/kerberos, apart
// because it needs gokrb5) sets "Authorization: Negotiate <token>" for the
// request's server and is a Refresher. An Auth that sets
// "X-Hadoop-Delegation-Token" would plug in the same way.
type Auth interface {
	Authenticate(req *http.Request) error
}

// Refresher is an Auth whose credentials for a server can go stale, such
// as a cached Kerberos service ticket after the server's key changed. When
// a server answers 401 with "WWW-Authenticate: Negotiate", the Client calls
// Refresh with the request's URL and, unless it returns "", sends the call
// once more, authenticated afresh. Refresh names what it dropped, for the
// error when the retry is refused too.
type Refresher interface {
	Refresh(u *url.URL) string
}

// AuthFunc adapts a function to Auth.
type AuthFunc func(req *http.Request) error

// Authenticate calls f(req).
func (f AuthFunc) Authenticate(req *http.Request) error { return f(req) }

// SimpleAuth is Hadoop's "simple" HTTP authentication: the user name travels
// in the user.name query parameter. The RM needs it for the writable calls
// (new-application, submit, kill); reads work anonymously as dr.who where the
// cluster allows it.
type SimpleAuth struct{ User string }

// Authenticate adds user.name, replacing any present value.
func (a SimpleAuth) Authenticate(req *http.Request) error {
	if a.User == "" {
		return nil
	}
	q := req.URL.Query()
	q.Set("user.name", a.User)
	req.URL.RawQuery = q.Encode()
	return nil
}

// CallOption changes one call of the writable API (NewApplication,
// SubmitApp, KillApp) or a delegation token request.
type CallOption func(*callOptions)

type callOptions struct {
	as string // "": the client's own identity
}

// As makes a call act for user instead of the client's own identity. With
// SimpleAuth (Hadoop's simple authentication trusts the name it is
// given) the call carries user.name=user. With any other Auth (Kerberos)
// the client authenticates as itself and adds doAs=user (WebHDFS: doas),
// and the server's proxy-user rules decide (core-site.xml
// hadoop.proxyuser.<the client's short name>.users, .groups and .hosts):
// a refusal is a 403 *RemoteError, AuthorizationException "User: colocd
// is not allowed to impersonate alice" (the RM names the client's full
// principal). Those rules decide a doAs of the client's own user too: act
// as the client with As(""), the default.
func As(user string) CallOption { return func(o *callOptions) { o.as = user } }

// applyCallOptions folds opts; a user name with surrounding or control
// whitespace is ErrInvalid.
func applyCallOptions(opts []CallOption) (callOptions, error) {
	var o callOptions
	for _, opt := range opts {
		opt(&o)
	}
	if o.as != strings.TrimSpace(o.as) || strings.ContainsFunc(o.as, unicode.IsControl) {
		return callOptions{}, fmt.Errorf("%w: As: %q is not a user name", ErrInvalid, o.as)
	}
	return o, nil
}

// authenticate authenticates req for r: as the client, or for r.as (see
// As) through user.name with SimpleAuth and r.doAsParam otherwise.
func (c *Client) authenticate(req *http.Request, r request) error {
	if r.as == "" {
		return c.auth.Authenticate(req)
	}
	if _, simple := c.auth.(SimpleAuth); simple {
		return SimpleAuth{User: r.as}.Authenticate(req)
	}
	param := r.doAsParam
	if param == "" {
		param = doAsRM
	}
	q := req.URL.Query()
	q.Set(param, r.as)
	req.URL.RawQuery = q.Encode()
	return c.auth.Authenticate(req)
}

// The proxy-user query parameters: the RM's authentication filter reads
// doAs (DelegationTokenAuthenticatedURL.DO_AS, any case), WebHDFS doas
// (WebHDFS.md, "Proxy Users").
const (
	doAsRM      = "doAs"
	doAsWebHDFS = "doas"
)
