package yarncluster_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// jobSubmit is a job's submit spec: an AM command and a secret of the
// submitter's own.
const jobSubmit = `{"am-container-spec":{"commands":{"command":"run 1><LOG_DIR>/out"},"credentials":{"secrets":{"entry":{"key":"s","value":"c2VjcmV0MQ"}}}}}`

// newCluster validates cfg and adapts a client of it (no retries).
func newCluster(t *testing.T, cfg yarncluster.Config) *yarncluster.Cluster {
	t.Helper()
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cc := cfg.ClientConfig(nil)
	cc.Retries = -1
	c, err := yarnclient.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return yarncluster.New(c, cfg, nil)
}

// simpleConfig is the yarn section of colocd with simple auth as colocd,
// submitting as the job's user.
func simpleConfig(rmURL string) yarncluster.Config {
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User, cfg.Timeout, cfg.SubmitAs = []string{rmURL}, "colocd", 10*time.Second, yarncluster.SubmitAsJobUser
	return cfg
}

// admit reserves an id and submits job id of user under it, as the
// engine's admission does.
func admit(t *testing.T, y *yarncluster.Cluster, id, user string) (string, error) {
	t.Helper()
	app, err := y.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return app, y.Submit(context.Background(), app, queue.Job{ID: id, Kind: "etl", User: user, Submit: []byte(jobSubmit)})
}

// TestSubmitAsJobUserSimple: with simple auth the application is the
// job's user's (user.name); a job without a user is refused at enqueue;
// Kill acts as the owner, which the RM's ACLs let kill it.
func TestSubmitAsJobUserSimple(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.RequireUser(), yarntest.ACLs("yarn-admin"))
	y := newCluster(t, simpleConfig(rm.URL()))
	app, err := admit(t, y, "J1", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(app); a.User != "alice" {
		t.Errorf("application user %q, want the submitter alice", a.User)
	}
	j := queue.Job{Kind: "etl", Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}, Submit: []byte(jobSubmit)}
	var fe *queue.FieldError
	if err := y.Prepare(&j); !errors.As(err, &fe) || fe.Field != "user" {
		t.Errorf("Prepare of a job without a user: %v, want a FieldError for user", err)
	}
	if err := y.Kill(context.Background(), app); err != nil {
		t.Fatalf("kill as the owner: %v", err)
	}
	if a, _ := rm.App(app); a.State != "KILLED" {
		t.Errorf("state %s, want KILLED", a.State)
	}
}

// kerberosCluster is a realm with colocd's principal, a kerberized fake
// RM letting colocd act for alice, and the yarn section of colocd with
// yarn.auth kerberos submitting as the job's user.
func kerberosCluster(t *testing.T, opts ...yarntest.Option) (*kdctest.KDC, *yarntest.FakeRM, yarncluster.Config) {
	t.Helper()
	kdc := kdctest.Start(t)
	client := kdc.AddPrincipal(t, "colocd/admit1.colocd.test")
	spn := kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	opts = append(opts, yarntest.SPNEGO(kdc.Keytab(t, spn)), yarntest.ProxyUser("colocd", "alice"), yarntest.ACLs())
	rm := yarntest.NewFakeRM(t, opts...)
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.Timeout, cfg.SubmitAs, cfg.Auth = []string{rm.URL()}, 10*time.Second, yarncluster.SubmitAsJobUser, yarncluster.AuthKerberos
	cfg.Kerberos.Principal, cfg.Kerberos.Keytab, cfg.Kerberos.Krb5Conf = client, kdc.Keytab(t, client), kdc.Krb5Conf()
	return kdc, rm, cfg
}

// TestSubmitAsJobUserKerberos: over Kerberos the submission carries
// doAs: alice's job lands under alice; bob's, whom the proxy-user rules do
// not cover, is a definite rejection naming bob, colocd and the rules,
// and no application exists for it. Kill acts as alice.
func TestSubmitAsJobUserKerberos(t *testing.T) {
	_, rm, cfg := kerberosCluster(t)
	y := newCluster(t, cfg)
	app, err := admit(t, y, "J1", "alice")
	if err != nil {
		t.Fatal(err)
	}
	if a, _ := rm.App(app); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}
	refused, err := admit(t, y, "J2", "bob")
	if !errors.Is(err, cluster.ErrRejected) {
		t.Fatalf("bob's job: %v, want cluster.ErrRejected", err)
	}
	for _, want := range []string{"do not let colocd act for bob", "hadoop.proxyuser.colocd.users", "User: " + cfg.Kerberos.Principal + " is not allowed to impersonate bob"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("rejection %q does not say %q", err, want)
		}
	}
	t.Logf("rejection: %v", err)
	if _, ok := rm.App(refused); ok || rm.SubmitCalls() != 1 {
		t.Errorf("bob's application exists: %v; submissions %d, want 1", ok, rm.SubmitCalls())
	}
	// colocd's own job goes without doAs, which would need a rule too.
	own, err := admit(t, y, "J3", "colocd")
	if a, _ := rm.App(own); err != nil || a.User != "colocd" {
		t.Errorf("colocd's own job: %v, application user %q", err, a.User)
	}
	if err := y.Kill(context.Background(), app); err != nil {
		t.Fatalf("kill as alice: %v", err)
	}
}

// TestTokensAtAdmission: the HDFS token is fetched when the job is
// submitted (admitted), not when it is queued: the NameNode sees no
// request through Prepare and Reserve, and the token it issues is dated
// at Submit, hours later. It reaches the RM in the am-container-spec's
// credentials next to the submitter's secret, decoded by the RM as the
// very token the NameNode issued, for the job's user, renewable by yarn,
// with cancel-tokens-when-complete set.
func TestTokensAtAdmission(t *testing.T) {
	clk := queuetest.NewClock(time.Date(2026, 3, 2, 8, 0, 0, 0, time.UTC))
	nn := yarntest.NewFakeWebHDFS(t, yarntest.HDFSAlwaysUseDelegationTokens(), yarntest.HDFSClock(clk.Now))
	rm := yarntest.NewFakeRM(t, yarntest.RequireUser())
	cfg := simpleConfig(rm.URL())
	cfg.Tokens.HDFS = []yarncluster.HDFSTokens{{URLs: []string{nn.URL()}, Service: "ha-hdfs:ns1"}}
	y := newCluster(t, cfg)

	j := queue.Job{ID: "J1", Kind: "etl", User: "alice", Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}, Submit: []byte(jobSubmit)}
	if err := y.Prepare(&j); err != nil {
		t.Fatal(err)
	}
	app, err := y.Reserve(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if n := nn.Requests(); n != 0 {
		t.Fatalf("the NameNode got %d requests before the submission, want 0", n)
	}
	clk.Advance(5 * time.Hour) // the job waits in the queue
	if err := y.Submit(context.Background(), app, j); err != nil {
		t.Fatal(err)
	}
	issued := nn.Issued()
	if nn.Requests() != 1 || len(issued) != 1 {
		t.Fatalf("NameNode: %d requests, %d tokens; want 1 and 1", nn.Requests(), len(issued))
	}
	id := issued[0].Identifier
	if want := clk.Now().UnixMilli(); id.IssueDate != want || id.Owner != "alice" || id.Renewer != "yarn" {
		t.Errorf("token issued at %d to %s renewable by %s; want at %d (Submit) to alice by yarn", id.IssueDate, id.Owner, id.Renewer, want)
	}
	creds, ok := rm.Credentials(app)
	want := map[string]yarnclient.Token{"ha-hdfs:ns1": issued[0].Token}
	if diff := cmp.Diff(want, creds); !ok || diff != "" {
		t.Errorf("credentials the RM decoded (-issued +got):\n%s", diff)
	}
	if tok := creds["ha-hdfs:ns1"]; tok.Kind != yarnclient.KindHDFSDelegation || !nn.Genuine(tok) {
		t.Errorf("token kind %s, genuine %v; want HDFS_DELEGATION_TOKEN, true", tok.Kind, nn.Genuine(tok))
	}
	sub := rm.Submissions()[0]
	all, err := sub.Credentials()
	if err != nil {
		t.Fatal(err)
	}
	if sub.CancelTokensWhenComplete == nil || !*sub.CancelTokensWhenComplete || all.Secrets["s"] != "c2VjcmV0MQ" ||
		!strings.Contains(string(sub.AMContainerSpec), "run 1><LOG_DIR>/out") {
		t.Errorf("submission: cancel-tokens-when-complete %v, secrets %v, am-container-spec %s", sub.CancelTokensWhenComplete, all.Secrets, sub.AMContainerSpec)
	}
	if a, _ := rm.App(app); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}
}

// TestTokenFetchFailures: a NameNode that refuses the job's user rejects
// the job; one that fails, is gone or is a standby leaves the outcome
// ambiguous (the engine submits again); 401 is colocd's own
// authentication, not the job's. Nothing is submitted in any case.
func TestTokenFetchFailures(t *testing.T) {
	answer := func(status int, exception string) string {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(status)
			_, _ = w.Write([]byte(`{"RemoteException":{"exception":"` + exception + `","javaClassName":"org.apache.hadoop.` + exception + `","message":"no"}}`))
		}))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	standby := yarntest.NewFakeWebHDFS(t)
	standby.SetStandby(true)
	for _, tc := range []struct {
		name     string
		url      string
		rejected bool
	}{
		{"access denied", answer(http.StatusForbidden, "AccessControlException"), true},
		{"bad request", answer(http.StatusBadRequest, "IllegalArgumentException"), true},
		{"unauthorized", answer(http.StatusUnauthorized, "SecurityException"), false},
		{"server error", answer(http.StatusInternalServerError, "RuntimeException"), false},
		{"gone", deadaddr.URL(t), false},
		{"standby", standby.URL(), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rm := yarntest.NewFakeRM(t)
			cfg := simpleConfig(rm.URL())
			cfg.Tokens.HDFS = []yarncluster.HDFSTokens{{URLs: []string{tc.url}}}
			_, err := admit(t, newCluster(t, cfg), "J1", "alice")
			if err == nil || errors.Is(err, cluster.ErrRejected) != tc.rejected {
				t.Errorf("err = %v, rejected %v; want rejected %v", err, errors.Is(err, cluster.ErrRejected), tc.rejected)
			}
			if !strings.Contains(errText(err), "HDFS delegation token") || !strings.Contains(errText(err), "for alice") {
				t.Errorf("err = %v, want it to name the HDFS token and alice", err)
			}
			if n := rm.SubmitCalls(); n != 0 {
				t.Errorf("%d submissions, want none", n)
			}
		})
	}
}

func errText(err error) string {
	if err == nil {
		return ""
	}
	return err.Error()
}

// TestTokensKerberos: with yarn.auth kerberos, an RM token (labelled with
// yarn.tokens.rm_service) and an HDFS token of a kerberized NameNode, both
// alice's, reach the RM as issued; a token fetch for bob is refused by the
// proxy-user rules and rejects the job before anything is submitted.
func TestTokensKerberos(t *testing.T) {
	kdc, rm, cfg := kerberosCluster(t)
	nn := yarntest.NewFakeWebHDFS(t, yarntest.HDFSSPNEGO(kdc.Keytab(t, "HTTP/127.0.0.1")), yarntest.HDFSProxyUser("colocd", "alice"),
		yarntest.HDFSRPCAddress("10.0.0.7:8020"))
	cfg.Tokens = yarncluster.TokensConfig{RM: true, RMService: "10.0.0.1:8032,10.0.0.2:8032", Renewer: "yarn",
		HDFS: []yarncluster.HDFSTokens{{URLs: []string{nn.URL()}}}}
	y := newCluster(t, cfg)
	app, err := admit(t, y, "J1", "alice")
	if err != nil {
		t.Fatal(err)
	}
	creds, _ := rm.Credentials(app)
	rmTok, hdfsTok := creds["10.0.0.1:8032,10.0.0.2:8032"], creds["10.0.0.7:8020"]
	if len(creds) != 2 || !rm.Genuine(rmTok) || rmTok.Kind != yarnclient.KindRMDelegation || rmTok.Service != "10.0.0.1:8032,10.0.0.2:8032" {
		t.Fatalf("credentials %v: want the RM's genuine RM_DELEGATION_TOKEN for its service and the NameNode's", creds)
	}
	if !nn.Genuine(hdfsTok) || hdfsTok.Kind != yarnclient.KindHDFSDelegation {
		t.Errorf("HDFS token %+v: want the NameNode's genuine HDFS_DELEGATION_TOKEN", hdfsTok)
	}
	// The RM records colocd's principal as the real user, the NameNode its
	// short name.
	for tok, real := range map[*yarnclient.Token]string{&rmTok: cfg.Kerberos.Principal, &hdfsTok: "colocd"} {
		id, err := yarnclient.ParseTokenIdentifier(tok.Identifier)
		if err != nil || id.Owner != "alice" || id.RealUser != real || id.Renewer != "yarn" {
			t.Errorf("%s identifier %+v (%v): want alice's, through %s, renewable by yarn", tok.Kind, id, err, real)
		}
	}
	if a, _ := rm.App(app); a.User != "alice" {
		t.Errorf("application user %q, want alice", a.User)
	}

	_, err = admit(t, y, "J2", "bob")
	if !errors.Is(err, cluster.ErrRejected) || !strings.Contains(err.Error(), "User: "+cfg.Kerberos.Principal+" is not allowed to impersonate bob") ||
		!strings.Contains(err.Error(), "RM delegation token for bob") {
		t.Errorf("bob's job: %v, want a rejection of the RM token fetch naming bob and the rule", err)
	}
	if n := rm.SubmitCalls(); n != 1 {
		t.Errorf("%d submissions, want 1 (alice's)", n)
	}
}
