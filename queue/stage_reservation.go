package queue

import "fmt"

// reservationStage gives the oldest window job blocked AfterBlocked times
// a reservation (see ReservationConfig). It runs after fit, fairness and
// altruism, so it sees which jobs fit (cand.noFit) and which the policy
// stages kept: while the held job does not fit, every job is dropped and
// nothing is admitted; once it fits and survives, only it stays.
type reservationStage struct {
	after   int
	perNode bool
}

func (reservationStage) name() string { return "reservation" }

func (s reservationStage) run(r *run, rec *StageRecord) {
	held, skipped := s.holder(r)
	if held == nil {
		if skipped != "" {
			rec.Note = skipped
		}
		return
	}
	id := held.job.ID
	r.dec.Reserved = id
	if !held.noFit {
		if !r.isLive(held) {
			// It fits, and a policy stage (fairness, altruism) dropped it:
			// nothing goes this time, and it stays first in line.
			r.keepOnly(nil, rec, fmt.Sprintf("job %s holds a reservation", id))
			rec.Note = fmt.Sprintf("job %s (blocked %d times) holds a reservation and fits, but an earlier stage dropped it: nothing goes", id, held.job.Blocked)
			r.note = rec.Note
			return
		}
		r.keepOnly(held, rec, fmt.Sprintf("job %s holds a reservation", id))
		rec.Note = fmt.Sprintf("job %s (blocked %d times) holds a reservation and fits: it goes", id, held.job.Blocked)
		return
	}
	_, why := fitsIn(held.res, r.snap.Free, r.fitNodes(s.perNode), nil, true)
	r.keepOnly(nil, rec, fmt.Sprintf("job %s holds a reservation", id))
	rec.Note = fmt.Sprintf("job %s (blocked %d times) holds a reservation: nothing else goes until it fits (%s)", id, held.job.Blocked, why)
	r.note = rec.Note
}

// holder is the oldest window job blocked AfterBlocked times that would
// fit the idle cluster; skipped says which older ones would not (waiting
// for them could not end).
func (s reservationStage) holder(r *run) (held *cand, skipped string) {
	for _, c := range r.window { // FIFO order
		if c.job.Blocked < s.after {
			continue
		}
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

// isLive reports whether c survived the stages so far.
func (r *run) isLive(c *cand) bool {
	for _, l := range r.live {
		if l == c {
			return true
		}
	}
	return false
}

// keepOnly drops every live job but keep (nil: all), recording reason.
func (r *run) keepOnly(keep *cand, rec *StageRecord, reason string) {
	kept := r.beginFilter()
	for _, c := range r.live {
		if c == keep {
			kept = append(kept, c)
		} else if r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, reason})
		}
	}
	r.endFilter(kept)
}

// fitNodes is the node list the fit check uses: the snapshot's nodes with
// per-node placement, nil without.
func (r *run) fitNodes(perNode bool) []NodeFree {
	if !perNode {
		return nil
	}
	return r.snap.Nodes
}
