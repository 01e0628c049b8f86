package daemon

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/simcluster"
)

// mountTmpfs mounts a tmpfs of sizeMB at a new directory, so that a test can
// fill the file system up for real. It needs root (CAP_SYS_ADMIN): without
// it the test is skipped, or fails when COLOCD_REQUIRE_TOOLS=1 (make test).
func mountTmpfs(t *testing.T, sizeMB int) string {
	t.Helper()
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, fmt.Sprintf("size=%dm,mode=0700", sizeMB)); err != nil {
		msg := fmt.Sprintf("mounting a %d MB tmpfs at %s needs root: %v", sizeMB, dir, err)
		if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
			t.Fatal(msg + " (make test requires it)")
		}
		t.Skip(msg)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount %s: %v", dir, err)
		}
	})
	return dir
}

// fillDisk writes a file in dir until the file system is full and returns
// its path and size.
func fillDisk(t *testing.T, dir string) (string, int64) {
	t.Helper()
	p := filepath.Join(dir, "filler")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	var size int64
	for {
		n, err := f.Write(chunk)
		size += int64(n)
		if err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("filling the disk: %v", err)
			}
			return p, size
		}
	}
}

// chaosClient submits jobs with idempotency keys and retries each one with
// the same key until it is acknowledged, whatever happens to the daemon.
type chaosClient struct {
	base    func() string
	mu      sync.Mutex
	acked   map[string]string // idempotency key → job id
	cancels map[string]bool   // job ids whose DELETE (cancel, or kill once admitted) was acknowledged
	fails   map[int]int       // status codes of failed attempts (0: no answer)
}

var chaosKinds = []string{"tpch-q10", "kmeans", "tpch-q3", "cc"}

func (c *chaosClient) do(method, path string, body []byte, key string) (int, []byte, error) {
	req, err := http.NewRequest(method, c.base()+path, bytes.NewReader(body))
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+demoSubmit)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	cl := http.Client{Timeout: 5 * time.Second}
	resp, err := cl.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}

// run submits keys worker-<w>-<n> until stop is closed; each key is
// retried until acknowledged. A fifth of the acknowledged jobs are deleted
// at once: cancelled while pending, killed once admitted.
func (c *chaosClient) run(w int, stop <-chan struct{}, rng *rand.Rand) {
	for n := 0; ; n++ {
		select {
		case <-stop:
			return
		default:
		}
		key := fmt.Sprintf("chaos-%d-%d", w, n)
		body := []byte(fmt.Sprintf(`{"kind":%q}`, chaosKinds[rng.IntN(len(chaosKinds))]))
		var id string
		for id == "" {
			code, b, err := c.do(http.MethodPost, "/v1/jobs", body, key)
			if err == nil && (code == http.StatusCreated || code == http.StatusOK) {
				var j apiJob
				if json.Unmarshal(b, &j) == nil && j.ID != "" {
					id = j.ID
					break
				}
			}
			c.mu.Lock()
			c.fails[code]++
			c.mu.Unlock()
			time.Sleep(20 * time.Millisecond)
		}
		c.mu.Lock()
		c.acked[key] = id
		c.mu.Unlock()
		if rng.IntN(5) == 0 {
			if code, _, err := c.do(http.MethodDelete, "/v1/jobs/"+id, nil, ""); err == nil && code == http.StatusOK {
				c.mu.Lock()
				c.cancels[id] = true
				c.mu.Unlock()
			}
		}
		time.Sleep(time.Duration(50+rng.IntN(150)) * time.Millisecond)
	}
}

// TestChaosSim holds colocd to its promise under a hostile mix: four
// clients submitting with idempotency keys (retrying every failure with the
// same key) and cancelling, the daemon SIGKILLed and restarted at random
// moments, and its data directory — a small tmpfs — filled up for a while,
// with a SIGKILL while it is full. At the end every acknowledged job exists
// exactly once, no job was submitted to the cluster twice, and every job
// that was not cancelled succeeded.
//
// The data directory keeps a 4 MiB space reserve (of 32 MB), so a full
// disk refuses every new job before the store tries to write it, and the
// engine's writes for the jobs already accepted meet the real ENOSPC.
func TestChaosSim(t *testing.T) {
	if testing.Short() {
		t.Skip("chaos test: runs the daemon for about half a minute")
	}
	// The failures again, after the daemons' logs (cleanups run last in,
	// first out), where a CI excerpt of the output's end shows them.
	var failures []string
	t.Cleanup(func() {
		switch {
		case len(failures) > 0:
			t.Logf("TestChaosSim failed %d checks:\n%s", len(failures), strings.Join(failures, "\n"))
		case t.Failed():
			t.Log("TestChaosSim stopped at a fatal check (the first error above the daemons' logs)")
		}
	})
	fail := func(format string, args ...any) {
		t.Helper()
		failures = append(failures, fmt.Sprintf(format, args...))
		t.Error(failures[len(failures)-1])
	}
	dataDir := mountTmpfs(t, 32)
	addr := freeAddr(t)
	const reserve = "COLOCD_DATA_DIR_RESERVE_BYTES=4194304"
	var (
		pmu sync.Mutex
		p   = startDemo(t, dataDir, addr, reserve)
	)
	c := &chaosClient{base: func() string { pmu.Lock(); defer pmu.Unlock(); return p.base },
		acked: map[string]string{}, cancels: map[string]bool{}, fails: map[int]int{}}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c.run(w, stop, rand.New(rand.NewPCG(uint64(w), 7)))
		}()
	}
	rng := rand.New(rand.NewPCG(11, 13))
	restart := func() {
		np := startDemo(t, dataDir, addr, reserve)
		pmu.Lock()
		p = np
		pmu.Unlock()
	}
	const kills = 6
	fullRejected := 0
	for k := range kills {
		time.Sleep(time.Duration(500+rng.IntN(2000)) * time.Millisecond)
		if k == 2 {
			// A full disk: submissions fail and nothing is lost; then a
			// SIGKILL while it is full, and the space comes back.
			filler, size := fillDisk(t, dataDir)
			before := c.failsByStatus()
			time.Sleep(1500 * time.Millisecond)
			code, body := readyz(p.base)
			after := c.failsByStatus()
			for status, n := range after {
				fullRejected += n - before[status]
			}
			t.Logf("disk full (%.1f MB of 32 filled): %d submissions refused (by status, cumulative %v), /readyz %d %s",
				float64(size)/1e6, fullRejected, after, code, strings.TrimSpace(string(body)))
			if code != http.StatusServiceUnavailable || !strings.Contains(string(body), "low on space") {
				fail("/readyz on a full disk: %d %s, want 503 naming the low space", code, body)
			}
			if n := after[http.StatusInternalServerError] - before[http.StatusInternalServerError]; n > 0 {
				fail("%d submissions got 500 on a full disk, want 503 (retry later)", n)
			}
			p.kill()
			if err := os.Remove(filler); err != nil {
				t.Fatal(err)
			}
			restart()
			continue
		}
		p.kill()
		restart()
	}
	time.Sleep(time.Second)
	close(stop)
	wg.Wait()

	// Every job that was not cancelled runs to the end.
	poll(t, "the queue to drain", 2*e2eDeadline, func() bool {
		n := p.counts()
		return n["pending"]+n["admitted"]+n["running"]+n["parked"] == 0
	})
	var all struct {
		Jobs []struct {
			apiJob
			IdempotencyKey string `json:"idempotency_key"`
		} `json:"jobs"`
	}
	p.getJSON("/v1/jobs?state=all&limit=10000", &all)
	perKey := map[string]int{}
	state := map[string]string{}
	for _, j := range all.Jobs {
		perKey[j.IdempotencyKey]++
		state[j.ID] = j.State
	}
	log, err := simcluster.ReadLog(filepath.Join(dataDir, "sim", "submissions.jsonl"))
	if err != nil {
		t.Fatalf("simulator log: %v", err)
	}
	submits := map[string]int{}
	for _, e := range log {
		if e.Op == simcluster.OpSubmit {
			submits[e.JobID]++
		}
	}
	var lost, duplicated, twice, cancelled, killed int
	for key, id := range c.acked {
		switch {
		case state[id] == "":
			lost++
			fail("acknowledged job %s (key %s) is gone", id, key)
		case perKey[key] != 1:
			duplicated++
			fail("key %s has %d jobs", key, perKey[key])
		}
		switch st := state[id]; {
		case st == "cancelled":
			cancelled++
			if submits[id] != 0 {
				fail("cancelled job %s was submitted %d times", id, submits[id])
			}
		case st == "killed" && c.cancels[id]:
			killed++
			if submits[id] != 1 {
				fail("killed job %s was submitted %d times, want once", id, submits[id])
			}
		case st != "succeeded":
			fail("job %s ended %s, want succeeded", id, st)
		case submits[id] != 1:
			fail("job %s was submitted %d times, want once", id, submits[id])
		}
		if c.cancels[id] && state[id] != "cancelled" && state[id] != "killed" {
			fail("job %s: DELETE acknowledged, state %s", id, state[id])
		}
	}
	for id, n := range submits {
		if n > 1 {
			twice++
			fail("job %s submitted %d times", id, n)
		}
	}
	if len(all.Jobs) != len(c.acked) {
		fail("%d jobs in the store for %d acknowledged keys", len(all.Jobs), len(c.acked))
	}
	if fullRejected == 0 {
		fail("no submission failed while the disk was full: the test did not fill it")
	}
	t.Logf("chaos: %d SIGKILLs (one on a full disk), %d jobs acknowledged, %d cancelled, %d killed, %d attempts failed (by status %v); lost %d, duplicated %d, submitted twice %d",
		kills, len(c.acked), cancelled, killed, c.failCount(), c.fails, lost, duplicated, twice)
	if _, err := p.stop(15 * time.Second); err != nil {
		fail("SIGTERM: exit %v, want 0", err)
	}
}

func (c *chaosClient) failsByStatus() map[int]int {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[int]int, len(c.fails))
	for k, v := range c.fails {
		out[k] = v
	}
	return out
}

func (c *chaosClient) failCount() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := 0
	for _, v := range c.fails {
		n += v
	}
	return n
}

func readyz(base string) (int, []byte) {
	resp, err := http.Get(base + "/readyz")
	if err != nil {
		return 0, []byte(err.Error())
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, b
}
