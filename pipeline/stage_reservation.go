package pipeline

import "fmt"

// reservationStage gives the oldest window job blocked AfterBlocked times
// a reservation (see ReservationConfig). It runs after fit, fairness and
// altruism, so it sees which jobs fit (r.fit): while the held job does
// not fit, every job is dropped and nothing is admitted; once it fits, only
// it stays — even if fairness or altruism dropped it, as starvation's
// max_skips forcing overrides them. Otherwise instantaneous fairness, whose
// deficits move only on admissions, could keep the queue stalled forever.
type reservationStage struct {
	after   int
	perNode bool
}

func (reservationStage) name() string { return "reservation" }

func (s reservationStage) run(r *run, rec *StageRecord) {
	held, skipped := s.holder(r)
	if held == nil {
		rec.Note = skipped
		return
	}
	id := held.job.ID
	r.dec.Reserved = id
	reason := fmt.Sprintf("job %s holds a reservation", id)
	if r.fits(held) {
		r.keepOnly(held, rec, reason)
		rec.Note = fmt.Sprintf("job %s (blocked %d times) holds a reservation and fits: it goes", id, held.job.Blocked)
		return
	}
	_, why := fitsIn(held.res, r.snap.Free, r.fitNodes(s.perNode), false, nil, true)
	r.keepOnly(nil, rec, reason)
	rec.Note = fmt.Sprintf("job %s (blocked %d times) holds a reservation: nothing else goes until it fits (%s)", id, held.job.Blocked, why)
	r.note = rec.Note
}

// holder is the oldest window job blocked AfterBlocked times that would
// fit the idle cluster; skipped says which older ones would not (waiting
// for them could not end).
func (s reservationStage) holder(r *run) (held *cand, skipped string) {
	for _, c := range r.overdue { // FIFO order, each blocked ≥ s.after
		if ok, why := FitsCluster(c.res, r.snap.Capacity, r.fitNodes(s.perNode)); !ok {
			if skipped == "" {
				skipped = fmt.Sprintf("job %s was blocked %d times but would not fit even the idle cluster (%s): no reservation", c.job.ID, c.job.Blocked, why)
			}
			continue
		}
		return c, skipped
	}
	return nil, skipped
}

// keepOnly makes keep (nil: none) the only live job, whether or not an
// earlier stage dropped it, recording reason for every other live job.
func (r *run) keepOnly(keep *cand, rec *StageRecord, reason string) {
	kept := r.beginFilter()
	if keep != nil {
		kept = append(kept, keep)
	}
	for _, c := range r.live {
		if c != keep && r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, reason})
		}
	}
	r.endFilter(kept)
}
