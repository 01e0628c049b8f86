package api

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
)

// certFor is a certificate for cn signed by ca (self-signed when ca is nil).
func certFor(t *testing.T, cn string, ca *tls.Certificate, isCA bool) tls.Certificate {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(time.Now().UnixNano()), Subject: pkix.Name{CommonName: cn, Organization: []string{"colocd test"}},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: isCA, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth, x509.ExtKeyUsageServerAuth},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
	parent, signer := tmpl, any(key)
	if ca != nil {
		parent, signer = ca.Leaf, ca.PrivateKey
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, parent, &key.PublicKey, signer)
	if err != nil {
		t.Fatal(err)
	}
	leaf, _ := x509.ParseCertificate(der)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key, Leaf: leaf}
}

// TestClientCertificate: over mutual TLS, a verified client certificate
// identifies its subject's common name, whose role the ACLs grant; a
// bearer token still wins; no certificate and no token is a 401.
func TestClientCertificate(t *testing.T) {
	ca := certFor(t, "colocd test CA", nil, true)
	serverCert := certFor(t, "127.0.0.1", &ca, false)
	carol := certFor(t, "carol", &ca, false)
	h := newHarness(t, withDeps(func(d *Deps) {
		d.ClientCerts, d.ACLs = true, ACLs{Reader: ACL{All: true}, Submitter: ACL{Users: []string{"carol"}}}
	}))
	pool := x509.NewCertPool()
	pool.AddCert(ca.Leaf)
	srv := httptest.NewUnstartedServer(h.srv.Config.Handler)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{serverCert}, ClientCAs: pool, ClientAuth: tls.VerifyClientCertIfGiven}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	client := func(certs ...tls.Certificate) *http.Client {
		tr := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}
		t.Cleanup(tr.CloseIdleConnections)
		return &http.Client{Transport: tr}
	}
	get := func(c *http.Client, token string) (int, v1.WhoAmI) {
		req, _ := http.NewRequest("GET", srv.URL+"/v1/whoami", nil)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		var w v1.WhoAmI
		_ = json.NewDecoder(res.Body).Decode(&w)
		return res.StatusCode, w
	}
	if code, w := get(client(carol), ""); code != 200 || w.User != "carol" || w.Method != methodTLS || w.Role != "submitter" || w.RoleRule != "api.acl.submitter" {
		t.Errorf("carol's certificate: %d %+v", code, w)
	}
	if code, w := get(client(carol), readerTok); code != 200 || w.User != "rita" {
		t.Errorf("a token beside the certificate: %d %+v, want the token's user", code, w)
	}
	if code, _ := get(client(), ""); code != http.StatusUnauthorized {
		t.Errorf("no certificate, no token: %d", code)
	}
	// A certificate of another CA identifies nobody: Go's client does not
	// send it (the server asks for its CA's), another would fail the
	// handshake.
	stranger := certFor(t, "mallory", nil, false)
	if res, err := client(stranger).Get(srv.URL + "/v1/whoami"); err == nil {
		res.Body.Close()
		if res.StatusCode != http.StatusUnauthorized {
			t.Errorf("a certificate of another CA: %d, want 401", res.StatusCode)
		}
	}
}
