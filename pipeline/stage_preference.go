package pipeline

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/colocd/colocd/queue"
)

// preferenceStage scores the survivors with the learned preferences (paper
// §4.3, §5.2). It calls Preferences.Mix once, with the distinct kinds of the
// survivors (in FIFO order of their oldest job) and the running kinds
// weighted by the free capacity of their nodes; a kind's probability goes to
// the job that stands for it (kindRule: its oldest, so within a kind the
// queue stays FIFO, or its largest while the queue drains). With nothing
// running, or no running job with a positive weight, there is no context:
// the FIFO head wins.
type preferenceStage struct {
	prefs Preferences
	heads kindRule
}

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
	heads, kinds, larger := r.kindHeads(s.heads)

	ctx := runningContext(r.snap.Running)
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
	sum := scaleMix(out)
	for i, c := range heads {
		if sum > 0 {
			c.pref = out[i] / sum
		} else {
			c.pref = 1 / float64(len(heads)) // no information: uniform
		}
		c.prob, c.weight = c.pref, 1
	}
	r.cands = heads
	rec.Note = fmt.Sprintf("%d kinds among %d jobs; context of %d running kinds", len(heads), len(r.live), len(ctx)) + largerNote(larger)
}

// largerNote says how many kinds their largest job stood for.
func largerNote(larger int) string {
	if larger == 0 {
		return ""
	}
	return fmt.Sprintf("; the queue drains: %d kinds stood for by their largest job", larger)
}

// runningContext is the context of a decision: the running kinds, their
// weights (a non-positive or infinite one counts 0) summed per kind,
// sorted by kind.
func runningContext(running []Running) []ContextKind {
	ctx := make([]ContextKind, 0, 4)
	for _, ru := range running {
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
	return ctx
}

// scaleMix makes the preferences Mix returned usable: a non-positive or
// infinite one counts 0, and all are divided by the largest (first, so
// that their sum cannot overflow); it returns their sum.
func scaleMix(out []float64) (sum float64) {
	var top float64
	for i, p := range out {
		if !(p > 0) || math.IsInf(p, 0) {
			out[i] = 0
		}
		top = max(top, out[i])
	}
	for i := range out {
		out[i] /= max(top, math.SmallestNonzeroFloat64)
		sum += out[i]
	}
	return sum
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

// modelStage scores the survivors with the co-location model (preference
// mode "model"): one Scorer call with the distinct kinds of the survivors
// (in FIFO order of their oldest job) and their container shapes; π is the
// softmax of the scores over the temperature, and a kind's probability goes
// to the job that stands for it (kindRule), the one scored. The decision
// records every candidate's score and the head candidate's expected
// partners as its context.
type modelStage struct {
	scorer      Scorer
	temperature float64
	observeWait time.Duration
	heads       kindRule
}

func (modelStage) name() string { return "preference" }

func (s modelStage) run(r *run, rec *StageRecord) {
	sc := r.sc
	heads := sc.kindHeads[:0]
	if len(r.live) == 0 {
		r.cands = heads
		return
	}
	heads, kinds, larger := r.kindHeads(s.heads)
	res := make([]queue.Resources, len(heads))
	for i, c := range heads {
		res[i] = c.res
	}
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
	if s.observeFirst(r, rec, heads, scores) {
		return
	}
	rec.Note = fmt.Sprintf("%d kinds among %d jobs scored by the co-location model (head: %.0f%% alone, beside %d kinds)",
		len(heads), len(r.live), 100*scores[0].Alone, len(scores[0].Beside)) + largerNote(larger)
}

// observeFirst is the model stage's rule to observe before pairing:
// running a never-observed kind beside another kind hides both kinds'
// usage in their sum. When the best candidate would, and no candidate that
// would not is as good, the pass waits for the next learning tick to
// profile what runs — for at most ObserveWait after the candidate was
// submitted — and observeFirst reports true (no candidate left); when a
// clean candidate is as good, only the clean ones stay. Nothing is passed
// over by waiting; starvation's hard cap still forces a job, and an
// out-of-slack deadline job never waits.
func (s modelStage) observeFirst(r *run, rec *StageRecord, heads []*cand, scores []Score) (wait bool) {
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
				return true
			}
		}
	}
	return false
}

// kindRule is which live job of a kind stands for it in the preference
// stages (PreferenceConfig.WithinKind, DrainRatio).
type kindRule struct {
	largest    bool    // the largest while draining; else the oldest
	drainRatio float64 // Snapshot.Draining's ratio
}

func headsOf(p PreferenceConfig) kindRule {
	return kindRule{largest: p.WithinKind == WithinKindLargest, drainRatio: p.DrainRatio}
}

// kindHeads collects the job that stands for each live kind — its oldest,
// or under rule its largest in vcores (ties: the oldest) while the
// snapshot's queue drains — in FIFO order of each kind's oldest job, and
// their kinds, into the scratch buffers (sc.kindHeads, sc.kinds; sc.kindIdx
// maps a kind to its index). larger counts the kinds that a job other
// than their oldest stands for.
func (r *run) kindHeads(rule kindRule) (heads []*cand, kinds []string, larger int) {
	sc := r.sc
	if sc.kindIdx == nil {
		sc.kindIdx = make(map[string]int)
	}
	clear(sc.kindIdx)
	heads, kinds = sc.kindHeads[:0], sc.kinds[:0]
	largest := rule.largest && len(r.live) > 1
	big := sc.largestHeads[:0] // under rule: each kind's largest so far
	for _, c := range r.live {
		i, ok := sc.kindIdx[c.kind]
		if !ok {
			sc.kindIdx[c.kind] = len(heads)
			heads = append(heads, c)
			kinds = append(kinds, c.kind)
			if largest {
				big = append(big, c)
			}
			continue
		}
		if largest && c.res.TotalVCores() > big[i].res.TotalVCores() {
			big[i] = c
		}
	}
	sc.largestHeads = big
	if largest {
		for i := range big {
			if big[i] != heads[i] {
				larger++
			}
		}
		// The draining test reads the whole window: only when some kind
		// has a job larger than its oldest.
		if larger > 0 && r.snap.Draining(rule.drainRatio) {
			copy(heads, big)
		} else {
			larger = 0
		}
	}
	sc.kinds, sc.kindHeads = kinds, heads
	return heads, kinds, larger
}
