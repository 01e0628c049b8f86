package sim_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

var wall0 = time.Date(2030, 5, 1, 12, 0, 0, 0, time.UTC)

type recorder struct {
	mu  sync.Mutex
	evs []sim.Event
}

func (r *recorder) add(ev sim.Event) {
	r.mu.Lock()
	r.evs = append(r.evs, ev)
	r.mu.Unlock()
}

func (r *recorder) get() []sim.Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]sim.Event(nil), r.evs...)
}

func startRealtime(t *testing.T, factor float64) (*sim.Realtime, *simtest.FakeWall, *recorder) {
	t.Helper()
	fw := simtest.NewFakeWall(wall0)
	rt := sim.NewRealtime(simtest.NewTiny(t, 1), factor, fw.Now, fw.Options()...)
	rec := &recorder{}
	rt.OnEvent(rec.add)
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(rt.Stop)
	return rt, fw, rec
}

func virt(sec float64) time.Time {
	return sim.DefaultStart.Add(time.Duration(sec * float64(time.Second)))
}

func TestRealtimeAccelerates(t *testing.T) {
	rt, fw, rec := startRealtime(t, 60)
	var id string
	rt.Do(func(s *sim.Sim) {
		id = s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{Kind: "cpu"}); err != nil {
			t.Error(err)
		}
	})
	if got := fw.Step(t, 500*time.Millisecond); !got.Equal(virt(30)) {
		t.Errorf("after 0.5 s of wall time at 60×: virtual %v, want +30 s", got.Sub(sim.DefaultStart))
	}
	if evs := rec.get(); len(evs) != 0 {
		t.Errorf("events before the job's end: %v", evs)
	}
	fw.Step(t, 500*time.Millisecond)
	// The cpu job takes 60 s alone: the event carries the exact virtual time.
	want := []sim.Event{{At: virt(60), AppID: id, Kind: sim.EventFinished}}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
	if got := rt.Now(); !got.Equal(virt(60)) {
		t.Errorf("Now = %v, want +60 s", got.Sub(sim.DefaultStart))
	}
}

func TestRealtimeAfter(t *testing.T) {
	rt, fw, _ := startRealtime(t, 60)
	ch := rt.After(45 * time.Second)
	fw.Step(t, 500*time.Millisecond) // +30 s
	select {
	case v := <-ch:
		t.Fatalf("After(45s) fired at %v", v.Sub(sim.DefaultStart))
	default:
	}
	fw.Step(t, 500*time.Millisecond) // +60 s
	select {
	case v := <-ch:
		if !v.Equal(virt(60)) {
			t.Errorf("After(45s) delivered %v, want the virtual time of the tick (+60 s)", v.Sub(sim.DefaultStart))
		}
	default:
		t.Fatal("After(45s) did not fire by +60 s")
	}
	select {
	case v := <-rt.After(0):
		if !v.Equal(virt(60)) {
			t.Errorf("After(0) = %v", v)
		}
	default:
		t.Error("After(0) did not fire at once")
	}
}

// Do and Now see the virtual present even between ticks, and handlers may
// call back into the driver.
func TestRealtimeDoCatchesUpAndHandlersReenter(t *testing.T) {
	rt, fw, rec := startRealtime(t, 10)
	var second string
	rt.OnEvent(func(ev sim.Event) {
		rt.Do(func(s *sim.Sim) {
			if second == "" {
				second = s.NewApplication()
				if err := s.Submit(second, sim.AppSpec{Kind: "disk"}); err != nil {
					t.Error(err)
				}
			}
		})
	})
	var first string
	rt.Do(func(s *sim.Sim) {
		first = s.NewApplication()
		if err := s.Submit(first, sim.AppSpec{Kind: "cpu"}); err != nil {
			t.Error(err)
		}
	})
	fw.Set(wall0.Add(2 * time.Second)) // +20 s virtual, no tick
	var now time.Time
	rt.Do(func(s *sim.Sim) { now = s.Now() })
	if !now.Equal(virt(20)) {
		t.Errorf("Do saw %v, want +20 s", now.Sub(sim.DefaultStart))
	}
	fw.Step(t, 4*time.Second)  // +60 s: first ends, the handler submits the second at +60 s
	fw.Step(t, 12*time.Second) // +180 s: the second (60 s alone) has ended
	want := []sim.Event{
		{At: virt(60), AppID: first, Kind: sim.EventFinished},
		{At: virt(120), AppID: second, Kind: sim.EventFinished},
	}
	if diff := cmp.Diff(want, rec.get()); diff != "" {
		t.Errorf("events (-want +got):\n%s", diff)
	}
}

func TestRealtimeLifecycle(t *testing.T) {
	fw := simtest.NewFakeWall(wall0)
	rt := sim.NewRealtime(simtest.NewTiny(t, 1), 0, fw.Now, fw.Options()...) // factor 0 means 1
	ctx, cancel := context.WithCancel(context.Background())
	if err := rt.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rt.Start(ctx); !errors.Is(err, sim.ErrStarted) {
		t.Errorf("second Start: %v, want ErrStarted", err)
	}
	if got := fw.Step(t, 7*time.Second); !got.Equal(virt(7)) {
		t.Errorf("factor 0: virtual %v, want +7 s", got.Sub(sim.DefaultStart))
	}
	cancel()
	rt.Stop() // returns once the cancelled loop exited
	rt.Stop()
	// Stopped: time stands still, Do still works.
	fw.Set(wall0.Add(time.Hour))
	var now time.Time
	rt.Do(func(s *sim.Sim) { now = s.Now() })
	if !now.Equal(virt(7)) {
		t.Errorf("after Stop, virtual time moved to %v", now.Sub(sim.DefaultStart))
	}
}

// The default wall clock and ticker start and stop cleanly (goleak checks
// the goroutine is gone).
func TestRealtimeDefaults(t *testing.T) {
	rt := sim.NewRealtime(simtest.NewTiny(t, 1), 600, nil, sim.WithTickInterval(time.Millisecond))
	if err := rt.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	rt.Stop()
	never := sim.NewRealtime(simtest.NewTiny(t, 1), 1, nil)
	never.Stop() // never started: returns at once
	if err := never.Start(context.Background()); !errors.Is(err, sim.ErrStarted) {
		t.Errorf("Start after Stop: %v, want ErrStarted", err)
	}
}
