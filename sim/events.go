package sim

// completion is when a working group will finish its phase at its current
// rate. It is stale once the group's generation moved on: its rate changed
// (a newer completion replaces it), its phase ended or its app was killed.
type completion struct {
	t   float64 // seconds since start
	g   int32   // index into Sim.groups
	gen uint32
}

// completions is a binary min-heap of completions by time (then group, so
// that the order never depends on the order of pushes). Stale entries stay
// until they reach the top, where the Sim drops them (lazy invalidation).
type completions []completion

func (h completions) less(i, j int) bool {
	if h[i].t != h[j].t {
		return h[i].t < h[j].t
	}
	return h[i].g < h[j].g
}

func (h *completions) push(c completion) {
	*h = append(*h, c)
	q := *h
	for i := len(q) - 1; i > 0; {
		p := (i - 1) / 2
		if !q.less(i, p) {
			break
		}
		q[i], q[p] = q[p], q[i]
		i = p
	}
}

func (h *completions) pop() completion {
	q := *h
	top := q[0]
	n := len(q) - 1
	q[0] = q[n]
	*h = q[:n]
	q.down(0)
	return top
}

func (h completions) down(i int) {
	n := len(h)
	for {
		l := 2*i + 1
		if l >= n {
			return
		}
		m := l
		if r := l + 1; r < n && h.less(r, l) {
			m = r
		}
		if !h.less(m, i) {
			return
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
}

// live reports whether c is the current completion of its group.
func (s *Sim) live(c completion) bool { return s.groups[c.g].gen == c.gen }

// schedule records g's completion at its current rate, superseding any
// earlier one. When stale entries outnumber the groups ever started, it
// drops them all (a heap rebuild), so the heap stays within twice the
// groups.
func (s *Sim) schedule(gi int32) {
	g := &s.groups[gi]
	g.gen++
	s.events.push(completion{t: g.at + g.remaining/g.rate, g: gi, gen: g.gen})
	if len(s.events) > 2*len(s.groups)+64 {
		keep := s.events[:0]
		for _, c := range s.events {
			if s.live(c) {
				keep = append(keep, c)
			}
		}
		s.events = keep
		for i := len(keep)/2 - 1; i >= 0; i-- {
			keep.down(i)
		}
	}
}

// unschedule drops g's pending completion, if any.
func (s *Sim) unschedule(gi int32) { s.groups[gi].gen++ }

// peek is the earliest live completion, dropping stale ones; false when
// no group works.
func (s *Sim) peek() (completion, bool) {
	for len(s.events) > 0 {
		if c := s.events[0]; s.live(c) {
			return c, true
		}
		s.events.pop()
	}
	return completion{}, false
}
