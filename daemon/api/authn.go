package api

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	v1 "github.com/colocd/colocd/api/v1"
	"net"
	"net/http"
	"net/netip"
	"strings"
	"time"
)

// AuthMode is how callers authenticate (api.auth).
type AuthMode string

// The modes.
const (
	// AuthTokens: bearer tokens only (and client certificates, when
	// Deps.ClientCerts).
	AuthTokens AuthMode = "tokens"
	// AuthKerberos: SPNEGO only (and client certificates).
	AuthKerberos AuthMode = "kerberos"
	// AuthBoth: either; tokens stay for service accounts.
	AuthBoth AuthMode = "both"
)

// Authentication methods, as the audit log and GET /v1/whoami name them.
const (
	methodToken    = "token"
	methodKerberos = "kerberos"
	methodTLS      = "tls"
)

// principal is the authenticated caller of one request: who it is acting
// as (User, after a proxy rule) and who authenticated (RealUser when it
// differs), its groups, its role and the rule that granted that role.
type principal struct {
	User   string
	Role   Role
	Groups []string
	// Principal is who authenticated, as authenticated: a Kerberos
	// principal, a certificate's subject, "token:<user>".
	Principal string
	Method    string
	// RealUser is the user that authenticated when a proxy rule lets it act
	// as User (doAs); "" otherwise. ProxyRule names that rule.
	RealUser  string
	ProxyRule string
	// RoleRule names what granted Role: "api.acl.admin", "tokens".
	RoleRule string
	// addr is the client's address (the forwarding replica's client's).
	addr netip.Addr
}

// identity is what authentication establishes, before a proxy rule and
// the roles: the part a replica forwards.
type identity struct {
	User      string `json:"u"`
	Principal string `json:"p"`
	Method    string `json:"m"`
	TokenRole Role   `json:"r,omitempty"` // a token's own role; 0 for the other methods
	Addr      string `json:"a"`           // the client's address
	At        int64  `json:"t"`           // unix seconds the forwarder signed it
}

// authn authenticates requests and settles who they act as.
type authn struct {
	mode      AuthMode
	tokens    *authenticator // nil: no tokens (mode kerberos)
	krb       *Kerberos      // nil: no Kerberos (mode tokens)
	certs     bool
	groups    groupSource
	ACLs      ACLs
	proxy     []ProxyRule
	jobGroups []string
	fwdKey    []byte // nil: no forwarded identity is trusted
	wallNow   func() time.Time
}

// authFailure is a refusal to authenticate: a 401 with its challenges,
// or the identity's reply header on success.
func (a *authn) challenges(h http.Header) {
	if a.krb != nil {
		h.Add("WWW-Authenticate", "Negotiate")
	}
	if a.tokens != nil {
		h.Add("WWW-Authenticate", `Bearer realm="colocd"`)
	}
}

// unauthorized is the 401 of a request with no acceptable credentials.
func (a *authn) unauthorized(code, format string, args ...any) *httpError {
	e := errorf(http.StatusUnauthorized, "", format, args...)
	e.Code = code
	e.challenge = a.challenges
	return e
}

// schemes names what a client may send, for a 401's message.
func (a *authn) schemes() string {
	var s []string
	if a.krb != nil {
		s = append(s, "Authorization: Negotiate (a Kerberos ticket: kinit, then colocd or curl --negotiate -u :)")
	}
	if a.tokens != nil {
		s = append(s, "Authorization: Bearer <token>")
	}
	if a.certs {
		s = append(s, "a TLS client certificate")
	}
	return strings.Join(s, ", or ")
}

// identify authenticates r. w, when not nil, receives Kerberos' reply
// token (mutual authentication). A request with no credentials at all is
// ok false with a nil error.
func (a *authn) identify(w http.ResponseWriter, r *http.Request) (identity, bool, *httpError) {
	if v := r.Header.Get(headerForwardedIdentity); v != "" {
		id, err := a.forwarded(r, v)
		if err != nil {
			return identity{}, false, err
		}
		return id, true, nil
	}
	addr := remoteAddr(r.RemoteAddr)
	scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
	switch {
	case strings.EqualFold(scheme, "Bearer"):
		if a.tokens == nil {
			return identity{}, false, a.unauthorized(v1.CodeUnauthenticated, "bearer tokens are not accepted here (api.auth is %s): send %s", a.mode, a.schemes())
		}
		t, ok, expired := a.tokens.check(cred, a.wallNow())
		switch {
		case expired:
			return identity{}, false, a.unauthorized(v1.CodeTokenExpired, "the bearer token of user %q expired at %s (its expires in tokens or token_file)", t.User, t.Expires.UTC().Format(time.RFC3339))
		case !ok:
			return identity{}, false, a.unauthorized(v1.CodeUnauthenticated, "invalid bearer token: send %s", a.schemes())
		}
		return identity{User: t.User, Principal: "token:" + t.User, Method: methodToken, TokenRole: t.Role, Addr: addr}, true, nil
	case strings.EqualFold(scheme, "Negotiate"):
		if a.krb == nil {
			return identity{}, false, a.unauthorized(v1.CodeUnauthenticated, "Kerberos is not accepted here (api.auth is %s): send %s", a.mode, a.schemes())
		}
		client, reply, err := a.krb.accept(cred, r.RemoteAddr)
		if err != nil {
			return identity{}, false, a.unauthorized(v1.CodeUnauthenticated, "%v", err)
		}
		user, err := a.krb.AuthToLocal.Short(client)
		if err != nil {
			e := errorf(http.StatusForbidden, "", "principal %s is authenticated but maps to no user by api.kerberos.auth_to_local: %v", client, err)
			e.Code, e.Rule = v1.CodeForbidden, "api.kerberos.auth_to_local"
			return identity{}, false, e
		}
		if w != nil {
			w.Header().Set("WWW-Authenticate", "Negotiate "+reply)
		}
		return identity{User: user, Principal: client, Method: methodKerberos, Addr: addr}, true, nil
	case scheme != "":
		return identity{}, false, a.unauthorized(v1.CodeUnauthenticated, "Authorization scheme %q is not accepted: send %s", scheme, a.schemes())
	}
	if a.certs && r.TLS != nil && len(r.TLS.VerifiedChains) > 0 && len(r.TLS.VerifiedChains[0]) > 0 {
		c := r.TLS.VerifiedChains[0][0]
		user := c.Subject.CommonName
		if user == "" || strings.ContainsAny(user, " \t@/,") {
			e := errorf(http.StatusForbidden, "", "the client certificate's subject %q has no common name that is a user name", c.Subject.String())
			e.Code, e.Rule = v1.CodeForbidden, "tls.client_ca_file"
			return identity{}, false, e
		}
		return identity{User: user, Principal: c.Subject.String(), Method: methodTLS, Addr: addr}, true, nil
	}
	return identity{}, false, nil
}

// authenticate is identify, a request without credentials a 401.
func (a *authn) authenticate(w http.ResponseWriter, r *http.Request) (identity, *httpError) {
	id, ok, err := a.identify(w, r)
	switch {
	case err != nil:
		return identity{}, err
	case !ok:
		return identity{}, a.unauthorized(v1.CodeUnauthenticated, "authentication required: send %s", a.schemes())
	}
	return id, nil
}

// principalOf settles who an authenticated request acts as: the proxy
// rule of a doAs, the groups, the role.
func (a *authn) principalOf(id identity, doAs string) (principal, *httpError) {
	addr, _ := netip.ParseAddr(id.Addr)
	p := principal{User: id.User, Principal: id.Principal, Method: id.Method, addr: addr}
	if doAs != "" && doAs != id.User {
		if strings.ContainsAny(doAs, " \t@/") {
			e := errorf(http.StatusBadRequest, "doAs", "doAs %q is not a user name", doAs)
			return p, e
		}
		rule, why := a.proxyFor(id.User, doAs, addr)
		if rule == "" {
			e := errorf(http.StatusForbidden, "doAs", "%s may not act for %s: %s", id.User, doAs, why)
			e.Code, e.Rule = v1.CodeProxyRefused, "api.proxy_users"
			return p, e
		}
		p.RealUser, p.ProxyRule, p.User = id.User, rule, doAs
	}
	if a.groups != nil {
		p.Groups = a.groups.Groups(p.User)
	}
	if id.TokenRole != 0 && p.RealUser == "" {
		p.Role, p.RoleRule = id.TokenRole, "tokens"
		return p, nil
	}
	p.Role, p.RoleRule = a.ACLs.role(p.User, p.Groups)
	if p.Role == 0 {
		e := errorf(http.StatusForbidden, "", "user %s (groups %s) is authenticated but no role is granted to it: api.acl.reader, api.acl.submitter and api.acl.admin name neither it nor its groups",
			p.User, listOrNone(p.Groups))
		e.Code, e.Rule = v1.CodeForbidden, "api.acl.reader"
		return p, e
	}
	return p, nil
}

// proxyFor finds the rule that lets real act for user from addr: its name,
// or "" and why none does.
func (a *authn) proxyFor(real, user string, addr netip.Addr) (string, string) {
	var why []string
	var groups []string
	if a.groups != nil {
		groups = a.groups.Groups(user)
	}
	for i := range a.proxy {
		r := &a.proxy[i]
		if r.User != real {
			continue
		}
		ok, reason := r.allows(user, groups, addr)
		if ok {
			return r.Name, ""
		}
		why = append(why, reason)
	}
	if len(why) == 0 {
		return "", fmt.Sprintf("no rule of api.proxy_users is for user %s (hadoop.proxyuser.%s.*)", real, real)
	}
	return "", strings.Join(why, "; ")
}

// remoteAddr is the address of host:port, "" when it has none.
func remoteAddr(hostport string) string {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		host = hostport
	}
	if a, err := netip.ParseAddr(host); err == nil {
		return a.Unmap().String()
	}
	return ""
}

// The forwarded identity: a follower that authenticated a request
// forwards it to the leader with the identity in headerForwardedIdentity,
// signed with the replicas' shared key (ha.forward_key_file) over the
// identity, the method and the request URI. The leader trusts it for
// forwardSkew around its time, and a request carrying it is never
// authenticated again: its Authorization (a Negotiate token for the
// follower's own principal, which the leader could not accept) is dropped
// by the follower.
const (
	headerForwardedIdentity = "X-Colocd-Forwarded-Identity"
	forwardSkew             = 30 * time.Second
)

// signForward is the header value carrying id for a request of method to uri.
func signForward(key []byte, id identity, method, uri string) string {
	b, _ := json.Marshal(id)
	payload := base64.RawURLEncoding.EncodeToString(b)
	return payload + "." + base64.RawURLEncoding.EncodeToString(forwardMAC(key, payload, method, uri))
}

func forwardMAC(key []byte, payload, method, uri string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte("colocd-forwarded-identity-v1\n" + method + "\n" + uri + "\n" + payload))
	return m.Sum(nil)
}

// errForward is wrapped by the refusals of a forwarded identity.
var errForward = errors.New("forwarded identity refused")

// forwarded checks a forwarded identity.
func (a *authn) forwarded(r *http.Request, v string) (identity, *httpError) {
	refuse := func(format string, args ...any) (identity, *httpError) {
		return identity{}, a.unauthorized(v1.CodeUnauthenticated, "%v: %s", errForward, fmt.Sprintf(format, args...))
	}
	if len(a.fwdKey) == 0 {
		return refuse("this replica trusts no forwarded identity (ha.forward_key_file is not set)")
	}
	payload, sig, ok := strings.Cut(v, ".")
	mac, err := base64.RawURLEncoding.DecodeString(sig)
	if !ok || err != nil || !hmac.Equal(mac, forwardMAC(a.fwdKey, payload, r.Method, r.URL.RequestURI())) {
		return refuse("its signature does not verify with ha.forward_key_file (a replica with another key, or not a replica)")
	}
	b, err := base64.RawURLEncoding.DecodeString(payload)
	var id identity
	if err != nil || json.Unmarshal(b, &id) != nil || id.User == "" {
		return refuse("malformed")
	}
	at := time.Unix(id.At, 0)
	if d := a.wallNow().Sub(at); d > forwardSkew || d < -forwardSkew {
		return refuse("signed at %s, more than %s from this replica's clock", at.UTC().Format(time.RFC3339), forwardSkew)
	}
	if id.TokenRole != 0 && (id.TokenRole < RoleReader || id.TokenRole > RoleAdmin) {
		return refuse("bad role")
	}
	return id, nil
}

// doAsParam is the doAs query parameter of r, in any case (Hadoop's
// filters take doAs, doas, DOAS...); "" without one.
func doAsParam(r *http.Request) string {
	for k, v := range r.URL.Query() {
		if strings.EqualFold(k, "doas") && len(v) > 0 {
			return v[0]
		}
	}
	return ""
}

// newAuthn checks Deps' authentication and authorisation settings.
func newAuthn(d Deps) (*authn, error) {
	a := &authn{mode: d.Auth, krb: d.Kerberos, certs: d.ClientCerts, groups: d.Groups, ACLs: d.ACLs,
		jobGroups: d.JobGroups, fwdKey: d.ForwardKey, wallNow: d.WallNow}
	if a.mode == "" {
		a.mode = AuthTokens
	}
	if a.wallNow == nil {
		a.wallNow = time.Now
	}
	switch a.mode {
	case AuthTokens, AuthBoth:
		t, err := newAuthenticator(d.Tokens)
		if err != nil {
			return nil, err
		}
		a.tokens = t
	case AuthKerberos:
		if len(d.Tokens) > 0 {
			return nil, fmt.Errorf("%w: Deps.Tokens: %d tokens with Auth %s (want tokens or both)", errConfig, len(d.Tokens), a.mode)
		}
	default:
		return nil, fmt.Errorf("%w: Deps.Auth %q (want tokens, kerberos or both)", errConfig, a.mode)
	}
	switch {
	case a.mode != AuthTokens && a.krb == nil:
		return nil, fmt.Errorf("%w: Deps.Kerberos is nil with Auth %s", errConfig, a.mode)
	case a.mode == AuthTokens:
		a.krb = nil
	}
	if a.krb != nil && a.krb.AuthToLocal == nil {
		return nil, fmt.Errorf("%w: Deps.Kerberos.AuthToLocal is nil", errConfig)
	}
	if len(a.fwdKey) > 0 && len(a.fwdKey) < 32 {
		return nil, fmt.Errorf("%w: Deps.ForwardKey is %d bytes, want at least 32", errConfig, len(a.fwdKey))
	}
	a.proxy = make([]ProxyRule, len(d.ProxyUsers))
	for i, r := range d.ProxyUsers {
		if r.Name == "" {
			r.Name = fmt.Sprintf("api.proxy_users[%d]", i)
		}
		if err := r.compile(); err != nil {
			return nil, fmt.Errorf("%w: %s: %v", errConfig, r.Name, err)
		}
		a.proxy[i] = r
	}
	return a, nil
}
