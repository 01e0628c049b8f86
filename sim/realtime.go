package sim

import (
	"container/heap"
	"context"
	"math"
	"slices"
	"sync"
	"time"
)

// Realtime plays a Sim against a wall clock, accelerated by a factor, for
// `colocd serve`: virtual time = start + (wall − wall at Start) × factor.
// It is safe for concurrent use. A goroutine started by Start advances the
// simulation on every wall-clock tick, fires After timers and calls the
// OnEvent handlers (in that goroutine, in time order, without holding the
// lock, so handlers may call Do).
type Realtime struct {
	mu        sync.Mutex
	sim       *Sim
	factor    float64
	wallNow   func() time.Time
	newTicker func(time.Duration) (<-chan time.Time, func())
	every     time.Duration
	hook      func(time.Time)

	started, stopped bool
	wallStart        time.Time
	virtStart        time.Time
	handlers         []func(Event)
	pending          []Event
	timers           timerHeap
	timerSeq         uint64
	kick             chan struct{}
	stop             chan struct{}
	done             chan struct{}
	stopOnce         sync.Once
}

// RealtimeOption configures a Realtime.
type RealtimeOption func(*Realtime)

// WithTicker replaces the wall-clock ticker (default time.NewTicker): it
// returns the tick channel and a stop function. Tests pass a fake.
func WithTicker(newTicker func(d time.Duration) (<-chan time.Time, func())) RealtimeOption {
	return func(r *Realtime) { r.newTicker = newTicker }
}

// WithTickInterval sets the wall-clock period between advances (default
// 10 ms; at 600× that is 6 s of virtual time per tick).
func WithTickInterval(d time.Duration) RealtimeOption {
	return func(r *Realtime) {
		if d > 0 {
			r.every = d
		}
	}
}

// WithTickHook registers a function called by the driver goroutine after
// each tick is fully processed (simulation advanced, timers fired, events
// delivered), with the virtual time reached. Tests wait on it.
func WithTickHook(f func(virtual time.Time)) RealtimeOption {
	return func(r *Realtime) { r.hook = f }
}

// NewRealtime wraps s. factor is virtual seconds per wall second (a
// non-positive or non-finite factor means 1); wallNow is the wall clock
// (nil means time.Now). The Sim must not be used directly afterwards:
// reach it through Do.
func NewRealtime(s *Sim, factor float64, wallNow func() time.Time, opts ...RealtimeOption) *Realtime {
	if !(factor > 0) || math.IsInf(factor, 0) {
		factor = 1
	}
	if wallNow == nil {
		wallNow = time.Now
	}
	r := &Realtime{sim: s, factor: factor, wallNow: wallNow, every: 10 * time.Millisecond,
		newTicker: func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		},
		kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{})}
	for _, o := range opts {
		o(r)
	}
	return r
}

// Start starts the clock: virtual time flows from the Sim's current time.
// It returns ErrStarted if called twice. The driver stops when ctx is done
// or on Stop.
func (r *Realtime) Start(ctx context.Context) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.started || r.stopped {
		return ErrStarted
	}
	r.started = true
	r.wallStart = r.wallNow()
	r.virtStart = r.sim.Now()
	ticks, stopTicker := r.newTicker(r.every)
	go r.loop(ctx, ticks, stopTicker)
	return nil
}

// Stop stops the driver and waits for its goroutine. Virtual time then
// stands still; Do still works. Stop is idempotent.
func (r *Realtime) Stop() {
	r.mu.Lock()
	started := r.started
	r.stopped = true
	r.mu.Unlock()
	r.stopOnce.Do(func() { close(r.stop) })
	if started {
		<-r.done
	}
}

func (r *Realtime) loop(ctx context.Context, ticks <-chan time.Time, stopTicker func()) {
	defer close(r.done)
	defer stopTicker()
	for {
		tick := false
		select {
		case <-ctx.Done():
			r.halt()
			return
		case <-r.stop:
			return
		case <-ticks:
			tick = true
			r.mu.Lock()
			r.catchUp()
			r.mu.Unlock()
		case <-r.kick:
		}
		now := r.deliver()
		if tick && r.hook != nil {
			r.hook(now)
		}
	}
}

// halt freezes virtual time after the context ended.
func (r *Realtime) halt() {
	r.mu.Lock()
	r.stopped = true
	r.mu.Unlock()
}

// catchUp advances the simulation to the virtual present and fires due
// timers. Callers hold mu.
func (r *Realtime) catchUp() {
	if r.started && !r.stopped {
		el := float64(r.wallNow().Sub(r.wallStart)) * r.factor
		target := r.virtStart.Add(time.Duration(min(el, math.MaxInt64/2))) // a wall clock that jumps far ahead must not overflow
		if target.After(r.sim.Now()) {
			r.pending = append(r.pending, r.sim.Advance(target)...)
		}
	}
	now := r.sim.Now()
	for len(r.timers) > 0 && !r.timers[0].at.After(now) {
		t := heap.Pop(&r.timers).(*timer)
		t.ch <- now
	}
}

// deliver calls the handlers with the pending events, outside the lock.
func (r *Realtime) deliver() time.Time {
	r.mu.Lock()
	evs := r.pending
	r.pending = nil
	hs := slices.Clone(r.handlers)
	now := r.sim.Now()
	r.mu.Unlock()
	for _, ev := range evs {
		for _, h := range hs {
			h(ev)
		}
	}
	return now
}

// Now is the virtual present (the simulation is advanced to it first).
func (r *Realtime) Now() time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catchUp()
	r.signal()
	return r.sim.Now()
}

// After returns a channel that receives the virtual time once at least d
// of virtual time has passed.
func (r *Realtime) After(d time.Duration) <-chan time.Time {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catchUp()
	r.signal()
	ch := make(chan time.Time, 1)
	now := r.sim.Now()
	if d <= 0 {
		ch <- now
		return ch
	}
	heap.Push(&r.timers, &timer{at: now.Add(d), ch: ch, seq: r.timerSeq})
	r.timerSeq++
	return ch
}

// OnEvent registers a handler for application events. Handlers run on
// the driver goroutine: a slow handler delays the next tick.
func (r *Realtime) OnEvent(f func(Event)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.handlers = append(r.handlers, f)
}

// Do runs f with the simulation, under the lock, after advancing it to the
// virtual present. f must not keep s or call r's methods.
func (r *Realtime) Do(f func(s *Sim)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.catchUp()
	f(r.sim)
	r.catchUp()
	r.signal()
}

// signal wakes the driver when events wait for delivery. Callers hold mu.
func (r *Realtime) signal() {
	if len(r.pending) > 0 {
		select {
		case r.kick <- struct{}{}:
		default:
		}
	}
}

type timer struct {
	at  time.Time
	ch  chan time.Time
	seq uint64
}

type timerHeap []*timer

func (h timerHeap) Len() int { return len(h) }
func (h timerHeap) Less(i, j int) bool {
	if !h[i].at.Equal(h[j].at) {
		return h[i].at.Before(h[j].at)
	}
	return h[i].seq < h[j].seq
}
func (h timerHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *timerHeap) Push(x any)   { *h = append(*h, x.(*timer)) }
func (h *timerHeap) Pop() any {
	old := *h
	t := old[len(old)-1]
	*h = old[:len(old)-1]
	return t
}
