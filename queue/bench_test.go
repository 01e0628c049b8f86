package queue_test

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// BenchmarkSubmit measures durable (fsync'd) submissions with 1, 8 and 64
// concurrent submitters: "queue" is Store.Submit (validation, ULID, JSON,
// four index writes, group commit), "raw" is bbolt's own db.Batch putting a
// value of the same size under a sequence key, on the same disk in the same
// run ("raw-update": one db.Update per put, the unbatched fsync floor).
// Compare jobs/s at equal concurrency.
func BenchmarkSubmit(b *testing.B) {
	job := queuetest.Job("tpch-q10")
	job.Labels = map[string]string{"team": "db"}
	for _, c := range []int{1, 8, 64} {
		b.Run(fmt.Sprintf("c=%d/queue", c), func(b *testing.B) {
			s, err := queue.Open(filepath.Join(b.TempDir(), "q.db"), queue.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			first, _, err := s.Submit(context.Background(), job)
			if err != nil {
				b.Fatal(err)
			}
			if got, err := s.Get(first.ID); err != nil || got.Kind != job.Kind {
				b.Fatalf("warm-up job: %v %v", got, err)
			}
			b.ResetTimer()
			parallel(b, c, func() error {
				_, _, err := s.Submit(context.Background(), job)
				return err
			})
			b.StopTimer()
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
			if n, _ := s.Counts(); n[queue.StatePending] != b.N+1 {
				b.Fatalf("%d pending, want %d", n[queue.StatePending], b.N+1)
			}
		})
		b.Run(fmt.Sprintf("c=%d/raw", c), func(b *testing.B) { benchRaw(b, c, true) })
		b.Run(fmt.Sprintf("c=%d/raw-update", c), func(b *testing.B) { benchRaw(b, c, false) })
	}
}

// benchRaw puts job-sized values into bbolt with fsync, through db.Batch
// (the reference the queue is measured against) or one db.Update per put
// (no batching: the fsync floor).
func benchRaw(b *testing.B, c int, batch bool) {
	db, err := bolt.Open(filepath.Join(b.TempDir(), "raw.db"), 0o600, &bolt.Options{Timeout: time.Second})
	if err != nil {
		b.Fatal(err)
	}
	defer db.Close()
	value := make([]byte, 380) // about one job's JSON
	if err := db.Update(func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("jobs")); return err }); err != nil {
		b.Fatal(err)
	}
	fn := func(tx *bolt.Tx) error {
		bk := tx.Bucket([]byte("jobs"))
		seq, _ := bk.NextSequence()
		var k [8]byte
		binary.BigEndian.PutUint64(k[:], seq)
		return bk.Put(k[:], value)
	}
	put := func() error {
		if batch {
			return db.Batch(fn)
		}
		return db.Update(fn)
	}
	if err := put(); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	parallel(b, c, put)
	b.StopTimer()
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "jobs/s")
	db.View(func(tx *bolt.Tx) error {
		if n := tx.Bucket([]byte("jobs")).Stats().KeyN; n != b.N+1 {
			b.Fatalf("%d keys, want %d", n, b.N+1)
		}
		return nil
	})
}

// parallel runs b.N calls of fn spread over c goroutines.
func parallel(b *testing.B, c int, fn func() error) {
	var (
		left atomic.Int64
		wg   sync.WaitGroup
	)
	left.Store(int64(b.N))
	for i := 0; i < c; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := fn(); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
}

// BenchmarkPendingHeads: the fair window's read with 10,000 pending jobs
// of 10 users, the first 8 of each, scanning fairness.scan's default
// (2,000) and the whole FIFO.
func BenchmarkPendingHeads(b *testing.B) {
	s, _ := openStore(b, queue.Options{NoSync: true})
	for i := range 10000 {
		j := queue.Job{Kind: "k", User: fmt.Sprintf("u%d", i%10), Queue: "q", Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}}
		if _, _, err := s.Submit(context.Background(), j); err != nil {
			b.Fatal(err)
		}
	}
	for _, scan := range []int{2000, 10000} { // pipeline.DefaultFairScan, and more {
		b.Run(fmt.Sprintf("scan=%d", scan), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				js, err := s.PendingHeads(8, false, scan)
				if err != nil || len(js) != 80 {
					b.Fatalf("%d jobs, %v", len(js), err)
				}
			}
		})
	}
}
