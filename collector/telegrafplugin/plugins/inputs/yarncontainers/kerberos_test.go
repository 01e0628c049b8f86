package yarncontainers

import (
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/influxdata/telegraf/testutil"

	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestKerberos: against a kerberized NodeManager and ResourceManager
// (SPNEGO with a service keytab from a real MIT KDC, as Hadoop's
// AuthenticationFilter), the plugin logs in from its keytab and reads the
// containers and the application's kind with a service ticket for the
// server's principal (127.0.0.1 mapped to it by
// kerberos_service_principals); after the server's key is rotated it
// gets a fresh ticket. Without Kerberos the same server refuses it with
// 401.
func TestKerberos(t *testing.T) {
	kdc := kdctest.Start(t)
	client := kdc.AddPrincipal(t, "telegraf/worker1.colocd.test")
	spn := kdc.AddPrincipal(t, "HTTP/worker1.colocd.test")
	var gate *yarntest.SPNEGOGate
	fake := nmtest.New(t, nmtest.Wrap(func(h http.Handler) http.Handler {
		gate = yarntest.NewSPNEGOGate(t, kdc.Keytab(t, spn), h)
		return gate
	}))
	fake.SetContainers(nmtest.Running("container_1700000000000_0001_01_000001", 2048, 1))
	fake.SetApp("application_1700000000000_0001", "colocd-kind-terasort")
	u, err := url.Parse(fake.URL())
	if err != nil {
		t.Fatal(err)
	}

	y := newYarnContainers()
	y.NodeManagerURL, y.ResourceManagerURLs = fake.URL(), []string{fake.URL()}
	y.now = func() time.Time { return gatherTime }
	y.KerberosPrincipal, y.KerberosKeytab, y.KerberosKrb5Conf = client, kdc.Keytab(t, client), kdc.Krb5Conf()
	y.KerberosServicePrincipals = map[string]string{u.Host: spn}
	if err := y.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	var acc testutil.Accumulator
	if err := acc.GatherError(y.Gather); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	want := []point{{map[string]string{"application_id": "application_1700000000000_0001", "kind": "terasort",
		"application_type": "MAPREDUCE", "queue": "default"}, fields(1, 2048, 1)}}
	if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
		t.Errorf("gather (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{client, client}, gate.Accepted()); diff != "" {
		t.Errorf("the server accepted (-want +got):\n%s", diff)
	}

	// The server's key is rotated: the cached service ticket is refused
	// once (401 Negotiate), dropped, and a fresh one gets through.
	kdc.Kadmin(t, "cpw -randkey "+spn)
	gate.SetKeytab(kdc.Keytab(t, spn))
	fake.SetContainers(nmtest.Running("container_1700000000000_0001_01_000002", 1024, 1))
	acc.ClearMetrics()
	if err := acc.GatherError(y.Gather); err != nil {
		t.Fatalf("Gather after the server's key changed: %v", err)
	}
	if n := len(points(t, &acc)); n != 1 {
		t.Errorf("gather after the key change: %d points, want 1", n)
	}

	simple := newPlugin(t, fake.URL())
	err = simple.Gather(&testutil.Accumulator{})
	if err == nil || !strings.Contains(err.Error(), "401") {
		t.Errorf("without Kerberos: Gather = %v, want the server's 401", err)
	}
}
