package bench

import (
	"fmt"
	"math"
	"slices"
	"time"

	"github.com/colocd/colocd/sim"
)

// measure fills the makespan, JCT and usage fields of res from the
// simulator after a run. seqOf maps an application's JobID to the job's
// position in jobs.
func measure(res *Result, w *sim.Workload, s *sim.Sim, jobs []sim.JobSpec, seqOf func(jobID string) (int, bool)) error {
	start := sim.DefaultStart
	done := make([]bool, len(jobs))
	var last time.Duration
	var jct float64
	for _, a := range s.Apps() {
		if a.State != sim.AppFinished {
			continue
		}
		i, ok := seqOf(a.JobID)
		if !ok || i < 0 || i >= len(jobs) {
			return fmt.Errorf("measure: application %s runs unknown job %q", a.ID, a.JobID)
		}
		if done[i] {
			return fmt.Errorf("measure: job %d ran twice", i)
		}
		done[i] = true
		end := a.Finished.Sub(start)
		last = max(last, end)
		jct += (end - jobs[i].Arrival).Seconds()
	}
	for i, d := range done {
		if !d {
			return fmt.Errorf("measure: job %d (%s) never finished", i, jobs[i].Kind)
		}
	}
	res.MakespanS = last.Seconds()
	if len(jobs) > 0 {
		res.MeanJCTS = jct / float64(len(jobs))
	}
	waits := make([]float64, 0, len(res.Admissions))
	for _, a := range res.Admissions {
		if a.Seq >= 0 && a.Seq < len(jobs) {
			waits = append(waits, max(0, (a.At-jobs[a.Seq].Arrival).Seconds()))
		}
	}
	res.MaxWaitS, res.P95WaitS = waitStats(waits)
	if multiClass(w, jobs) {
		res.Classes = classStats(w, s, jobs, res.Admissions, seqOf)
	}
	res.Usage = usageSeries(s, last)
	var n float64
	for _, p := range res.Usage {
		res.MeanCPUUtil += p.CPU
		res.MeanIOWait += p.IOWait
		res.MeanDiskUtil += p.Disk
		res.MeanNetUtil += p.Net
		n++
	}
	if n > 0 {
		res.MeanCPUUtil /= n
		res.MeanIOWait /= n
		res.MeanDiskUtil /= n
		res.MeanNetUtil /= n
	}
	return nil
}

// usageSeries averages the simulator's node samples per interval, for the
// intervals that start before until.
func usageSeries(s *sim.Sim, until time.Duration) []UsagePoint {
	cl := s.Cluster()
	disk := cl.Node.DiskMBps * 1e6
	net := 2 * cl.Node.NetMBps * 1e6
	var out []UsagePoint
	var cur *UsagePoint
	var nodes float64
	flush := func() {
		if cur != nil && nodes > 0 {
			cur.CPU /= nodes
			cur.IOWait /= nodes
			cur.Disk /= nodes
			cur.Net /= nodes
		}
	}
	for _, sm := range s.Samples() {
		at := sm.Start.Sub(sim.DefaultStart)
		if at >= until {
			break
		}
		if cur == nil || cur.At != at {
			flush()
			out = append(out, UsagePoint{At: at})
			cur, nodes = &out[len(out)-1], 0
		}
		u := sm.Usage
		cur.CPU += u.CPU
		cur.IOWait += u.IOWait
		cur.Disk += (u.DiskRead + u.DiskWrite) / disk
		cur.Net += (u.NetRecv + u.NetSent) / net
		nodes++
	}
	flush()
	return out
}

// waitStats is the largest and the 95th percentile (nearest rank) of the
// waits.
func waitStats(w []float64) (maxW, p95 float64) {
	if len(w) == 0 {
		return 0, 0
	}
	w = slices.Clone(w)
	slices.Sort(w)
	rank := int(math.Ceil(0.95*float64(len(w)))) - 1
	return w[len(w)-1], w[max(rank, 0)]
}
