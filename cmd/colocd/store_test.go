package main

import (
	"bytes"
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

func TestStoreSalvage(t *testing.T) {
	isolate(t)
	t.Run("damaged", func(t *testing.T) {
		dir := t.TempDir()
		path, js := storeWith(t, dir, 200)
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		// Every leaf page holding the first job's record (the live one,
		// and stale copies freed since) names another page in its header.
		ps := int(binary.NativeEndian.Uint32(b[16+8:]))
		marker := []byte(`{"id":"` + js[0].ID + `"`)
		for p := 2; (p+1)*ps <= len(b); p++ {
			if buf := b[p*ps : (p+1)*ps]; binary.NativeEndian.Uint16(buf[8:]) == 0x02 && bytes.Contains(buf, marker) {
				binary.NativeEndian.PutUint64(buf, 1<<40)
			}
		}
		if err := os.WriteFile(path, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if code, stdout, _ := runCmd(t, "store", "check", path); code != exitRuntime || !strings.Contains(stdout, "colocd store salvage --to NEW") {
			t.Fatalf("store check of the damaged file: exit %d, want %d and a pointer to salvage\n%s", code, exitRuntime, stdout)
		}
		to := filepath.Join(dir, "salvaged.db")
		code, stdout, stderr := runCmd(t, "store", "salvage", "--data-dir", dir, "--to", to)
		if code != exitRuntime || !strings.Contains(stdout, "LOST job") || !strings.Contains(stdout, js[0].ID) ||
			!strings.Contains(stdout, "UNREAD") || !strings.Contains(stderr, "could not be read") {
			t.Errorf("salvage: exit %d, want %d naming %s lost\nstdout:\n%s\nstderr: %s", code, exitRuntime, js[0].ID, stdout, stderr)
		}
		code, stdout, stderr = runCmd(t, "store", "check", to)
		if code != exitOK || !strings.Contains(stdout, "quarantined") || !strings.Contains(stdout, js[0].ID) {
			t.Errorf("check of the salvaged file: exit %d\nstdout:\n%s\nstderr: %s", code, stdout, stderr)
		}
		s, err := queue.Open(to, queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		if got, err := s.Get(js[len(js)-1].ID); err != nil || got.Kind != js[len(js)-1].Kind {
			t.Errorf("the last job in the salvaged store: %+v, %v", got, err)
		}
	})
	t.Run("clean, as JSON", func(t *testing.T) {
		path, js := storeWith(t, t.TempDir(), 5)
		to := filepath.Join(t.TempDir(), "new.db")
		code, stdout, stderr := runCmd(t, "store", "salvage", "--json", "--to", to, path)
		var rep queue.SalvageReport
		if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK {
			t.Fatalf("exit %d, %v\nstdout:\n%s\nstderr: %s", code, err, stdout, stderr)
		}
		if !rep.Complete() || rep.Keys["jobs"] != len(js) || rep.Check.Jobs[queue.StatePending] != len(js) {
			t.Errorf("report %+v", rep)
		}
	})
	t.Run("usage", func(t *testing.T) {
		path, _ := storeWith(t, t.TempDir(), 1)
		if code, _, stderr := runCmd(t, "store", "salvage", path); code != exitUsage || !strings.Contains(stderr, "--to") {
			t.Errorf("no --to: exit %d, stderr %q; want %d naming --to", code, stderr, exitUsage)
		}
		if code, _, stderr := runCmd(t, "store", "salvage", "--to", path, path); code != exitRuntime {
			t.Errorf("--to the damaged file: exit %d, stderr %q; want %d", code, stderr, exitRuntime)
		}
		other := filepath.Join(t.TempDir(), "other.db")
		os.WriteFile(other, []byte("x"), 0o600)
		if code, _, stderr := runCmd(t, "store", "salvage", "--to", other, path); code != exitRuntime || !strings.Contains(stderr, "exists") {
			t.Errorf("--to an existing file: exit %d, stderr %q; want %d saying it exists", code, stderr, exitRuntime)
		}
	})
}

func TestStoreRelease(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	path, js := storeWith(t, dir, 4)
	record, err := json.Marshal(js[1])
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("jobs")).Put([]byte(js[1].ID), []byte("{garbage")) })
	db.Close()
	s, err := queue.Open(path, queue.Options{NoSync: true}) // quarantines it
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	file := filepath.Join(t.TempDir(), "job.json")
	if err := os.WriteFile(file, record, 0o600); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := runCmd(t, "store", "release", js[1].ID, "--data-dir", dir); code != exitUsage || !strings.Contains(stderr, "--record") {
		t.Errorf("no --record: exit %d, stderr %q; want %d naming --record", code, stderr, exitUsage)
	}
	if code, _, stderr := runCmd(t, "store", "release", js[0].ID, "--record", file, path); code != exitRuntime || !strings.Contains(stderr, "not quarantined") {
		t.Errorf("a job not quarantined: exit %d, stderr %q; want %d saying so", code, stderr, exitRuntime)
	}
	code, stdout, stderr := runCmd(t, "store", "release", js[1].ID, "--record", file, "--data-dir", dir)
	if code != exitOK || !strings.Contains(stdout, "released job "+js[1].ID) {
		t.Fatalf("release: exit %d\nstdout: %s\nstderr: %s", code, stdout, stderr)
	}
	code, stdout, _ = runCmd(t, "store", "check", "--json", path)
	var rep queue.Report
	if err := json.Unmarshal([]byte(stdout), &rep); err != nil || code != exitOK || len(rep.Quarantined) != 0 || rep.Jobs[queue.StatePending] != len(js) {
		t.Errorf("check after the release: exit %d, %v, %+v", code, err, rep)
	}
}
