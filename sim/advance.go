package sim

import (
	"math"
	"slices"
	"time"

	"github.com/colocd/colocd/goodness"
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
	if len(s.running) == 0 {
		return time.Time{}, false
	}
	s.refresh()
	return s.at(s.next()), true
}

// next is the earliest of the next group completion and the next sample.
func (s *Sim) next() float64 {
	t := float64(s.tick+1) * s.interval
	for _, a := range s.running {
		for _, g := range a.groups {
			if g.remaining > 0 {
				t = min(t, s.now+g.remaining/g.rate)
			}
		}
	}
	return t
}

// refresh recomputes the shares of nodes whose set of working groups changed.
func (s *Sim) refresh() {
	for _, nd := range s.nodes {
		if nd.dirty {
			s.share(nd)
		}
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
				s.step(u, false)
			}
			return evs
		}
		evs = s.step(next, true, evs...)
	}
}

// step integrates from now to t at the current rates. When event is true,
// t is an event time: groups that complete by t complete, the apps whose
// containers all completed move to their next phase or finish, and a
// sample is taken if t ends a metrics interval.
func (s *Sim) step(t float64, event bool, evs ...Event) []Event {
	dt := t - s.now
	for _, nd := range s.nodes {
		nd.acc.addScaled(nd.rate, dt)
	}
	var touched []*app
	for _, a := range s.running {
		hit := false
		for _, g := range a.groups {
			if g.remaining <= 0 {
				continue
			}
			if event && s.now+g.remaining/g.rate <= t {
				g.remaining = 0
				s.nodes[g.node].dirty = true
				hit = true
			} else {
				g.remaining = max(g.remaining-g.rate*dt, 1e-12)
			}
		}
		if hit {
			touched = append(touched, a)
		}
	}
	s.now = t
	for _, a := range touched {
		if slices.ContainsFunc(a.groups, func(g *group) bool { return g.remaining > 0 }) {
			continue // the barrier: wait for the slowest container
		}
		a.doneSolo += a.kind.phase(a.phase).seconds
		a.phase++
		if a.phase == a.kind.total {
			s.end(a, AppFinished)
			evs = append(evs, Event{At: s.at(t), AppID: a.id, Kind: EventFinished})
			continue
		}
		sec := a.kind.phase(a.phase).seconds
		for _, g := range a.groups {
			g.remaining = s.work(sec)
			s.nodes[g.node].dirty = true
		}
		a.phaseWork = maxRemaining(a)
	}
	if event && t >= float64(s.tick+1)*s.interval {
		s.sample()
	}
	return evs
}

// sample closes the current metrics interval on every node.
func (s *Sim) sample() {
	cores := s.cluster.Node.Cores
	f := 1 / s.interval
	k := s.tick
	for _, nd := range s.nodes {
		a := nd.acc
		u := goodness.Usage{
			CPU: clamp01(a.cpu * f / cores), IOWait: clamp01(a.iowait * f / cores),
			IOPressure: clamp01(a.iopress * f),
			DiskRead:   a.read * f * mb, DiskWrite: a.write * f * mb, NetRecv: a.in * f * mb, NetSent: a.out * f * mb,
		}
		if u.CPU+u.IOWait > 1 {
			u.IOWait = 1 - u.CPU
		}
		if !s.opts.Pressure {
			u.IOPressure = 0
		}
		nd.samples = append(nd.samples, sample{k: k, u: u, apps: nd.present})
		nd.acc = usage{}
		nd.present = nd.apps
	}
	s.tick++
	if s.opts.Retention > 0 {
		keepFrom := int64(math.Floor((s.now - s.opts.Retention.Seconds()) / s.interval))
		for _, nd := range s.nodes {
			drop := 0
			for drop < len(nd.samples) && nd.samples[drop].k < keepFrom {
				drop++
			}
			nd.samples = nd.samples[drop:]
		}
	}
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }
