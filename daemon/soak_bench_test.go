package daemon

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

var soakFor = flag.Duration("soak", 5*time.Minute, "how long BenchmarkSoak submits")

// BenchmarkSoak is the soak run: `colocd serve` on the demo configuration
// (simulator backend, bbolt on the local disk, fsync on), 32 clients
// submitting jobs as fast as the daemon acknowledges them for -soak (default
// 5 minutes; `go test -run '^$' -bench Soak -benchtime 1x ./daemon/ -args
// -soak 5m`), and one reader polling GET /healthz, /v1/jobs?limit=20 and
// /v1/jobs/{id} every 100 ms. It reports the submit rate, the submit
// latency percentiles, the readers' worst and 99th-percentile latency, and
// the daemon's resident memory (anonymous and file-backed, from
// /proc/<pid>/status) at the start, the middle and the end. It is a
// benchmark, not a test: it asserts nothing about speed.
func BenchmarkSoak(b *testing.B) {
	dataDir, addr := b.TempDir(), freeAddr(b)
	p := startDemo(b, dataDir, addr)
	pid := p.cmd.Process.Pid
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	post := func(key string) (time.Duration, string, error) {
		req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/jobs", strings.NewReader(`{"kind":"kmeans"}`))
		req.Header.Set("Authorization", "Bearer "+demoSubmit)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		t0 := time.Now()
		resp, err := client.Do(req)
		if err != nil {
			return 0, "", err
		}
		defer resp.Body.Close()
		var j apiJob
		if err := json.NewDecoder(resp.Body).Decode(&j); err != nil || resp.StatusCode != http.StatusCreated {
			return 0, "", fmt.Errorf("submit: %d %v", resp.StatusCode, err)
		}
		return time.Since(t0), j.ID, nil
	}
	var (
		mu       sync.Mutex
		lat      []time.Duration
		readLat  []time.Duration
		lastID   atomic.Value
		done     = make(chan struct{})
		wg       sync.WaitGroup
		failures atomic.Int64
	)
	lastID.Store("")
	rss := [3]memSample{readMem(pid)}
	b.ResetTimer()
	start := time.Now()
	for w := range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for n := 0; ; n++ {
				select {
				case <-done:
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
					return
				default:
				}
				d, id, err := post(fmt.Sprintf("soak-%d-%d", w, n))
				if err != nil {
					failures.Add(1)
					continue
				}
				mine = append(mine, d)
				if n%100 == 0 {
					lastID.Store(id)
				}
			}
		}()
	}
	wg.Add(1)
	go func() { // the reader
		defer wg.Done()
		tick := time.NewTicker(100 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			paths := []string{"/healthz", "/v1/jobs?limit=20"}
			if id := lastID.Load().(string); id != "" {
				paths = append(paths, "/v1/jobs/"+id)
			}
			for _, path := range paths {
				req, _ := http.NewRequest(http.MethodGet, p.base+path, nil)
				req.Header.Set("Authorization", "Bearer "+demoAdmin)
				t0 := time.Now()
				resp, err := client.Do(req)
				if err != nil {
					failures.Add(1)
					continue
				}
				resp.Body.Close()
				if resp.StatusCode != http.StatusOK {
					failures.Add(1)
					continue
				}
				d := time.Since(t0)
				mu.Lock()
				readLat = append(readLat, d)
				mu.Unlock()
			}
		}
	}()
	time.Sleep(*soakFor / 2)
	rss[1] = readMem(pid)
	time.Sleep(*soakFor - *soakFor/2)
	close(done)
	wg.Wait()
	elapsed := time.Since(start)
	rss[2] = readMem(pid)
	b.StopTimer()

	slices.Sort(lat)
	slices.Sort(readLat)
	pct := func(l []time.Duration, q float64) float64 {
		if len(l) == 0 {
			return 0
		}
		return float64(l[min(len(l)-1, int(q*float64(len(l))))].Microseconds()) / 1000
	}
	b.ReportMetric(float64(len(lat))/elapsed.Seconds(), "submits/s")
	b.ReportMetric(pct(lat, 0.5), "submit-p50-ms")
	b.ReportMetric(pct(lat, 0.99), "submit-p99-ms")
	b.ReportMetric(pct(readLat, 0.99), "read-p99-ms")
	b.ReportMetric(pct(readLat, 1), "read-max-ms")
	b.ReportMetric(float64(failures.Load()), "failures")
	for i, name := range []string{"start", "middle", "end"} {
		b.ReportMetric(rss[i].anonMB, "rss-anon-"+name+"-MB")
		b.ReportMetric(rss[i].fileMB, "rss-file-"+name+"-MB")
	}
	if failures.Load() > 0 || len(lat) == 0 || len(readLat) == 0 {
		b.Errorf("%d failed requests, %d submits and %d reads that succeeded: want no failure and some of each", failures.Load(), len(lat), len(readLat))
	}
	b.Logf("%d jobs in %v from 32 clients; %d reads; RSS anon/file MB start %.0f/%.0f, middle %.0f/%.0f, end %.0f/%.0f",
		len(lat), elapsed.Round(time.Second), len(readLat), rss[0].anonMB, rss[0].fileMB, rss[1].anonMB, rss[1].fileMB, rss[2].anonMB, rss[2].fileMB)
	if _, err := p.stop(30 * time.Second); err != nil {
		b.Errorf("SIGTERM: %v", err)
	}
}

type memSample struct{ anonMB, fileMB float64 }

// readMem reads RssAnon and RssFile of a process (Linux).
func readMem(pid int) memSample {
	raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return memSample{}
	}
	var m memSample
	sc := bufio.NewScanner(bytes.NewReader(raw))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "RssAnon:":
			m.anonMB = kb / 1024
		case "RssFile:":
			m.fileMB = kb / 1024
		}
	}
	return m
}
