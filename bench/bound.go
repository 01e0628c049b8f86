package bench

import (
	"cmp"
	"time"

	"github.com/colocd/colocd/sim"
)

// boundDetail is the lower bound on the makespan and what each resource
// alone requires.
type boundDetail struct {
	// Makespan is the largest of the others: no schedule can finish sooner.
	Makespan time.Duration
	// Per resource: the total work of all jobs at solo speed over the
	// cluster's capacity of it. A container never works faster than alone,
	// so it holds its reservation (vcores, memory) for at least its solo
	// time, and each phase needs its CPU, disk and network volume.
	CPU, Disk, NetIn, NetOut, VCores, Memory time.Duration
	// Longest is the latest arrival + solo duration of any job.
	Longest time.Duration
}

// lowerBound computes a lower bound on the makespan of jobs on w's cluster: the
// maximum over resources of total work / cluster capacity, and the
// longest job (from its arrival). It ignores placement, barriers and
// interference, so no policy can beat it; how far a policy is from it
// bounds what any scheduler could still gain.
func lowerBound(w *sim.Workload, jobs []sim.JobSpec) boundDetail {
	var capa struct{ cores, disk, net, vcores, mem float64 } // the cluster's: Σ over nodes
	for _, g := range w.Cluster.NodeGroups() {
		n, node := float64(g.Nodes), g.Node
		vcores := node.VCores
		if vcores <= 0 {
			vcores = int(node.Cores)
		}
		capa.cores += n * node.Cores
		capa.disk += n * node.DiskMBps
		capa.net += n * node.NetMBps
		capa.vcores += n * float64(vcores)
		capa.mem += n * float64(node.MemoryMB)
	}
	var cpu, disk, in, out, vcs, mem float64 // core-s, MB, MB, MB, vcore-s, MB-s
	var b boundDetail
	for _, j := range jobs {
		k, ok := w.Kind(j.Kind)
		if !ok {
			continue
		}
		// containers × work scale: the work is what a scale multiplies.
		c := float64(cmp.Or(j.Containers, k.Containers)) * cmp.Or(j.Scale, 1)
		add := func(ps []sim.Phase, times float64) {
			for _, p := range ps {
				cpu += times * c * p.Seconds * p.CPU
				disk += times * c * p.Seconds * (p.DiskReadMBps + p.DiskWriteMBps)
				in += times * c * p.Seconds * p.NetInMBps
				out += times * c * p.Seconds * p.NetOutMBps
			}
		}
		add(k.Setup, 1)
		add(k.Phases, float64(max(k.Repeat, 1)))
		add(k.Teardown, 1)
		solo := jobSolo(k, j)
		vcs += c * float64(k.Container.VCores) * k.SoloDuration().Seconds()
		mem += c * float64(k.Container.MemoryMB) * k.SoloDuration().Seconds()
		b.Longest = max(b.Longest, j.Arrival+solo)
	}
	sec := func(x float64) time.Duration { return time.Duration(x * float64(time.Second)) }
	b.CPU = sec(cpu / capa.cores)
	b.Disk = sec(disk / capa.disk)
	b.NetIn = sec(in / capa.net)
	b.NetOut = sec(out / capa.net)
	b.VCores = sec(vcs / capa.vcores)
	b.Memory = sec(mem / capa.mem)
	b.Makespan = max(b.CPU, b.Disk, b.NetIn, b.NetOut, b.VCores, b.Memory, b.Longest)
	return b
}

// jobSolo is job j's solo duration: its kind's, times its work scale.
func jobSolo(k sim.KindSpec, j sim.JobSpec) time.Duration {
	if j.Scale == 0 {
		return k.SoloDuration()
	}
	return time.Duration(float64(k.SoloDuration()) * j.Scale)
}

// boundResult is the bound as a Result: the makespan bound, the mean solo
// duration as the JCT bound (no job finishes sooner than alone after its
// arrival), and the mean utilisations a schedule attaining the bound would
// have (total demand over capacity × bound; iowait 0).
func boundResult(w *sim.Workload, jobs []sim.JobSpec) Result {
	b := lowerBound(w, jobs)
	res := Result{MakespanS: b.Makespan.Seconds()}
	if len(jobs) > 0 {
		var solo float64
		for _, j := range jobs {
			if k, ok := w.Kind(j.Kind); ok {
				solo += jobSolo(k, j).Seconds()
			}
		}
		res.MeanJCTS = solo / float64(len(jobs))
	}
	if m := b.Makespan.Seconds(); m > 0 {
		res.MeanCPUUtil = b.CPU.Seconds() / m
		res.MeanDiskUtil = b.Disk.Seconds() / m
		res.MeanNetUtil = (b.NetIn.Seconds() + b.NetOut.Seconds()) / 2 / m
	}
	return res
}
