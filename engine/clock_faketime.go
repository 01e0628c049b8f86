//go:build colocd_faketime

package engine

import (
	"os"
	"strings"
	"time"
)

// Now is time.Now moved by the duration the file named by
// COLOCDTEST_FAKETIME_FILE holds (not COLOCD_…: those are config keys) ("1h", "-1h", "0s"; no file or an unreadable
// one: no offset), read at every call. It exists for the process tests of
// a stepped wall clock (daemon's TestHAWallClockSteps): libfaketime cannot
// move a Go binary's clock, which Go reads from the vDSO, not from libc.
// Only WallClock's wall reading moves — the readings the store, the API
// and the engine take of the time of day — and a moved reading's monotonic
// part moves with it (time.Time.Add), so a comparison of two of them sees
// the step that a real step would hide from it: the test is harsher than
// a real step there. Monotonic, After, ZooKeeper's sessions and the HA
// leases stay on the real clocks, as they do across a real step.
func (WallClock) Now() time.Time {
	now := time.Now()
	name := os.Getenv("COLOCDTEST_FAKETIME_FILE")
	if name == "" {
		return now
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return now
	}
	d, err := time.ParseDuration(strings.TrimSpace(string(b)))
	if err != nil {
		return now
	}
	return now.Add(d)
}
