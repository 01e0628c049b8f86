package engine

import (
	"context"
	"errors"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

// fakeClock is a Clock the test steps; After fires when Advance passes it.
// Like the real clock it has a monotonic reading that Advance moves with
// the wall reading and that Step (a step of the wall clock) does not;
// After waits on it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	mono   time.Duration
	timers []fakeTimer
	// stepAfter steps the wall reading by stepBy right after the
	// stepAfter-th next Now (StepAfterReads).
	stepAfter int
	stepBy    time.Duration
}

type fakeTimer struct {
	at time.Duration // monotonic
	ch chan time.Time
}

var _ monotonic = (*fakeClock)(nil)

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	now := c.now
	if c.stepAfter > 0 {
		if c.stepAfter--; c.stepAfter == 0 {
			c.now = c.now.Add(c.stepBy)
		}
	}
	return now
}

// StepAfterReads steps the wall reading by d right after the next n
// readings of Now: a step between two readings of one iteration.
func (c *fakeClock) StepAfterReads(n int, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.stepAfter, c.stepBy = n, d
}

func (c *fakeClock) Monotonic() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.mono
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.timers = append(c.timers, fakeTimer{at: c.mono + d, ch: ch})
	return ch
}

// Advance moves the clock and fires the timers that are due.
func (c *fakeClock) Advance(d time.Duration) time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	c.mono += d
	keep := c.timers[:0]
	for _, t := range c.timers {
		if t.at > c.mono {
			keep = append(keep, t)
			continue
		}
		t.ch <- c.now
	}
	c.timers = keep
	return c.now
}

// Step steps the wall reading by d (NTP, date -s): the monotonic reading
// and the timers stay.
func (c *fakeClock) Step(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// loopHarness runs the real loop on a simulator slaved to a fake clock.
type loopHarness struct {
	clock *fakeClock
	store *queue.Store
	e     *Engine
	l     *Loop
	its   chan Iteration
	stop  chan struct{}
	done  chan error
}

func newLoopHarness(t *testing.T, schedule string, tick time.Duration, mut ...func(*LoopOptions)) *loopHarness {
	t.Helper()
	wl, err := sim.ParseWorkload([]byte(simtest.ThreeKindsYAML(1)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := wl.NewSim(sim.Options{Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	clk := &fakeClock{now: s.Now()}
	var mu sync.Mutex
	h := &loopHarness{clock: clk}
	exec := func(f func(*sim.Sim)) { // like sim.Realtime.Do: catch up, then run
		mu.Lock()
		defer mu.Unlock()
		s.Advance(clk.Now())
		f(s)
	}
	sc := simcluster.New(exec, nil)
	store, err := queue.Open(filepath.Join(t.TempDir(), "colocd.db"), queue.Options{NoSync: true, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	qc := testQueueConfig()
	qc.Preference.ObserveWait = 0 // admit at once: these tests follow the loop's cadence
	e, err := New(Options{Store: store, Learner: bandit.New(bandit.Config{}), Cluster: sc, Metrics: sc, Clock: clk,
		Queue: qc, Scorer: DefaultScorerConfig(), Limits: sc.Limits()})
	if err != nil {
		t.Fatal(err)
	}
	learn, err := ParseSchedule(schedule)
	if err != nil {
		t.Fatal(err)
	}
	ret, err := ParseSchedule("@every 1h") // retention.schedule's default
	if err != nil {
		t.Fatal(err)
	}
	lo := LoopOptions{Tick: tick, Learn: learn, Retention: ret, Checkpoint: func() error { return nil }, CheckpointEvery: time.Minute}
	for _, m := range mut {
		m(&lo)
	}
	l, err := NewLoop(e, lo)
	if err != nil {
		t.Fatal(err)
	}
	h.store, h.e, h.l = store, e, l
	h.its, h.stop, h.done = make(chan Iteration, 100), make(chan struct{}), make(chan error, 1)
	l.log = e.log
	l.hook = func(it Iteration) { h.its <- it }
	return h
}

func (h *loopHarness) start(t *testing.T) {
	go func() { h.done <- h.l.Run(context.Background(), h.stop) }()
	t.Cleanup(func() {
		close(h.stop)
		for {
			select {
			case err := <-h.done:
				if err != nil {
					t.Errorf("loop: %v", err)
				}
				return
			case <-h.its:
			}
		}
	})
}

// next returns the next iteration at or after t.
func (h *loopHarness) next(t *testing.T, at time.Time) Iteration {
	t.Helper()
	timeout := time.After(10 * time.Second)
	for {
		select {
		case it := <-h.its:
			if !it.At.Before(at) {
				return it
			}
		case <-timeout:
			t.Fatalf("no loop iteration at %v", at)
		}
	}
}

func TestLoopLearnsOnTheCronScheduleInClockTime(t *testing.T) {
	for _, tc := range []struct {
		schedule string
		tick     time.Duration
		steps    int
		want     []time.Duration // learning times after the start
	}{
		{"@every 30s", 10 * time.Second, 15, []time.Duration{30 * time.Second, 60 * time.Second, 90 * time.Second, 120 * time.Second, 150 * time.Second}},
		// Five-field cron: on every second minute of the clock.
		{"*/2 * * * *", 30 * time.Second, 12, []time.Duration{2 * time.Minute, 4 * time.Minute, 6 * time.Minute}},
	} {
		t.Run(tc.schedule, func(t *testing.T) {
			h := newLoopHarness(t, tc.schedule, tc.tick)
			h.submit(t, "cpu", "disk") // they share the one node
			start := h.clock.Now()
			h.start(t)
			first := h.next(t, start)
			if len(first.Admit.Admitted) != 2 {
				t.Errorf("first iteration admitted %v, want both jobs", first.Admit.Admitted)
			}
			var learned []time.Duration
			updates := 0
			for range tc.steps {
				now := h.clock.Advance(tc.tick)
				it := h.next(t, now)
				if it.Learned {
					learned = append(learned, it.At.Sub(start))
					updates += it.Learn.Updates
				}
			}
			if diff := cmp.Diff(tc.want, learned); diff != "" {
				t.Errorf("learning times (-want +got):\n%s", diff)
			}
			if tc.tick == 10*time.Second && updates == 0 {
				t.Errorf("no preference update from the co-located jobs")
			}
		})
	}
}

func (h *loopHarness) submit(t *testing.T, kinds ...string) []string {
	t.Helper()
	var ids []string
	for _, k := range kinds {
		j := queue.Job{Kind: k, User: "ana"}
		if err := h.e.Prepare(&j); err != nil {
			t.Fatal(err)
		}
		got, _, err := h.store.Submit(context.Background(), j)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, got.ID)
	}
	return ids
}

// retentionHarness is a loop that learns hourly, admits every 30 s and
// runs retention every minute, deleting jobs finished 2 minutes ago.
func retentionHarness(t *testing.T) *loopHarness {
	return newLoopHarness(t, "@every 1h", 30*time.Second, func(o *LoopOptions) {
		ret, err := ParseSchedule("@every 1m")
		if err != nil {
			t.Fatal(err)
		}
		o.Retention = ret
		o.FinishedAfter = 2 * time.Minute
	})
}

func TestLoopRetention(t *testing.T) {
	h := retentionHarness(t)
	ids := h.submit(t, "cpu", "disk")
	rec := &recorder{}
	h.e.mx = rec
	start := h.clock.Now()
	h.start(t)
	h.next(t, start)
	finished := time.Duration(0)
	for range 12 { // 6 minutes
		now := h.clock.Advance(30 * time.Second)
		it := h.next(t, now)
		j, err := h.store.Get(ids[0])
		switch {
		case errors.Is(err, queue.ErrNotFound):
			if finished == 0 || now.Sub(start)-finished < 2*time.Minute {
				t.Fatalf("job deleted at +%v, finished at +%v: before finished_after", now.Sub(start), finished)
			}
			if _, err := h.store.Get(ids[1]); !errors.Is(err, queue.ErrNotFound) {
				t.Errorf("the other finished job is still there: %v", err)
			}
			// The iteration and the metrics say so (read after the
			// iteration's hook: the loop waits for the next tick).
			if !it.Retained || it.Compacted != 2 || it.RetentionErr != nil {
				t.Errorf("iteration retained %v, compacted %d, err %v; want 2 deleted", it.Retained, it.Compacted, it.RetentionErr)
			}
			if want := "retention 2 <nil> " + it.At.Format(time.RFC3339); !rec.has(want) {
				t.Errorf("metrics %q, want %q", rec.calls, want)
			}
			return
		case err != nil:
			t.Fatal(err)
		case j.State.Terminal() && finished == 0:
			finished = now.Sub(start)
		}
	}
	t.Fatalf("finished jobs were never compacted (finished at +%v)", finished)
}

// TestLoopRetentionFailure: a retention that fails says so in its
// iteration and in the metrics (colocd_retention_runs_total{result=
// "error"}), and the loop goes on.
func TestLoopRetentionFailure(t *testing.T) {
	h := retentionHarness(t)
	fail := errors.New("store: no space left on device")
	h.l.compact = func(time.Time) (int, error) { return 0, fail }
	rec := &recorder{}
	h.e.mx = rec
	start := h.clock.Now()
	h.start(t)
	h.next(t, start)
	var failed int
	for range 4 { // 2 minutes: retention due twice
		it := h.next(t, h.clock.Advance(30*time.Second))
		if it.Retained {
			if !errors.Is(it.RetentionErr, fail) || it.Compacted != 0 {
				t.Errorf("iteration at %v: compacted %d, err %v; want the store's error", it.At, it.Compacted, it.RetentionErr)
			}
			if want := "retention 0 " + fail.Error() + " " + it.At.Format(time.RFC3339); !rec.has(want) {
				t.Errorf("metrics %q, want %q", rec.calls, want)
			}
			failed++
		}
	}
	if failed != 2 {
		t.Errorf("retention ran %d times in 2 minutes at @every 1m, want 2", failed)
	}
}

// hasTimer reports whether a timer is armed at monotonic reading at.
func (c *fakeClock) hasTimer(at time.Duration) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, t := range c.timers {
		if t.at == at {
			return true
		}
	}
	return false
}

// A burst of kicks within KickGap of an iteration's start brings on one
// iteration, when the gap has passed.
func TestLoopKickGap(t *testing.T) {
	const gap = 100 * time.Millisecond
	h := newLoopHarness(t, "@every 1h", 10*time.Second, func(o *LoopOptions) { o.KickGap = gap })
	h.start(t)
	first := h.next(t, h.clock.Now())
	began := h.clock.Monotonic()
	for range 20 {
		h.e.Kick()
	}
	deadline := time.Now().Add(10 * time.Second)
	for !h.clock.hasTimer(began + gap) { // the loop waits out the gap
		if time.Now().After(deadline) {
			t.Fatal("the loop armed no timer for the end of the kick gap")
		}
		time.Sleep(time.Millisecond)
	}
	select {
	case it := <-h.its:
		t.Fatalf("an iteration at %v, within the gap", it.At)
	default:
	}
	h.clock.Advance(gap)
	it := h.next(t, first.At)
	if got := it.At.Sub(first.At); got != gap {
		t.Errorf("the kicked iteration ran %v after the first, want %v", got, gap)
	}
}
