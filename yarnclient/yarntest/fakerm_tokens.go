package yarntest

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"

	"github.com/colocd/colocd/yarnclient"
)

// ProxyUser lets real act for users (core-site.xml
// hadoop.proxyuser.<real>.users; "*" is anyone): a request of real with
// doAs=<one of users> (the parameter's name in any case) is served as that
// user; any other doAs is 403 AuthorizationException "User: <caller> is
// not allowed to impersonate <user>". Behind SPNEGO this is the RM's
// DelegationTokenAuthenticationFilter: real is the principal's short name,
// <caller> the full principal, and a doAs of the caller itself is checked
// too. With simple auth it is Hadoop 3.3's ProxyUserAuthenticationFilter:
// real and <caller> are user.name, and a doAs of the caller itself is no
// impersonation. Without ProxyUser every doAs is refused, as on an RM with
// no hadoop.proxyuser rule. Groups and hosts are not modelled (every host
// is allowed).
func ProxyUser(real string, users ...string) Option {
	return func(o *options) { o.proxy = o.proxy.add(real, users) }
}

// ACLs turns on yarn.acl.enable with yarn.admin.acl admins: killing an
// application (PUT state) is then for its owner and the admins only
// (MODIFY_APP; the submission's application-acls are not read). Another
// user gets the RM's 403 "Unauthorized attempt to kill appid <id> by
// remote user <user>".
func ACLs(admins ...string) Option {
	return func(o *options) { o.acls, o.aclAdmins = true, admins }
}

// impersonate applies the proxy-user rules to r's doAs: the request goes
// on as the user it acts for (user.name replaced, the real user kept in
// its context), or is answered 403 here.
func (f *FakeRM) impersonate(w http.ResponseWriter, r *http.Request) (*http.Request, bool) {
	q := r.URL.Query()
	name, user, ok := doAs(q)
	if !ok {
		return r, true
	}
	real, caller := q.Get("user.name"), principalOf(r)
	if real == "" {
		real = "dr.who"
	}
	if caller == "" {
		caller = real
		if user == real {
			q.Del(name)
			r.URL.RawQuery = q.Encode()
			return r, true
		}
	}
	if !f.opts.proxy.allows(real, user) {
		status, body := impersonationRefused(caller, user)
		f.writeJSON(w, status, body)
		return r, false
	}
	q.Del(name)
	q.Set("user.name", user)
	r = r.WithContext(context.WithValue(r.Context(), realUserKey{}, caller))
	r.URL.RawQuery = q.Encode()
	return r, true
}

// mayKill reports whether user may kill a (MODIFY_APP) under ACLs.
func (f *FakeRM) mayKill(user string, a *fakeApp) bool {
	return !f.opts.acls || user == a.app.User || slices.Contains(f.opts.aclAdmins, user)
}

// IssuedTokens lists the delegation tokens the fake issued, in order.
func (f *FakeRM) IssuedTokens() []issuedToken {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens.list()
}

// Credentials returns the tokens of an accepted submission's
// am-container-spec.credentials, decoded (as the RM decodes them, with
// Token.decodeFromUrlString), by alias; ok is false for an unknown app.
func (f *FakeRM) Credentials(appID string) (tokens map[string]yarnclient.Token, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c, ok := f.credentials[appID]
	if !ok {
		return nil, false
	}
	out := make(map[string]yarnclient.Token, len(c))
	for k, v := range c {
		out[k] = v
	}
	return out, true
}

// Genuine reports whether t is a token this RM issued (its password is
// the RM's for its identifier).
func (f *FakeRM) Genuine(t yarnclient.Token) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.tokens.genuine(t)
}

// decodeCredentials decodes a submission's credentials as
// RMWebServices.createCredentials does, answering its 400 itself when a
// token does not decode.
func (f *FakeRM) decodeCredentials(w http.ResponseWriter, sub yarnclient.SubmissionContext) (map[string]yarnclient.Token, bool) {
	creds, err := sub.Credentials()
	if err != nil {
		f.badRequest(w, "Could not parse credentials data; exception message = "+err.Error())
		return nil, false
	}
	out := make(map[string]yarnclient.Token, len(creds.Tokens))
	for alias, s := range creds.Tokens {
		t, err := yarnclient.ParseToken(s)
		if err != nil {
			f.badRequest(w, "Could not parse credentials data; exception message = "+alias+": "+err.Error())
			return nil, false
		}
		out[alias] = t
	}
	return out, true
}

// handleDelegationToken is POST /ws/v1/cluster/delegation-token: over
// Kerberos only (RMWebServices.createKerberosUserGroupInformation; else
// 403 with its message as text), a token of kind RM_DELEGATION_TOKEN, no
// service (as ClientRMService issues it), owned by the caller's principal
// or, with doAs, by the user it acts for, expiring TokenRenewInterval from
// now unless renewed and tokenMaxLifetime from now at the latest.
func (f *FakeRM) handleDelegationToken(w http.ResponseWriter, r *http.Request) {
	principal := principalOf(r)
	if principal == "" {
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("Delegation token operations can only be carried out on a Kerberos authenticated channel. Expected auth type is kerberos, got type simple"))
		return
	}
	var body struct {
		Renewer *string `json:"renewer"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.remoteException(w, http.StatusBadRequest, "WebApplicationException", "javax.ws.rs.WebApplicationException", "javax.xml.bind.UnmarshalException: "+err.Error())
		return
	}
	if body.Renewer == nil || *body.Renewer == "" {
		f.badRequest(w, "renewer must be set")
		return
	}
	id := yarnclient.TokenIdentifier{Owner: principal, Renewer: *body.Renewer}
	if real := realUserOf(r); real != "" { // the proxy UGI: the doAs user, and the real user's principal
		id.Owner, id.RealUser = r.URL.Query().Get("user.name"), real
	}
	f.mu.Lock()
	now := f.now()
	it := f.tokens.issue(id, now, yarnclient.KindRMDelegation, "")
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{
		"token": it.Encoded, "renewer": id.Renewer, "owner": it.Identifier.Owner, "kind": yarnclient.KindRMDelegation,
		"expiration-time": now.Add(TokenRenewInterval).UnixMilli(), "max-validity": it.Identifier.MaxDate,
	})
}
