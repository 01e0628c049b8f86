package main

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/queue"
)

// storeWith writes a store of n pending jobs at dir/colocd.db and returns
// its path and the jobs.
func storeWith(t *testing.T, dir string, n int) (string, []queue.Job) {
	t.Helper()
	path := daemon.StorePath(daemon.Config{DataDir: dir})
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	var js []queue.Job
	for i := 0; i < n; i++ {
		j, _, err := s.Submit(context.Background(), queue.Job{Kind: fmt.Sprintf("k%d", i),
			Resources: queue.Resources{Containers: 1, MemoryMB: 512, VCores: 1}})
		if err != nil {
			t.Fatal(err)
		}
		js = append(js, j)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	return path, js
}

func TestStoreCheck(t *testing.T) {
	isolate(t)
	t.Run("clean", func(t *testing.T) {
		dir := t.TempDir()
		path, js := storeWith(t, dir, 4)
		code, stdout, stderr := runCmd(t, "store", "check", path)
		if code != exitOK || !strings.Contains(stdout, "clean") || !strings.Contains(stdout, "pending 4") {
			t.Errorf("exit %d\nstdout:\n%s\nstderr: %s", code, stdout, stderr)
		}
		// --json, and the file found from --data-dir.
		code, stdout, stderr = runCmd(t, "store", "check", "--json", "--data-dir", dir)
		var rep queue.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
			t.Fatalf("exit %d, %v\nstdout:\n%s\nstderr: %s", code, err, stdout, stderr)
		}
		if rep.Path != path || !rep.Clean() || rep.Jobs[queue.StatePending] != len(js) {
			t.Errorf("report %+v", rep)
		}
	})
	t.Run("meta page", func(t *testing.T) {
		path, _ := storeWith(t, t.TempDir(), 4)
		b, _ := os.ReadFile(path)
		ps := int(binary.NativeEndian.Uint32(b[16+8:]))
		page := 0
		if binary.NativeEndian.Uint64(b[ps+16+48:]) > binary.NativeEndian.Uint64(b[16+48:]) {
			page = 1
		}
		b[page*ps+16+40] ^= 4 // the newer page's high water mark
		os.WriteFile(path, b, 0o600)
		code, stdout, stderr := runCmd(t, "store", "check", path)
		want := fmt.Sprintf("meta page %d: damaged: checksum", page)
		if code != exitRuntime || !strings.Contains(stderr, want) || !strings.Contains(stdout, "DAMAGED") {
			t.Errorf("exit %d, want %d and %q\nstdout:\n%s\nstderr: %s", code, exitRuntime, want, stdout, stderr)
		}
	})
	t.Run("record", func(t *testing.T) {
		path, js := storeWith(t, t.TempDir(), 4)
		db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
		if err != nil {
			t.Fatal(err)
		}
		db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("jobs")).Put([]byte(js[2].ID), []byte("{garbage")) })
		db.Close()
		code, stdout, stderr := runCmd(t, "store", "check", path)
		if code != exitRuntime || !strings.Contains(stderr, "jobs/"+js[2].ID) {
			t.Errorf("exit %d, want %d naming jobs/%s\nstdout:\n%s\nstderr: %s", code, exitRuntime, js[2].ID, stdout, stderr)
		}
		code, stdout, _ = runCmd(t, "store", "check", "--json", path)
		var rep queue.Report
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitRuntime ||
			len(rep.Problems) != 1 || rep.Problems[0].Kind != "record" {
			t.Errorf("--json: exit %d, %v, %+v", code, err, rep.Problems)
		}
	})
	t.Run("locked", func(t *testing.T) {
		path, _ := storeWith(t, t.TempDir(), 1)
		s, err := queue.Open(path, queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		code, _, stderr := runCmd(t, "store", "check", "--timeout", "100ms", path)
		if code != exitRuntime || !strings.Contains(stderr, "stop colocd first") {
			t.Errorf("exit %d, stderr %q; want %d and a hint to stop colocd", code, stderr, exitRuntime)
		}
	})
	t.Run("usage", func(t *testing.T) {
		if code, _, _ := runCmd(t, "store", "check", "a", "b"); code != exitUsage {
			t.Errorf("two files: exit %d, want %d", code, exitUsage)
		}
		if code, _, stderr := runCmd(t, "store", "check", filepath.Join(t.TempDir(), "none.db")); code != exitRuntime ||
			!strings.Contains(stderr, "no such file") {
			t.Errorf("missing file: exit %d, stderr %q", code, stderr)
		}
	})
}
