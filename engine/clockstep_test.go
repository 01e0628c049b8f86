package engine

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/internal/testing/logtest"
)

// TestLoopWallClockSteps steps the wall clock under the loop (the
// monotonic clock goes on) with an interval and a cron-syntax learning
// schedule: the step is detected at the next iteration and logged once,
// with its size. An interval schedule fires every period of elapsed time
// whatever the step; a cron schedule fires on the minutes of the new wall
// time from the step on, never more than a period apart (no stall) and never
// twice at one iteration. The tick whose window the step back inverted
// skips it without an error.
func TestLoopWallClockSteps(t *testing.T) {
	const tick = 5 * time.Second
	for _, tc := range []struct {
		name, schedule string
		period         time.Duration
		step           time.Duration
	}{
		{"interval, +1h", "@every 10s", 10 * time.Second, time.Hour},
		{"interval, -1h", "@every 10s", 10 * time.Second, -time.Hour},
		{"cron, +1h", "* * * * *", time.Minute, time.Hour},
		{"cron, -1h", "* * * * *", time.Minute, -time.Hour},
		// Steps that are no whole number of minutes move the cron
		// firings.
		{"cron, +90s", "* * * * *", time.Minute, 90 * time.Second},
		{"cron, -90s", "* * * * *", time.Minute, -90 * time.Second},
	} {
		t.Run(tc.name, func(t *testing.T) {
			interval := strings.HasPrefix(tc.schedule, "@every")
			h := newLoopHarness(t, tc.schedule, tick)
			rec := &logtest.Recorder{Min: slog.LevelInfo}
			h.l.log = slog.New(rec)
			h.submit(t, "cpu", "disk")
			h.start(t)
			h.exactly(t, h.clock.Now())

			type tickAt struct {
				elapsed time.Duration
				it      Iteration
			}
			var learned []tickAt
			var steps []time.Duration
			elapsed := time.Duration(0)
			const before, after = 24, 60 // iterations before and after the step
			for i := range before + after {
				if i == before {
					h.clock.Step(tc.step)
				}
				now := h.clock.Advance(tick)
				elapsed += tick
				it := h.exactly(t, now)
				if it.ClockStep != 0 {
					steps = append(steps, it.ClockStep)
				}
				if it.Learned {
					learned = append(learned, tickAt{elapsed, it})
				}
				if it.LearnErr != nil {
					t.Errorf("+%v: learning error %v", elapsed, it.LearnErr)
				}
			}
			if diff := cmp.Diff([]time.Duration{tc.step}, steps); diff != "" {
				t.Errorf("steps detected (-want +got):\n%s", diff)
			}
			if n := int((before + after) * tick / tc.period); len(learned) < n {
				t.Errorf("%d learning ticks in %v, want at least %d (every %v)", len(learned), (before+after)*tick, n, tc.period)
			}
			var skipped []time.Duration
			for i, l := range learned {
				if !interval && !l.it.At.Equal(l.it.At.Truncate(tc.period)) {
					t.Errorf("learning tick at +%v at wall time %v: not on a minute", l.elapsed, l.it.At)
				}
				if i == 0 {
					continue
				}
				prev := learned[i-1]
				gap := l.elapsed - prev.elapsed
				across := prev.elapsed <= before*tick && l.elapsed > before*tick
				switch {
				case interval || !across:
					if gap != tc.period {
						t.Errorf("learning ticks at +%v and +%v: %v apart, want %v", prev.elapsed, l.elapsed, gap, tc.period)
					}
				case gap > tc.period:
					t.Errorf("learning ticks at +%v and +%v, across the step: %v apart, want at most %v", prev.elapsed, l.elapsed, gap, tc.period)
				}
				if l.it.Learn.Skipped {
					skipped = append(skipped, l.elapsed)
				}
			}
			// Stepped back, the first tick after the step has an inverted
			// window: skipped. Stepped forward, none is.
			var wantSkipped []time.Duration
			if tc.step < 0 {
				for _, l := range learned {
					if l.elapsed > before*tick {
						wantSkipped = []time.Duration{l.elapsed}
						break
					}
				}
			}
			if diff := cmp.Diff(wantSkipped, skipped); diff != "" {
				t.Errorf("skipped ticks (-want +got):\n%s", diff)
			}

			warned := rec.With([]string{"step"}, "the wall clock stepped; schedules of wall-clock times go on from the new time")
			if len(warned) != 1 || warned[0].Level != slog.LevelWarn || warned[0].Attrs["step"] != tc.step {
				t.Errorf("step warnings: %+v, want one WARN with step %v", warned, tc.step)
			}
		})
	}
}

// exactly returns the iteration at exactly wall time at (At goes back
// with a step back, so the harness's next cannot tell an old iteration
// from a new one).
func (h *loopHarness) exactly(t *testing.T, at time.Time) Iteration {
	t.Helper()
	timeout := time.After(10 * time.Second)
	var seen []string
	for {
		select {
		case it := <-h.its:
			if it.At.Equal(at) {
				return it
			}
			seen = append(seen, it.At.Format("15:04:05.000"))
		case <-timeout:
			h.clock.mu.Lock()
			var timers []time.Duration
			for _, tm := range h.clock.timers {
				timers = append(timers, tm.at)
			}
			mono := h.clock.mono
			h.clock.mu.Unlock()
			t.Fatalf("no loop iteration at %v (iterations seen meanwhile at %v; clock mono %v, timers at %v)", at, seen, mono, timers)
		}
	}
}

// TestLoopStepOfTheWallClockWhileWaitingLong: with no admission tick, a
// step is seen only when the loop wakes, at the monotonic time its timer
// was set for. A cron firing due by then still fires (once), and the next
// is computed from the new wall time; an interval schedule fires on elapsed
// time whatever the step.
func TestLoopStepOfTheWallClockWhileWaitingLong(t *testing.T) {
	for _, tc := range []struct {
		name, schedule string
		step           time.Duration
		// want are the elapsed times between the four ticks: across the
		// step, then the next.
		want1, want2 time.Duration
	}{
		{"cron hourly, -1h", "0 * * * *", -time.Hour, time.Hour, time.Hour},
		{"cron hourly, +1h", "0 * * * *", time.Hour, time.Hour, time.Hour},
		{"interval, -1h", "@every 1h", -time.Hour, time.Hour, time.Hour},
		{"interval, +1h", "@every 1h", time.Hour, time.Hour, time.Hour},
		// Half an hour: the firing due by elapsed time when the loop
		// wakes is not on the hour of the new wall time; it fires all the
		// same (once), and the next one is on the hour.
		{"cron hourly, -30m", "0 * * * *", -30 * time.Minute, time.Hour, 30 * time.Minute},
		{"cron hourly, +30m", "0 * * * *", 30 * time.Minute, time.Hour, 30 * time.Minute},
		{"interval, -30m", "@every 1h", -30 * time.Minute, time.Hour, time.Hour},
	} {
		t.Run(tc.name, func(t *testing.T) {
			h := newLoopHarness(t, tc.schedule, 0, func(o *LoopOptions) { o.Retention = nil })
			h.start(t)
			h.exactly(t, h.clock.Now())
			// Wake at each due time, stepping the wall clock half-way
			// through the second wait.
			var gaps []time.Duration
			var last time.Duration
			for i := range 4 {
				due := h.pendingTimer(t)
				if i == 1 {
					h.clock.Advance(due / 2)
					h.clock.Step(tc.step)
					due -= due / 2
				}
				now := h.clock.Advance(due)
				elapsed := h.clock.Monotonic()
				it := h.exactly(t, now)
				if !it.Learned {
					t.Fatalf("woke at +%v without learning: %+v", elapsed, it)
				}
				if i > 0 {
					gaps = append(gaps, elapsed-last)
				}
				last = elapsed
			}
			if diff := cmp.Diff([]time.Duration{tc.want1, tc.want2, time.Hour}, gaps); diff != "" {
				t.Errorf("elapsed time between learning ticks (-want +got):\n%s", diff)
			}
		})
	}
}

// pendingTimer is how long until the loop's one timer fires. The loop
// sets it before it calls its hook, so it is set once the iteration was
// received.
func (h *loopHarness) pendingTimer(t *testing.T) time.Duration {
	t.Helper()
	h.clock.mu.Lock()
	defer h.clock.mu.Unlock()
	if n := len(h.clock.timers); n != 1 {
		t.Fatalf("%d timers pending, want one", n)
	}
	return h.clock.timers[0].at - h.clock.mono
}

// TestLearnSkipsAnEmptyOrInvertedWindow: a window the wall clock inverted
// (or emptied) is not read, is no error, does not mark the metrics backend
// down, and is logged at INFO.
func TestLearnSkipsAnEmptyOrInvertedWindow(t *testing.T) {
	var reads int
	src := func(c *simcluster.Cluster) UsageSource {
		return usageFunc(func(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
			reads++
			return c.Usage(ctx, hosts, from, to)
		})
	}
	pl := &fakePlacement{}
	placer, err := NewPlacer(pl, testPlacementConfig(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	h := newHarness(t, harnessOpts{nodes: 1, metrics: src, placer: placer, logger: slog.New(rec)})
	mx := &recorder{}
	h.e.mx = mx
	now := h.advance(time.Minute)
	for _, tc := range []struct {
		name     string
		from, to time.Time
	}{
		{"inverted", now.Add(time.Hour), now},
		{"empty", now, now},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rep, err := h.e.Learn(h.ctx, tc.from, tc.to)
			if err != nil {
				t.Fatalf("Learn: %v", err)
			}
			if diff := cmp.Diff(LearnReport{From: tc.from, To: tc.to, Skipped: true}, rep); diff != "" {
				t.Errorf("report (-want +got):\n%s", diff)
			}
			if reads != 0 || len(pl.asked) != 0 || len(mx.calls) != 0 {
				t.Errorf("usage reads %d, placement reads %d, telemetry %q: want none", reads, len(pl.asked), mx.calls)
			}
			var infos int
			for _, l := range rec.Take() {
				if l.Level == slog.LevelInfo && strings.HasPrefix(l.Msg, "learning tick skipped") {
					infos++
				}
			}
			if infos != 1 {
				t.Errorf("%d INFO lines of a skipped tick, want 1", infos)
			}
		})
	}
}

// TestLoopStepDuringSync: the wall clock steps an hour forward between
// the loop's reading of the clock and the sync's, within one iteration.
// The iteration keeps the monotonic clock's reading, so the next one is
// due a tick later, not an hour later (admission stalled for the hour, but
// for kicks), and the step is seen there, once.
func TestLoopStepDuringSync(t *testing.T) {
	const tick = 5 * time.Second
	h := newLoopHarness(t, "@every 1h", tick)
	h.start(t)
	t0 := h.exactly(t, h.clock.Now()).At
	// The loop reads the clock as an iteration begins and as its Step
	// begins; the sync reads it next.
	h.clock.StepAfterReads(2, time.Hour)
	h.clock.Advance(tick)
	it := h.exactly(t, t0.Add(tick+time.Hour)) // the sync's time
	if want := it.At.Add(tick); !it.Due.Equal(want) {
		t.Errorf("after a step during its sync, the iteration at %v is due again at %v, want %v (a tick later)", it.At, it.Due, want)
	}
	h.clock.Advance(tick)
	it = h.exactly(t, t0.Add(2*tick+time.Hour))
	if it.ClockStep != time.Hour {
		t.Errorf("the next iteration saw a step of %v, want 1h", it.ClockStep)
	}
}
