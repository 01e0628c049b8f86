package queue

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// windowStage keeps the first size pending jobs (paper §4.1: "the scheduler
// chooses the most suitable of the n first jobs of the queue"). Jobs beyond
// the window are not dropped, just not considered: they keep their place.
type windowStage struct{ size int }

func (windowStage) name() string { return "window" }

func (s windowStage) run(r *run, rec *StageRecord) {
	// load already cut the snapshot to the window; record it.
	rec.In = r.pendingTotal
	if r.pendingTotal <= s.size {
		rec.Note = fmt.Sprintf("all %d pending jobs (window %d)", r.pendingTotal, s.size)
		return
	}
	rec.Note = fmt.Sprintf("first %d of %d pending jobs", s.size, r.pendingTotal)
}

// fitStage drops jobs whose whole reservation does not fit the cluster's
// free memory and vcores (paper §5.2: "we filter out the jobs that do not
// fit the available cluster resources"). With perNode and a node list it
// also places the containers greedily on the nodes' free capacity: a node
// with free (m, v) holds min(m/mem, v/vcores) containers of the job, and the
// job fits when the nodes together hold all of them.
type fitStage struct{ perNode bool }

func (fitStage) name() string { return "fit" }

func (s fitStage) run(r *run, rec *StageRecord) {
	free := r.snap.Free
	nodes := r.snap.Nodes
	if !s.perNode {
		nodes = nil
	}
	if nodes != nil {
		if r.sc.shapeFit == nil {
			r.sc.shapeFit = new(shapeMemo)
		}
		clear(r.sc.shapeFit[:])
	}
	kept := r.beginFilter()
	for _, c := range r.live {
		res := c.res
		mem, vc := res.TotalMemoryMB(), res.TotalVCores()
		switch {
		case mem > free.MemoryMB:
			if r.room(rec) {
				rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("needs %d MB, %d MB free", mem, free.MemoryMB)})
			}
		case vc > free.VCores:
			if r.room(rec) {
				rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("needs %d vcores, %d free", vc, free.VCores)})
			}
		case nodes != nil && placeable(r.sc.shapeFit, nodes, res) < int64(res.Containers):
			if r.room(rec) {
				rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("%d containers of %d MB/%d vcores: only %d fit on the %d nodes",
					res.Containers, res.MemoryMB, res.VCores, placeable(r.sc.shapeFit, nodes, res), len(nodes))})
			}
		default:
			kept = append(kept, c)
		}
	}
	r.endFilter(kept)
	r.fit = append(r.fit[:0], kept...)
	if len(kept) == 0 && len(rec.Dropped)+rec.Omitted > 0 {
		rec.Note = "no job fits the free resources"
	}
}

// shapeMemo caches placeable per container shape for one decision: a
// direct-mapped table (a collision just recomputes), cheaper than a map for
// the few shapes a queue holds.
type shapeMemo [512]struct {
	key uint64 // memory<<11 | vcores, +1 so that zero means empty
	n   int64
}

// placeable is how many containers of res's shape the nodes can hold.
func placeable(memo *shapeMemo, nodes []NodeFree, res Resources) int64 {
	// Valid shapes (memory ≤ 2^20, vcores ≤ 2^10) pack into one word.
	memoise := res.MemoryMB >= 0 && res.MemoryMB <= MaxMemoryMB && res.VCores >= 0 && res.VCores <= MaxVCores
	key := (uint64(res.MemoryMB)<<11 | uint64(res.VCores)) + 1
	slot := &memo[(key*0x9E3779B97F4A7C15)>>55]
	if memoise && slot.key == key {
		return slot.n
	}
	var n int64
	if res.MemoryMB > 0 && res.VCores > 0 {
		for _, nd := range nodes {
			if nd.Free.MemoryMB <= 0 || nd.Free.VCores <= 0 {
				continue
			}
			n += min(nd.Free.MemoryMB/res.MemoryMB, nd.Free.VCores/int64(res.VCores))
			if n > MaxContainers {
				break // enough for any valid job
			}
		}
	} else {
		n = math.MaxInt64 // invalid shape: nothing to place
	}
	if memoise {
		slot.key, slot.n = key, n
	}
	return n
}

// fairnessStage bounds unfairness between groups (users or YARN queues).
//
// Shares (DRF hook): a group's share is its running allocation over the
// cluster capacity, reduced to one number by the metric (dominant: the
// largest resource share, DRF; sum: X-Flex's Σ r_d/R_d, over the number of
// resources). Its fair share is its weight over the weights of the active
// groups.
//
// Deficits, instantaneous mode (HalfLife 0, Graphene §5.1): counters
// charged per admission. When a job of group g is admitted, g's deficit
// grows by factor·(fairShare_g − 1) and every other group g' with pending
// jobs grows by factor·fairShare_g', where factor is the job's demand of g's
// dominant resource (DRF) or its X-Flex charge, in capacity units. Only
// groups with a job in the window take part: a group with none drops out
// (it is not being wronged), one that comes back starts level, and the
// counters are re-centred to sum to zero over the groups taking part.
//
// Deficits, long-term mode (HalfLife > 0, X-Flex fairness over time): the
// deficit is the group's shortfall, fairShare − share, averaged over time
// with weights halving every HalfLife.
//
// Bound: let g* be the most-starved group (largest deficit; ties: smaller
// weighted share, then name) among groups with a window job that could fit
// the whole cluster. When its deficit ≥ κ, only g*'s jobs stay — even if
// none fits now (the cluster waits for room rather than admitting others),
// unless nothing is running, when waiting would not help.
type fairnessStage struct {
	c       FairnessConfig
	deficit map[string]float64
	lastAt  time.Time

	// per decision
	alloc   map[string][2]float64 // group → normalised (memory, vcores) allocation
	pending map[string]int
	fair    map[string]float64 // fair share of the groups taking part
	names   []string           // the groups taking part, sorted
}

func newFairnessStage(c FairnessConfig) *fairnessStage {
	return &fairnessStage{
		c: c, deficit: map[string]float64{},
		alloc: map[string][2]float64{}, pending: map[string]int{}, fair: map[string]float64{},
	}
}

func (*fairnessStage) name() string { return "fairness" }

func (f *fairnessStage) group(user, queue string) string {
	if f.c.GroupBy == GroupByQueue {
		return queue
	}
	return user
}

func (f *fairnessStage) weight(g string) float64 {
	if w, ok := f.c.Weights[g]; ok {
		return w
	}
	return 1
}

// norm scales an amount by the capacity: (memory share, vcores share).
func norm(mem, vc int64, capa Capacity) [2]float64 {
	var s [2]float64
	if capa.MemoryMB > 0 {
		s[0] = float64(mem) / float64(capa.MemoryMB)
	}
	if capa.VCores > 0 {
		s[1] = float64(vc) / float64(capa.VCores)
	}
	return s
}

// reduce turns normalised per-resource amounts into one share.
func (f *fairnessStage) reduce(s [2]float64, capa Capacity) float64 {
	if f.c.Metric == ShareSum {
		n := 0
		if capa.MemoryMB > 0 {
			n++
		}
		if capa.VCores > 0 {
			n++
		}
		if n == 0 {
			return 0
		}
		return (s[0] + s[1]) / float64(n)
	}
	return max(s[0], s[1])
}

func (f *fairnessStage) run(r *run, rec *StageRecord) {
	capa := r.snap.Capacity
	clear(f.alloc)
	clear(f.pending)
	clear(f.fair)
	for _, c := range r.window {
		c.group = f.group(c.job.User, c.job.Queue)
		f.pending[c.group]++
	}
	for _, ru := range r.snap.Running {
		g := f.group(ru.User, ru.Queue)
		a := f.alloc[g]
		s := norm(max(ru.Alloc.MemoryMB, 0), max(ru.Alloc.VCores, 0), capa)
		f.alloc[g] = [2]float64{a[0] + s[0], a[1] + s[1]}
	}

	// The groups taking part, in name order so that sums and updates do
	// not depend on map iteration: those with a job in the window and, in
	// long-term mode, those with running applications.
	longTerm := f.c.HalfLife > 0
	f.names = f.names[:0]
	for g := range f.pending {
		f.names = append(f.names, g)
	}
	if longTerm {
		for g := range f.alloc {
			if f.pending[g] == 0 {
				f.names = append(f.names, g)
			}
		}
	}
	slices.Sort(f.names)
	var wsum float64
	for _, g := range f.names {
		wsum += f.weight(g)
	}
	for _, g := range f.names {
		f.fair[g] = f.weight(g) / wsum
	}
	for g := range f.deficit {
		if _, ok := f.fair[g]; !ok {
			delete(f.deficit, g)
		}
	}
	if !longTerm && len(f.names) > 0 {
		// Keep the counters of the waiting groups summing to zero, as
		// Graphene's updates do while the set of groups is fixed: a group
		// that leaves takes its credit or debt with it, shared out here, so
		// groups coming and going cannot pile up deficit.
		var sum float64
		for _, g := range f.names {
			sum += f.deficit[g]
		}
		mean := sum / float64(len(f.names))
		for _, g := range f.names {
			f.deficit[g] -= mean
		}
	}
	if longTerm {
		now := r.snap.Now
		if !f.lastAt.IsZero() {
			dt := max(now.Sub(f.lastAt), 0)
			decay := math.Exp2(-float64(dt) / float64(f.c.HalfLife))
			for _, g := range f.names {
				gap := f.fair[g] - f.reduce(f.alloc[g], capa)
				f.deficit[g] = f.deficit[g]*decay + gap*(1-decay)
			}
		}
		if now.After(f.lastAt) {
			f.lastAt = now
		}
	}

	// The most-starved group among those that could ever run a window job.
	var (
		star      string
		found     bool
		starD     float64
		starShare float64
	)
	for _, c := range r.window {
		res := c.res
		need := norm(res.TotalMemoryMB(), res.TotalVCores(), capa)
		if need[0] > 1 || need[1] > 1 {
			continue // larger than the cluster: waiting for it would never end
		}
		g := c.group
		d := f.deficit[g]
		sh := f.reduce(f.alloc[g], capa) / f.weight(g)
		if !found || d > starD || (d == starD && (sh < starShare || (sh == starShare && g < star))) {
			star, starD, starShare, found = g, d, sh, true
		}
	}
	f.record(r)
	if !found || starD < f.c.Kappa {
		if found {
			rec.Note = fmt.Sprintf("max deficit %.3f (group %q) below κ %.3g", starD, star, f.c.Kappa)
		}
		return
	}
	hasLive := false
	for _, c := range r.live {
		if c.group == star {
			hasLive = true
			break
		}
	}
	if !hasLive && len(r.snap.Running) == 0 {
		rec.Note = fmt.Sprintf("group %q deficit %.3f ≥ κ %.3g but none of its jobs fits an idle cluster; not waiting", star, starD, f.c.Kappa)
		return
	}
	rec.Note = fmt.Sprintf("group %q deficit %.3f ≥ κ %.3g: only its jobs stay", star, starD, f.c.Kappa)
	kept := r.beginFilter()
	for _, c := range r.live {
		if c.group == star {
			kept = append(kept, c)
		} else if r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("group %q is owed first (deficit %.3f ≥ κ)", star, starD)})
		}
	}
	r.endFilter(kept)
}

// record puts the groups into the decision, sorted by name.
func (f *fairnessStage) record(r *run) {
	capa := r.snap.Capacity
	for _, g := range f.names {
		if len(r.dec.Groups) >= r.cfg.MaxRecorded {
			break
		}
		r.dec.Groups = append(r.dec.Groups, GroupRecord{
			Group: g, Weight: f.weight(g), Share: f.reduce(f.alloc[g], capa),
			Deficit: f.deficit[g], Pending: f.pending[g],
		})
	}
}

// charge updates the instantaneous-mode counters for the chosen job.
func (f *fairnessStage) charge(r *run) {
	if f.c.HalfLife > 0 {
		return // long-term mode learns from the running allocations
	}
	c := r.chosen
	g := f.group(c.job.User, c.job.Queue)
	res := c.res
	need := norm(res.TotalMemoryMB(), res.TotalVCores(), r.snap.Capacity)
	var factor float64
	if f.c.Metric == ShareSum {
		factor = f.reduce(need, r.snap.Capacity)
	} else {
		// DRF: the job's demand of its group's dominant resource (the
		// group's running allocation decides; with nothing running, the
		// job's own).
		dom := need
		if a, ok := f.alloc[g]; ok && (a[0] > 0 || a[1] > 0) {
			dom = a
		}
		if dom[0] >= dom[1] {
			factor = need[0]
		} else {
			factor = need[1]
		}
	}
	for _, h := range f.names {
		fair := f.fair[h]
		if h == g {
			f.deficit[h] += factor * (fair - 1)
		} else {
			f.deficit[h] += factor * fair
		}
	}
}

// altruismStage lets deadline jobs yield, boundedly (Carbyne §3.4.2).
//
// A job's slack is deadline − now − expected runtime (its kind's EWMA
// runtime, or DefaultRuntime for a kind with no history). Walking the jobs
// that survived Fit in FIFO order, each deadline job with positive slack
// yields — lets jobs behind it go first — with probability P; the first one
// that does not yield, or that has no slack left, is the cut: every job
// behind it is dropped, so it cannot be passed over. With P = 0 no deadline
// job is ever passed over. The cut job stays even if Fairness dropped it and
// nothing ahead of it survived (else it would block everything). Then, if a
// surviving job has no slack, only such jobs stay, earliest deadline first.
type altruismStage struct{ p AltruismConfig }

func (altruismStage) name() string { return "altruism" }

func (s altruismStage) run(r *run, rec *StageRecord) {
	// Walk the jobs that fit, in FIFO order, up to the cut. Jobs behind the
	// cut leave, so their slack is never needed.
	now := r.snap.Now
	for _, c := range r.fit {
		if c.deadline == nil {
			continue
		}
		exp := s.p.DefaultRuntime
		if h, ok := r.snap.History[c.kind]; ok && h.Runs > 0 {
			exp = h.EWMARuntime
		}
		c.slack = c.deadline.Sub(now) - exp
		if c.slack > 0 && s.p.P > 0 && r.rng != nil && r.rng.Float64() < s.p.P {
			continue // yields this time
		}
		r.cut = c
		break
	}
	if cut := r.cut; cut != nil {
		why := "does not yield"
		if cut.slack <= 0 {
			why = "has no slack"
		}
		rec.Note = fmt.Sprintf("deadline job %s (slack %v) %s: jobs behind it wait", cut.job.ID, cut.slack.Round(time.Second), why)
		kept := r.beginFilter()
		inLive := false
		for i, c := range r.live {
			if c.idx > cut.idx { // FIFO order: the rest are behind it too
				for _, c := range r.live[i:] {
					if !r.room(rec) {
						rec.Omitted += len(r.live) - i - 1 // room counted this one
						break
					}
					rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("behind deadline job %s, which %s", cut.job.ID, why)})
					i++
				}
				break
			}
			kept = append(kept, c)
			inLive = inLive || c == cut
		}
		if !inLive && len(kept) == 0 {
			kept = append(kept, cut)
			rec.Note += "; kept it although an earlier stage dropped it"
		}
		r.endFilter(kept)
	}

	var edf *cand
	for _, c := range r.live {
		if c.deadline != nil && c.slack <= 0 && (edf == nil || c.deadline.Before(*edf.deadline)) {
			edf = c
		}
	}
	if edf == nil {
		return
	}
	kept := r.beginFilter()
	for _, c := range r.live {
		if c == edf {
			kept = append(kept, c)
		} else if r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("job %s is out of slack (%v) and goes first", edf.job.ID, edf.slack.Round(time.Second))})
		}
	}
	r.endFilter(kept)
}

// preferenceStage scores the survivors with the learned preferences (paper
// §4.3, §5.2). It calls Preferences.Mix once, with the distinct kinds of the
// survivors (in FIFO order of their oldest job) and the running kinds
// weighted by the free capacity of their nodes; a kind's probability goes to
// its oldest surviving job, so within a kind the queue stays FIFO. With
// nothing running, or no running job with a positive weight, there is no
// context: the FIFO head wins.
type preferenceStage struct{ prefs Preferences }

func (preferenceStage) name() string { return "preference" }

func (s preferenceStage) run(r *run, rec *StageRecord) {
	sc := r.sc
	heads := sc.kindHeads[:0]
	if len(r.live) == 0 {
		r.cands = heads
		return
	}
	if !contextWeighted(r.snap.Running) {
		c := r.live[0]
		c.pref, c.prob, c.weight = 1, 1, 1
		r.cands = append(heads, c)
		sc.kindHeads = r.cands
		rec.Note = "nothing running: the FIFO head wins"
		if len(r.snap.Running) > 0 {
			rec.Note = "no running job weighs in the context: the FIFO head wins"
		}
		return
	}
	if sc.kindIdx == nil {
		sc.kindIdx = make(map[string]int)
	}
	clear(sc.kindIdx)
	kinds := sc.kinds[:0]
	for _, c := range r.live {
		if _, ok := sc.kindIdx[c.kind]; !ok {
			sc.kindIdx[c.kind] = len(heads)
			heads = append(heads, c)
			kinds = append(kinds, c.kind)
		}
	}
	sc.kinds, sc.kindHeads = kinds, heads

	// The context: running kinds, weights summed per kind, sorted by kind.
	ctx := make([]ContextKind, 0, 4)
	for _, ru := range r.snap.Running {
		w := ru.Weight
		if !(w > 0) || math.IsInf(w, 0) {
			w = 0
		}
		i := slices.IndexFunc(ctx, func(k ContextKind) bool { return k.Kind == ru.Kind })
		if i < 0 {
			ctx = append(ctx, ContextKind{Kind: ru.Kind, Weight: w})
		} else {
			ctx[i].Weight += w
		}
	}
	slices.SortFunc(ctx, func(a, b ContextKind) int {
		switch {
		case a.Kind < b.Kind:
			return -1
		case a.Kind > b.Kind:
			return 1
		}
		return 0
	})
	r.dec.Context = ctx
	given, weights := sc.ctxKinds[:0], sc.ctxWeights[:0]
	for _, k := range ctx {
		given = append(given, k.Kind)
		weights = append(weights, k.Weight)
	}
	sc.ctxKinds, sc.ctxWeights = given, weights

	out := slices.Grow(sc.out[:0], len(kinds))[:len(kinds)]
	sc.out = out
	for i := range out {
		out[i] = 0
	}
	if s.prefs != nil {
		s.prefs.Mix(kinds, given, weights, out)
	}
	var top, sum float64
	for i, p := range out {
		if !(p > 0) || math.IsInf(p, 0) {
			out[i] = 0
		}
		top = max(top, out[i])
	}
	for i := range out {
		out[i] /= max(top, math.SmallestNonzeroFloat64) // scale first: the sum cannot overflow
		sum += out[i]
	}
	for i, c := range heads {
		if sum > 0 {
			c.pref = out[i] / sum
		} else {
			c.pref = 1 / float64(len(heads)) // no information: uniform
		}
		c.prob, c.weight = c.pref, 1
	}
	r.cands = heads
	rec.Note = fmt.Sprintf("%d kinds among %d jobs; context of %d running kinds", len(heads), len(r.live), len(ctx))
}

// contextWeighted reports whether any running job has a positive weight:
// with all weights 0 (the next job lands beside none of them) the context is
// empty, as when nothing runs.
func contextWeighted(running []Running) bool {
	for _, ru := range running {
		if ru.Weight > 0 && !math.IsInf(ru.Weight, 0) {
			return true
		}
	}
	return false
}

// fifoStage stands in for the preference stage when it is off: the oldest
// survivor is the only candidate.
type fifoStage struct{}

func (fifoStage) name() string { return "fifo" }

func (fifoStage) run(r *run, rec *StageRecord) {
	r.cands = r.sc.kindHeads[:0]
	if len(r.live) > 0 {
		c := r.live[0]
		c.pref, c.prob, c.weight = 1, 1, 1
		r.cands = append(r.cands, c)
		rec.Note = "preferences off: the FIFO head"
	}
	r.sc.kindHeads = r.cands
}

// starvationStage guards against starvation (paper §4.3, last paragraph:
// weight π by a positive w_a encoding the wait, renormalise). The weight is
// 1 + a·skips (linear) or (1 + a)^skips (exponential). Hard cap: the oldest
// job that survived Fit, is not behind the altruism cut, and was passed over
// max_skips times wins outright — whatever Fairness or Altruism's
// out-of-slack rule dropped — so no job is passed over more than max_skips
// times.
type starvationStage struct{ c StarvationConfig }

func (starvationStage) name() string { return "starvation" }

func (s starvationStage) w(skips int) float64 {
	k := float64(max(skips, 0))
	if s.c.Shape == ShapeExponential {
		return math.Pow(1+s.c.A, k)
	}
	return 1 + s.c.A*k
}

func (s starvationStage) run(r *run, rec *StageRecord) {
	for _, c := range r.fit {
		if r.cut != nil && c.idx > r.cut.idx {
			break
		}
		if c.skips >= s.c.MaxSkips {
			c.weight, c.prob = s.w(c.skips), 1
			if !slices.Contains(r.cands, c) {
				c.pref = 0
			}
			r.cands = append(r.sc.kindHeads[:0], c)
			r.sc.kindHeads = r.cands
			r.dec.Forced = fmt.Sprintf("job %s was passed over %d times (max_skips %d)", c.job.ID, c.skips, s.c.MaxSkips)
			rec.Note = "forced: " + r.dec.Forced
			return
		}
	}
	var sum, wsum float64
	for _, c := range r.cands {
		c.weight = s.w(c.skips)
		c.prob = c.pref * c.weight
		sum += c.prob
		wsum += c.weight
	}
	for _, c := range r.cands {
		if sum > 0 && !math.IsInf(sum, 0) {
			c.prob /= sum
		} else {
			c.prob = c.weight / wsum
		}
	}
}

// selectStage draws the job: a sample from the distribution with the
// injected random source (the paper), the argmax (ties → oldest), or
// (anneal) a sample while the context's preference rows are young and the
// argmax once they have ExploreObservations observations.
type selectStage struct {
	c     SelectConfig
	prefs Preferences
}

func (selectStage) name() string { return "select" }

// observed is the context-weighted mean of the observations of the
// context's preference rows; 0 without an ObservationCounter or context.
func (s selectStage) observed(ctx []ContextKind) float64 {
	oc, ok := s.prefs.(ObservationCounter)
	if !ok {
		return 0
	}
	var n, wsum float64
	for _, k := range ctx {
		if k.Weight > 0 {
			n += k.Weight * float64(oc.RowObservations(k.Kind))
			wsum += k.Weight
		}
	}
	if wsum <= 0 {
		return 0
	}
	return n / wsum
}

func (s selectStage) run(r *run, rec *StageRecord) {
	cs := r.cands
	argmax := s.c.Mode == SelectArgmax || r.rng == nil
	var annealNote string
	if s.c.Mode == SelectAnneal && !argmax && len(cs) > 1 {
		n := s.observed(r.dec.Context)
		argmax = n >= float64(s.c.ExploreObservations)
		annealNote = fmt.Sprintf("anneal: %.1f of %d observations, ", n, s.c.ExploreObservations)
	}
	switch {
	case len(cs) == 0:
		return
	case len(cs) == 1:
		r.chosen = cs[0]
		return
	case argmax:
		best := cs[0]
		for _, c := range cs[1:] {
			if c.prob > best.prob {
				best = c
			}
		}
		r.chosen = best
		rec.Note = annealNote + "argmax"
		return
	}
	var total float64
	for _, c := range cs {
		total += c.prob
	}
	u := r.rng.Float64() * total
	var acc float64
	for _, c := range cs {
		acc += c.prob
		if c.prob > 0 && u < acc {
			r.chosen = c
			break
		}
	}
	if r.chosen == nil { // rounding at the top end
		for i := len(cs) - 1; i >= 0; i-- {
			if cs[i].prob > 0 {
				r.chosen = cs[i]
				break
			}
		}
		if r.chosen == nil {
			r.chosen = cs[0]
		}
	}
	rec.Note = annealNote + fmt.Sprintf("sampled u=%.4f", u/max(total, math.SmallestNonzeroFloat64))
}

// modelStage scores the survivors with the co-location model (preference
// mode "model"): one Scorer call with the distinct kinds of the survivors
// (in FIFO order of their oldest job) and their container shapes; π is the
// softmax of the scores over the temperature, and a kind's probability goes
// to its oldest surviving job, so within a kind the queue stays FIFO. The
// decision records every candidate's score and the head candidate's
// expected partners as its context.
type modelStage struct {
	scorer      Scorer
	temperature float64
	observeWait time.Duration
}

func (modelStage) name() string { return "preference" }

func (s modelStage) run(r *run, rec *StageRecord) {
	sc := r.sc
	heads := sc.kindHeads[:0]
	if len(r.live) == 0 {
		r.cands = heads
		return
	}
	if sc.kindIdx == nil {
		sc.kindIdx = make(map[string]int)
	}
	clear(sc.kindIdx)
	kinds := sc.kinds[:0]
	var res []Resources
	for _, c := range r.live {
		if _, ok := sc.kindIdx[c.kind]; !ok {
			sc.kindIdx[c.kind] = len(heads)
			heads = append(heads, c)
			kinds = append(kinds, c.kind)
			res = append(res, c.res)
		}
	}
	sc.kinds, sc.kindHeads = kinds, heads
	scores := make([]Score, len(kinds))
	s.scorer.Score(r.snap, kinds, res, scores)
	top := math.Inf(-1)
	for i := range scores {
		v := scores[i].Value
		if math.IsNaN(v) || math.IsInf(v, 0) {
			scores[i].Value = math.Inf(-1)
			continue
		}
		top = max(top, v)
	}
	sum := 0.0
	for i, c := range heads {
		c.score = &scores[i]
		c.pref = 0
		if !math.IsInf(scores[i].Value, -1) {
			c.pref = math.Exp((scores[i].Value - top) / s.temperature)
		}
		sum += c.pref
	}
	for _, c := range heads {
		if sum > 0 {
			c.pref /= sum
		} else {
			c.pref = 1 / float64(len(heads))
		}
		c.prob, c.weight = c.pref, 1
	}
	r.cands = heads
	r.dec.Context = append(r.dec.Context[:0], scores[0].Beside...)
	// Observe before pairing: running a never-observed kind beside another
	// kind hides both kinds' usage in their sum. When the best candidate
	// would, and no candidate that would not is as good, wait for the next
	// learning tick to profile what runs —
	// for at most ObserveWait after the candidate was submitted. Nothing is
	// passed over by waiting; starvation's hard cap still forces a job, and
	// an out-of-slack deadline job never waits.
	if w := s.observeWait; w > 0 && len(r.snap.Running) > 0 {
		best, clean := -1, -1
		for i, c := range heads {
			if c.deadline != nil && c.slack <= 0 {
				best, clean = -1, -1
				break
			}
			if best < 0 || scores[i].Value > scores[best].Value {
				best = i
			}
			if !scores[i].Confounds && (clean < 0 || scores[i].Value > scores[clean].Value) {
				clean = i
			}
		}
		if best >= 0 && scores[best].Confounds && r.snap.Now.Sub(heads[best].job.CreatedAt) < w {
			if clean >= 0 && scores[clean].Value >= scores[best].Value {
				var kept float64 // the clean ones are as good: keep them only
				for i, c := range heads {
					if scores[i].Confounds {
						c.pref = 0
					}
					kept += c.pref
				}
				for _, c := range heads {
					if kept > 0 {
						c.pref /= kept
					}
					c.prob = c.pref
				}
			} else {
				r.cands = heads[:0]
				r.note = fmt.Sprintf("waiting to observe: %s (kind %s) would run a never-observed kind beside another, and no other candidate is as good",
					heads[best].job.ID, heads[best].kind)
				rec.Note = r.note
				return
			}
		}
	}
	rec.Note = fmt.Sprintf("%d kinds among %d jobs scored by the co-location model (head: %.0f%% alone, beside %d kinds)",
		len(heads), len(r.live), 100*scores[0].Alone, len(scores[0].Beside))
}
