package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestYarnInfoKerberos: with yarn.auth kerberos, `colocd yarn info` reaches
// a kerberized RM, whose service principal yarn.kerberos.service_principals
// sets, through a real KDC and shows the principal and its TGT;
// with a keytab without the principal it fails naming the key, the keytab
// and the principal.
func TestYarnInfoKerberos(t *testing.T) {
	isolate(t)
	kdc := kdctest.Start(t)
	principal := kdc.AddPrincipal(t, "colocd")
	spn := kdc.AddPrincipal(t, "HTTP/rm1.colocd.test")
	rm := yarntest.NewFakeRM(t, yarntest.SPNEGO(kdc.Keytab(t, spn)))
	config := func(keytab string) string {
		path := filepath.Join(t.TempDir(), "colocd.yaml")
		body := fmt.Sprintf(`yarn:
  rm_urls: [%[1]q]
  auth: kerberos
  kerberos:
    principal: %[2]s
    keytab: %[3]s
    krb5_conf: %[4]s
    service_principal: HTTP/_HOST@%[5]s
    service_principals:
      - url: %[1]s
        principal: %[6]s
`, rm.URL(), principal, keytab, kdc.Krb5Conf(), kdc.Realm(), spn)
		if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
			t.Fatal(err)
		}
		return path
	}
	good := config(kdc.Keytab(t, principal))

	code, out, errOut := runCmd(t, "yarn", "info", "--config", good)
	words := strings.Join(strings.Fields(out), " ")
	if code != exitOK || !strings.Contains(words, "auth Kerberos "+principal) || !strings.Contains(words, "Kerberos TGT valid until") {
		t.Fatalf("yarn info: exit %d\n%s%s", code, out, errOut)
	}
	t.Logf("yarn info:\n%s", out)
	if !strings.Contains(words, "applications' user colocd (yarn.app_user") {
		t.Errorf("yarn info does not name the applications' user colocd (the principal's first component):\n%s", out)
	}
	code, out, errOut = runCmd(t, "yarn", "info", "--json", "--config", good)
	if code != exitOK {
		t.Fatalf("yarn info --json: exit %d: %s", code, errOut)
	}
	var info struct {
		Auth struct {
			Mode, Principal string
			TGTStart        time.Time
			TGTEnd          time.Time
			ServiceTickets  []string
		}
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatal(err)
	}
	a := info.Auth
	if a.Mode != "kerberos" || a.Principal != principal || !a.TGTEnd.After(a.TGTStart) ||
		len(a.ServiceTickets) != 1 || a.ServiceTickets[0] != spn {
		t.Errorf("auth %+v: want kerberos as %s with a TGT and a ticket for %s", a, principal, spn)
	}
	if got := len(rm.SPNEGO().Accepted()); got != 4 {
		t.Errorf("RM accepted %d requests, want 4 (info and metrics, twice)", got)
	}

	other := kdc.AddPrincipal(t, "alice")
	wrong := kdc.Keytab(t, other)
	code, _, errOut = runCmd(t, "yarn", "info", "--config", config(wrong))
	if code != exitRuntime || !strings.Contains(errOut, "kerberos.keytab: "+wrong+" holds no key of "+principal) {
		t.Errorf("keytab without the principal: exit %d, stderr %q; want %d naming the key, the keytab and the principal", code, errOut, exitRuntime)
	}
}

// TestYarnInfoSimpleAuth: without Kerberos, yarn info names simple auth's
// user.
func TestYarnInfoSimpleAuth(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t)
	code, out, errOut := runCmd(t, "yarn", "info", "--rm", rm.URL(), "--user", "colocd")
	if code != exitOK || !strings.Contains(strings.Join(strings.Fields(out), " "), "auth simple, user.name colocd") {
		t.Errorf("yarn info: exit %d\n%s%s", code, out, errOut)
	}
}
