// Package queuetest holds fakes and helpers for tests that use package
// queue: a temporary store, a fake clock, deterministic id entropy and a
// recording Preferences.
package queuetest

import (
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// Clock is a settable fake clock, safe for concurrent use.
type Clock struct {
	mu  sync.Mutex
	now time.Time
}

// NewClock returns a clock at start.
func NewClock(start time.Time) *Clock { return &Clock{now: start} }

// Now returns the current fake time.
func (c *Clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d and returns the new time.
func (c *Clock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	return c.now
}

// Set moves the clock to t.
func (c *Clock) Set(t time.Time) {
	c.mu.Lock()
	c.now = t
	c.mu.Unlock()
}

// Start is the default fake start time.
var Start = time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC)

// OpenStore opens a store in t.TempDir() with a fake clock (returned),
// seeded id entropy and fsync off (tests do not need durability unless they
// kill a process; those should call queue.Open). opts.Now and opts.Entropy,
// when set, replace the fakes. The store is closed in t.Cleanup.
func OpenStore(tb testing.TB, opts queue.Options) (*queue.Store, *Clock) {
	tb.Helper()
	clk := NewClock(Start)
	if opts.Now == nil {
		opts.Now = clk.Now
	}
	if opts.Entropy == nil {
		opts.Entropy = rand.NewChaCha8([32]byte{1})
	}
	opts.NoSync = true
	path := filepath.Join(tb.TempDir(), "queue.db")
	s, err := queue.Open(path, opts)
	if err != nil {
		tb.Fatalf("queuetest: open %s: %v", path, err)
	}
	tb.Cleanup(func() {
		if err := s.Close(); err != nil && err != queue.ErrClosed {
			tb.Errorf("queuetest: close: %v", err)
		}
	})
	return s, clk
}

// Job returns a valid job of kind with one small container.
func Job(kind string) queue.Job {
	return queue.Job{
		Kind: kind, User: "alice", Queue: "default",
		Resources: queue.Resources{Containers: 1, MemoryMB: 1024, VCores: 1},
	}
}

// Prefs is a fake pipeline.Preferences. Score gives each kind a weight (missing
// kinds weigh 1); Mix returns the weights normalised over the candidates,
// ignoring the context. It records every call. Safe for concurrent use.
type Prefs struct {
	Score map[string]float64

	mu    sync.Mutex
	calls []MixCall
}

// MixCall is one recorded call to Mix.
type MixCall struct {
	Candidates, Given []string
	Weights           []float64
}

var _ pipeline.Preferences = (*Prefs)(nil)

// Mix implements pipeline.Preferences.
func (p *Prefs) Mix(candidates, given []string, weights []float64, out []float64) {
	p.mu.Lock()
	p.calls = append(p.calls, MixCall{
		Candidates: append([]string(nil), candidates...),
		Given:      append([]string(nil), given...),
		Weights:    append([]float64(nil), weights...),
	})
	p.mu.Unlock()
	var sum float64
	for i, k := range candidates {
		w, ok := p.Score[k]
		if !ok {
			w = 1
		}
		out[i] = w
		sum += w
	}
	for i := range out {
		if sum > 0 {
			out[i] /= sum
		}
	}
}

// Calls returns the recorded calls.
func (p *Prefs) Calls() []MixCall {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]MixCall(nil), p.calls...)
}
