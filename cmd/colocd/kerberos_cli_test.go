package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/internal/testing/kdctest"
)

// TestCLIKerberosTicketCache: the CLI authenticates with the person's
// ticket cache, as kinit made it against a real MIT KDC (KRB5CCNAME), no
// token: the job is the principal's user; -o name and yaml print it; with
// the cache gone the CLI says to run kinit.
func TestCLIKerberosTicketCache(t *testing.T) {
	kdc := kdctest.Start(t)
	kdc.AddPrincipal(t, "HTTP/127.0.0.1")
	k, err := api.LoadKerberos(kdc.Keytab(t, "HTTP/127.0.0.1"), "HTTP/127.0.0.1", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	srv := apiclienttest.Start(t, apiclienttest.Options{Kerberos: k})
	alice := kdc.AddPrincipal(t, "alice")
	cc := filepath.Join(t.TempDir(), "krb5cc_alice")
	kinit := exec.Command(kdctest.Tool(t, "kinit"), "-k", "-t", kdc.Keytab(t, alice), "-c", "FILE:"+cc, alice)
	kinit.Env = append(os.Environ(), "KRB5_CONFIG="+kdc.Krb5Conf())
	if out, err := kinit.CombinedOutput(); err != nil {
		t.Fatalf("kinit: %v\n%s", err, out)
	}
	t.Setenv("KRB5CCNAME", "FILE:"+cc)
	t.Setenv("KRB5_CONFIG", kdc.Krb5Conf())
	t.Setenv("XDG_CONFIG_HOME", t.TempDir()) // no client configuration of the developer's
	t.Setenv(envToken, "")
	t.Setenv(envServer, srv.URL)

	run := func(args ...string) (string, error) {
		t.Helper()
		root := newRoot(nil, nil)
		var out, errOut bytes.Buffer
		root.SetOut(&out)
		root.SetErr(&errOut)
		root.SetArgs(args)
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err := root.ExecuteContext(ctx)
		return out.String(), err
	}
	out, err := run("submit", "--kind", "kmeans", "--containers", "2", "--memory-mb", "512", "--vcores", "1", "-o", "json")
	if err != nil {
		t.Fatalf("submit with the ticket cache: %v", err)
	}
	var j v1.Job
	if err := json.Unmarshal([]byte(out), &j); err != nil || j.User != "alice" || j.IdempotencyKey == "" {
		t.Fatalf("submitted %+v (%v); want alice's job with an idempotency key", j, err)
	}
	if out, err = run("queue", "-o", "name"); err != nil || strings.TrimSpace(out) != "job/"+j.ID {
		t.Errorf("queue -o name: %q, %v", out, err)
	}
	if out, err = run("job", j.ID, "-o", "yaml"); err != nil || !strings.Contains(out, "user: alice\n") || !strings.Contains(out, "id: "+j.ID) {
		t.Errorf("job -o yaml: %q, %v", out, err)
	}
	if out, err = run("whoami"); err != nil || !strings.Contains(out, alice+" by kerberos") {
		t.Errorf("whoami: %q, %v", out, err)
	}
	// The cache gone: a usage error that says to kinit.
	t.Setenv("KRB5CCNAME", "FILE:"+filepath.Join(t.TempDir(), "none"))
	if _, err := run("queue"); err == nil || !strings.Contains(err.Error(), "kinit") {
		t.Errorf("without a ticket cache: %v, want a hint to kinit", err)
	}
}

// TestCLIClientConfig: the client configuration file names the server and
// the token file; flags win over it; an unknown key is named.
func TestCLIClientConfig(t *testing.T) {
	srv := apiclienttest.Start(t, apiclienttest.Options{})
	dir := t.TempDir()
	tok := filepath.Join(dir, "token")
	if err := os.WriteFile(tok, []byte(apiclienttest.SubmitterToken+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "colocd", "config.yaml")
	if err := os.MkdirAll(filepath.Dir(cfg), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(cfg, []byte("server: "+srv.URL+"\ntoken_file: "+tok+"\noutput: name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("XDG_CONFIG_HOME", dir)
	t.Setenv(envToken, "")
	t.Setenv(envServer, "")
	var out bytes.Buffer
	root := newRoot(&out, &out)
	root.SetArgs([]string{"whoami"})
	if err := root.ExecuteContext(context.Background()); err != nil || strings.TrimSpace(out.String()) != "user/"+apiclienttest.SubmitterUser {
		t.Errorf("whoami from the client configuration: %q, %v", out.String(), err)
	}
	if err := os.WriteFile(cfg, []byte("servr: x\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	root = newRoot(&out, &out)
	root.SetArgs([]string{"whoami"})
	if err := root.ExecuteContext(context.Background()); err == nil || !strings.Contains(err.Error(), "servr") {
		t.Errorf("an unknown key: %v", err)
	}
}
