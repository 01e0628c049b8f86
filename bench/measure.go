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
// intervals that start before until. It reads the samples as runs
// (sim.Sim.SampleRuns), without expanding them: a run of a node adds its
// usage to each interval it covers (nothing for an idle one) and counts the
// node there. Each interval sums its nodes in node order, as a walk over
// the expanded samples would. Disk and network are fractions of each
// node's own bandwidth.
func usageSeries(s *sim.Sim, until time.Duration) []usagePoint {
	type bw struct{ disk, net float64 }
	caps := map[string]bw{}
	for _, nd := range s.Nodes() {
		caps[nd.Name] = bw{nd.DiskMBps * 1e6, 2 * nd.NetMBps * 1e6}
	}
	step := s.MetricsInterval()
	n := int((until + step - 1) / step) // intervals starting before until
	if n <= 0 {
		return nil
	}
	sums := make([]usagePoint, n)
	nodes := make([]int, n+1) // difference array of the nodes sampled in each interval
	for r := range s.SampleRuns() {
		k0 := int((r.Start.Sub(sim.DefaultStart) + step/2) / step) // Start is k0 intervals in, to the nanosecond
		k1 := min(k0+r.Intervals, n)
		if k0 >= k1 {
			continue
		}
		nodes[k0]++
		nodes[k1]--
		u := r.Usage
		disk, net := caps[r.Node].disk, caps[r.Node].net
		cpu, iowait, dsk, nt := u.CPU, u.IOWait, (u.DiskRead+u.DiskWrite)/disk, (u.NetRecv+u.NetSent)/net
		if cpu == 0 && iowait == 0 && dsk == 0 && nt == 0 {
			continue // adding zeros changes no sum
		}
		for k := k0; k < k1; k++ {
			p := &sums[k]
			p.CPU += cpu
			p.IOWait += iowait
			p.Disk += dsk
			p.Net += nt
		}
	}
	var out []usagePoint
	count := 0
	for k := range n {
		count += nodes[k]
		if count == 0 {
			continue
		}
		f := float64(count)
		p := sums[k]
		out = append(out, usagePoint{At: time.Duration(k) * step, CPU: p.CPU / f, IOWait: p.IOWait / f, Disk: p.Disk / f, Net: p.Net / f})
	}
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
