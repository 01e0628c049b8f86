package pipeline

import (
	"fmt"
	"math"
	"slices"
	"time"
)

// starvationStage guards against starvation (paper §4.3, last paragraph:
// weight π by a positive w_a encoding the wait, renormalise). The weight is
// 1 + a·skips (linear) or (1 + a)^skips (exponential). Hard cap: the oldest
// job that survived Fit, is not behind the altruism cut, and was passed over
// max_skips times wins outright — whatever Fairness or Altruism's
// out-of-slack rule dropped — so no job is passed over more than max_skips
// times. A reservation (ReservationConfig) comes first: while a job holds
// one, nothing else is forced; nothing else is admitted either, so no skip
// grows meanwhile.
type starvationStage struct{ c StarvationConfig }

func (starvationStage) name() string { return "starvation" }

func (s starvationStage) w(skips int, waited time.Duration) float64 {
	k := float64(max(skips, 0))
	switch s.c.Shape {
	case shapeExponential:
		return math.Pow(1+s.c.A, k)
	case shapeNear:
		half := float64(s.c.MaxSkips) / 2
		past := max(0, k-half)
		if s.c.MaxWait > 0 {
			// The same share of the time bound, in skips.
			u := waited.Seconds() / s.c.MaxWait.Seconds()
			past = max(past, (u-0.5)*float64(s.c.MaxSkips))
		}
		return 1 + s.c.A*past
	}
	return 1 + s.c.A*k
}

// overdue reports whether c reached a bound: max_skips passes, or
// max_wait since it was submitted.
func (s starvationStage) overdue(c *cand, now time.Time) bool {
	return c.skips >= s.c.MaxSkips || s.c.MaxWait > 0 && !c.job.CreatedAt.IsZero() && now.Sub(c.job.CreatedAt) >= s.c.MaxWait
}

func (s starvationStage) run(r *run, rec *StageRecord) {
	fit := r.fit
	if r.dec.Reserved != "" {
		fit = nil // a reservation comes first
	}
	for _, c := range fit {
		if r.cut != nil && c.idx > r.cut.idx {
			break
		}
		if s.overdue(c, r.snap.Now) {
			c.weight, c.prob = s.w(c.skips, r.snap.Now.Sub(c.job.CreatedAt)), 1
			if !slices.Contains(r.cands, c) {
				c.pref = 0
			}
			r.cands = append(r.sc.kindHeads[:0], c)
			r.sc.kindHeads = r.cands
			if c.skips >= s.c.MaxSkips {
				r.dec.Forced = fmt.Sprintf("job %s was passed over %d times (max_skips %d)", c.job.ID, c.skips, s.c.MaxSkips)
			} else {
				r.dec.Forced = fmt.Sprintf("job %s waited %v (max_wait %v)", c.job.ID, r.snap.Now.Sub(c.job.CreatedAt).Round(time.Second), s.c.MaxWait)
			}
			rec.Note = "forced: " + r.dec.Forced
			return
		}
	}
	var sum, wsum float64
	for _, c := range r.cands {
		c.weight = s.w(c.skips, r.snap.Now.Sub(c.job.CreatedAt))
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
// context's preference rows; 0 without an observationCounter or context.
func (s selectStage) observed(ctx []ContextKind) float64 {
	oc, ok := s.prefs.(observationCounter)
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
