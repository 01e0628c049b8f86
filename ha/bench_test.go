package ha_test

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/internal/testing/zktest"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// BenchmarkSubmit32: 32 clients submit through the store's group commit,
// each waiting for its acknowledgement, replicated through a three-server
// ZooKeeper (fsync'd by the servers and by the leader's bbolt) and, in
// the same run, embedded (bbolt alone, fsync'd). Reports jobs/s and the
// p99 latency of an acknowledgement.
func BenchmarkSubmit32(b *testing.B) {
	e := zktest.Start(b, zktest.Options{})
	for _, mode := range []string{"embedded", "replicated"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			opts := queue.Options{}
			if mode == "replicated" {
				opts.CommitsInFlight, opts.GroupWait = ha.StoreInFlight, ha.StoreGroupWait
			}
			store, err := queue.Open(filepath.Join(dir, "queue.db"), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			if mode == "replicated" {
				cfg := testConfig(e, "bench")
				cfg.Root = fmt.Sprintf("/colocd/bench-%d", time.Now().UnixNano())
				cfg.SnapshotEvery, cfg.KeepEntries = 5000, 1000
				n := &node{id: "bench", store: store}
				rep := startRep(b, n, cfg, dir)
				eventuallyB(b, rep)
			}
			var (
				next  atomic.Int64
				mu    sync.Mutex
				lat   []time.Duration
				wg    sync.WaitGroup
				total = int64(b.N)
			)
			b.ResetTimer()
			t0 := time.Now()
			for range 32 {
				wg.Add(1)
				go func() {
					defer wg.Done()
					var mine []time.Duration
					for next.Add(1) <= total {
						s := time.Now()
						if _, _, err := store.Submit(context.Background(), queuetest.Job("k")); err != nil {
							b.Error(err)
							return
						}
						mine = append(mine, time.Since(s))
					}
					mu.Lock()
					lat = append(lat, mine...)
					mu.Unlock()
				}()
			}
			wg.Wait()
			took := time.Since(t0)
			b.StopTimer()
			slices.Sort(lat)
			if len(lat) > 0 {
				b.ReportMetric(float64(len(lat))/took.Seconds(), "jobs/s")
				b.ReportMetric(float64(lat[len(lat)*99/100].Microseconds())/1000, "p99-ms")
			}
		})
	}
}
