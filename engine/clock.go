package engine

import (
	"fmt"
	"time"

	"github.com/robfig/cron/v3"
)

// WallClock is the real clock, the yarn backend's.
type WallClock struct{}

// Now is time.Now.
func (WallClock) Now() time.Time { return time.Now() }

// After is time.After.
func (WallClock) After(d time.Duration) <-chan time.Time { return time.After(d) }

// Schedule gives the next activation after t (cron.Schedule). The loop
// evaluates it on the injected Clock, so a schedule runs in virtual time on
// the simulator.
type Schedule interface {
	Next(t time.Time) time.Time
}

// ParseSchedule parses a cron spec with robfig/cron's standard parser:
// five fields ("*/5 * * * *") or a descriptor ("@every 60s", "@hourly").
func ParseSchedule(spec string) (Schedule, error) {
	s, err := cron.ParseStandard(spec)
	if err != nil {
		return nil, fmt.Errorf("parse cron spec %q: %w", spec, err)
	}
	return s, nil
}
