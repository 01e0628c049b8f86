// Package load drives a benchmark's concurrent clients: Run calls f
// total times from a number of goroutines and reports each call's
// latency, for throughput and percentile figures.
package load

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Result is what Run measured: each successful call's latency, sorted,
// and the wall time of the whole run.
type Result struct {
	Latencies []time.Duration
	Took      time.Duration
}

// Run calls f total times from clients goroutines (each call's i is
// unique, from 0). A client stops at its first error, which Run returns
// (the first of them) after every client ended.
func Run(clients int, total int64, f func(i int64) error) (Result, error) {
	var (
		next     atomic.Int64
		mu       sync.Mutex
		lat      []time.Duration
		firstErr error
		wg       sync.WaitGroup
	)
	t0 := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			var err error
			for i := next.Add(1); i <= total; i = next.Add(1) {
				s := time.Now()
				if err = f(i - 1); err != nil {
					break
				}
				mine = append(mine, time.Since(s))
			}
			mu.Lock()
			lat = append(lat, mine...)
			if err != nil && firstErr == nil {
				firstErr = err
			}
			mu.Unlock()
		}()
	}
	wg.Wait()
	r := Result{Latencies: lat, Took: time.Since(t0)}
	slices.Sort(r.Latencies)
	return r, firstErr
}

// Rate is the successful calls per second.
func (r Result) Rate() float64 {
	if r.Took <= 0 {
		return 0
	}
	return float64(len(r.Latencies)) / r.Took.Seconds()
}

// Quantile is the latency at quantile p (0–1) in milliseconds; 0 without
// calls.
func (r Result) Quantile(p float64) float64 {
	if len(r.Latencies) == 0 {
		return 0
	}
	return float64(r.Latencies[min(len(r.Latencies)-1, int(p*float64(len(r.Latencies))))].Microseconds()) / 1000
}
