package pipeline

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/colocd/colocd/queue"
)

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
	curves  *curvesRule // curves mode; nil in deficit mode

	// per decision
	at      time.Time
	capa    Capacity
	alloc   map[string][2]float64 // group → normalised (memory, vcores) allocation
	pending map[string]int
	fair    map[string]float64 // fair share of the groups taking part
	names   []string           // the groups taking part, sorted
}

func newFairnessStage(c FairnessConfig) *fairnessStage {
	f := &fairnessStage{
		c: c, deficit: map[string]float64{},
		alloc: map[string][2]float64{}, pending: map[string]int{}, fair: map[string]float64{},
	}
	if c.Mode == FairnessCurves {
		f.curves = newCurvesRule(c)
	}
	return f
}

func (*fairnessStage) name() string { return "fairness" }

// group is the fairness group of a job or application: its YARN queue or
// user, or in curves mode the service queue serving that.
func (f *fairnessStage) group(user, queue string) string {
	g := user
	if f.c.GroupBy == GroupByQueue {
		g = queue
	}
	if f.curves != nil {
		return f.curves.queueOf(g)
	}
	return g
}

// elastic reports whether group g shares by DRF deficits: always in
// deficit mode, unless guaranteed in curves mode.
func (f *fairnessStage) elastic(g string) bool {
	return f.curves == nil || !f.curves.guaranteed(g)
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
	if f.c.Metric == shareSum {
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
	f.tally(r)
	if cr := f.curves; cr != nil {
		cr.account(r.snap.Now, f.alloc)
		cr.record(r, f.alloc, f.pending)
		decided := cr.serveOwed(r, f.pending, rec)
		if !decided && !cr.keepElastic(r, rec) {
			cr.strictPriority(r, rec)
			decided = true
		}
		if decided {
			// The elastic groups' long-term deficits still move with time.
			f.takePart()
			f.updateDeficits(r.snap.Now, r.snap.Capacity)
			f.record(r)
			return
		}
	}
	f.takePart()
	f.updateDeficits(r.snap.Now, r.snap.Capacity)
	star, starD, found := f.mostStarved(r.window, r.snap.Capacity)
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
	r.keepIf(func(c *cand) bool { return c.group == star }, rec, fmt.Sprintf("group %q is owed first (deficit %.3f ≥ κ)", star, starD))
}

// tally starts the decision afresh: it sets each window job's group, counts
// the window jobs per group and sums the running allocations per group, in
// capacity units.
func (f *fairnessStage) tally(r *run) {
	capa := r.snap.Capacity
	f.at, f.capa = r.snap.Now, capa
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
}

// takePart lists the groups taking part, in name order so that sums and
// updates do not depend on map iteration: those with a job in the window
// and, in long-term mode, those with running applications. It sets their
// fair shares and forgets the deficits of the groups not taking part.
func (f *fairnessStage) takePart() {
	f.names = f.names[:0]
	for g := range f.pending {
		if f.elastic(g) {
			f.names = append(f.names, g)
		}
	}
	if f.c.HalfLife > 0 {
		for g := range f.alloc {
			if f.pending[g] == 0 && f.elastic(g) {
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
}

// updateDeficits brings the deficits of the groups taking part to now: in
// instantaneous mode it re-centres them to sum to zero, in long-term mode
// it moves them toward each group's shortfall with the decay since the last
// decision.
func (f *fairnessStage) updateDeficits(now time.Time, capa Capacity) {
	longTerm := f.c.HalfLife > 0
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
}

// mostStarved is the most-starved group among those that could ever run a
// window job (largest deficit; ties: smaller weighted share, then name),
// with its deficit; found is false when no window job fits the whole
// cluster.
func (f *fairnessStage) mostStarved(window []*cand, capa Capacity) (star string, starD float64, found bool) {
	var starShare float64
	for _, c := range window {
		res := c.res
		need := norm(res.TotalMemoryMB(), res.TotalVCores(), capa)
		if need[0] > 1 || need[1] > 1 {
			continue // larger than the cluster: waiting for it would never end
		}
		g := c.group
		if !f.elastic(g) {
			continue
		}
		d := f.deficit[g]
		sh := f.reduce(f.alloc[g], capa) / f.weight(g)
		if !found || d > starD || (d == starD && (sh < starShare || (sh == starShare && g < star))) {
			star, starD, starShare, found = g, d, sh, true
		}
	}
	return star, starD, found
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
	if !f.elastic(g) {
		return // guaranteed queues are accounted by their curves
	}
	res := c.res
	need := norm(res.TotalMemoryMB(), res.TotalVCores(), r.snap.Capacity)
	var factor float64
	if f.c.Metric == shareSum {
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

// windows is the fair window: the first size jobs of each group, in FIFO
// order. With one window over all groups, a group whose jobs sit behind
// another's backlog would never be seen, and fairness could not act for it
// (Capacity Scheduler and Kueue keep a queue per tenant for the same
// reason).
func (f *fairnessStage) windows(pend []queue.Job, size int) []queue.Job {
	n := map[string]int{}
	out := make([]queue.Job, 0, min(len(pend), 4*size))
	for i := range pend {
		g := f.group(pend[i].User, pend[i].Queue)
		if n[g] < size {
			n[g]++
			out = append(out, pend[i])
		}
	}
	return out
}
