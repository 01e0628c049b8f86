package yarnclient_test

import (
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colocd/colocd/internal/testing/testpki"
	"github.com/colocd/colocd/yarnclient"
)

// TestClientCertificate: an https RM that requires a client certificate
// signed by its CA (Hadoop's hadoop.ssl.require.client.cert) is reached
// with CertFile and KeyFile and refuses the client without them; a
// certificate without its key, or with another key, is refused before any
// request, naming the fields.
func TestClientCertificate(t *testing.T) {
	pki := testpki.New(t)
	var gotCN string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotCN = r.TLS.PeerCertificates[0].Subject.CommonName
		fmt.Fprint(w, `{"clusterInfo":{"id":1,"state":"STARTED","haState":"ACTIVE"}}`)
	}))
	srv.TLS = pki.ServerConfig()
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failures below
	srv.StartTLS()
	t.Cleanup(srv.Close)

	c, _ := newClient(t, func(cfg *yarnclient.Config) {
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = pki.CAFile, pki.CertFile, pki.KeyFile
	}, srv.URL)
	if info, err := c.ClusterInfo(ctxT(t)); err != nil || info.HAState != "ACTIVE" {
		t.Fatalf("ClusterInfo with the client certificate = %+v, %v", info, err)
	}
	if gotCN != "colocd" {
		t.Errorf("the RM saw client certificate %q, want colocd's", gotCN)
	}
	if got := c.ClientCertificate(); got == nil || got.Subject.CommonName != "colocd" {
		t.Errorf("ClientCertificate = %v, want the one presented (colocd)", got)
	}
	without, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.CAFile, cfg.Retries = pki.CAFile, -1 }, srv.URL)
	if got := without.ClientCertificate(); got != nil {
		t.Errorf("ClientCertificate without one = %v, want nil", got.Subject)
	}
	if _, err := without.ClusterInfo(ctxT(t)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without a client certificate: %v, want the RM's certificate refusal", err)
	}

	for name, cfg := range map[string]yarnclient.Config{
		"certificate without key": {CertFile: pki.CertFile},
		"key without certificate": {KeyFile: pki.KeyFile},
		"another key":             {CertFile: pki.CertFile, KeyFile: pki.OtherKeyFile(t)},
		"missing certificate":     {CertFile: filepath.Join(t.TempDir(), "none.pem"), KeyFile: pki.KeyFile},
		"with HTTPClient":         {CertFile: pki.CertFile, KeyFile: pki.KeyFile, HTTPClient: &http.Client{}},
	} {
		cfg.RMURLs = []string{srv.URL}
		_, err := yarnclient.New(cfg)
		if !errors.Is(err, yarnclient.ErrInvalid) || !strings.Contains(err.Error(), "CertFile") {
			t.Errorf("%s: New error = %v, want ErrInvalid naming CertFile", name, err)
		}
	}
}
