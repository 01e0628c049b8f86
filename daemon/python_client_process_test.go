package daemon

import (
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/kdctest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// debianPython is Debian's python3 with python3-requests and
// python3-requests-kerberos (scripts/install-tools.sh installs them); a
// test needing it is skipped without it, or failed with
// COLOCD_REQUIRE_TOOLS=1.
func debianPython(t *testing.T) string {
	t.Helper()
	const py = "/usr/bin/python3"
	err := exec.Command(py, "-c", "import requests, requests_kerberos").Run()
	if err == nil {
		return py
	}
	msg := "Debian's python3 with python3-requests and python3-requests-kerberos is missing (scripts/install-tools.sh): " + err.Error()
	if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
		t.Fatal(msg)
	}
	t.Skip(msg)
	return ""
}

// kinit writes a credential cache for principal (from a keytab made for
// it) and returns its path.
func kinit(t *testing.T, kdc *kdctest.KDC, principal string) string {
	t.Helper()
	p := kdc.AddPrincipal(t, principal)
	cc := filepath.Join(t.TempDir(), "krb5cc_"+principal)
	cmd := exec.Command(kdctest.Tool(t, "kinit"), "-k", "-t", kdc.Keytab(t, p), "-c", "FILE:"+cc, p)
	cmd.Env = append(os.Environ(), "KRB5_CONFIG="+kdc.Krb5Conf())
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("kinit %s: %v\n%s", p, err, out)
	}
	return cc
}

// TestPythonClientProcess: the documented Python example
// (examples/python/colocd_submit.py, on Debian's python3-requests and
// python3-requests-kerberos) against the real daemon and a real MIT KDC,
// with the tickets kinit made: it submits with an idempotency key (twice:
// one job), follows the job until YARN runs it, pages the queue a job at a
// time, and gets a 403 naming the rule for another user's job. The server
// is authenticated too (mutual authentication, REQUIRED).
func TestPythonClientProcess(t *testing.T) {
	py := debianPython(t)
	kdc := kdctest.Start(t)
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart(), yarntest.ProxyUser("colocd", "alice", "bob"))
	rm.AddNode(yarnclient.Node{ID: "worker1:8041"})
	addr := freeAddr(t)
	p := startServe(t, t.TempDir(), kerberosConfig(t, kdc, t.TempDir(), addr, rm.URL(), ""), addr, yarnTestToken)
	p.waitReady(30 * time.Second)
	job := filepath.Join(t.TempDir(), "job.json")
	b, _ := json.Marshal(yarnJob)
	if err := os.WriteFile(job, b, 0o600); err != nil {
		t.Fatal(err)
	}
	script, err := filepath.Abs("../examples/python/colocd_submit.py")
	if err != nil {
		t.Fatal(err)
	}
	ccs := map[string]string{"alice": kinit(t, kdc, "alice"), "bob": kinit(t, kdc, "bob")}
	run := func(user string, wantExit int, args ...string) []map[string]any {
		t.Helper()
		cmd := exec.Command(py, append([]string{script, "--server", p.base}, args...)...)
		cmd.Env = append(cleanEnv(), "KRB5CCNAME=FILE:"+ccs[user], "KRB5_CONFIG="+kdc.Krb5Conf())
		out, err := cmd.Output()
		code := 0
		var ee *exec.ExitError
		if errors.As(err, &ee) {
			code = ee.ExitCode()
			out = append(out, ee.Stderr...)
		} else if err != nil {
			t.Fatalf("%s %v: %v", user, args, err)
		}
		if code != wantExit {
			t.Fatalf("%s %v: exit %d, want %d:\n%s", user, args, code, wantExit, out)
		}
		var lines []map[string]any
		for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
			var m map[string]any
			if err := json.Unmarshal([]byte(l), &m); err != nil {
				t.Fatalf("%s %v: line %q: %v", user, args, l, err)
			}
			lines = append(lines, m)
		}
		return lines
	}
	first := run("alice", 0, "submit", job, "--key", "airflow-run-1")[0]
	again := run("alice", 0, "submit", job, "--key", "airflow-run-1")[0]
	j := first["job"].(map[string]any)
	id := j["id"].(string)
	if first["status"] != 201.0 || again["status"] != 200.0 || again["job"].(map[string]any)["id"] != id || j["user"] != "alice" {
		t.Fatalf("submit twice with one key: %v then %v; want 201 then 200, one job of alice's", first, again)
	}
	states := run("alice", 0, "follow", id, "--until", "running", "--every", "0.1", "--timeout", "30")
	if last := states[len(states)-1]; last["state"] != "running" || last["app_id"] == "" {
		t.Errorf("follow: %v", states)
	}
	if app, ok := rm.App(states[len(states)-1]["app_id"].(string)); !ok || app.User != "alice" {
		t.Errorf("alice's application in YARN: %+v, %v", app, ok)
	}
	bobs := run("bob", 0, "submit", job)[0]["job"].(map[string]any)["id"].(string)
	if got := run("alice", 0, "list", "--state", "all", "--limit", "1")[0]; got["count"] != 2.0 {
		t.Errorf("list a job a page: %v, want both jobs", got)
	}
	refused := run("alice", 3, "cancel", bobs)[0]
	if refused["status"] != 403.0 || refused["code"] != "forbidden" || refused["rule"] != "owner" {
		t.Errorf("alice cancels bob's job: %v; want 403 forbidden, rule owner", refused)
	}
	if p.job(bobs).State != "admitted" && p.job(bobs).State != "running" && p.job(bobs).State != "pending" {
		t.Errorf("bob's job after alice's refused cancel: %s", p.job(bobs).State)
	}
}
