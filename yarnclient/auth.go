package yarnclient

import (
	"net/http"
	"net/url"
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
