package yarntest_test

import (
	"io"
	"net/http"
	"net/url"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/kerberos"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// get sends GET base+path, authenticated by auth unless it is nil, not
// following redirects, and returns the status and the WWW-Authenticate
// header.
func get(t *testing.T, auth yarnclient.Auth, base, path string) (int, string) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, base+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if auth != nil {
		if err := auth.Authenticate(req); err != nil {
			t.Fatal(err)
		}
	}
	noRedirect := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := noRedirect.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, resp.Body)
	return resp.StatusCode, resp.Header.Get("WWW-Authenticate")
}

// TestSPNEGOFakeRM: the kerberized fake answers 401 Negotiate without a
// ticket, serves a request with a ticket for its principal, refuses a
// ticket for another principal and, after its key is rotated, a ticket for
// the old key.
func TestSPNEGOFakeRM(t *testing.T) {
	kdc := kdctest.Start(t)
	client := kdc.AddPrincipal(t, "colocd")
	kdc.AddPrincipal(t, "HTTP/rm.colocd.test")
	kdc.AddPrincipal(t, "HTTP/other.colocd.test")
	rm := yarntest.NewFakeRM(t, yarntest.SPNEGO(kdc.Keytab(t, "HTTP/rm.colocd.test")))
	host := mustHost(t, rm.URL())
	auth := func(spn string) *kerberos.Auth {
		a, err := kerberos.New(kerberos.Config{Principal: client, Keytab: kdc.Keytab(t, "colocd"),
			Krb5Conf: kdc.Krb5Conf(), ServicePrincipals: map[string]string{host: spn}})
		if err != nil {
			t.Fatal(err)
		}
		return a
	}

	if status, challenge := get(t, nil, rm.URL(), yarnclient.PathClusterInfo); status != http.StatusUnauthorized || challenge != "Negotiate" {
		t.Errorf("without a ticket: %d %q, want 401 Negotiate", status, challenge)
	}
	good := auth("HTTP/rm.colocd.test")
	if status, _ := get(t, good, rm.URL(), yarnclient.PathClusterInfo); status != http.StatusOK {
		t.Errorf("with a ticket: %d, want 200", status)
	}
	if status, _ := get(t, auth("HTTP/other.colocd.test"), rm.URL(), yarnclient.PathClusterInfo); status != http.StatusUnauthorized {
		t.Errorf("with another service's ticket: %d, want 401", status)
	}
	kdc.Kadmin(t, "cpw -randkey HTTP/rm.colocd.test")
	rm.SPNEGO().SetKeytab(kdc.Keytab(t, "HTTP/rm.colocd.test"))
	if status, _ := get(t, good, rm.URL(), yarnclient.PathClusterInfo); status != http.StatusUnauthorized {
		t.Errorf("with a ticket for the old key: %d, want 401", status)
	}

	if diff := cmp.Diff([]string{client}, rm.SPNEGO().Accepted()); diff != "" {
		t.Errorf("Accepted (-want +got):\n%s", diff)
	}
	if got := len(rm.SPNEGO().Refused()); got != 3 {
		t.Errorf("Refused %d requests, want 3: %q", got, rm.SPNEGO().Refused())
	}
	if got := rm.Requests(http.MethodGet, yarnclient.PathClusterInfo); got != 1 {
		t.Errorf("Requests counts %d, want 1 (the authenticated one)", got)
	}
}

// TestSPNEGOStandby: a standby behind SPNEGO authenticates before it
// redirects, like an RM whose authentication filter runs first.
func TestSPNEGOStandby(t *testing.T) {
	kdc := kdctest.Start(t)
	client := kdc.AddPrincipal(t, "colocd")
	spn := kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	rm := yarntest.NewFakeRM(t, yarntest.SPNEGO(kdc.Keytab(t, spn)))
	rm.SetStandby(true)
	rm.SetActiveURL("http://127.0.0.1:1")
	if status, _ := get(t, nil, rm.URL(), yarnclient.PathClusterMetrics); status != http.StatusUnauthorized {
		t.Errorf("standby without a ticket: %d, want 401", status)
	}
	a, err := kerberos.New(kerberos.Config{Principal: client, Keytab: kdc.Keytab(t, "colocd"), Krb5Conf: kdc.Krb5Conf()})
	if err != nil {
		t.Fatal(err)
	}
	if status, _ := get(t, a, rm.URL(), yarnclient.PathClusterMetrics); status != http.StatusTemporaryRedirect {
		t.Errorf("standby with a ticket for HTTP/_HOST: %d, want 307", status)
	}
}

func mustHost(t *testing.T, raw string) string {
	t.Helper()
	u, err := url.Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	return u.Host
}
