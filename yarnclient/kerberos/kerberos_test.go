package kerberos_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jcmturner/gokrb5/v8/keytab"

	"go.uber.org/goleak"

	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestMain checks that no goroutine outlives the tests: the Auth's end
// with each exchange; the fake RMs' SPNEGO (gokrb5's replay cache) starts one forever.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m, yarntest.IgnoreReplayCache()...) }

// realm is a real MIT KDC with the client principal colocd and its keytab.
type realm struct {
	kdc    *kdctest.KDC
	client string // colocd@COLOCD.TEST
	keytab string
}

func newRealm(t *testing.T, opts ...kdctest.Option) realm {
	t.Helper()
	kdc := kdctest.Start(t, opts...)
	client := kdc.AddPrincipal(t, "colocd")
	return realm{kdc: kdc, client: client, keytab: kdc.Keytab(t, client)}
}

// rm starts a kerberized fake RM whose service principal is spn, created
// in the KDC with its own keytab.
func (r realm) rm(t *testing.T, spn string, opts ...yarntest.Option) *yarntest.FakeRM {
	t.Helper()
	r.kdc.AddPrincipal(t, spn)
	return yarntest.NewFakeRM(t, append(opts, yarntest.SPNEGO(r.kdc.Keytab(t, spn)))...)
}

// config is the client's KerberosConfig: the realm's krb5.conf, clock now
// (nil: time.Now), and the service principals of servers by base URL.
func (r realm) config(t *testing.T, now func() time.Time, spns map[string]string) *kerberos.Config {
	t.Helper()
	cfg := &kerberos.Config{Principal: r.client, Keytab: r.keytab, Krb5Conf: r.kdc.Krb5Conf(), Now: now,
		ServicePrincipals: map[string]string{}}
	for base, spn := range spns {
		cfg.ServicePrincipals[hostOf(t, base)] = spn
	}
	return cfg
}

// kclient is a Client of the RMs authenticating with Kerberos as kc says,
// and its Auth.
func kclient(t *testing.T, kc *kerberos.Config, urls ...string) (*yarnclient.Client, *kerberos.Auth) {
	t.Helper()
	a, err := kerberos.New(*kc)
	if err != nil {
		t.Fatal(err)
	}
	return newClient(t, a, urls...), a
}

// newClient is a Client of the RMs with auth (nil: simple auth as alice),
// no retries.
func newClient(t *testing.T, auth yarnclient.Auth, urls ...string) *yarnclient.Client {
	t.Helper()
	cfg := yarnclient.Config{RMURLs: urls, Auth: auth, Retries: -1, Timeout: 10 * time.Second}
	if auth == nil {
		cfg.User = "alice"
	}
	c, err := yarnclient.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return c
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func hostOf(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}

// fakeClock is the KerberosAuth's clock; tests move it.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// TestKerberosWithoutTicket: a kerberized RM answers simple auth 401
// Negotiate, which is ErrUnauthorized, and the client does not retry it.
func TestKerberosWithoutTicket(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1")
	c := newClient(t, nil, rm.URL())
	_, err := c.ClusterInfo(ctxT(t))
	var re *yarnclient.RemoteError
	if !errors.Is(err, yarnclient.ErrUnauthorized) || !errors.As(err, &re) || re.StatusCode != http.StatusUnauthorized {
		t.Fatalf("err = %v, want a 401 RemoteError", err)
	}
	t.Logf("error: %v", err)
	if got := len(rm.SPNEGO().Refused()); got != 1 {
		t.Errorf("RM refused %d requests, want 1 (no retry without Kerberos)", got)
	}
	if _, ok := c.Auth().(yarnclient.SimpleAuth); !ok {
		t.Errorf("Auth() of a simple-auth client is %T", c.Auth())
	}
}

// TestKerberosRM: with a ticket for HTTP/_HOST the RM serves reads and
// writes, as the principal's short name; one login and one service ticket
// serve every call.
func TestKerberosRM(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1", yarntest.RequireUser())
	c, a := kclient(t, r.config(t, nil, nil), rm.URL())
	ctx := ctxT(t)
	if _, err := c.ClusterInfo(ctx); err != nil {
		t.Fatal(err)
	}
	na, err := c.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: na.ApplicationID, ApplicationName: "k"}); err != nil {
		t.Fatal(err)
	}
	app, err := c.App(ctx, na.ApplicationID)
	if err != nil {
		t.Fatal(err)
	}
	if app.User != "colocd" {
		t.Errorf("app user %q, want colocd (the principal's short name)", app.User)
	}
	if diff := cmp.Diff([]string{r.client, r.client, r.client, r.client}, rm.SPNEGO().Accepted()); diff != "" {
		t.Errorf("RM accepted (-want +got):\n%s", diff)
	}
	st := a.Status()
	if !st.LoggedIn || st.Logins != 1 || st.Principal != r.client || !st.TGTEnd.After(st.TGTStart) {
		t.Errorf("status %+v: want logged in once as %s", st, r.client)
	}
	if diff := cmp.Diff([]string{"HTTP/127.0.0.1@" + r.kdc.Realm()}, st.ServiceTickets); diff != "" {
		t.Errorf("service tickets (-want +got):\n%s", diff)
	}
	if n := r.kdc.ASIssued(t, r.client); n != 1 {
		t.Errorf("KDC issued %d TGTs, want 1", n)
	}
}

// TestKerberosNodeManager: a NodeManager is called with a ticket for its
// own service principal.
func TestKerberosNodeManager(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1")
	nmSPN := r.kdc.AddPrincipal(t, "HTTP/nm1.colocd.test")
	gate := yarntest.NewSPNEGOGate(t, r.kdc.Keytab(t, nmSPN), http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(map[string]any{"containers": map[string]any{"container": []map[string]any{
			{"id": "container_1700000000000_0001_01_000002", "state": "RUNNING", "user": "colocd"}}}})
	}))
	nm := httptest.NewServer(gate)
	t.Cleanup(nm.Close)
	c, a := kclient(t, r.config(t, nil, map[string]string{nm.URL: "HTTP/nm1.colocd.test"}), rm.URL())
	cs, err := c.NodeContainers(ctxT(t), hostOf(t, nm.URL))
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 1 || cs[0].ID != "container_1700000000000_0001_01_000002" {
		t.Errorf("containers %+v", cs)
	}
	if _, err := c.ClusterInfo(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{r.client}, gate.Accepted()); diff != "" {
		t.Errorf("NM accepted (-want +got):\n%s", diff)
	}
	want := []string{"HTTP/127.0.0.1@" + r.kdc.Realm(), nmSPN}
	if diff := cmp.Diff(want, a.Status().ServiceTickets); diff != "" {
		t.Errorf("service tickets (-want +got):\n%s", diff)
	}
}

// TestKerberosHAFailover: two kerberized RMs, each with its own service
// principal and keytab; the client authenticates to the standby with
// rm1's, is redirected, authenticates to the active one with rm2's, and
// fails back the same way. A wrong principal for rm2 is refused twice
// (the retry with a fresh ticket included) and named in the error.
func TestKerberosHAFailover(t *testing.T) {
	r := newRealm(t)
	rm1 := r.rm(t, "HTTP/rm1.colocd.test")
	rm2 := r.rm(t, "HTTP/rm2.colocd.test")
	rm1.SetStandby(true)
	rm1.SetActiveURL(rm2.URL())
	spns := map[string]string{rm1.URL(): "HTTP/rm1.colocd.test", rm2.URL(): "HTTP/rm2.colocd.test"}
	c, a := kclient(t, r.config(t, nil, spns), rm1.URL(), rm2.URL())
	ctx := ctxT(t)
	if _, err := c.ClusterMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	if c.ActiveRM() != rm2.URL() {
		t.Errorf("active RM %s, want rm2 %s", c.ActiveRM(), rm2.URL())
	}
	rm2.SetStandby(true)
	rm2.SetActiveURL(rm1.URL())
	rm1.SetStandby(false)
	if _, err := c.ClusterMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	if c.ActiveRM() != rm1.URL() {
		t.Errorf("after failing back: active RM %s, want rm1", c.ActiveRM())
	}
	for name, rm := range map[string]*yarntest.FakeRM{"rm1": rm1, "rm2": rm2} {
		if diff := cmp.Diff([]string{r.client, r.client}, rm.SPNEGO().Accepted()); diff != "" {
			t.Errorf("%s accepted (-want +got):\n%s", name, diff)
		}
		if refused := rm.SPNEGO().Refused(); len(refused) != 0 {
			t.Errorf("%s refused %q", name, refused)
		}
	}
	if n := r.kdc.ASIssued(t, r.client); n != 1 {
		t.Errorf("KDC issued %d TGTs, want 1", n)
	}
	want := []string{"HTTP/rm1.colocd.test@" + r.kdc.Realm(), "HTTP/rm2.colocd.test@" + r.kdc.Realm()}
	if diff := cmp.Diff(want, a.Status().ServiceTickets); diff != "" {
		t.Errorf("service tickets (-want +got):\n%s", diff)
	}

	wrong := map[string]string{rm1.URL(): "HTTP/rm1.colocd.test", rm2.URL(): "HTTP/rm1.colocd.test"}
	c2, _ := kclient(t, r.config(t, nil, wrong), rm2.URL())
	rm2.SetStandby(false)
	_, err := c2.ClusterMetrics(ctx)
	if !errors.Is(err, yarnclient.ErrUnauthorized) {
		t.Fatalf("rm2 with rm1's principal: %v, want ErrUnauthorized", err)
	}
	t.Logf("error: %v", err)
	if got := len(rm2.SPNEGO().Refused()); got != 2 {
		t.Errorf("rm2 refused %d requests, want 2 (the first and the retry with a fresh ticket)", got)
	}
}

// TestKerberosRetryFreshTicket: after the RM's key is rotated its cached
// service ticket is refused; the client gets a fresh one and the call
// succeeds.
func TestKerberosRetryFreshTicket(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1")
	c, _ := kclient(t, r.config(t, nil, nil), rm.URL())
	ctx := ctxT(t)
	if _, err := c.ClusterInfo(ctx); err != nil {
		t.Fatal(err)
	}
	r.kdc.Kadmin(t, "cpw -randkey HTTP/127.0.0.1")
	rm.SPNEGO().SetKeytab(r.kdc.Keytab(t, "HTTP/127.0.0.1"))
	if _, err := c.ClusterInfo(ctx); err != nil {
		t.Fatalf("after the RM's key changed: %v", err)
	}
	if got, accepted := len(rm.SPNEGO().Refused()), len(rm.SPNEGO().Accepted()); got != 1 || accepted != 2 {
		t.Errorf("RM refused %d and accepted %d requests, want 1 and 2", got, accepted)
	}
	if n := r.kdc.ASIssued(t, r.client); n != 1 {
		t.Errorf("KDC issued %d TGTs, want 1 (only the service ticket is renewed)", n)
	}
}

// TestKerberosConcurrent: concurrent calls share one login and one service
// ticket.
func TestKerberosConcurrent(t *testing.T) {
	r := newRealm(t)
	rm := r.rm(t, "HTTP/127.0.0.1")
	c, _ := kclient(t, r.config(t, nil, nil), rm.URL())
	ctx := ctxT(t)
	var wg sync.WaitGroup
	errs := make(chan error, 40)
	for range 8 {
		wg.Go(func() {
			for range 5 {
				if _, err := c.ClusterMetrics(ctx); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if n := r.kdc.ASIssued(t, r.client); n != 1 {
		t.Errorf("KDC issued %d TGTs, want 1", n)
	}
	if got := len(rm.SPNEGO().Accepted()); got != 40 {
		t.Errorf("RM accepted %d requests, want 40 (refused: %q)", got, rm.SPNEGO().Refused())
	}
}

// TestKerberosRenewal: with a one-minute TGT the client logs in again once
// 80 % of it has passed by its clock, not before, and keeps working.
func TestKerberosRenewal(t *testing.T) {
	r := newRealm(t, kdctest.MaxLife(time.Minute))
	rm := r.rm(t, "HTTP/127.0.0.1")
	clock := newFakeClock()
	c, a := kclient(t, r.config(t, clock.Now, nil), rm.URL())
	ctx := ctxT(t)
	call := func(when string) kerberos.Status {
		t.Helper()
		if _, err := c.ClusterMetrics(ctx); err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		return a.Status()
	}
	st := call("first call")
	if life := st.TGTEnd.Sub(st.TGTStart); life != time.Minute {
		t.Fatalf("TGT lifetime %v, want the KDC's max_life 1m", life)
	}
	if want := clock.Now().Add(48 * time.Second); !st.RenewAt.Equal(want) {
		t.Errorf("RenewAt %v, want %v (80 %% of 1m)", st.RenewAt, want)
	}
	clock.Advance(47 * time.Second)
	if st := call("before 80 %"); st.Logins != 1 || r.kdc.ASIssued(t, r.client) != 1 {
		t.Errorf("before 80 %%: %d logins, KDC issued %d TGTs; want 1 and 1", st.Logins, r.kdc.ASIssued(t, r.client))
	}
	clock.Advance(2 * time.Second)
	st = call("after 80 %")
	if st.Logins != 2 || r.kdc.ASIssued(t, r.client) != 2 {
		t.Errorf("after 80 %%: %d logins, KDC issued %d TGTs; want 2 and 2", st.Logins, r.kdc.ASIssued(t, r.client))
	}
	if want := clock.Now().Add(48 * time.Second); !st.RenewAt.Equal(want) {
		t.Errorf("renewed TGT: RenewAt %v, want %v", st.RenewAt, want)
	}
	if got := len(rm.SPNEGO().Accepted()); got != 3 {
		t.Errorf("RM accepted %d requests, want 3", got)
	}
}

// TestKerberosRenewalFails: when the KDC is gone at renewal time the
// client keeps using its tickets until they expire, then fails with
// ErrKDCUnreachable.
func TestKerberosRenewalFails(t *testing.T) {
	r := newRealm(t, kdctest.MaxLife(time.Minute))
	rm := r.rm(t, "HTTP/127.0.0.1")
	clock := newFakeClock()
	c, _ := kclient(t, r.config(t, clock.Now, nil), rm.URL())
	ctx := ctxT(t)
	if _, err := c.ClusterMetrics(ctx); err != nil {
		t.Fatal(err)
	}
	r.kdc.Stop(t)
	clock.Advance(50 * time.Second)
	if _, err := c.ClusterMetrics(ctx); err != nil {
		t.Fatalf("renewal due, KDC down, tickets valid: %v", err)
	}
	clock.Advance(11 * time.Second)
	_, err := c.ClusterMetrics(ctx)
	if !errors.Is(err, kerberos.ErrKDCUnreachable) {
		t.Fatalf("tickets expired, KDC down: %v, want ErrKDCUnreachable", err)
	}
	if got := len(rm.SPNEGO().Accepted()); got != 2 {
		t.Errorf("RM accepted %d requests, want 2", got)
	}
}

// TestKerberosErrors: each failure against the real KDC is a
// *KerberosError of its kind, naming the principal (or the KDC), and the
// RM is never called.
func TestKerberosErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		// setup returns the KDC, the client's config and the principal the
		// error must name.
		setup func(t *testing.T, rmURL func(spn string) string) (*kerberos.Config, string)
		kind  error
		code  int32
	}{
		{"wrong keytab: key rotated", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			r := newRealm(t)
			r.kdc.Kadmin(t, "cpw -randkey "+r.client)
			return r.config(t, nil, map[string]string{rmURL(r.rmSPN(t)): "HTTP/rm.colocd.test"}), r.client
		}, kerberos.ErrKeytab, 24},
		{"clock skew: the KDC checks the pre-authentication", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			r := newRealm(t, kdctest.ClockOffset(time.Hour))
			return r.config(t, nil, map[string]string{rmURL(r.rmSPN(t)): "HTTP/rm.colocd.test"}), r.client
		}, kerberos.ErrClockSkew, 37},
		{"clock skew: the client checks the KDC's reply", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			kdc := kdctest.Start(t, kdctest.ClockOffset(time.Hour))
			r := realm{kdc: kdc, client: kdc.AddPrincipal(t, "colocd", kdctest.NoPreauth)}
			r.keytab = kdc.Keytab(t, r.client)
			return r.config(t, nil, map[string]string{rmURL(r.rmSPN(t)): "HTTP/rm.colocd.test"}), r.client
		}, kerberos.ErrClockSkew, 0},
		{"no such client principal", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			r := newRealm(t)
			r.kdc.Kadmin(t, "delprinc -force "+r.client)
			return r.config(t, nil, map[string]string{rmURL(r.rmSPN(t)): "HTTP/rm.colocd.test"}), r.client
		}, kerberos.ErrNoSuchPrincipal, 6},
		{"no such service principal", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			r := newRealm(t)
			u := rmURL(r.rmSPN(t))
			return r.config(t, nil, map[string]string{u: "HTTP/nosuch.colocd.test"}), "HTTP/nosuch.colocd.test@" + r.kdc.Realm()
		}, kerberos.ErrNoSuchPrincipal, 7},
		{"KDC unreachable", func(t *testing.T, rmURL func(string) string) (*kerberos.Config, string) {
			r := newRealm(t)
			cfg := r.config(t, nil, map[string]string{rmURL(r.rmSPN(t)): "HTTP/rm.colocd.test"})
			r.kdc.Stop(t)
			return cfg, r.kdc.Addr()
		}, kerberos.ErrKDCUnreachable, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var rm *yarntest.FakeRM
			kc, who := tc.setup(t, func(keytab string) string {
				rm = yarntest.NewFakeRM(t, yarntest.SPNEGO(keytab))
				return rm.URL()
			})
			c, _ := kclient(t, kc, rm.URL())
			_, err := c.ClusterInfo(ctxT(t))
			t.Logf("error: %v", err)
			var ke *kerberos.Error
			if !errors.Is(err, tc.kind) || !errors.Is(err, kerberos.ErrExchange) || !errors.As(err, &ke) {
				t.Fatalf("err = %v, want a *KerberosError matching %v", err, tc.kind)
			}
			named := ke.Principal
			if tc.kind == kerberos.ErrKDCUnreachable {
				named = ke.KDCs[0]
			}
			if named != who || ke.Code != tc.code {
				t.Errorf("error names %q with code %d, want %q and %d", named, ke.Code, who, tc.code)
			}
			if n := rm.Traffic().Requests + len(rm.SPNEGO().Refused()); n != 0 {
				t.Errorf("the RM got %d requests, want none", n)
			}
		})
	}
}

// rmSPN adds the fake RM's service principal HTTP/rm.colocd.test and
// returns its keytab.
func (r realm) rmSPN(t *testing.T) string {
	t.Helper()
	return r.kdc.Keytab(t, r.kdc.AddPrincipal(t, "HTTP/rm.colocd.test"))
}

// writeKeytab writes a keytab with one aes256 key for each principal
// (name@REALM), without a KDC.
func writeKeytab(t *testing.T, principals ...string) string {
	t.Helper()
	kt := keytab.New()
	for _, p := range principals {
		name, realm, _ := strings.Cut(p, "@")
		if err := kt.AddEntry(name, realm, "secret", time.Now(), 1, 18); err != nil {
			t.Fatal(err)
		}
	}
	path := filepath.Join(t.TempDir(), "test.keytab")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := kt.Write(f); err != nil {
		t.Fatal(err)
	}
	return path
}

func writeFile(t *testing.T, body string) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "krb5.conf")
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

const testKrb5Conf = `[libdefaults]
 default_realm = EXAMPLE.COM
[realms]
 EXAMPLE.COM = {
  kdc = kdc.example.com:88
 }
`

// TestKerberosConfigErrors: New refuses a config that cannot work, naming
// the field, without the network.
func TestKerberosConfigErrors(t *testing.T) {
	conf := writeFile(t, testKrb5Conf)
	noRealm := writeFile(t, "[libdefaults]\n dns_lookup_kdc = false\n")
	noKDC := writeFile(t, "[libdefaults]\n default_realm = EXAMPLE.COM\n dns_lookup_kdc = false\n")
	kt := writeKeytab(t, "colocd@EXAMPLE.COM")
	other := writeKeytab(t, "alice@EXAMPLE.COM")
	good := kerberos.Config{Principal: "colocd", Keytab: kt, Krb5Conf: conf}
	for _, tc := range []struct {
		name  string
		mod   func(*kerberos.Config)
		field string
	}{
		{"no principal", func(c *kerberos.Config) { c.Principal = "" }, "Principal"},
		{"bad principal", func(c *kerberos.Config) { c.Principal = "colocd@" }, "Principal"},
		{"no realm anywhere", func(c *kerberos.Config) { c.Krb5Conf = noRealm }, "Principal"},
		{"missing krb5.conf", func(c *kerberos.Config) { c.Krb5Conf = "/nonexistent/krb5.conf" }, "Krb5Conf"},
		{"realm without a KDC", func(c *kerberos.Config) { c.Krb5Conf = noKDC }, "Krb5Conf"},
		{"no keytab", func(c *kerberos.Config) { c.Keytab = "" }, "Keytab"},
		{"missing keytab", func(c *kerberos.Config) { c.Keytab = "/nonexistent/colocd.keytab" }, "Keytab"},
		{"keytab without the principal", func(c *kerberos.Config) { c.Keytab = other }, "Keytab"},
		{"bad service principal", func(c *kerberos.Config) { c.ServicePrincipal = "HTTP" }, "ServicePrincipal"},
		{"cross-realm service principal", func(c *kerberos.Config) { c.ServicePrincipal = "HTTP/_HOST@OTHER.COM" }, "ServicePrincipal"},
		{"bad override host", func(c *kerberos.Config) {
			c.ServicePrincipals = map[string]string{"http://rm1:8088": "HTTP/rm1"}
		}, "ServicePrincipals[http://rm1:8088]"},
		{"bad override principal", func(c *kerberos.Config) {
			c.ServicePrincipals = map[string]string{"rm1:8088": "rm1"}
		}, "ServicePrincipals[rm1:8088]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := good
			tc.mod(&cfg)
			_, err := kerberos.New(cfg)
			var ce *kerberos.ConfigError
			if !errors.Is(err, yarnclient.ErrInvalid) || !errors.As(err, &ce) || ce.Field != tc.field {
				t.Fatalf("err = %v, want a ConfigError for %s", err, tc.field)
			}
			if tc.name == "keytab without the principal" && !errors.Is(err, kerberos.ErrKeytab) {
				t.Errorf("err = %v, want ErrKeytab too", err)
			}
			t.Logf("error: %v", err)
		})
	}
	if _, err := kerberos.New(good); err != nil {
		t.Errorf("good config: %v", err)
	}
}

// TestKerberosServicePrincipal: _HOST becomes the URL's host, lower-cased;
// an override by host:port beats one by host, which beats the pattern.
func TestKerberosServicePrincipal(t *testing.T) {
	a, err := kerberos.New(kerberos.Config{
		Principal: "colocd/admit1.example.com@EXAMPLE.COM", Keytab: writeKeytab(t, "colocd/admit1.example.com@EXAMPLE.COM"),
		Krb5Conf: writeFile(t, testKrb5Conf), ServicePrincipal: "HTTP/_HOST@EXAMPLE.COM",
		ServicePrincipals: map[string]string{"10.0.0.7:8088": "HTTP/rm1.example.com", "LB.example.com": "HTTP/_HOST-lb@EXAMPLE.COM"},
	})
	if err != nil {
		t.Fatal(err)
	}
	if a.Principal() != "colocd/admit1.example.com@EXAMPLE.COM" {
		t.Errorf("Principal %q", a.Principal())
	}
	for raw, want := range map[string]string{
		"http://RM2.Example.com:8088":   "HTTP/rm2.example.com@EXAMPLE.COM",
		"https://nm7.example.com:8044/": "HTTP/nm7.example.com@EXAMPLE.COM",
		"http://10.0.0.7:8088":          "HTTP/rm1.example.com@EXAMPLE.COM",
		"http://10.0.0.7:8042":          "HTTP/10.0.0.7@EXAMPLE.COM",
		"http://lb.example.com:8088":    "HTTP/lb.example.com-lb@EXAMPLE.COM",
	} {
		u, err := url.Parse(raw)
		if err != nil {
			t.Fatal(err)
		}
		if got := a.ServicePrincipal(u); got != want {
			t.Errorf("ServicePrincipal(%s) = %q, want %q", raw, got, want)
		}
	}
	if st := a.Status(); st.LoggedIn || st.Logins != 0 {
		t.Errorf("status before any request %+v: want not logged in", st)
	}
}
