package daemon

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/colocd/colocd/internal/testing/testpki"
	"github.com/colocd/colocd/telemetry"
)

// mtlsServer answers 200 to a request with a client certificate from
// pki's CA and the wanted headers; it records what each request sent.
func mtlsServer(tb testing.TB, pki testpki.PKI, want map[string]string) (*httptest.Server, func() []string) {
	tb.Helper()
	var mu sync.Mutex
	var seen []string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, r.URL.Path+" cert="+r.TLS.PeerCertificates[0].Subject.CommonName+" auth="+r.Header.Get("Authorization")+
			" org="+r.Header.Get("X-Scope-OrgID"))
		mu.Unlock()
		for k, v := range want {
			if r.Header.Get(k) != v {
				http.Error(w, "missing "+k, http.StatusUnauthorized)
				return
			}
		}
		w.Header().Set("X-Influxdb-Version", "1.8.10")
		w.WriteHeader(http.StatusOK)
		if strings.HasPrefix(r.URL.Path, "/-/ready") {
			w.Write([]byte("Prometheus Server is Ready.\n"))
		}
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the refused handshake's line
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.ServerCert}, ClientCAs: pki.Pool, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	tb.Cleanup(srv.Close)
	return srv, func() []string { mu.Lock(); defer mu.Unlock(); return append([]string(nil), seen...) }
}

// TestOutboundPrometheusClient: the prometheus section's basic auth (its
// password from a file), TLS with a client certificate and a tenant
// header reach a server that requires all three, and each request is
// timed in colocd_outbound_request_duration_seconds; without the client
// certificate the handshake fails.
func TestOutboundPrometheusClient(t *testing.T) {
	pki := testpki.New(t)
	srv, seen := mtlsServer(t, pki, map[string]string{"Authorization": "Basic b3BzOnMzY3JldA==", "X-Scope-OrgID": "hadoop"})
	pw := filepath.Join(t.TempDir(), "password")
	if err := os.WriteFile(pw, []byte("s3cret\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	s := prometheusSection{PrometheusConfig: defaultPrometheus()}
	s.URL, s.Timeout = srv.URL, 5*time.Second
	s.BasicAuth = basicAuthKeys{Username: "ops", PasswordFile: pw}
	s.TLS = tlsClientKeys{CAFile: pki.CAFile, CertFile: pki.CertFile, KeyFile: pki.KeyFile}
	s.Headers = map[string]string{"X-Scope-OrgID": "hadoop"}
	reg := prometheus.NewRegistry()
	m := telemetry.New(reg, nil)
	obs := &outboundMetrics{}
	obs.set(m)
	p, err := openPrometheus(s, obs)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if err := p.Ping(context.Background()); err != nil {
		t.Fatalf("Ping with basic auth, a client certificate and the tenant header: %v (server saw %v)", err, seen())
	}
	if got := seen(); len(got) != 1 || got[0] != "/-/ready cert=colocd auth=Basic b3BzOnMzY3JldA== org=hadoop" {
		t.Errorf("server saw %v", got)
	}
	mfs, _ := reg.Gather()
	var timed bool
	for _, mf := range mfs {
		if mf.GetName() == "colocd_outbound_request_duration_seconds" {
			for _, mt := range mf.GetMetric() {
				l := map[string]string{}
				for _, lp := range mt.GetLabel() {
					l[lp.GetName()] = lp.GetValue()
				}
				timed = timed || l["service"] == "prometheus" && l["call"] == "/-/ready" && l["outcome"] == "2xx" && mt.GetHistogram().GetSampleCount() == 1
			}
		}
	}
	if !timed {
		t.Error(`no colocd_outbound_request_duration_seconds{service="prometheus",call="/-/ready",outcome="2xx"} sample`)
	}

	s.TLS.CertFile, s.TLS.KeyFile = "", ""
	p2, err := openPrometheus(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer p2.Close()
	if err := p2.Ping(context.Background()); err == nil {
		t.Error("Ping without the client certificate succeeded")
	}
}

// TestOutboundInfluxClient: the influx section's tls_config (CA and client
// certificate) reaches an InfluxDB behind mutual TLS.
func TestOutboundInfluxClient(t *testing.T) {
	pki := testpki.New(t)
	srv, seen := mtlsServer(t, pki, nil)
	s := DefaultConfig().Influx
	s.URL, s.Bucket = srv.URL, "telegraf/autogen"
	s.TLS = tlsClientKeys{CAFile: pki.CAFile, CertFile: pki.CertFile, KeyFile: pki.KeyFile}
	col, err := openInflux(s, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	if err := col.Ping(context.Background()); err != nil {
		t.Fatalf("Ping over mutual TLS: %v (server saw %v)", err, seen())
	}
	if got := seen(); len(got) == 0 || !strings.Contains(got[0], "cert=colocd") {
		t.Errorf("server saw %v", got)
	}
}

// TestOutboundConfigErrors: connection settings that cannot work are
// configuration errors naming the key.
func TestOutboundConfigErrors(t *testing.T) {
	base := prometheusSection{PrometheusConfig: defaultPrometheus()}
	base.URL = "https://prometheus.example.org:9090"
	for _, tc := range []struct {
		name string
		edit func(*prometheusSection)
		key  string
	}{
		{"two CAs", func(s *prometheusSection) { s.CAFile, s.TLS.CAFile = "a.pem", "b.pem" }, "prometheus.ca_file"},
		{"token and basic auth", func(s *prometheusSection) {
			s.BearerToken, s.BasicAuth = "t0ken", basicAuthKeys{Username: "u", Password: "p"}
		}, "prometheus.bearer_token"},
		{"basic auth without a user", func(s *prometheusSection) { s.BasicAuth.Password = "p" }, "prometheus.basic_auth.username"},
		{"missing client certificate", func(s *prometheusSection) {
			s.TLS.CertFile, s.TLS.KeyFile = "/nonexistent/cert.pem", "/nonexistent/key.pem"
		}, "prometheus.tls_config.cert_file"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := base
			tc.edit(&s)
			_, err := openPrometheus(s, nil)
			var ce *configError
			if !asConfigError(err, &ce) || ce.Key != tc.key {
				t.Errorf("err = %v, want a *configError naming %s", err, tc.key)
			}
		})
	}
}

func asConfigError(err error, ce **configError) bool { return errors.As(err, ce) }
