package engine

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// WallClock is the real clock, the yarn backend's. Its wall reading can
// step (NTP, an operator's date); Monotonic cannot. Now is time.Now
// (clock_wall.go); a binary built with the tag colocd_faketime, for the
// process tests only, reads an offset from a file instead
// (clock_faketime.go).
type WallClock struct{}

// After is time.After: it waits d of monotonic time, whatever the wall
// clock does meanwhile.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Monotonic is the time elapsed since the process started, on Go's
// monotonic clock.
func (WallClock) Monotonic() time.Duration { return time.Since(processStart) }

// processStart is WallClock's monotonic origin.
var processStart = time.Now()

// monotonic is implemented by a Clock whose wall reading (Now) can step:
// Monotonic is the elapsed time since an origin of the clock's choosing, on
// a clock no step moves, and After waits on it. The loop measures elapsed
// time (the admission tick, interval schedules, the checkpoint cadence) on
// it and detects a step of the wall clock as a difference between the two.
// A Clock that does not implement it (the simulator's virtual clock) never
// steps: its wall reading is its monotonic one.
type monotonic interface {
	Monotonic() time.Duration
}

var _ monotonic = WallClock{}

// defaultStepTolerance is LoopOptions.StepTolerance's default: how far the
// wall clock's elapsed time may drift from the monotonic clock's between two
// loop iterations before the loop takes it for a step. NTP slews both
// clocks alike (at most 500 ppm) and only steps move one without the other,
// so a second is far above the noise of reading the two clocks one after
// the other and far below any step worth reacting to.
const defaultStepTolerance = time.Second

// Schedule gives the next activation after t (cron.Schedule). The loop
// evaluates it on the injected Clock, so a schedule runs in virtual time on
// the simulator.
//
// A schedule that implements interval fires every fixed elapsed duration
// ("@every 60s"): the loop measures it on the monotonic clock, so a step of
// the wall clock neither delays nor hastens it. Any other schedule names
// wall-clock times ("*/5 * * * *", "@hourly"): after a step the loop
// computes its next firing again from the new wall time.
type Schedule interface {
	Next(t time.Time) time.Time
}

// interval is implemented by a Schedule that fires at a fixed elapsed
// interval.
type interval interface {
	Interval() time.Duration
}

// ParseSchedule parses a cron spec with robfig/cron's standard parser:
// five fields ("*/5 * * * *") or a descriptor ("@every 60s", "@hourly").
// "@every" gives an interval schedule.
func ParseSchedule(spec string) (Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("parse cron spec %q: %w", spec, err)
	}
	if d, ok := s.(cron.ConstantDelaySchedule); ok {
		return everySchedule{d}, nil
	}
	return s, nil
}

// everySchedule is robfig/cron's "@every" schedule, marked as an interval.
type everySchedule struct{ cron.ConstantDelaySchedule }

// Interval is the delay between firings.
func (s everySchedule) Interval() time.Duration { return s.Delay }

// isInterval reports whether s fires at a fixed elapsed interval.
func isInterval(s Schedule) bool {
	switch s.(type) {
	case interval, cron.ConstantDelaySchedule:
		return true
	}
	return false
}
