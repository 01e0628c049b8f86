package queue_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// BenchmarkOpenCheck measures what Open's whole-file check costs on a
// store of 100,000 pending jobs (each with a submit spec and a label, about
// 420 bytes of JSON): Open with and without it, and its three passes alone.
//
//	go test -run '^$' -bench OpenCheck -benchtime 5x ./queue/
func BenchmarkOpenCheck(b *testing.B) {
	const n = 100_000
	path := filepath.Join(b.TempDir(), "colocd.db")
	s, err := queue.Open(path, queue.Options{NoSync: true, MaxBatch: 1024})
	if err != nil {
		b.Fatal(err)
	}
	var wg sync.WaitGroup
	for g := 0; g < 64; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; i < n; i += 64 {
				j := queuetest.Job(fmt.Sprintf("kind-%d", i%40))
				j.Labels = map[string]string{"team": "analytics"}
				j.Submit = json.RawMessage(`{"argv":["spark-submit","--class","org.example.WordCount","hdfs:///jobs/wc.jar","hdfs:///data/in","hdfs:///data/out"]}`)
				if _, _, err := s.Submit(context.Background(), j); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if err := s.Close(); err != nil {
		b.Fatal(err)
	}
	if st, err := os.Stat(path); err == nil {
		b.Logf("%d jobs: %.1f MB", n, float64(st.Size())/1e6)
	}

	open := func(skip bool) func(b *testing.B) {
		return func(b *testing.B) {
			for b.Loop() {
				s, err := queue.Open(path, queue.Options{SkipCheck: skip})
				if err != nil {
					b.Fatal(err)
				}
				s.Close()
			}
		}
	}
	b.Run("open/skip_check", open(true))
	b.Run("open/full", open(false))
	b.Run("page_walk", func(b *testing.B) {
		for b.Loop() {
			if found, err := queue.WalkFile(path); err != nil || len(found) > 0 {
				b.Fatal(err, found)
			}
		}
	})
	b.Run("bbolt_check", func(b *testing.B) {
		for b.Loop() {
			if err := queue.BoltCheck(path); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("record_scan", func(b *testing.B) {
		for b.Loop() {
			if damaged, diffs, live, err := queue.ScanRecords(path); err != nil || damaged+diffs > 0 || live != n {
				b.Fatal(damaged, diffs, live, err)
			}
		}
	})
	// colocd store salvage of the same file: the walk, the copy, the new
	// file's open and check.
	b.Run("salvage", func(b *testing.B) {
		dir := b.TempDir()
		i := 0
		for b.Loop() {
			i++
			to := filepath.Join(dir, fmt.Sprintf("salvaged-%d.db", i))
			rep, err := queue.Salvage(path, to, queue.SalvageOptions{})
			if err != nil || !rep.Complete() || rep.Check.Jobs[queue.StatePending] != n {
				b.Fatal(err, rep.Unread, rep.Check.Jobs)
			}
			b.StopTimer()
			os.Remove(to)
			b.StartTimer()
		}
	})
}
