package daemon

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// lockedBuffer is a log sink that tests read while Serve writes.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// TestServeReload: a reload (SIGHUP in colocd serve) applies a new token
// and a new certificate to the next requests and handshakes, and the log
// level; a configuration that does not load changes nothing; keys that
// need a restart are named.
func TestServeReload(t *testing.T) {
	cert1, key1, pool1 := selfSigned(t)
	cert2, key2, pool2 := selfSigned(t)
	cfg, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sim.Workload = "../configs/workloads/paper-queue-a.yaml"
	cfg.TLS = tlsConfig{CertFile: cert1, KeyFile: key1}
	cfg.Tokens = []tokenConfig{{Token: "old-secret", User: "ops", Role: 3}}
	cfg.LogLevel = "info"
	cfg.ShutdownTimeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var (
		mu   sync.Mutex
		next = cfg
		fail error
	)
	reloaded, results := make(chan struct{}), make(chan error)
	level := new(slog.LevelVar)
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Logger: slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: level})),
			LogLevel: level, Reloaded: reloaded, reloadDone: func(err error) { results <- err },
			Reload: func() (Config, error) {
				mu.Lock()
				defer mu.Unlock()
				return next, fail
			}})
	}()
	reload := func(c Config, err error) error {
		t.Helper()
		mu.Lock()
		next, fail = c, err
		mu.Unlock()
		reloaded <- struct{}{}
		select {
		case err := <-results:
			return err
		case <-time.After(20 * time.Second):
			t.Fatal("no reload within 20s")
			return nil
		}
	}
	both := x509.NewCertPool()
	both.AppendCertsFromPEM(mustRead(t, cert1))
	both.AppendCertsFromPEM(mustRead(t, cert2))
	client := &http.Client{Timeout: 10 * time.Second,
		Transport: &http.Transport{DisableKeepAlives: true, TLSClientConfig: &tls.Config{RootCAs: both}}}
	// whoami is the status of GET /v1/whoami with token, and whether the
	// server's certificate verifies with pool.
	whoami := func(token string, pool *x509.CertPool) (int, bool) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, "https://"+ln.Addr().String()+"/v1/whoami", nil)
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET /v1/whoami: %v", err)
		}
		res.Body.Close()
		_, verr := res.TLS.PeerCertificates[0].Verify(x509.VerifyOptions{Roots: pool})
		return res.StatusCode, verr == nil
	}
	poll(t, "the API", 20*time.Second, func() bool {
		res, err := client.Get("https://" + ln.Addr().String() + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	type answer struct {
		Code   int
		CertOK bool
	}
	check := func(what string, token string, pool *x509.CertPool, want answer) {
		t.Helper()
		code, ok := whoami(token, pool)
		if d := cmp.Diff(want, answer{code, ok}); d != "" {
			t.Errorf("%s (-want,+got):\n%s", what, d)
		}
	}
	check("before reload, old token and certificate", "old-secret", pool1, answer{200, true})

	c2 := cfg
	c2.TLS = tlsConfig{CertFile: cert2, KeyFile: key2}
	c2.Tokens = []tokenConfig{{Token: "new-secret", User: "ops", Role: 3}}
	c2.LogLevel = "debug"
	c2.Listen = "127.0.0.1:1" // needs a restart: named, not applied
	if err := reload(c2, nil); err != nil {
		t.Fatalf("reload: %v", err)
	}
	check("after reload, new token and certificate", "new-secret", pool2, answer{200, true})
	check("after reload, old token", "old-secret", pool2, answer{401, true})
	if level.Level() != slog.LevelDebug {
		t.Errorf("log level after reload: %v, want DEBUG", level.Level())
	}
	if !strings.Contains(logs.String(), `msg="changed keys that a reload does not apply: restart colocd for them" component=reload keys=listen`) {
		t.Errorf("no WARN naming listen as needing a restart in:\n%s", logs.String())
	}

	// A configuration that does not load, or a certificate that does not
	// read, changes nothing.
	if err := reload(Config{}, cfgErr("listen", "broken")); err == nil || !errors.Is(err, ErrConfig) {
		t.Errorf("reload of a broken config: %v, want a config error", err)
	}
	c3 := c2
	c3.TLS.CertFile = cert2 + ".missing"
	c3.Tokens = []tokenConfig{{Token: "third-secret", User: "ops", Role: 3}}
	if err := reload(c3, nil); err == nil {
		t.Error("reload with a missing certificate succeeded")
	}
	check("after failed reloads", "new-secret", pool2, answer{200, true})
	check("after failed reloads, the refused config's token", "third-secret", pool2, answer{401, true})

	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}

func mustRead(tb testing.TB, path string) []byte {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// TestReloadedConfig: what a reload applies and what it names.
func TestReloadedConfig(t *testing.T) {
	run := DefaultConfig()
	run.TLS = tlsConfig{CertFile: "a.pem", KeyFile: "a.key"}
	next := run
	next.TLS = tlsConfig{CertFile: "b.pem", KeyFile: "b.key"}
	next.API.MaxKinds = 7
	next.API.ACL.Admin = "ops"
	next.Admission.MaxRunning = 99
	next.LogLevel = "warn"
	got, restart := reloadedConfig(run, next)
	if d := cmp.Diff([]string{"admission.max_running", "api.max_kinds"}, restart); d != "" {
		t.Errorf("keys needing a restart (-want,+got):\n%s", d)
	}
	if got.TLS.CertFile != "b.pem" || got.API.ACL.Admin != "ops" || got.LogLevel != "warn" || got.API.MaxKinds == 7 || got.Admission.MaxRunning == 99 {
		t.Errorf("applied: tls %q acl.admin %q log_level %q max_kinds %d max_running %d", got.TLS.CertFile, got.API.ACL.Admin, got.LogLevel, got.API.MaxKinds, got.Admission.MaxRunning)
	}
	// TLS turned off needs a restart.
	off := run
	off.TLS = tlsConfig{}
	got, restart = reloadedConfig(run, off)
	if got.TLS.CertFile != "a.pem" || !cmp.Equal(restart, []string{"tls.cert_file", "tls.key_file"}) {
		t.Errorf("TLS off: kept %q, restart %v", got.TLS.CertFile, restart)
	}
}
