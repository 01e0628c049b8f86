// Package testpki makes a private CA with a server certificate for
// 127.0.0.1 and a client certificate, as PEM files, for tests of mutual
// TLS: a server that asks for client certificates and a client that
// presents one.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// PKI is a CA that signed a server certificate for 127.0.0.1 and a client
// certificate (common name "colocd"), in a temporary directory.
type PKI struct {
	Dir string
	// CAFile is the CA's certificate; CertFile and KeyFile the client's
	// certificate and key (SEC 1).
	CAFile, CertFile, KeyFile string
	// ServerCert is the server's certificate and key, for a tls.Config.
	ServerCert tls.Certificate
	// Pool holds the CA: a server's ClientCAs, a client's RootCAs.
	Pool *x509.CertPool
}

// New makes a PKI valid from an hour ago to an hour from now.
func New(tb testing.TB) PKI {
	tb.Helper()
	p := PKI{Dir: tb.TempDir(), Pool: x509.NewCertPool()}
	caKey := newKey(tb)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, IsCA: true, BasicConstraintsValid: true,
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		tb.Fatal(err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		tb.Fatal(err)
	}
	p.Pool.AddCert(ca)
	leaf := func(serial int64, cn string, usage x509.ExtKeyUsage) ([]byte, *ecdsa.PrivateKey) {
		k := newKey(tb)
		tmpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}}
		der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &k.PublicKey, caKey)
		if err != nil {
			tb.Fatal(err)
		}
		return der, k
	}
	p.CAFile = p.write(tb, "ca.pem", &pem.Block{Type: "CERTIFICATE", Bytes: caDER})
	sDER, sKey := leaf(2, "server", x509.ExtKeyUsageServerAuth)
	p.ServerCert = tls.Certificate{Certificate: [][]byte{sDER}, PrivateKey: sKey}
	cDER, cKey := leaf(3, "colocd", x509.ExtKeyUsageClientAuth)
	p.CertFile = p.write(tb, "client.pem", &pem.Block{Type: "CERTIFICATE", Bytes: cDER})
	p.KeyFile = p.write(tb, "client-key.pem", ecKeyBlock(tb, cKey))
	return p
}

// OtherKeyFile writes a key that belongs to no certificate of p.
func (p PKI) OtherKeyFile(tb testing.TB) string {
	tb.Helper()
	return p.write(tb, "other-key.pem", ecKeyBlock(tb, newKey(tb)))
}

// ServerConfig is a server's TLS configuration that requires a client
// certificate signed by p's CA.
func (p PKI) ServerConfig() *tls.Config {
	return &tls.Config{Certificates: []tls.Certificate{p.ServerCert}, ClientCAs: p.Pool,
		ClientAuth: tls.RequireAndVerifyClientCert, MinVersion: tls.VersionTLS12}
}

func (p PKI) write(tb testing.TB, name string, block *pem.Block) string {
	tb.Helper()
	path := filepath.Join(p.Dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(block), 0o600); err != nil {
		tb.Fatal(err)
	}
	return path
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

func ecKeyBlock(tb testing.TB, k *ecdsa.PrivateKey) *pem.Block {
	tb.Helper()
	b, err := x509.MarshalECPrivateKey(k)
	if err != nil {
		tb.Fatal(err)
	}
	return &pem.Block{Type: "EC PRIVATE KEY", Bytes: b}
}
