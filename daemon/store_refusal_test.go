package daemon

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// serveOnce runs `colocd serve` on the demo config and data dir with extra
// arguments and waits for it to exit by itself (a refusal) within 30 s.
func serveOnce(t *testing.T, dataDir string, args ...string) (exitCode int, output string) {
	t.Helper()
	cmd := exec.Command(colocdBinary(t), append([]string{"serve", "--config", demoConfig}, args...)...)
	cmd.Dir = ".."
	cmd.Env = append(cleanEnv(), "COLOCD_LISTEN="+freeAddr(t), "COLOCD_DATA_DIR="+dataDir)
	done := make(chan struct{})
	var out []byte
	var err error
	go func() { out, err = cmd.CombinedOutput(); close(done) }()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		cmd.Process.Kill()
		<-done
		t.Fatalf("colocd serve did not exit by itself (it should refuse to start):\n%s", out)
	}
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		return ee.ExitCode(), string(out)
	}
	return 0, string(out)
}

// usedDemoDir runs the demo on a new data dir until some of six submitted
// jobs ran, stops it with SIGTERM and returns the data dir.
func usedDemoDir(t *testing.T) string {
	t.Helper()
	dataDir, addr := t.TempDir(), freeAddr(t)
	p := startDemo(t, dataDir, addr)
	submitQueue(t, p, paperQueueA(t)[:6])
	poll(t, "jobs to be submitted to the simulator", e2eDeadline, func() bool {
		c := p.counts()
		return c["running"]+c["succeeded"] >= 2
	})
	if _, err := p.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
	return dataDir
}

func copyDir(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v %s", err, out)
	}
	return dst
}

// TestServeRefusesDamagedStores: colocd does not start on a store that
// lost jobs — missing or emptied while the simulator log lists
// submissions, or with a damaged newest meta page — and says what to do.
func TestServeRefusesDamagedStores(t *testing.T) {
	used := usedDemoDir(t)

	t.Run("store missing", func(t *testing.T) {
		dir := copyDir(t, used)
		if err := os.Remove(filepath.Join(dir, "colocd.db")); err != nil {
			t.Fatal(err)
		}
		code, out := serveOnce(t, dir)
		t.Logf("exit %d: %s", code, strings.TrimSpace(out))
		if code == 0 || !strings.Contains(out, "submissions.jsonl lists") || !strings.Contains(out, "has held 0 jobs") {
			t.Errorf("exit %d, want a refusal naming the simulator log:\n%s", code, out)
		}
	})
	t.Run("store emptied", func(t *testing.T) {
		dir := copyDir(t, used)
		if err := os.Truncate(filepath.Join(dir, "colocd.db"), 0); err != nil {
			t.Fatal(err)
		}
		code, out := serveOnce(t, dir)
		t.Logf("exit %d: %s", code, strings.TrimSpace(out))
		if code == 0 || !strings.Contains(out, "colocd.db") {
			t.Errorf("exit %d, want a refusal naming colocd.db:\n%s", code, out)
		}
	})
	t.Run("newest meta page damaged", func(t *testing.T) {
		dir := copyDir(t, used)
		db := filepath.Join(dir, "colocd.db")
		b, err := os.ReadFile(db)
		if err != nil {
			t.Fatal(err)
		}
		ps := int64(binary.NativeEndian.Uint32(b[16+8:])) // bbolt's meta: page header 16 bytes, then magic, version, pageSize
		newer := int64(0)
		if binary.NativeEndian.Uint64(b[ps+16+48:]) > binary.NativeEndian.Uint64(b[16+48:]) {
			newer = 1
		}
		b[newer*ps+16+48] ^= 1 // one bit of its txid
		if err := os.WriteFile(db, b, 0o600); err != nil {
			t.Fatal(err)
		}
		code, out := serveOnce(t, dir)
		t.Logf("exit %d: %s", code, strings.TrimSpace(out))
		if code == 0 || !strings.Contains(out, "--accept-store-rollback") || !strings.Contains(out, fmt.Sprintf("page %d", newer)) {
			t.Errorf("exit %d, want a refusal naming page %d and --accept-store-rollback:\n%s", code, newer, out)
		}
		// With the flag it opens at the older transaction; it then runs, or
		// refuses if the lost transaction stored a job the simulator ran.
		addr := freeAddr(t)
		cmd := exec.Command(colocdBinary(t), "serve", "--config", demoConfig, "--accept-store-rollback")
		cmd.Dir = ".."
		cmd.Env = append(cleanEnv(), "COLOCD_LISTEN="+addr, "COLOCD_DATA_DIR="+dir)
		var buf syncBuffer
		cmd.Stdout, cmd.Stderr = &buf, &buf
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		exited := make(chan error, 1)
		go func() { exited <- cmd.Wait() }()
		deadline := time.After(30 * time.Second)
		for {
			select {
			case err := <-exited:
				if !strings.Contains(buf.String(), "submissions.jsonl lists") {
					t.Fatalf("with --accept-store-rollback: exit %v without naming the simulator log:\n%s", err, buf.String())
				}
				return
			case <-deadline:
				cmd.Process.Kill()
				t.Fatalf("with --accept-store-rollback: not ready in 30 s:\n%s", buf.String())
			case <-time.After(50 * time.Millisecond):
			}
			if resp, err := http.Get("http://" + addr + "/readyz"); err == nil {
				resp.Body.Close()
				if resp.StatusCode == http.StatusOK {
					if !strings.Contains(buf.String(), "lost_txid") {
						t.Errorf("the rollback was not logged with the lost transaction:\n%s", buf.String())
					}
					cmd.Process.Kill()
					<-exited
					return
				}
			}
		}
	})
}

// A replica's store is not salvaged: it re-joins from the snapshot.
func TestSalvageStoreRefusesAReplica(t *testing.T) {
	cfg := Config{DataDir: t.TempDir()}
	cfg.HA.ZooKeeper.Connect = "127.0.0.1:2181"
	to := filepath.Join(t.TempDir(), "new.db")
	_, err := SalvageStore(cfg, "", to, time.Second, nil)
	var ce *configError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "re-joins from the leader's snapshot") {
		t.Errorf("SalvageStore with ha: %v, want a configError saying the replica re-joins", err)
	}
	if _, err := os.Stat(to); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("the refused salvage wrote %s", to)
	}
}

// A replica's store is not changed by hand: ReleaseJob refuses it.
func TestReleaseJobRefusesAReplica(t *testing.T) {
	cfg := Config{DataDir: t.TempDir()}
	cfg.HA.ZooKeeper.Connect = "127.0.0.1:2181"
	_, err := ReleaseJob(cfg, "", "01J0ABC", []byte(`{}`), time.Second)
	var ce *configError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "replica") {
		t.Errorf("ReleaseJob with ha: %v, want a configError naming the replica", err)
	}
}
