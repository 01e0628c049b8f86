package sim

import (
	"fmt"
	"slices"
	"strconv"
)

// NewApplication reserves an application id, like YARN's new-application:
// "application_<start unix ms>_<sequence, at least 4 digits>".
func (s *Sim) NewApplication() string {
	id := s.NextApplicationID()
	s.seq++
	s.reserved[id] = true
	return id
}

// NextApplicationID is the id the next NewApplication returns; it changes
// nothing (a caller that logs ahead writes the id before reserving it).
func (s *Sim) NextApplicationID() string {
	return fmt.Sprintf("application_%d_%04d", s.start.UnixMilli(), s.seq+1)
}

// CheckSubmit returns the error Submit would return before it places
// anything: ErrDuplicate, ErrUnknownApp or ErrUnknownKind. nil means Submit
// either starts the job or fails with ErrNoFit. It changes nothing and
// draws no random numbers (Submit's placement does, even when the job does
// not fit).
func (s *Sim) CheckSubmit(appID string, a AppSpec) error {
	if _, done := s.byID[appID]; done {
		return fmt.Errorf("submit %s: %w", appID, ErrDuplicate)
	}
	if !s.reserved[appID] {
		return fmt.Errorf("submit %s: %w (not reserved by NewApplication)", appID, ErrUnknownApp)
	}
	if _, ok := s.kinds[a.Kind]; !ok {
		return fmt.Errorf("submit %s: kind %q: %w", appID, a.Kind, ErrUnknownKind)
	}
	if a.Containers < 0 || a.Containers > MaxContainers || a.Scale != 0 && !(a.Scale > 0 && a.Scale <= MaxScale) {
		return fmt.Errorf("submit %s: %d containers at scale %v: %w", appID, a.Containers, a.Scale, ErrInvalid)
	}
	return nil
}

// size is the containers and the work scale of a job of k submitted as a.
func size(k *kindRT, a AppSpec) (int, float64) {
	c, scale := a.Containers, a.Scale
	if c == 0 {
		c = k.spec.Containers
	}
	if scale == 0 {
		scale = 1
	}
	return c, scale
}

// Fits reports whether a job of kind would fit the free resources now, i.e.
// whether Submit would place it rather than fail with ErrNoFit. It changes
// nothing and draws no random numbers (Submit's placement draws them even
// when the job turns out not to fit). Placement ends with single containers
// on any node with room for one, so a job fits exactly when the free room
// of all nodes together holds its containers; the Sim keeps that room per
// kind as reservations change, so Fits costs no walk over the nodes.
func (s *Sim) Fits(kind string) bool {
	k, ok := s.kinds[kind]
	return ok && s.room[k.idx] >= int64(k.spec.Containers)
}

// FitsApp is Fits for a job submitted as a: its kind with a.Containers
// containers when set.
func (s *Sim) FitsApp(a AppSpec) bool {
	k, ok := s.kinds[a.Kind]
	if !ok {
		return false
	}
	c, _ := size(k, a)
	return s.room[k.idx] >= int64(c)
}

// roomOf is how many containers of k nd's free resources hold.
func (s *Sim) roomOf(nd *node, k *kindRT) int64 {
	return holds(s.spec(nd), nd.usedVC, nd.usedMem, k.vcores, k.memMB)
}

// holds is how many containers of vcores and memMB a node of spec holds
// with usedVC and usedMem taken.
func holds(spec *NodeSpec, usedVC int, usedMem, vcores, memMB int64) int64 {
	vc := int64(spec.vcores()-usedVC) / vcores
	mem := (spec.MemoryMB - usedMem) / memMB
	return max(min(vc, mem), 0)
}

// reserve adds c containers of k to nd's reservations (c < 0 releases
// them) and keeps s.room up to date: each container shape's change of
// room on nd goes to every kind of that shape.
func (s *Sim) reserve(nd *node, k *kindRT, c int) {
	spec := s.spec(nd)
	vc, mem := nd.usedVC+c*int(k.vcores), nd.usedMem+int64(c)*k.memMB
	for i := range s.shapes {
		sh := &s.shapes[i]
		d := holds(spec, vc, mem, sh.vcores, sh.memMB) - holds(spec, nd.usedVC, nd.usedMem, sh.vcores, sh.memMB)
		if d != 0 {
			for _, j := range sh.kinds {
				s.room[j] += d
			}
		}
	}
	nd.usedVC, nd.usedMem = vc, mem
}

// Submit places the containers of a job of kind a.Kind and starts it under
// a reserved id. It fails with ErrUnknownApp for an id NewApplication did
// not return, ErrDuplicate for an id already submitted, ErrUnknownKind, or
// ErrNoFit when the whole job does not fit the free resources now (then
// nothing is placed and the id stays reserved).
//
// Placement (paper §6.1): one group of GroupSize containers on each empty
// node, in random order; then groups on random nodes with room for a whole
// group; then single containers on random nodes with room for one. Fit is
// YARN's: advertised vcores and memory.
func (s *Sim) Submit(appID string, a AppSpec) error {
	if err := s.CheckSubmit(appID, a); err != nil {
		return err
	}
	k := s.kinds[a.Kind]
	c, _ := size(k, a)
	counts, ok := s.place(k, c)
	if !ok {
		return fmt.Errorf("submit %s: %d containers of %d vcores, %d MB: %w", appID, c, k.vcores, k.memMB, ErrNoFit)
	}
	s.start1(appID, a, k, counts)
	return nil
}

// place computes a placement of want containers of k without changing
// anything; counts[i] is the number of containers on node i.
func (s *Sim) place(k *kindRT, want int) ([]int, bool) {
	n := len(s.nodes)
	counts := make([]int, n)
	room := func(i int) int64 {
		nd := &s.nodes[i]
		spec := s.spec(nd)
		freeVC := int64(spec.VCores) - int64(nd.usedVC) - int64(counts[i])*k.vcores
		freeMem := spec.MemoryMB - nd.usedMem - int64(counts[i])*k.memMB
		return min(freeVC/k.vcores, freeMem/k.memMB)
	}
	left := want
	g := s.opts.GroupSize
	// 1. One group per empty node, empty nodes in random order.
	var cand []int
	for i := range s.nodes {
		if nd := &s.nodes[i]; nd.usedVC == 0 && nd.usedMem == 0 {
			cand = append(cand, i)
		}
	}
	s.rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	for _, i := range cand {
		if left == 0 {
			break
		}
		if c := min(g, left, int(room(i))); c > 0 {
			counts[i] += c
			left -= c
		}
	}
	// 2. Whole groups on random nodes with room for one; 3. then singles.
	// cand holds the nodes with room for a group of want; a node leaves it
	// when it fills up, so each group costs O(1) after an O(n) scan (one
	// more scan when the last, partial group is smaller).
	for _, size := range []int{g, 1} {
		for left > 0 {
			want := min(size, left)
			cand = cand[:0]
			for i := range n {
				if room(i) >= int64(want) {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				break
			}
			for left >= want && len(cand) > 0 {
				j := s.rng.IntN(len(cand))
				i := cand[j]
				counts[i] += want
				left -= want
				if room(i) < int64(want) {
					cand[j] = cand[len(cand)-1]
					cand = cand[:len(cand)-1]
				}
			}
		}
	}
	return counts, left == 0
}

// start1 starts an app with the given placement (validated by the caller).
func (s *Sim) start1(appID string, spec AppSpec, k *kindRT, counts []int) {
	delete(s.reserved, appID)
	spec.Tags = slices.Clone(spec.Tags)
	ai := int32(len(s.apps))
	a := app{id: appID, seq: s.seqOf(appID), spec: spec, kind: k, state: AppRunning, started: s.now}
	a.containers, a.scale = size(k, spec)
	first := k.phase(0)
	nodes := 0
	for _, c := range counts {
		if c > 0 {
			nodes++
		}
	}
	a.groups = make([]int32, 0, nodes)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		gi := int32(len(s.groups))
		s.groups = append(s.groups, group{app: ai, node: int32(i), count: int32(c), remaining: s.work(first.seconds) * a.scale, at: s.now})
		a.groups = append(a.groups, gi)
		a.phaseWork = max(a.phaseWork, s.groups[gi].remaining)
		nd := &s.nodes[i]
		s.closeIntervals(nd)
		if s.cm != nil {
			s.closeApps(int32(i))
			entry(&s.cm.nodes[i].acc, ai)
		}
		s.reserve(nd, k, c)
		nd.groups = append(nd.groups, gi)
		s.markDirty(int32(i))
		if !slices.Contains(nd.present, appID) {
			nd.present = append(slices.Clip(nd.present), appID)
		}
	}
	a.working = len(a.groups)
	s.apps = append(s.apps, a)
	s.byID[appID] = ai
	s.running++
	for _, gi := range a.groups {
		s.refreshApps(&s.nodes[s.groups[gi].node])
	}
}

func (s *Sim) seqOf(id string) int {
	i := len(id) - 1
	for i >= 0 && id[i] != '_' {
		i--
	}
	n, _ := strconv.Atoi(id[i+1:])
	return n
}

// refreshApps lists the running apps on nd, in placement order.
func (s *Sim) refreshApps(nd *node) {
	ids := make([]string, 0, min(len(nd.groups), 8)) // a new slice: clones share the old one
	for _, gi := range nd.groups {
		if id := s.apps[s.groups[gi].app].id; !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	nd.apps = ids
}

// Kill stops a running application and frees its containers. Killing an
// application that already ended is a no-op.
func (s *Sim) Kill(appID string) error {
	ai, ok := s.byID[appID]
	if !ok {
		return fmt.Errorf("kill %s: %w", appID, ErrUnknownApp)
	}
	if s.apps[ai].state != AppRunning {
		return nil
	}
	s.end(ai, AppKilled)
	return nil
}

// end releases app ai's containers and records its end at the current
// time. The work of groups still working stays as of now.
func (s *Sim) end(ai int32, state AppState) {
	a := &s.apps[ai]
	a.state = state
	a.finished = s.now
	for _, gi := range a.groups {
		g := &s.groups[gi]
		if g.remaining > 0 {
			g.remaining, g.at, g.rate = s.remainingNow(g), s.now, 0
			s.unschedule(gi)
		}
		nd := &s.nodes[g.node]
		s.closeIntervals(nd)
		if s.cm != nil {
			s.closeApps(g.node)
		}
		s.reserve(nd, a.kind, -int(g.count))
		nd.groups = slices.DeleteFunc(slices.Clone(nd.groups), func(x int32) bool { return x == gi })
		s.markDirty(g.node)
		s.refreshApps(nd)
	}
	s.running--
}

// Resume starts a job of kind a.Kind under a reserved id with the given
// placement (containers per node name) and with done of its solo work,
// a fraction in [0, 1), already behind it: the phases that fit in done
// are complete, and every group of the current phase has the rest of it
// to do. It models a job that was already running when the simulation
// began (a model of the cluster built from what a scheduler observed).
// Errors are Submit's, ErrNoFit when a node lacks the room, and ErrInvalid
// for an unknown node, a placement of another number of containers than
// the kind's, or done outside [0, 1).
func (s *Sim) Resume(appID string, a AppSpec, placement map[string]int, done float64) error {
	if err := s.CheckSubmit(appID, a); err != nil {
		return err
	}
	k := s.kinds[a.Kind]
	if !(done >= 0 && done < 1) {
		return fmt.Errorf("resume %s: done %v outside [0, 1): %w", appID, done, ErrInvalid)
	}
	counts := make([]int, len(s.nodes))
	total := 0
	for name, c := range placement {
		i, ok := s.nodeIdx[name]
		if !ok || c < 0 {
			return fmt.Errorf("resume %s: node %q, %d containers: %w", appID, name, c, ErrInvalid)
		}
		counts[i] += c
		total += c
	}
	if c, _ := size(k, a); total != c {
		return fmt.Errorf("resume %s: %d containers placed, the job has %d: %w", appID, total, c, ErrInvalid)
	}
	for i, c := range counts {
		if c > 0 && s.roomOf(&s.nodes[i], k) < int64(c) {
			return fmt.Errorf("resume %s: %d containers on %s: %w", appID, c, s.nodes[i].name, ErrNoFit)
		}
	}
	s.start1(appID, a, k, counts)
	ai := s.byID[appID]
	ap := &s.apps[ai]
	left := done * k.solo
	for ap.phase+1 < k.total && k.phase(ap.phase).seconds <= left {
		left -= k.phase(ap.phase).seconds
		ap.doneSolo += k.phase(ap.phase).seconds
		ap.phase++
	}
	sec := k.phase(ap.phase).seconds
	rest := max(sec-left, 1e-9) / sec
	ap.phaseWork = 0
	for _, gi := range ap.groups {
		g := &s.groups[gi]
		w := s.work(sec) * ap.scale
		g.remaining = w * rest
		ap.phaseWork = max(ap.phaseWork, w) // progress counts the phase's part done
	}
	return nil
}
