package yarnclient_test

import (
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
)

func TestConfigValidate(t *testing.T) {
	ok := []string{"http://rm1:8088"}
	tests := map[string]struct {
		cfg   yarnclient.Config
		field string
	}{
		"no RM":            {yarnclient.Config{}, "RMURLs"},
		"bad scheme":       {yarnclient.Config{RMURLs: []string{"ftp://rm:8088"}}, "RMURLs[0]"},
		"no host":          {yarnclient.Config{RMURLs: []string{"http://rm1:8088", "http://"}}, "RMURLs[1]"},
		"query":            {yarnclient.Config{RMURLs: []string{"http://rm:8088/?user.name=x"}}, "RMURLs[0]"},
		"credentials":      {yarnclient.Config{RMURLs: []string{"http://u:p@rm:8088"}}, "RMURLs[0]"},
		"user and auth":    {yarnclient.Config{RMURLs: ok, User: "a", Auth: yarnclient.SimpleAuth{User: "b"}}, "Auth"},
		"client and CA":    {yarnclient.Config{RMURLs: ok, HTTPClient: http.DefaultClient, CAFile: "/x.pem"}, "CAFile"},
		"negative timeout": {yarnclient.Config{RMURLs: ok, Timeout: -time.Second}, "Timeout"},
		"negative backoff": {yarnclient.Config{RMURLs: ok, Backoff: -time.Second}, "Backoff"},
		"negative NMs":     {yarnclient.Config{RMURLs: ok, NMConcurrency: -1}, "NMConcurrency"},
		"missing CA file":  {yarnclient.Config{RMURLs: ok, CAFile: "/nonexistent/ca.pem"}, "CAFile"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := yarnclient.New(tt.cfg)
			if !errors.Is(err, yarnclient.ErrInvalid) || !strings.Contains(err.Error(), tt.field) {
				t.Errorf("New error = %v, want ErrInvalid naming %s", err, tt.field)
			}
		})
	}
	c, err := yarnclient.New(yarnclient.Config{RMURLs: []string{"https://gw.example.com:8443/gateway/default/resourcemanager/"}})
	if err != nil {
		t.Fatal(err)
	}
	if got := c.ActiveRM(); got != "https://gw.example.com:8443/gateway/default/resourcemanager" {
		t.Errorf("ActiveRM = %q, want the gateway prefix without the trailing slash", got)
	}
}

// TestCAFile: an https RM signed by a private CA is reached only with that
// CA configured.
func TestCAFile(t *testing.T) {
	var gotPath, gotUser string
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		gotPath, gotUser = r.URL.Path, r.URL.Query().Get("user.name")
		fmt.Fprint(w, `{"clusterInfo":{"id":1,"state":"STARTED","haState":"ACTIVE"}}`)
	}))
	srv.Config.ErrorLog = log.New(io.Discard, "", 0) // the untrusting client's handshake failure
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := filepath.Join(t.TempDir(), "ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	if err := os.WriteFile(ca, pemBytes, 0o600); err != nil {
		t.Fatal(err)
	}
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.CAFile = ca }, srv.URL+"/prefix")
	info, err := c.ClusterInfo(ctxT(t))
	if err != nil || info.HAState != "ACTIVE" {
		t.Fatalf("ClusterInfo over TLS = %+v, %v", info, err)
	}
	if gotPath != "/prefix"+yarnclient.PathClusterInfo || gotUser != "alice" {
		t.Errorf("request path %q user %q", gotPath, gotUser)
	}
	untrusting, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.Retries = -1 }, srv.URL)
	if _, err := untrusting.ClusterInfo(ctxT(t)); err == nil || !strings.Contains(err.Error(), "certificate") {
		t.Errorf("without the CA: %v, want a certificate error", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.pem")
	if err := os.WriteFile(empty, []byte("not a pem"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := yarnclient.New(yarnclient.Config{RMURLs: []string{srv.URL}, CAFile: empty}); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("CA file without certificates: %v, want ErrInvalid", err)
	}
}

// TestKerberosChallenge: a 401 with "WWW-Authenticate: Negotiate" says what
// is missing.
func TestKerberosChallenge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("WWW-Authenticate", "Negotiate")
		w.WriteHeader(http.StatusUnauthorized)
		fmt.Fprint(w, "<html><body><h2>HTTP ERROR 401</h2>Authentication required</body></html>")
	}))
	t.Cleanup(srv.Close)
	c, _ := newClient(t, nil, srv.URL)
	_, err := c.ClusterMetrics(ctxT(t))
	if !errors.Is(err, yarnclient.ErrUnauthorized) || !strings.Contains(err.Error(), "SPNEGO") || !strings.Contains(err.Error(), "Authentication required") {
		t.Errorf("err = %v, want ErrUnauthorized naming SPNEGO and quoting the page", err)
	}
}
