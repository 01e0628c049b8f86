package sim

import (
	"slices"
	"time"
)

// work draws a group's work for a phase of sec solo seconds.
func (s *Sim) work(sec float64) float64 {
	if s.opts.Jitter == 0 {
		return sec
	}
	return sec * (1 + s.opts.Jitter*(2*s.rng.Float64()-1))
}

// NextEvent is the time of the next state change: a container finishing
// its phase, an application finishing, or a metrics sample. It is false
// when no application runs (then nothing but empty samples would happen).
func (s *Sim) NextEvent() (time.Time, bool) {
	if s.running == 0 {
		return time.Time{}, false
	}
	s.refresh()
	return s.at(s.next()), true
}

// next is the earliest of the next group completion and the next sample.
func (s *Sim) next() float64 {
	t := float64(s.tick+1) * s.interval
	if c, ok := s.peek(); ok {
		t = min(t, c.t)
	}
	return t
}

// refresh recomputes the shares of the nodes whose set of working groups
// changed.
func (s *Sim) refresh() {
	for _, i := range s.dirty {
		if s.nodes[i].dirty {
			s.share(i)
		}
	}
	s.dirty = s.dirty[:0]
}

// markDirty queues node i for share.
func (s *Sim) markDirty(i int32) {
	if nd := &s.nodes[i]; !nd.dirty {
		nd.dirty = true
		s.dirty = append(s.dirty, i)
	}
}

// Advance runs the simulation up to until (no-op if until is not after
// Now) and returns the applications that finished, in time order.
func (s *Sim) Advance(until time.Time) []Event {
	u := s.secs(until)
	var evs []Event
	for {
		s.refresh()
		next := s.next()
		// Compare on the nanosecond grid of time.Time, so that Advance to
		// the (rounded) time NextEvent returned processes that event.
		if s.at(next).After(until) {
			if u > s.now {
				s.now = u // nothing happens in between: work and metrics integrate lazily
			}
			return evs
		}
		evs = s.step(next, evs)
	}
}

// step moves to the event time t: the groups whose completion is due
// complete, the apps whose groups all completed move to their next phase
// or finish (in submission order, which is the order of their draws of
// jitter), and t ends a metrics interval if it is one's end. Nodes are
// only marked dirty; their metrics catch up when they are touched or read.
func (s *Sim) step(t float64, evs []Event) []Event {
	s.now = t
	touched := s.touched[:0]
	for {
		c, ok := s.peek()
		if !ok || c.t > t {
			break
		}
		s.events.pop()
		g := &s.groups[c.g]
		g.remaining, g.at, g.rate = 0, t, 0
		s.markDirty(g.node)
		a := &s.apps[g.app]
		a.working--
		if a.working == 0 {
			touched = append(touched, g.app) // the barrier: its slowest group is done
		}
	}
	slices.Sort(touched)
	for _, ai := range touched {
		evs = s.nextPhase(ai, evs)
	}
	s.touched = touched[:0]
	if t >= float64(s.tick+1)*s.interval {
		s.tick++
	}
	return evs
}

// nextPhase starts app ai's next phase on all its groups, or ends it.
func (s *Sim) nextPhase(ai int32, evs []Event) []Event {
	a := &s.apps[ai]
	a.doneSolo += a.kind.phase(a.phase).seconds
	a.phase++
	if a.phase == a.kind.total {
		s.end(ai, AppFinished)
		return append(evs, Event{At: s.at(s.now), AppID: a.id, Kind: EventFinished})
	}
	sec := a.kind.phase(a.phase).seconds
	a.phaseWork = 0
	for _, gi := range a.groups {
		g := &s.groups[gi]
		g.remaining, g.at, g.rate = s.work(sec)*a.scale, s.now, 0
		a.phaseWork = max(a.phaseWork, g.remaining)
		s.markDirty(g.node)
	}
	a.working = len(a.groups)
	return evs
}
