package bench

import (
	"slices"
	"strings"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/sim"
)

// classResult is one class's service in a run (Result.Classes): its jobs'
// waits between arrival and admission, their completion times, and the
// class's long-term share of the cluster while every class still had work
// to admit — its applications' allocation over [0, ContendedS], where
// ContendedS is the first time some class admitted its last job, as a
// fraction of the cluster's capacity over that span, per resource (over
// the whole run a class's share is fixed by its work: every job runs to
// completion). FairShare is, for a class with no service curve, its weight
// over the weights of all classes without one (0 for a class with a
// curve, whose due is its curve).
type classResult struct {
	Class     string  `json:"class"`
	Jobs      int     `json:"jobs"`
	MeanWaitS float64 `json:"mean_wait_s"`
	P95WaitS  float64 `json:"p95_wait_s"`
	MaxWaitS  float64 `json:"max_wait_s"`
	MeanJCTS  float64 `json:"mean_jct_s"`
	// ShareVCores and ShareMemory: the long-term share per resource.
	ShareVCores float64 `json:"share_vcores"`
	ShareMemory float64 `json:"share_memory"`
	FairShare   float64 `json:"fair_share"`
	ContendedS  float64 `json:"contended_s"`
}

// multiClass reports whether a workload's runs report per class: it
// declares classes or its jobs fall in more than one.
func multiClass(w *sim.Workload, jobs []sim.JobSpec) bool {
	if len(w.Classes) > 0 {
		return true
	}
	for _, j := range jobs {
		if j.Class != jobs[0].Class {
			return true
		}
	}
	return false
}

// classStats computes Result.Classes from the finished applications and
// the admissions, in class name order. seqOf maps an application's JobID
// to its job's position in jobs.
func classStats(w *sim.Workload, s *sim.Sim, jobs []sim.JobSpec, adm []admission, seqOf func(string) (int, bool)) []classResult {
	type acc struct {
		waits          []float64
		jct, vcs, mems float64
		n              int
	}
	by := map[string]*acc{}
	get := func(c string) *acc {
		if by[c] == nil {
			by[c] = &acc{}
		}
		return by[c]
	}
	last := map[string]float64{} // class → its last admission, s
	for _, a := range adm {
		if a.Seq >= 0 && a.Seq < len(jobs) {
			j := jobs[a.Seq]
			get(j.Class).waits = append(get(j.Class).waits, max(0, (a.At-j.Arrival).Seconds()))
			last[j.Class] = max(last[j.Class], a.At.Seconds())
		}
	}
	contended := -1.0
	for _, t := range last {
		if contended < 0 || t < contended {
			contended = t
		}
	}
	contended = max(contended, 0)
	for _, app := range s.Apps() {
		i, ok := seqOf(app.JobID)
		if !ok || app.State != sim.AppFinished {
			continue
		}
		k, _ := w.Kind(app.Kind)
		c := get(jobs[i].Class)
		from, to := app.Started.Sub(sim.DefaultStart).Seconds(), app.Finished.Sub(sim.DefaultStart).Seconds()
		run := max(0, min(to, contended)-from)
		c.vcs += float64(app.Containers*k.Container.VCores) * run
		c.mems += float64(int64(app.Containers)*k.Container.MemoryMB) * run
		c.jct += (app.Finished.Sub(sim.DefaultStart) - jobs[i].Arrival).Seconds()
		c.n++
	}
	var vcores, memMB int64
	for _, g := range w.Cluster.NodeGroups() {
		vcores += int64(g.Nodes * g.Node.VCores)
		memMB += int64(g.Nodes) * g.Node.MemoryMB
	}
	capVC := float64(vcores) * contended
	capMem := float64(memMB) * contended
	var total float64
	for name := range by {
		total += elasticWeight(w, name)
	}
	var out []classResult
	for name, c := range by {
		r := classResult{Class: name, Jobs: c.n, ContendedS: contended}
		if wt := elasticWeight(w, name); wt > 0 {
			r.FairShare = wt / total
		}
		if c.n > 0 {
			r.MeanJCTS = c.jct / float64(c.n)
		}
		for _, x := range c.waits {
			r.MeanWaitS += x
		}
		if len(c.waits) > 0 {
			r.MeanWaitS /= float64(len(c.waits))
		}
		r.MaxWaitS, r.P95WaitS = waitStats(c.waits)
		if capVC > 0 && capMem > 0 {
			r.ShareVCores, r.ShareMemory = c.vcs/capVC, c.mems/capMem
		}
		out = append(out, r)
	}
	slices.SortFunc(out, func(a, b classResult) int { return strings.Compare(a.Class, b.Class) })
	return out
}

// elasticWeight is a class's weight among the classes without a service
// curve: its classes: entry's (default 1), 0 for one with a curve.
func elasticWeight(w *sim.Workload, class string) float64 {
	for _, c := range w.Classes {
		if c.Name != class {
			continue
		}
		if c.Alpha != (sim.Rate{}) {
			return 0
		}
		if c.Weight > 0 {
			return c.Weight
		}
	}
	return 1
}

// fairnessConfig is cfg with the fairness stage the policy names: drf
// and curves order FIFO within what fairness keeps (preference off), drf
// by DRF deficits between queues, curves by the workload's classes as
// service queues (pipeline.fairness.mode curves); ra-curves is colocd's
// learned order under the same curves. Class weights become the groups'
// weights. Other policies get cfg unchanged.
func fairnessConfig(p Policy, cfg daemon.Config, w *sim.Workload) daemon.Config {
	if p != policyDRF && p != policyCurves && p != policyRACurves {
		return cfg
	}
	f := &cfg.Pipeline.Fairness
	f.Enabled, f.GroupBy, f.Mode = true, pipeline.GroupByQueue, pipeline.FairnessDeficit
	f.Weights = map[string]float64{}
	f.Queues = nil
	for _, c := range w.Classes {
		if c.Weight > 0 && c.Weight != 1 {
			f.Weights[c.Name] = c.Weight
		}
	}
	if p == policyDRF || p == policyCurves {
		cfg.Pipeline.Preference.Enabled = false
	}
	if p == policyCurves || p == policyRACurves {
		f.Mode = pipeline.FairnessCurves
		for _, c := range w.Classes {
			f.Queues = append(f.Queues, pipeline.ServiceQueue{
				Name: c.Name, Level: max(c.Level, 1),
				Alpha: pipeline.Rate{VCores: c.Alpha.VCores, Memory: c.Alpha.Memory},
				Beta:  pipeline.Rate{VCores: c.Beta.VCores, Memory: c.Beta.Memory},
				Burst: c.Burst,
			})
		}
	}
	return cfg
}
