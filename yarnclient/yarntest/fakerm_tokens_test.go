package yarntest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// remoteException decodes a RemoteException body.
func remoteException(t *testing.T, body []byte) map[string]string {
	t.Helper()
	var env struct {
		RemoteException map[string]string `json:"RemoteException"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.RemoteException == nil {
		t.Fatalf("not a RemoteException: %v: %s", err, body)
	}
	return env.RemoteException
}

// newApp reserves an application id.
func newApp(t *testing.T, rm *yarntest.FakeRM) string {
	t.Helper()
	a := do(t, http.MethodPost, rm.URL()+yarnclient.PathNewApplication+"?user.name=colocd", "")
	var na yarnclient.NewApplication
	if err := json.Unmarshal(a.body, &na); err != nil {
		t.Fatal(err)
	}
	return na.ApplicationID
}

// TestFakeRMProxyUsers: with simple auth (user.name), doAs (any case) is
// decided by hadoop.proxyuser.<user.name>.users: an allowed user owns the
// application; another is 403 with the AuthorizationException of
// HttpExceptionUtils, before the submission is seen.
func TestFakeRMProxyUsers(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.ProxyUser("colocd", "alice", "carol"))
	submit := func(query string) answer {
		id := newApp(t, rm)
		return do(t, http.MethodPost, rm.URL()+yarnclient.PathApps+"?"+query, `{"application-id":"`+id+`"}`)
	}
	for _, q := range []string{"user.name=colocd&doAs=alice", "user.name=colocd&doas=carol", "user.name=dave&doAs=dave"} {
		if a := submit(q); a.status != http.StatusAccepted {
			t.Errorf("%s: %d %s, want 202", q, a.status, a.body)
		}
	}
	var users []string
	for _, a := range rm.Apps() {
		users = append(users, a.User)
	}
	if diff := cmp.Diff([]string{"alice", "carol", "dave"}, users); diff != "" {
		t.Errorf("application users (-want +got):\n%s", diff)
	}
	for q, real := range map[string]string{"user.name=colocd&doAs=bob": "colocd", "user.name=alice&DOAS=carol": "alice", "doAs=alice": "dr.who"} {
		a := submit(q)
		want := map[string]string{"exception": "AuthorizationException",
			"javaClassName": "org.apache.hadoop.security.authorize.AuthorizationException",
			"message":       "User: " + real + " is not allowed to impersonate " + strings.ToLower(q[strings.LastIndex(q, "=")+1:])}
		if a.status != http.StatusForbidden {
			t.Errorf("%s: %d, want 403", q, a.status)
			continue
		}
		if diff := cmp.Diff(want, remoteException(t, a.body)); diff != "" {
			t.Errorf("%s: RemoteException (-want +got):\n%s", q, diff)
		}
	}
	if got := rm.SubmitCalls(); got != 3 {
		t.Errorf("SubmitCalls = %d, want 3 (the refused never reach the submission)", got)
	}
}

// TestFakeRMDelegationTokenSimple: the Cluster Delegation Tokens API
// refuses a simple-auth channel with RMWebServices' FORBIDDEN text.
func TestFakeRMDelegationTokenSimple(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	a := do(t, http.MethodPost, rm.URL()+yarnclient.PathDelegationToken+"?user.name=colocd", `{"renewer":"yarn"}`)
	want := "Delegation token operations can only be carried out on a Kerberos authenticated channel. Expected auth type is kerberos, got type simple"
	if a.status != http.StatusForbidden || string(a.body) != want {
		t.Errorf("%d %q, want 403 %q", a.status, a.body, want)
	}
}

// TestFakeRMCredentials: the submitted credentials are decoded as the RM
// decodes them (Token.decodeFromUrlString); one that does not decode is
// the RM's 400 "Could not parse credentials data".
func TestFakeRMCredentials(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	tok := yarnclient.Token{Identifier: []byte("id"), Password: []byte("pw"), Kind: "HDFS_DELEGATION_TOKEN", Service: "ha-hdfs:ns1"}
	id := newApp(t, rm)
	body := `{"application-id":"` + id + `","cancel-tokens-when-complete":true,"am-container-spec":{"credentials":{"tokens":{"entry":{"key":"ha-hdfs:ns1","value":"` +
		tok.Encode() + `"}},"secrets":{"entry":[{"key":"s","value":"c2VjcmV0MQ"}]}}}}`
	if a := do(t, http.MethodPost, rm.URL()+yarnclient.PathApps+"?user.name=alice", body); a.status != http.StatusAccepted {
		t.Fatalf("%d %s, want 202", a.status, a.body)
	}
	got, ok := rm.Credentials(id)
	if diff := cmp.Diff(map[string]yarnclient.Token{"ha-hdfs:ns1": tok}, got); !ok || diff != "" {
		t.Errorf("credentials (-want +got):\n%s", diff)
	}
	if subs := rm.Submissions(); len(subs) != 1 || subs[0].CancelTokensWhenComplete == nil || !*subs[0].CancelTokensWhenComplete {
		t.Errorf("cancel-tokens-when-complete not recorded: %+v", subs)
	}
	id = newApp(t, rm)
	bad := `{"application-id":"` + id + `","am-container-spec":{"credentials":{"tokens":{"entry":[{"key":"k","value":"!!"}]}}}}`
	a := do(t, http.MethodPost, rm.URL()+yarnclient.PathApps+"?user.name=alice", bad)
	if a.status != http.StatusBadRequest || !strings.Contains(remoteException(t, a.body)["message"], "Could not parse credentials data") {
		t.Errorf("a token that does not decode: %d %s, want 400 Could not parse credentials data", a.status, a.body)
	}
	if _, ok := rm.App(id); ok {
		t.Error("the refused submission made an application")
	}
}

// TestFakeWebHDFS: GETDELEGATIONTOKEN answers the documented Token JSON
// object with a token of the asked kind and service, owned by the doas
// user; parameter names in any case; security off is {"Token":null}; a
// standby, a refused doas and another op are WebHDFS RemoteExceptions.
func TestFakeWebHDFS(t *testing.T) {
	nn := yarntest.NewFakeWebHDFS(t, yarntest.HDFSAlwaysUseDelegationTokens(), yarntest.HDFSProxyUser("colocd", "alice"))
	get := func(base, query string) answer {
		return do(t, http.MethodGet, base+yarnclient.PathWebHDFS+"?"+query, "")
	}

	a := get(nn.URL(), "OP=getDelegationToken&user.name=colocd&Renewer=yarn&kind=HDFS_DELEGATION_TOKEN&service=ha-hdfs:ns1&doas=alice")
	if a.status != http.StatusOK {
		t.Fatalf("%d %s", a.status, a.body)
	}
	var env struct {
		Token struct {
			URLString string `json:"urlString"`
		} `json:"Token"`
	}
	if err := json.Unmarshal(a.body, &env); err != nil {
		t.Fatal(err)
	}
	issued := nn.Issued()
	if len(issued) != 1 || issued[0].Encoded != env.Token.URLString {
		t.Fatalf("answered %q, issued %+v", env.Token.URLString, issued)
	}
	want := yarnclient.TokenIdentifier{Owner: "alice", Renewer: "yarn", RealUser: "colocd"}
	got := issued[0].Identifier
	if got.Owner != want.Owner || got.Renewer != want.Renewer || got.RealUser != want.RealUser ||
		issued[0].Token.Kind != "HDFS_DELEGATION_TOKEN" || issued[0].Token.Service != "ha-hdfs:ns1" ||
		got.MaxDate-got.IssueDate != yarntest.TokenMaxLifetime.Milliseconds() {
		t.Errorf("issued %+v", issued[0])
	}
	if a := get(nn.URL(), "op=GETDELEGATIONTOKEN&user.name=colocd"); a.status != http.StatusOK || nn.Issued()[1].Token.Kind != yarnclient.KindWebHDFSDelegation ||
		nn.Issued()[1].Token.Service != "127.0.0.1:8020" || nn.Issued()[1].Identifier.Renewer != "colocd" {
		t.Errorf("defaults: %d, issued %+v; want WEBHDFS delegation for 127.0.0.1:8020 renewable by colocd", a.status, nn.Issued()[1])
	}

	exceptions := map[string]struct {
		status    int
		exception string
	}{
		"op=GETDELEGATIONTOKEN&user.name=colocd&doas=bob": {http.StatusForbidden, "AuthorizationException"},
		"op=LISTSTATUS&user.name=colocd":                  {http.StatusBadRequest, "UnsupportedOperationException"},
	}
	for q, w := range exceptions {
		a := get(nn.URL(), q)
		if a.status != w.status || remoteException(t, a.body)["exception"] != w.exception {
			t.Errorf("%s: %d %s, want %d %s", q, a.status, a.body, w.status, w.exception)
		}
	}
	nn.SetStandby(true)
	a = get(nn.URL(), "op=GETDELEGATIONTOKEN&user.name=colocd")
	if re := remoteException(t, a.body); a.status != http.StatusForbidden || re["javaClassName"] != "org.apache.hadoop.ipc.StandbyException" {
		t.Errorf("standby: %d %s, want 403 StandbyException", a.status, a.body)
	}

	off := yarntest.NewFakeWebHDFS(t)
	if a := get(off.URL(), "op=GETDELEGATIONTOKEN&user.name=colocd"); a.status != http.StatusOK || string(a.body) != `{"Token":null}` {
		t.Errorf("security off: %d %s, want 200 {\"Token\":null}", a.status, a.body)
	}
	if got := nn.Requests(); got != 4 {
		t.Errorf("Requests = %d, want 4 GETDELEGATIONTOKEN (LISTSTATUS is not one)", got)
	}
}

// TestFakeRMProxyUsersSPNEGO: behind SPNEGO the rules are the
// principal's short name's, whatever user.name says, and a refusal names
// the full principal, as the RM's DelegationTokenAuthenticationFilter
// does; a token over Kerberos is the fake's own, its real user the
// principal.
func TestFakeRMProxyUsersSPNEGO(t *testing.T) {
	kdc := kdctest.Start(t)
	client := kdc.AddPrincipal(t, "colocd/admit1.colocd.test")
	spn := kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	rm := yarntest.NewFakeRM(t, yarntest.SPNEGO(kdc.Keytab(t, spn)), yarntest.ProxyUser("colocd", "alice"))
	auth, err := kerberos.New(kerberos.Config{Principal: client, Keytab: kdc.Keytab(t, client), Krb5Conf: kdc.Krb5Conf()})
	if err != nil {
		t.Fatal(err)
	}
	post := func(path string, q url.Values, body string) answer {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, rm.URL()+path+"?"+q.Encode(), strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		if err := auth.Authenticate(req); err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		return answer{status: resp.StatusCode, body: b}
	}
	for _, user := range []string{"bob", "colocd"} { // DelegationTokenAuthenticationFilter checks a doAs of oneself too
		a := post(yarnclient.PathDelegationToken, url.Values{"user.name": {"alice"}, "doAs": {user}}, `{"renewer":"yarn"}`)
		if want := "User: " + client + " is not allowed to impersonate " + user; a.status != http.StatusForbidden || remoteException(t, a.body)["message"] != want {
			t.Errorf("doAs=%s over SPNEGO: %d %s, want 403 %q", user, a.status, a.body, want)
		}
	}
	a := post(yarnclient.PathDelegationToken, url.Values{"doAs": {"alice"}}, `{"renewer":"yarn"}`)
	var dt yarnclient.DelegationToken
	if err := json.Unmarshal(a.body, &dt); err != nil || a.status != http.StatusOK {
		t.Fatalf("doAs=alice over SPNEGO: %d %s", a.status, a.body)
	}
	tok, err := yarnclient.ParseToken(dt.Token)
	if err != nil || !rm.Genuine(tok) || dt.Owner != "alice" || dt.Renewer != "yarn" || dt.Kind != yarnclient.KindRMDelegation {
		t.Errorf("token %+v (%v, genuine %v)", dt, err, rm.Genuine(tok))
	}
	if issued := rm.IssuedTokens(); len(issued) != 1 || issued[0].Identifier.RealUser != client || issued[0].Encoded != dt.Token {
		t.Errorf("issued %+v", issued)
	}
}
