package api

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkSubmitHTTP submits 10,000 jobs over HTTP from 32 concurrent
// clients to the real handler on loopback, with a real store that fsyncs
// every (group) commit. It reports durable submissions per second and the
// p50/p99 latency of one POST. The nosync variant (store without fsync)
// shows what the disk costs.
func BenchmarkSubmitHTTP(b *testing.B) {
	b.Run("fsync", func(b *testing.B) { benchSubmitHTTP(b, durable()) })
	b.Run("nosync", func(b *testing.B) { benchSubmitHTTP(b) })
}

func benchSubmitHTTP(b *testing.B, opts ...harnessOpt) {
	const (
		jobs    = 10000
		clients = 32
	)
	h := newHarness(b, opts...)
	tr := &http.Transport{MaxIdleConns: clients * 2, MaxIdleConnsPerHost: clients * 2, IdleConnTimeout: time.Minute}
	client := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	b.Cleanup(tr.CloseIdleConnections)
	body := []byte(jobBody("kmeans", `"queue":"default","labels":{"team":"search"}`))

	post := func() (time.Duration, error) {
		req, err := http.NewRequest("POST", h.srv.URL+"/v1/jobs", bytes.NewReader(body))
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer "+submitterTok)
		req.Header.Set("Content-Type", "application/json")
		start := time.Now()
		res, err := client.Do(req)
		if err != nil {
			return 0, err
		}
		_, _ = io.Copy(io.Discard, res.Body)
		res.Body.Close()
		d := time.Since(start)
		if res.StatusCode != http.StatusCreated {
			return d, fmt.Errorf("status %d", res.StatusCode)
		}
		return d, nil
	}
	// Check the result before timing: one submit is stored.
	if _, err := post(); err != nil {
		b.Fatalf("warm-up submit: %v", err)
	}
	before, _ := h.store.Counts()

	var lat []time.Duration
	var elapsed time.Duration
	for b.Loop() {
		var next atomic.Int64
		var mu sync.Mutex
		var wg sync.WaitGroup
		var failed atomic.Value
		start := time.Now()
		for range clients {
			wg.Go(func() {
				local := make([]time.Duration, 0, jobs/clients+1)
				for next.Add(1) <= jobs {
					d, err := post()
					if err != nil {
						failed.Store(err)
						return
					}
					local = append(local, d)
				}
				mu.Lock()
				lat = append(lat, local...)
				mu.Unlock()
			})
		}
		wg.Wait()
		elapsed += time.Since(start)
		if err, _ := failed.Load().(error); err != nil {
			b.Fatalf("submit: %v", err)
		}
	}
	after, _ := h.store.Counts()
	if got, want := after["pending"]-before["pending"], jobs*b.N; got != want {
		b.Fatalf("%d jobs stored, want %d", got, want)
	}
	slices.Sort(lat)
	b.ReportMetric(float64(jobs*b.N)/elapsed.Seconds(), "jobs/s")
	b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
	b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
}
