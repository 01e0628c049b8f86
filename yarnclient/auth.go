package yarnclient

import "net/http"

// Auth authenticates one outgoing request (to the RM or an NM) just before it
// is sent. It is called again for every retry and every failover, on a fresh
// request, so an implementation may put a one-time token on it.
// Implementations must be safe for concurrent use.
//
// This is the plug-in point for Kerberos: an Auth that obtains a SPNEGO token
// for HTTP/<rm-host> and sets "Authorization: Negotiate <token>" (or that sets
// "X-Hadoop-Delegation-Token") works without changes here. Such an Auth is
// not provided, because SPNEGO needs a Kerberos library outside the standard
// library; see the package documentation.
type Auth interface {
	Authenticate(req *http.Request) error
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
