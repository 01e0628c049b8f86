package pipeline

import (
	"fmt"
	"time"
)

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
