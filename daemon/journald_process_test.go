package daemon

import (
	"bufio"
	"encoding/json"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// journaldTools are what TestJournaldProcess runs: a systemd-journald of
// its own, in a private mount namespace (its sockets on a tmpfs over
// /run/systemd, its files on one over /run/log), so that the host's
// journal, if any, is left alone; root is needed for the namespace.
func journaldTools(t *testing.T) {
	t.Helper()
	var missing []string
	for _, p := range []string{"unshare", "nsenter", "journalctl", "systemd-cat"} {
		if _, err := exec.LookPath(p); err != nil {
			missing = append(missing, p)
		}
	}
	if _, err := os.Stat("/lib/systemd/systemd-journald"); err != nil {
		missing = append(missing, "/lib/systemd/systemd-journald")
	}
	switch {
	case len(missing) > 0:
		if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
			t.Fatalf("missing %v (Debian's systemd and util-linux; make tools installs them)", missing)
		}
		t.Skipf("missing %v", missing)
	case os.Geteuid() != 0:
		t.Skip("a private mount namespace for journald needs root")
	}
}

// TestJournaldProcess runs colocd serve with stderr connected to a real
// systemd-journald (systemd-cat, JOURNAL_STREAM set as systemd sets it for
// a service): `journalctl -p err` shows the ERROR line a failed reload
// logs, with PRIORITY 3 and its attributes as fields, and the INFO lines
// have PRIORITY 6 (`journalctl -o json`).
func TestJournaldProcess(t *testing.T) {
	bin := colocdBinary(t)
	journaldTools(t)
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}

	// journald, told to report READY=1 to this test.
	notify := filepath.Join(dir, "notify")
	conn, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: notify, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	jd := exec.Command("unshare", "--mount", "--propagation", "private", "sh", "-euc", `
mkdir -p /run/systemd /run/log
mount -t tmpfs none /run/systemd
mount -t tmpfs none /run/log
mkdir -p /run/systemd/journal
exec /lib/systemd/systemd-journald`)
	jd.Env = append(os.Environ(), "NOTIFY_SOCKET="+notify)
	var jdOut syncBuffer
	jd.Stdout, jd.Stderr = &jdOut, &jdOut
	if err := jd.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() {
		jd.Process.Kill()
		jd.Wait()
	}()
	readyErr := make(chan error, 1)
	go func() {
		buf := make([]byte, 4096)
		for {
			n, err := conn.Read(buf)
			if err != nil {
				readyErr <- err
				return
			}
			if has(string(buf[:n]), "READY=1") {
				readyErr <- nil
				return
			}
		}
	}()
	select {
	case err := <-readyErr:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(30 * time.Second):
		t.Fatalf("systemd-journald sent no READY=1 within 30s: %s", jdOut.String())
	}
	ns := "--mount=/proc/" + strconv.Itoa(jd.Process.Pid) + "/ns/mnt"
	journal := func(args ...string) []map[string]string {
		t.Helper()
		out, err := exec.Command("nsenter", append([]string{ns, "--", "journalctl", "-D", "/run/log/journal", "--no-pager",
			"-o", "json", "SYSLOG_IDENTIFIER=colocd"}, args...)...).Output()
		if err != nil {
			t.Fatalf("journalctl %v: %v", args, err)
		}
		var recs []map[string]string
		sc := bufio.NewScanner(strings.NewReader(string(out)))
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var raw map[string]any
			if err := json.Unmarshal(sc.Bytes(), &raw); err != nil {
				t.Fatalf("journalctl -o json: %v: %s", err, sc.Text())
			}
			rec := map[string]string{}
			for k, v := range raw {
				if s, ok := v.(string); ok {
					rec[k] = s
				}
			}
			recs = append(recs, rec)
		}
		return recs
	}

	// colocd serve on the simulator, its stderr the journal's stream.
	addr := freeAddr(t)
	cfg := filepath.Join(dir, "colocd.yaml")
	writeCfg := func(extra string) {
		t.Helper()
		body := "listen: " + addr + "\ndata_dir: " + filepath.Join(dir, "data") + "\nbackend: sim\nsim:\n  workload: " +
			filepath.Join(mustAbs(t, "../configs/workloads/paper-queue-a.yaml")) + "\n  speed: 1\ntokens:\n  - {token: journald-test-token, user: ops, role: admin}\n" + extra
		if err := os.WriteFile(cfg, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	writeCfg("")
	serve := exec.Command("nsenter", ns, "--", "systemd-cat", "-t", "colocd-stream", "sh", "-c",
		`JOURNAL_STREAM=$(stat -L -c %d:%i /proc/self/fd/2); export JOURNAL_STREAM; exec "$0" serve --config "$1"`, bin, cfg)
	if err := serve.Start(); err != nil {
		t.Fatal(err)
	}
	served, exited := make(chan error, 1), make(chan struct{})
	go func() { served <- serve.Wait(); close(exited) }()
	defer func() {
		serve.Process.Kill()
		<-exited
	}()
	client := &http.Client{Timeout: 2 * time.Second}
	poll(t, "colocd's API", 60*time.Second, func() bool {
		select {
		case err := <-served:
			t.Fatalf("colocd exited: %v; journal: %v", err, journal())
		default:
		}
		res, err := client.Get("http://" + addr + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})

	// A reload of a config with a mistake: an ERROR.
	writeCfg("admission:\n  tick: soon\n")
	if err := serve.Process.Signal(syscall.SIGHUP); err != nil {
		t.Fatal(err)
	}
	var errs []map[string]string
	poll(t, "the failed reload in journalctl -p err", 30*time.Second, func() bool {
		errs = journal("-p", "err")
		return len(errs) > 0
	})
	e := errs[0]
	if !strings.HasPrefix(e["MESSAGE"], "reload failed: serving on with the configuration loaded before component=reload err=") ||
		e["PRIORITY"] != "3" || e["COMPONENT"] != "reload" || !strings.Contains(e["ERR"], "admission.tick") ||
		e["SLOG_LEVEL"] != "ERROR" || e["CODE_FUNC"] == "" || e["_TRANSPORT"] != "journal" {
		t.Errorf("journalctl -p err -o json: %v", e)
	}
	if err := serve.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-served:
		if err != nil {
			t.Fatalf("colocd serve after SIGTERM: %v", err)
		}
	case <-time.After(60 * time.Second):
		t.Fatal("colocd did not stop within 60s of SIGTERM")
	}
	var sawServing, sawStopped bool
	for _, r := range journal() {
		switch {
		case strings.HasPrefix(r["MESSAGE"], "colocd serving "):
			sawServing = r["PRIORITY"] == "6" && r["ADDR"] == addr && r["BACKEND"] == "sim"
		case r["MESSAGE"] == "stopped":
			sawStopped = r["PRIORITY"] == "6"
		}
		if r["_TRANSPORT"] != "journal" {
			t.Errorf("a line through the %s transport (want journal, the native protocol): %v", r["_TRANSPORT"], r)
		}
	}
	if !sawServing || !sawStopped {
		t.Errorf("INFO lines: \"colocd serving\" with PRIORITY 6 and ADDR, BACKEND fields: %v; \"stopped\": %v", sawServing, sawStopped)
	}
}

func mustAbs(tb testing.TB, p string) string {
	tb.Helper()
	a, err := filepath.Abs(p)
	if err != nil {
		tb.Fatal(err)
	}
	return a
}
