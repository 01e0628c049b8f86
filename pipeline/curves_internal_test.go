package pipeline

import (
	"math"
	"testing"
	"time"
)

var bookStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

// hold books alloc held from start for d, in steps of one decision per
// minute, and returns the time reached.
func hold(b *curveBook, at time.Time, d time.Duration, alloc map[string][2]float64) time.Time {
	end := at.Add(d)
	for ; at.Before(end); at = at.Add(time.Minute) {
		b.advance(at, alloc)
	}
	b.advance(end, alloc)
	return end
}

func TestCurveEntitlement(t *testing.T) {
	q := ServiceQueue{Name: "ls", Level: 1, Alpha: Rate{VCores: 0.6, Memory: 0.6}, Beta: Rate{VCores: 0.2, Memory: 0.2}, Burst: 10 * time.Minute}
	period := time.Hour
	t.Run("idle queue is entitled to its burst rate", func(t *testing.T) {
		b := newCurveBook(period, time.Minute)
		now := hold(b, bookStart, 2*time.Hour, nil)
		if y := b.entitled(q, now); !near(y[0], 0.6) || !near(y[1], 0.6) {
			t.Errorf("entitled %v, want α = 0.6", y)
		}
	})
	t.Run("steady at beta is entitled to beta", func(t *testing.T) {
		b := newCurveBook(period, time.Minute)
		now := hold(b, bookStart, 2*time.Hour, map[string][2]float64{"ls": {0.2, 0.2}})
		if y := b.entitled(q, now); !near(y[1], 0.2) {
			t.Errorf("entitled %v, want β = 0.2", y)
		}
	})
	t.Run("after a burst it pays back", func(t *testing.T) {
		b := newCurveBook(period, time.Minute)
		now := hold(b, bookStart, 2*time.Hour, nil)
		now = hold(b, now, 10*time.Minute, map[string][2]float64{"ls": {0.6, 0.6}})
		y := b.entitled(q, now)
		// Over the 11 minutes from the burst's start, S = 0.2·11 min
		// = 2.2 slot-rates while 6 were received: Y is negative.
		if !(y[1] < 0) {
			t.Errorf("entitled %v right after a full burst, want negative (payback)", y)
		}
		// Idle for the whole period again: back to α.
		now = hold(b, now, period+time.Minute, nil)
		if y := b.entitled(q, now); !near(y[1], 0.6) {
			t.Errorf("entitled %v a period after the burst, want 0.6", y)
		}
	})
	t.Run("over alpha is entitled to less", func(t *testing.T) {
		b := newCurveBook(period, time.Minute)
		now := hold(b, bookStart, 30*time.Minute, map[string][2]float64{"ls": {0.9, 0.9}})
		if y := b.entitled(q, now); !(y[1] < 0.2) {
			t.Errorf("entitled %v while holding 0.9 for 30 min, want below β", y)
		}
	})
	t.Run("received is the mean over the period", func(t *testing.T) {
		b := newCurveBook(period, time.Minute)
		hold(b, bookStart, 30*time.Minute, map[string][2]float64{"ls": {0.4, 0.2}})
		r := b.received("ls")
		if !near(r[0], 0.2) || !near(r[1], 0.1) {
			t.Errorf("received %v over an hour after 30 min at (0.4, 0.2), want (0.2, 0.1)", r)
		}
	})
}

func TestCurveBookStateRoundTrip(t *testing.T) {
	b := newCurveBook(time.Hour, time.Minute)
	now := hold(b, bookStart, 90*time.Minute, map[string][2]float64{"ls": {0.3, 0.1}, "b": {0.1, 0.5}})
	c := newCurveBook(time.Hour, time.Minute)
	if !c.restore(b.state()) {
		t.Fatal("restore refused a state of the same shape")
	}
	q := ServiceQueue{Name: "ls", Level: 1, Alpha: Rate{VCores: 0.5, Memory: 0.5}}
	later := now.Add(7 * time.Minute)
	b.advance(later, nil)
	c.advance(later, nil)
	if yb, yc := b.entitled(q, later), c.entitled(q, later); yb != yc {
		t.Errorf("entitled after restore %v, before %v", yc, yb)
	}
	if rb, rc := b.received("b"), c.received("b"); rb != rc {
		t.Errorf("received after restore %v, before %v", rc, rb)
	}
	if newCurveBook(2*time.Hour, time.Minute).restore(b.state()) {
		t.Error("restore took a state kept with another period")
	}
}
