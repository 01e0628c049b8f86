package yarnclient_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

// testPKI is a private CA with a server certificate for 127.0.0.1 and a
// client certificate, as PEM files in a temporary directory.
type testPKI struct {
	pool                      *x509.CertPool
	server                    tls.Certificate
	caFile, certFile, keyFile string
	otherKeyFile              string // a key that is not the client certificate's
}

func newTestPKI(t *testing.T) testPKI {
	t.Helper()
	dir := t.TempDir()
	key := func() *ecdsa.PrivateKey {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	keyDER := func(k *ecdsa.PrivateKey) []byte {
		b, err := x509.MarshalPKCS8PrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	now := time.Now()
	caKey := key()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	sign := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) ([]byte, *ecdsa.PrivateKey) {
		k := key()
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: ips,
			KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		return der, k
	}
	srvDER, srvKey := sign(2, "rm", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	cliDER, cliKey := sign(3, "colocd", x509.ExtKeyUsageClientAuth, nil)
	p := testPKI{pool: x509.NewCertPool(),
		server:       tls.Certificate{Certificate: [][]byte{srvDER}, PrivateKey: srvKey},
		caFile:       write("ca.pem", "CERTIFICATE", caDER),
		certFile:     write("client.pem", "CERTIFICATE", cliDER),
		keyFile:      write("client.key", "PRIVATE KEY", keyDER(cliKey)),
		otherKeyFile: write("other.key", "PRIVATE KEY", keyDER(key())),
	}
	p.pool.AddCert(ca)
	return p
}

// TestClientCertificate: an https RM that requires a client certificate
// signed by its CA (Hadoop's hadoop.ssl.require.client.cert) is reached
// with CertFile and KeyFile and refuses the client without them; a
// certificate without its key, or with another key, is refused before any
// request, naming the fields.
func TestClientCertificate(t *testing.T) {
	pki := newTestPKI(t)
	var gotCN string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotCN = r.TLS.PeerCertificates[0].Subject.CommonName
		fmt.Fprint(w, `{"clusterInfo":{"id":1,"state":"STARTED","haState":"ACTIVE"}}`)
	}))
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pki.server}, ClientAuth: tls.RequireAndVerifyClientCert,
		ClientCAs: pki.pool, MinVersion: tls.VersionTLS12}
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the handshake failures below
	srv.StartTLS()
	t.Cleanup(srv.Close)

	c, _ := newClient(t, func(cfg *yarnclient.Config) {
		cfg.CAFile, cfg.CertFile, cfg.KeyFile = pki.caFile, pki.certFile, pki.keyFile
	}, srv.URL)
	if info, err := c.ClusterInfo(ctxT(t)); err != nil || info.HAState != "ACTIVE" {
		t.Fatalf("ClusterInfo with the client certificate = %+v, %v", info, err)
	}
	if gotCN != "colocd" {
		t.Errorf("the RM saw client certificate %q, want colocd's", gotCN)
	}
	without, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.CAFile, cfg.Retries = pki.caFile, -1 }, srv.URL)
	if _, err := without.ClusterInfo(ctxT(t)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without a client certificate: %v, want the RM's certificate refusal", err)
	}

	for name, cfg := range map[string]yarnclient.Config{
		"certificate without key": {CertFile: pki.certFile},
		"key without certificate": {KeyFile: pki.keyFile},
		"another key":             {CertFile: pki.certFile, KeyFile: pki.otherKeyFile},
		"missing certificate":     {CertFile: filepath.Join(t.TempDir(), "none.pem"), KeyFile: pki.keyFile},
		"with HTTPClient":         {CertFile: pki.certFile, KeyFile: pki.keyFile, HTTPClient: &http.Client{}},
	} {
		cfg.RMURLs = []string{srv.URL}
		_, err := yarnclient.New(cfg)
		if !errors.Is(err, yarnclient.ErrInvalid) || !strings.Contains(err.Error(), "CertFile") {
			t.Errorf("%s: New error = %v, want ErrInvalid naming CertFile", name, err)
		}
	}
}
