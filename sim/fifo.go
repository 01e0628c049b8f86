package sim

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// Arrival is a job that arrived at At: what ReplayFIFO plays.
type Arrival struct {
	JobID, Kind string
	At          time.Time
}

// FIFOJob is one job of a FIFO replay: when it arrived, started (was
// admitted and placed) and finished.
type FIFOJob struct {
	JobID, Kind                string
	Arrived, Started, Finished time.Time
}

// FIFOResult is what a FIFO replay did with the arrivals.
type FIFOResult struct {
	Jobs []FIFOJob // in arrival order
}

// ErrNeverFits is returned when a job of the replay can never start: its
// kind does not fit the empty cluster.
var ErrNeverFits = errors.New("sim: a job never fits the cluster")

// ReplayFIFO plays arrivals on s under strict first-in, first-out
// admission — the baseline colocd's demo compares itself with: each job
// waits for every earlier one to start, and starts as soon as it fits the
// free resources (the head of the queue blocks the rest). s should be a
// fresh simulator of the same workload, seed and start as the run being
// compared (nothing running); arrivals before s.Now() arrive at once. It
// is a separate simulation: it draws from s's own random source only.
func ReplayFIFO(s *Sim, arrivals []Arrival) (FIFOResult, error) {
	order := slices.Clone(arrivals)
	slices.SortStableFunc(order, func(a, b Arrival) int { return a.At.Compare(b.At) })
	out := FIFOResult{Jobs: make([]FIFOJob, len(order))}
	byApp := map[string]int{}
	next, head, done := 0, 0, 0 // next arrival; the first not started; finished
	for done < len(order) {
		now := s.Now()
		for next < len(order) && !order[next].At.After(now) {
			a := order[next]
			out.Jobs[next] = FIFOJob{JobID: a.JobID, Kind: a.Kind, Arrived: a.At}
			next++
		}
		for head < next && s.Fits(order[head].Kind) {
			id := s.NewApplication()
			if err := s.Submit(id, AppSpec{JobID: order[head].JobID, Kind: order[head].Kind}); err != nil {
				return out, fmt.Errorf("replay fifo: job %s: %w", order[head].JobID, err)
			}
			out.Jobs[head].Started, byApp[id] = now, head
			head++
		}
		t, running := s.NextEvent()
		switch {
		case next < len(order) && (!running || order[next].At.Before(t)):
			t = order[next].At
		case !running:
			return out, fmt.Errorf("replay fifo: job %s of kind %s: %w", order[head].JobID, order[head].Kind, ErrNeverFits)
		}
		for _, ev := range s.Advance(t) {
			if i, ok := byApp[ev.AppID]; ok && ev.Kind == EventFinished {
				out.Jobs[i].Finished = ev.At
				done++
			}
		}
	}
	return out, nil
}

// MeanJCT is the jobs' mean completion time, arrival to finish.
func (r FIFOResult) MeanJCT() time.Duration {
	if len(r.Jobs) == 0 {
		return 0
	}
	var sum time.Duration
	for _, j := range r.Jobs {
		sum += j.Finished.Sub(j.Arrived)
	}
	return sum / time.Duration(len(r.Jobs))
}

// Makespan is the first arrival to the last finish.
func (r FIFOResult) Makespan() time.Duration {
	if len(r.Jobs) == 0 {
		return 0
	}
	first, last := r.Jobs[0].Arrived, r.Jobs[0].Finished
	for _, j := range r.Jobs {
		if j.Arrived.Before(first) {
			first = j.Arrived
		}
		if j.Finished.After(last) {
			last = j.Finished
		}
	}
	return last.Sub(first)
}
