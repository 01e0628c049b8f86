package daemon

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// kerberosConfig is a yarn-backend config with the API kerberized.
func kerberosConfig(t *testing.T, kdc *kdctest.KDC, dataDir, addr, rmURL, extra string) string {
	t.Helper()
	kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	keytab := kdc.Keytab(t, "HTTP/127.0.0.1")
	cfg, err := os.ReadFile(yarnDaemonConfig(t, dataDir, addr, rmURL))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Replace(string(cfg), "yarn: {rm_urls:", "yarn: {submit_as: job_user, rm_urls:", 1)
	s += fmt.Sprintf(`api:
  auth: both
  kerberos: {keytab: %s, principal: HTTP/127.0.0.1}
  proxy_users:
    - {user: airflow, users: [alice], hosts: ["127.0.0.1"]}
%s`, keytab, extra)
	p := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(p, []byte(s), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// krbClient is an API client authenticating as principal (a keytab made
// for it) with Kerberos, on clock (nil: time.Now).
func krbClient(t *testing.T, kdc *kdctest.KDC, base, principal string, clock func() time.Time) (*apiclient.Client, *kerberos.Auth) {
	t.Helper()
	p := kdc.AddPrincipal(t, principal)
	a, err := kerberos.New(kerberos.Config{Principal: p, Keytab: kdc.Keytab(t, p), Krb5Conf: kdc.Krb5Conf(), Now: clock})
	if err != nil {
		t.Fatal(err)
	}
	c, err := apiclient.New(base, "", apiclient.Options{Auth: a})
	if err != nil {
		t.Fatal(err)
	}
	return c, a
}

// TestKerberosProcess: against a real MIT KDC and the real binary, with
// yarn.submit_as job_user and a fake RM that enforces the proxy-user rules
// (colocd may act for alice only): alice, with a ticket, submits (her
// body naming another user is ignored) and the application lands in YARN
// as alice; a caller without a ticket gets 401 with WWW-Authenticate:
// Negotiate; airflow acts for alice through api.proxy_users, and for
// carol it is refused with a 403 naming the rule; a client whose service
// ticket has expired by its clock gets a new one and goes on.
func TestKerberosProcess(t *testing.T) {
	kdc := kdctest.Start(t, kdctest.MaxLife(time.Minute))
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart(), yarntest.ProxyUser("colocd", "alice"))
	rm.AddNode(yarnclient.Node{ID: "worker1:8041"})
	addr := freeAddr(t)
	p := startServe(t, t.TempDir(), kerberosConfig(t, kdc, t.TempDir(), addr, rm.URL(), ""), addr, yarnTestToken, "KRB5_CONFIG="+kdc.Krb5Conf())
	p.waitReady(30 * time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	var mu sync.Mutex
	now := time.Now()
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	alice, aliceAuth := krbClient(t, kdc, p.base, "alice", clock)

	who, err := alice.WhoAmI(ctx)
	if err != nil {
		t.Fatalf("whoami with a ticket: %v", err)
	}
	if w := who.Body; w.User != "alice" || w.Method != "kerberos" || w.Principal != kdc.Principal("alice") || w.Role != "submitter" {
		t.Errorf("whoami: %+v", w)
	}
	forged := (`{"kind":"wordcount","user":"mallory","queue":"default","resources":{"containers":2,"memory_mb":1024,"vcores":1},
		"submit":{"application-name":"wc","application-type":"MAPREDUCE","am-container-spec":{"commands":{"command":"run"}},"resource":{"memory":1024,"vCores":1}}}`)
	r, err := alice.SubmitJSON(ctx, []byte(forged), "alice-1")
	if err != nil {
		t.Fatalf("alice submits: %v", err)
	}
	if r.Body.User != "alice" {
		t.Fatalf("alice's job is %q's, want alice's (the body's user ignored)", r.Body.User)
	}
	id := r.Body.ID
	// The app id is stored before the submit to the RM (an admission is
	// recorded first): wait for the application itself.
	poll(t, "alice's job submitted to YARN", 30*time.Second, func() bool {
		appID := p.job(id).AppID
		if appID == "" {
			return false
		}
		_, ok := rm.App(appID)
		return ok
	})
	app, ok := rm.App(p.job(id).AppID)
	if !ok || app.User != "alice" {
		t.Errorf("the application in YARN: %+v (found %v), want user alice", app, ok)
	}

	// No ticket: 401 with the Negotiate challenge.
	res, err := http.Get(p.base + "/v1/jobs")
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized || !strings.Contains(strings.Join(res.Header.Values("WWW-Authenticate"), "|"), "Negotiate") {
		t.Errorf("no ticket: %d, WWW-Authenticate %q", res.StatusCode, res.Header.Values("WWW-Authenticate"))
	}

	// A proxy rule: airflow may act for alice, not for carol.
	af, _ := krbClient(t, kdc, p.base, "airflow", nil)
	for _, tc := range []struct {
		doAs string
		code int
	}{{"alice", http.StatusOK}, {"carol", http.StatusForbidden}} {
		w, err := af.As(tc.doAs).WhoAmI(ctx)
		var e *apiclient.Error
		switch {
		case tc.code == http.StatusOK && (err != nil || w.Body.User != "alice" || w.Body.RealUser != "airflow"):
			t.Errorf("airflow as alice: %+v, %v", w.Body, err)
		case tc.code == http.StatusForbidden && (!errors.As(err, &e) || e.Status != 403 || e.Code != v1.CodeProxyRefused || e.Rule != "api.proxy_users"):
			t.Errorf("airflow as carol: %v; want 403 proxy_refused naming api.proxy_users", err)
		}
	}
	if !strings.Contains(p.out.String(), `real_user=airflow`) {
		t.Errorf("the proxied requests are not in the log")
	}

	// The tickets expire (max_life 1m): past their end by the client's
	// clock, it logs in again and gets a new service ticket.
	st := aliceAuth.Status()
	mu.Lock()
	now = now.Add(61 * time.Second)
	mu.Unlock()
	if _, err := alice.Job(ctx, id); err != nil {
		t.Fatalf("after the service ticket expired: %v", err)
	}
	if got := aliceAuth.Status(); got.Logins != st.Logins+1 {
		t.Errorf("logins %d → %d, want one more (a new TGT, then a new service ticket)", st.Logins, got.Logins)
	}
}
