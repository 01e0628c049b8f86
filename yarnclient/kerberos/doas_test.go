package kerberos_test

import (
	"errors"
	"testing"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestKerberosDoAs: over SPNEGO, colocd (its principal's short name) acts
// for alice through doAs as the RM's proxy-user rules allow: the
// application is alice's; doAs=bob is refused with Hadoop's message,
// naming the principal.
func TestKerberosDoAs(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1", yarntest.RequireUser(), yarntest.ProxyUser("colocd", "alice"))
	c, _ := kclient(t, r.config(t, nil, nil), rm.URL())
	ctx := ctxT(t)
	submit := func(as string) (string, error) {
		na, err := c.NewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: na.ApplicationID}, yarnclient.As(as))
		return na.ApplicationID, err
	}
	id, err := submit("alice")
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(id); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}
	_, err = submit("bob")
	var re *yarnclient.RemoteError
	// The RM's filter names the caller by its full principal.
	if want := "User: " + r.client + " is not allowed to impersonate bob"; !errors.As(err, &re) || !errors.Is(err, yarnclient.ErrForbidden) || re.Message != want {
		t.Fatalf("doAs=bob: %v, want 403: %s", err, want)
	}
	if err := c.KillApp(ctx, id, yarnclient.As("alice")); err != nil {
		t.Errorf("kill as alice: %v", err)
	}
}

// TestKerberosDelegationTokens: over SPNEGO the RM issues an RM
// delegation token and a kerberized NameNode an HDFS one, each to the
// user colocd acts for, renewable by yarn; the tokens are the fakes' own.
func TestKerberosDelegationTokens(t *testing.T) {
	r := newRealm(t)
	spn := r.kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	kt := r.kdc.Keytab(t, spn)
	rm := yarntest.NewFakeRM(t, yarntest.SPNEGO(kt), yarntest.ProxyUser("colocd", "alice"))
	nn := yarntest.NewFakeWebHDFS(t, yarntest.HDFSSPNEGO(kt), yarntest.HDFSProxyUser("colocd", "alice"))
	c, _ := kclient(t, r.config(t, nil, nil), rm.URL())
	ctx := ctxT(t)

	own, err := c.RMDelegationToken(ctx, "yarn")
	if err != nil {
		t.Fatal(err)
	}
	if own.Owner != r.client || own.Renewer != "yarn" || own.Kind != yarnclient.KindRMDelegation {
		t.Errorf("own token: owner %s, renewer %s, kind %s; want %s, yarn, RM_DELEGATION_TOKEN", own.Owner, own.Renewer, own.Kind, r.client)
	}
	dt, err := c.RMDelegationToken(ctx, "yarn", yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	tok, err := yarnclient.ParseToken(dt.Token)
	if err != nil {
		t.Fatal(err)
	}
	id, err := yarnclient.ParseTokenIdentifier(tok.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if dt.Owner != "alice" || id.Owner != "alice" || id.RealUser != r.client || !rm.Genuine(tok) ||
		dt.ExpirationTime-id.IssueDate != yarntest.TokenRenewInterval.Milliseconds() || dt.MaxValidity != id.MaxDate {
		t.Errorf("alice's RM token: %+v, identifier %+v (genuine %v)", dt, id, rm.Genuine(tok))
	}
	if _, err := c.RMDelegationToken(ctx, "yarn", yarnclient.As("bob")); !errors.Is(err, yarnclient.ErrForbidden) {
		t.Errorf("RM token for bob: %v, want ErrForbidden", err)
	}

	ht, err := c.HDFSDelegationToken(ctx, yarnclient.HDFSTokenRequest{NameNodes: []string{nn.URL()}, Renewer: "yarn"}, yarnclient.As("alice"))
	if err != nil {
		t.Fatal(err)
	}
	hid, err := yarnclient.ParseTokenIdentifier(ht.Identifier)
	if err != nil {
		t.Fatal(err)
	}
	if !nn.Genuine(ht) || hid.Owner != "alice" || hid.RealUser != "colocd" || hid.Renewer != "yarn" || ht.Kind != yarnclient.KindHDFSDelegation {
		t.Errorf("alice's HDFS token %s, identifier %+v (genuine %v)", ht.Kind, hid, nn.Genuine(ht))
	}
	if got := len(nn.SPNEGO().Accepted()); got != 1 {
		t.Errorf("the NameNode accepted %d Kerberos requests, want 1", got)
	}
}
