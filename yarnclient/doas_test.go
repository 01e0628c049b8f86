package yarnclient_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// filterAuth stands in for an authenticating filter that knows the
// caller as colocd (as SPNEGO would): any Auth but SimpleAuth makes As
// send doAs.
var filterAuth = yarnclient.AuthFunc(func(req *http.Request) error {
	q := req.URL.Query()
	q.Set("user.name", "colocd")
	req.URL.RawQuery = q.Encode()
	return nil
})

// submitAs reserves an id and submits an application under it with opts.
func submitAs(t *testing.T, c *yarnclient.Client, opts ...yarnclient.CallOption) (string, error) {
	t.Helper()
	na, err := c.NewApplication(ctxT(t))
	if err != nil {
		t.Fatal(err)
	}
	_, err = c.SubmitApp(ctxT(t), yarnclient.SubmissionContext{ApplicationID: na.ApplicationID,
		AMContainerSpec: []byte(`{"commands":{"command":"true"}}`)}, opts...)
	return na.ApplicationID, err
}

// TestAsSimpleAuth: with simple auth, As is user.name: the application is
// the user's, whatever the proxy-user rules (the RM trusts user.name).
func TestAsSimpleAuth(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.RequireUser())
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = "colocd" }, rm.URL())
	id, err := submitAs(t, c, yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(id); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}
	if _, err := c.SubmitApp(ctxT(t), yarnclient.SubmissionContext{ApplicationID: id}, yarnclient.As(" alice")); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("As(%q): %v, want ErrInvalid", " alice", err)
	}
}

// TestAsDoAs: with an authenticating Auth, As is doAs, which the RM's
// proxy-user rules decide: an allowed user owns the application; another
// is refused with Hadoop's AuthorizationException before the submission
// reaches the RM.
func TestAsDoAs(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.ProxyUser("colocd", "alice"))
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User, cfg.Auth = "", filterAuth }, rm.URL())
	id, err := submitAs(t, c, yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(id); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}
	_, err = submitAs(t, c, yarnclient.As("bob"))
	var re *yarnclient.RemoteError
	if !errors.As(err, &re) || !errors.Is(err, yarnclient.ErrForbidden) || re.Exception != "AuthorizationException" ||
		re.Message != "User: colocd is not allowed to impersonate bob" {
		t.Fatalf("doAs=bob: %v, want 403 AuthorizationException: User: colocd is not allowed to impersonate bob", err)
	}
	if got := rm.SubmitCalls(); got != 1 {
		t.Errorf("SubmitCalls = %d, want 1: the refused doAs never reaches the submission", got)
	}
	if _, err := submitAs(t, c); err != nil {
		t.Errorf("as itself: %v", err)
	}
}

// TestKillAsOwner: with ACLs on, colocd's own user may not kill a user's
// application; as its owner it may.
func TestKillAsOwner(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.ProxyUser("colocd", "*"), yarntest.ACLs("yarn-admin"))
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User, cfg.Auth = "", filterAuth }, rm.URL())
	id, err := submitAs(t, c, yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	err = c.KillApp(ctxT(t), id)
	var re *yarnclient.RemoteError
	if !errors.As(err, &re) || !errors.Is(err, yarnclient.ErrForbidden) || !strings.Contains(re.Message, "Unauthorized attempt to kill appid "+id+" by remote user colocd") {
		t.Fatalf("kill as colocd: %v, want 403 Unauthorized attempt to kill", err)
	}
	if err := c.KillApp(ctxT(t), id, yarnclient.As("alice")); err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(id); a.State != "KILLED" {
		t.Errorf("state %s, want KILLED", a.State)
	}
}

// TestRMDelegationTokenNeedsKerberos: over simple auth the RM refuses
// delegation tokens with its documented FORBIDDEN.
func TestRMDelegationTokenNeedsKerberos(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	c, _ := newClient(t, nil, rm.URL())
	_, err := c.RMDelegationToken(ctxT(t), "yarn")
	var re *yarnclient.RemoteError
	if !errors.As(err, &re) || !errors.Is(err, yarnclient.ErrForbidden) || !strings.Contains(re.Message, "Kerberos authenticated channel") {
		t.Fatalf("RMDelegationToken over simple auth: %v, want 403 naming the Kerberos channel", err)
	}
	if _, err := c.RMDelegationToken(ctxT(t), " "); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("no renewer: %v, want ErrInvalid", err)
	}
}

// TestHDFSDelegationToken: the token comes from the first NameNode that
// is not a standby, of the kind and service asked for, for the user of
// As (doas), renewable by the renewer.
func TestHDFSDelegationToken(t *testing.T) {
	standby := yarntest.NewFakeWebHDFS(t, yarntest.HDFSAlwaysUseDelegationTokens())
	standby.SetStandby(true)
	active := yarntest.NewFakeWebHDFS(t, yarntest.HDFSAlwaysUseDelegationTokens(), yarntest.HDFSProxyUser("colocd", "alice"))
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User, cfg.Auth = "", filterAuth }, "http://127.0.0.1:1")
	req := yarnclient.HDFSTokenRequest{NameNodes: []string{standby.URL(), active.URL()}, Renewer: "yarn", Service: "ha-hdfs:ns1"}

	tok, err := c.HDFSDelegationToken(ctxT(t), req, yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	issued := active.Issued()
	if len(issued) != 1 || standby.Requests() != 1 || len(standby.Issued()) != 0 {
		t.Fatalf("issued %d by the active, %d requests to the standby; want 1 and 1", len(issued), standby.Requests())
	}
	if diff := cmp.Diff(issued[0].Token, tok); diff != "" {
		t.Errorf("token (-issued +got):\n%s", diff)
	}
	id := issued[0].Identifier
	if tok.Kind != yarnclient.KindHDFSDelegation || tok.Service != "ha-hdfs:ns1" || id.Owner != "alice" || id.RealUser != "colocd" || id.Renewer != "yarn" {
		t.Errorf("token %s for %s, owner %s, real user %s, renewer %s; want HDFS_DELEGATION_TOKEN, ha-hdfs:ns1, alice, colocd, yarn",
			tok.Kind, tok.Service, id.Owner, id.RealUser, id.Renewer)
	}

	_, err = c.HDFSDelegationToken(ctxT(t), req, yarnclient.As("bob"))
	var re *yarnclient.RemoteError
	if !errors.As(err, &re) || re.StatusCode != http.StatusForbidden || re.Message != "User: colocd is not allowed to impersonate bob" {
		t.Errorf("doas=bob: %v, want 403 AuthorizationException", err)
	}

	active.SetStandby(true)
	_, err = c.HDFSDelegationToken(ctxT(t), req)
	if !errors.Is(err, yarnclient.ErrUnavailable) || errors.As(err, &re) || !strings.Contains(err.Error(), "StandbyException") {
		t.Errorf("every NameNode standby: %v, want ErrUnavailable naming StandbyException, not a RemoteError", err)
	}

	off := yarntest.NewFakeWebHDFS(t)
	if _, err := c.HDFSDelegationToken(ctxT(t), yarnclient.HDFSTokenRequest{NameNodes: []string{off.URL()}, Renewer: "yarn"}); !errors.Is(err, yarnclient.ErrNoToken) {
		t.Errorf("security off: %v, want ErrNoToken", err)
	}
}

// TestHDFSDelegationTokenFailover: an unreachable NameNode passes the
// request to the next; the NameNode's own kind and service stay when none
// is asked for but the kind colocd needs.
func TestHDFSDelegationTokenFailover(t *testing.T) {
	gone := deadaddr.URL(t)
	nn := yarntest.NewFakeWebHDFS(t, yarntest.HDFSAlwaysUseDelegationTokens(), yarntest.HDFSRPCAddress("10.0.0.7:8020"))
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.Retries = -1 }, "http://127.0.0.1:1")
	tok, err := c.HDFSDelegationToken(ctxT(t), yarnclient.HDFSTokenRequest{NameNodes: []string{gone, nn.URL()}, Renewer: "yarn"})
	if err != nil {
		t.Fatal(err)
	}
	if tok.Kind != yarnclient.KindHDFSDelegation || tok.Service != "10.0.0.7:8020" || !nn.Genuine(tok) {
		t.Errorf("token %s for %q (genuine: %v), want HDFS_DELEGATION_TOKEN for 10.0.0.7:8020", tok.Kind, tok.Service, nn.Genuine(tok))
	}
	_, err = c.HDFSDelegationToken(ctxT(t), yarnclient.HDFSTokenRequest{NameNodes: []string{gone}, Renewer: "yarn"})
	if !errors.Is(err, yarnclient.ErrUnavailable) {
		t.Errorf("the one NameNode gone: %v, want ErrUnavailable", err)
	}
}

// TestHDFSDelegationTokenGarbage: an answer whose token does not decode
// is a DecodeError that does not show the body (it may hold a token).
func TestHDFSDelegationTokenGarbage(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		_, _ = w.Write([]byte(`{"Token":{"urlString":"s3cr3t-but-not-a-token!"}}`))
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, nil, "http://127.0.0.1:1")
	_, err := c.HDFSDelegationToken(ctxT(t), yarnclient.HDFSTokenRequest{NameNodes: []string{srv.URL}, Renewer: "yarn"})
	if !errors.Is(err, yarnclient.ErrDecode) || strings.Contains(err.Error(), "s3cr3t") {
		t.Errorf("err = %v, want ErrDecode without the body", err)
	}
}
