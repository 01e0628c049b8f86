package pipeline

import (
	"fmt"
	"time"
)

// tailStage starts first, at the end of a queue, the job that would
// otherwise finish last on its own: a straggler.
//
// Co-location choices are greedy: a kind that runs slowly beside every
// partner keeps being passed over while others go, and when the queue
// drains the long jobs left run alone while the cluster idles around
// them, stretching the makespan. The classic remedy is longest-first at
// the end (LPT list scheduling). A job j is critical when all of these
// hold:
//   - every pending job is in the window (PendingTotal), with a runtime
//     history, and none has a deadline (altruism orders those);
//   - no job arrived for as long as j is expected to run: the queue is
//     draining, not being refilled (with steady arrivals longest-first
//     would only cost the mean completion time);
//   - j's expected runtime (its kind's EWMA) exceeds Margin times the time
//     the other pending jobs need to drain the cluster: their runtimes
//     times vcores, summed, over the cluster's vcores (the running jobs'
//     remaining work is not counted, so the estimate errs towards acting).
//
// When a candidate is critical, only the candidates of the longest
// critical runtime stay (and any at a starvation cap); the preference
// stage then chooses among them. Not in the paper.
type tailStage struct {
	margin   float64
	maxSkips int           // starvation's cap; 0: starvation off
	maxWait  time.Duration // starvation's cap in time; 0: none
}

func (tailStage) name() string { return "tail" }

func (s tailStage) run(r *run, rec *StageRecord) {
	snap := r.snap
	if snap.PendingTotal == 0 || snap.PendingTotal > len(snap.Pending) || snap.Capacity.VCores <= 0 || len(r.live) < 2 {
		return
	}
	runtime := snap.expectedRuntime
	var work float64 // vcore-seconds of every pending job
	var newest time.Time
	for i := range snap.Pending {
		j := &snap.Pending[i] // not a copy of each job
		d, ok := runtime(j.Kind)
		if !ok || j.Deadline != nil {
			return
		}
		work += d.Seconds() * float64(j.Resources.TotalVCores())
		if j.CreatedAt.After(newest) {
			newest = j.CreatedAt
		}
	}
	capa := float64(snap.Capacity.VCores)
	quiet := snap.Now.Sub(newest)
	var longest time.Duration
	for _, c := range r.live {
		d, _ := runtime(c.kind)
		rest := (work - d.Seconds()*float64(c.res.TotalVCores())) / capa
		if d > longest && quiet >= d && d.Seconds() > s.margin*rest {
			longest = d
		}
	}
	if longest == 0 {
		return
	}
	rec.Note = fmt.Sprintf("the queue is draining: a job expected to run %v, longer than the rest of the queue needs, goes first", longest.Round(time.Second))
	kept := r.beginFilter()
	for _, c := range r.live {
		overdue := s.maxSkips > 0 && c.skips >= s.maxSkips || s.maxWait > 0 && snap.Now.Sub(c.job.CreatedAt) >= s.maxWait
		if d, _ := runtime(c.kind); d == longest || overdue {
			kept = append(kept, c)
			continue
		}
		if r.room(rec) {
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, fmt.Sprintf("waits for a %v job at the queue's end", longest.Round(time.Second))})
		}
	}
	r.endFilter(kept)
}
