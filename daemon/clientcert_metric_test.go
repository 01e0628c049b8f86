package daemon

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/testpki"
)

// TestClientCertExpiryMetric: with yarn.cert_file, /metrics carries
// colocd_yarn_client_certificate_expiry_timestamp_seconds at the
// certificate's NotAfter (the ColocdClientCertificateExpiring alert's
// series); without one, no such series.
func TestClientCertExpiryMetric(t *testing.T) {
	pki := testpki.New(t)
	raw, err := os.ReadFile(pki.CertFile)
	if err != nil {
		t.Fatal(err)
	}
	block, _ := pem.Decode(raw)
	leaf, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	const series = "colocd_yarn_client_certificate_expiry_timestamp_seconds"
	for _, withCert := range []bool{true, false} {
		t.Run(fmt.Sprint("cert=", withCert), func(t *testing.T) {
			rm := newTestRM(t)
			cfg, err := Load(LoadOptions{File: yarnDaemonConfig(t, t.TempDir(), "127.0.0.1:0", rm.URL()), LookupEnv: env(nil)})
			if err != nil {
				t.Fatal(err)
			}
			if withCert {
				cfg.Yarn.CertFile, cfg.Yarn.KeyFile = pki.CertFile, pki.KeyFile
			}
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			}()
			defer func() {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("Serve: %v", err)
				}
			}()
			var body string
			poll(t, "/metrics", 20*time.Second, func() bool {
				req, _ := http.NewRequest(http.MethodGet, "http://"+ln.Addr().String()+"/metrics", nil)
				req.Header.Set("Authorization", "Bearer "+yarnTestToken)
				res, err := (&http.Client{Timeout: 5 * time.Second}).Do(req)
				if err != nil {
					return false
				}
				defer res.Body.Close()
				b, _ := io.ReadAll(res.Body)
				body = string(b)
				return res.StatusCode == http.StatusOK && strings.Contains(body, "colocd_data_dir_free_bytes")
			})
			want := fmt.Sprintf("%s %g", series, float64(leaf.NotAfter.Unix()))
			if got := strings.Contains(body, want); got != withCert {
				t.Errorf("/metrics has %q: %v, want %v", want, got, withCert)
			}
			if !withCert && strings.Contains(body, series) {
				t.Errorf("/metrics names %s without a client certificate", series)
			}
		})
	}
}
