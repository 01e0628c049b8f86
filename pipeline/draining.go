package pipeline

import "time"

// Draining reports whether the pending queue looks like a batch being
// drained rather than a flow being served: the pending work of the
// snapshot's window — each job's kind's expected runtime (its EWMA; a kind
// without history at the mean of the known kinds') times its vcores, over
// the cluster's vcores — is more than ratio times the span over which
// those jobs arrived. Under steady arrivals the cluster keeps up with, a
// backlog's work is below the time it took to arrive; a batch submitted at
// one instant has no span and drains whatever its runtimes. Fewer than two
// pending jobs, or a cluster of no vcores, is no queue to order. The
// scorer weighs a job's size by it (engine's pipeline.preference
// size_weight): largest-first shortens a batch and delays a flow's small
// jobs.
func (s *Snapshot) Draining(ratio float64) bool {
	if len(s.Pending) < 2 || s.Capacity.VCores <= 0 {
		return false
	}
	// Summed as durations: integer arithmetic, the same in whatever order
	// the map gives the kinds (a float sum would differ in its last bits).
	var known int64
	var sum time.Duration
	for k := range s.History {
		if d, ok := s.expectedRuntime(k); ok {
			known++
			sum += d
		}
	}
	mean := 0.0
	if known > 0 {
		mean = (sum / time.Duration(known)).Seconds()
	}
	var work float64
	oldest, newest := s.Pending[0].CreatedAt, s.Pending[0].CreatedAt
	for i := range s.Pending {
		j := &s.Pending[i] // not a copy of each job
		d := mean
		if r, ok := s.expectedRuntime(j.Kind); ok {
			d = r.Seconds()
		}
		work += d * float64(j.Resources.TotalVCores())
		if j.CreatedAt.Before(oldest) {
			oldest = j.CreatedAt
		}
		if j.CreatedAt.After(newest) {
			newest = j.CreatedAt
		}
	}
	span := newest.Sub(oldest).Seconds()
	if span <= 0 {
		return true // submitted at one instant: a batch
	}
	return work/float64(s.Capacity.VCores) > ratio*span
}

// expectedRuntime is a kind's expected runtime, its runtime history's
// EWMA; false when no job of it finished with a runtime.
func (s *Snapshot) expectedRuntime(kind string) (time.Duration, bool) {
	h, ok := s.History[kind]
	return h.EWMARuntime, ok && h.Runs > 0 && h.EWMARuntime > 0
}
