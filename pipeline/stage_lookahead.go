package pipeline

import (
	"fmt"
	"hash/fnv"
	"math"
	"slices"
)

// lookaheadStage is model-predictive admission (LookaheadConfig): the
// candidates the preference stage ranks first are rolled out by the
// Planner; the one predicted best replaces the one-step choice (the
// highest preference) only when their paired difference over the sampled
// futures exceeds margin standard errors. Its seed comes from the decision
// time and the candidates, so it draws nothing from the pipeline's random
// source and a decision stays the same for the same snapshot.
type lookaheadStage struct {
	planner Planner
	topK    int
	margin  float64
	minGain float64
}

func (lookaheadStage) name() string { return "lookahead" }

func (s lookaheadStage) run(r *run, rec *StageRecord) {
	if len(r.cands) < 2 || r.chosen != nil {
		return
	}
	top := slices.Clone(r.cands)
	slices.SortStableFunc(top, func(a, b *cand) int {
		switch {
		case a.pref > b.pref:
			return -1
		case a.pref < b.pref:
			return 1
		}
		return a.idx - b.idx
	})
	top = top[:min(s.topK, len(top))]
	ids := make([]string, len(top))
	h := fnv.New64a()
	fmt.Fprint(h, r.snap.Now.UnixNano())
	for i, c := range top {
		ids[i] = c.job.ID
		h.Write([]byte(c.job.ID))
	}
	outs, err := s.planner.Plan(r.snap, ids, h.Sum64())
	if err != nil {
		rec.Note = "the one-step choice stands: " + err.Error()
		return
	}
	if len(outs) != len(top) {
		rec.Note = fmt.Sprintf("the one-step choice stands: %d outcomes for %d candidates", len(outs), len(top))
		return
	}
	base := outs[0].Values
	best, bestDiff := 0, 0.0
	baseMean, _, _ := stats(base, base)
	floor := s.minGain * math.Abs(baseMean)
	for i, o := range outs {
		mean, diff, se := stats(o.Values, base)
		r.dec.Lookahead = append(r.dec.Lookahead, lookaheadRecord{JobID: top[i].job.ID, Kind: top[i].kind, Value: mean, Diff: diff, StdErr: se, Fits: o.Fits})
		if i == 0 || !o.Fits {
			continue
		}
		if diff > s.margin*se && diff > floor && diff > bestDiff {
			best, bestDiff = i, diff
		}
	}
	if best == 0 {
		rec.Note = fmt.Sprintf("the one-step choice %s stands: no other of %d candidates predicted better by %.1f standard errors", top[0].job.ID, len(top), s.margin)
		return
	}
	for _, c := range r.cands {
		c.pref = 0
	}
	top[best].pref = 1
	for _, c := range r.cands {
		c.prob, c.weight = c.pref, 1
	}
	rec.Note = fmt.Sprintf("%s (kind %s) instead of the one-step choice %s: predicted %.3g more work (%.1f standard errors)",
		top[best].job.ID, top[best].kind, top[0].job.ID, bestDiff, bestDiff/max(r.dec.Lookahead[best].StdErr, math.SmallestNonzeroFloat64))
}

// stats is the mean of vs, and the mean of its differences from base
// (paired by sample) with their standard error.
func stats(vs, base []float64) (mean, diff, se float64) {
	n := float64(len(vs))
	if n == 0 || len(base) != len(vs) {
		return 0, 0, math.Inf(1)
	}
	for i, v := range vs {
		mean += v / n
		diff += (v - base[i]) / n
	}
	if len(vs) < 2 {
		return mean, diff, 0
	}
	var ss float64
	for i, v := range vs {
		d := v - base[i] - diff
		ss += d * d
	}
	return mean, diff, math.Sqrt(ss / (n - 1) / n)
}
