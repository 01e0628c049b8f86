package yarntest

import (
	"crypto/hmac"
	"crypto/sha1"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// What the fakes share of Hadoop's security: delegation tokens (issued
// as AbstractDelegationTokenIdentifier writes them, with an HMAC-SHA1
// password as SecretManager.createPassword computes it) and proxy users
// (core-site.xml hadoop.proxyuser.<real user>.users).

// Token lifetimes: Hadoop's defaults for RM and HDFS delegation tokens
// (yarn.resourcemanager.delegation.token.renew-interval and max-lifetime,
// dfs.namenode.delegation.token.renew-interval and max-lifetime).
const (
	TokenRenewInterval = 24 * time.Hour
	tokenMaxLifetime   = 7 * 24 * time.Hour
)

// issuedToken is a delegation token a fake issued: the token, its
// identifier decoded, and the string the fake answered.
type issuedToken struct {
	Token      yarnclient.Token
	Identifier yarnclient.TokenIdentifier
	Encoded    string
}

// tokenIssuer issues tokens under one master key; the caller locks.
type tokenIssuer struct {
	key    []byte
	seq    int32
	issued []issuedToken
}

func newTokenIssuer(name string) tokenIssuer {
	return tokenIssuer{key: []byte("yarntest master key of " + name)}
}

func (ti *tokenIssuer) password(identifier []byte) []byte {
	m := hmac.New(sha1.New, ti.key)
	m.Write(identifier)
	return m.Sum(nil)
}

// issue makes a token of kind for service from the identifier's owner,
// renewer and real user, issued at now.
func (ti *tokenIssuer) issue(id yarnclient.TokenIdentifier, now time.Time, kind, service string) issuedToken {
	ti.seq++
	id.IssueDate = now.UnixMilli()
	id.MaxDate = now.Add(tokenMaxLifetime).UnixMilli()
	id.SequenceNumber = ti.seq
	id.MasterKeyID = 1
	b := id.Marshal()
	t := yarnclient.Token{Identifier: b, Password: ti.password(b), Kind: kind, Service: service}
	it := issuedToken{Token: t, Identifier: id, Encoded: t.Encode()}
	ti.issued = append(ti.issued, it)
	return it
}

func (ti *tokenIssuer) list() []issuedToken { return append([]issuedToken(nil), ti.issued...) }

// genuine reports whether t's password is the one this issuer gives its
// identifier.
func (ti *tokenIssuer) genuine(t yarnclient.Token) bool {
	return hmac.Equal(t.Password, ti.password(t.Identifier))
}

// proxyUsers is hadoop.proxyuser.<real>.users for each real user ("*":
// anyone). Groups are not modelled; hosts are "*".
type proxyUsers map[string][]string

func (p proxyUsers) add(real string, users []string) proxyUsers {
	if p == nil {
		p = proxyUsers{}
	}
	p[real] = append(p[real], users...)
	return p
}

// allows reports whether real (a short name) may act for user:
// DefaultImpersonationProvider's users rule, which also decides a doAs of
// real itself.
func (p proxyUsers) allows(real, user string) bool {
	for _, u := range p[real] {
		if u == "*" || u == user {
			return true
		}
	}
	return false
}

// doAs finds the proxy-user parameter in q, in any case (the RM's filter
// reads "doAs" case-insensitively, WebHDFS lower-cases every parameter).
func doAs(q url.Values) (name, user string, ok bool) {
	for k, v := range q {
		if strings.EqualFold(k, "doAs") && len(v) > 0 {
			return k, v[0], true
		}
	}
	return "", "", false
}

// impersonationRefused is the AuthorizationException of
// DefaultImpersonationProvider.authorize, as Hadoop's
// HttpExceptionUtils.createServletExceptionResponse writes it: 403 and a
// RemoteException.
func impersonationRefused(real, user string) (int, map[string]any) {
	return http.StatusForbidden, map[string]any{"RemoteException": map[string]string{
		"message":       "User: " + real + " is not allowed to impersonate " + user,
		"exception":     "AuthorizationException",
		"javaClassName": "org.apache.hadoop.security.authorize.AuthorizationException",
	}}
}

// Context keys: the Kerberos principal the SPNEGO gate authenticated,
// and the real user of a request that acts for another (doAs).
type (
	principalKey struct{}
	realUserKey  struct{}
)

// principalOf is the request's Kerberos principal ("" without SPNEGO).
func principalOf(r *http.Request) string {
	p, _ := r.Context().Value(principalKey{}).(string)
	return p
}

// realUserOf is who a doAs request came from ("" for none).
func realUserOf(r *http.Request) string {
	u, _ := r.Context().Value(realUserKey{}).(string)
	return u
}
