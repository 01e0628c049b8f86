package kdctest_test

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/kdctest"
)

// kinit runs MIT's kinit with the keytab against krb5conf, with its own
// credential cache, and returns its combined output and error.
func kinit(t *testing.T, krb5conf, keytab, principal string) (string, error) {
	t.Helper()
	cmd := exec.Command(kdctest.Tool(t, "kinit"), "-k", "-t", keytab, principal)
	cmd.Env = append(os.Environ(), "KRB5_CONFIG="+krb5conf, "KRB5CCNAME=FILE:"+filepath.Join(t.TempDir(), "cc"))
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// TestStartIssuesTickets: MIT's own kinit logs in from an exported keytab,
// and the KDC's log shows the TGT it issued.
func TestStartIssuesTickets(t *testing.T) {
	k := kdctest.Start(t)
	if host, _, err := net.SplitHostPort(k.Addr()); err != nil || host != "127.0.0.1" {
		t.Fatalf("Addr %q: want 127.0.0.1:port", k.Addr())
	}
	p := k.AddPrincipal(t, "alice")
	if p != "alice@"+kdctest.DefaultRealm {
		t.Errorf("AddPrincipal = %q", p)
	}
	kt := k.Keytab(t, "alice")
	if out, err := kinit(t, k.Krb5Conf(), kt, p); err != nil {
		t.Fatalf("kinit: %v\n%s", err, out)
	}
	if n := k.ASIssued(t, "alice"); n != 1 {
		t.Errorf("ASIssued = %d, want 1", n)
	}
	// A rotated key makes the exported keytab stale.
	k.Kadmin(t, "cpw -randkey alice")
	if out, err := kinit(t, k.Krb5Conf(), kt, p); err == nil {
		t.Errorf("kinit with a stale keytab succeeded: %s", out)
	}
	if n := k.ASIssued(t, "alice"); n != 1 {
		t.Errorf("ASIssued after the refused login = %d, want 1", n)
	}
}

// TestClockOffset: a KDC an hour ahead refuses the pre-authentication of a
// client that does not adjust to its clock (kdc_timesync = 0), and serves
// one that does (kinit's default).
func TestClockOffset(t *testing.T) {
	k := kdctest.Start(t, kdctest.ClockOffset(time.Hour))
	p := k.AddPrincipal(t, "bob")
	kt := k.Keytab(t, "bob")
	if out, err := kinit(t, k.Krb5Conf(), kt, p); err != nil {
		t.Fatalf("kinit with time sync: %v\n%s", err, out)
	}
	conf, err := os.ReadFile(k.Krb5Conf())
	if err != nil {
		t.Fatal(err)
	}
	noSync := filepath.Join(t.TempDir(), "krb5.conf")
	b := strings.Replace(string(conf), "[libdefaults]\n", "[libdefaults]\n kdc_timesync = 0\n", 1)
	if err := os.WriteFile(noSync, []byte(b), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := kinit(t, noSync, kt, p)
	if err == nil || !strings.Contains(out, "Clock skew too great") {
		t.Errorf("kinit without time sync: %v %q, want Clock skew too great", err, out)
	}
}

// TestStop: after Stop nothing listens on the KDC's address, and a second
// Stop (the cleanup's) is harmless.
func TestStop(t *testing.T) {
	k := kdctest.Start(t, kdctest.Realm("OTHER.TEST"), kdctest.MaxLife(time.Minute))
	if k.Realm() != "OTHER.TEST" {
		t.Errorf("Realm = %q", k.Realm())
	}
	k.Stop(t)
	if c, err := net.DialTimeout("tcp", k.Addr(), time.Second); err == nil {
		c.Close()
		t.Errorf("%s still accepts connections after Stop", k.Addr())
	}
	k.Stop(t)
}
