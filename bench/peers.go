package bench

import (
	"math"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// The peers: heuristics a practitioner would run with offline profiling,
// each given every kind's true mean solo profile (trueProfiles). They use
// the same placement prediction as colocd's scorer (profile.Place: a group
// on each empty node, then the nodes with room in proportion to it), and
// pick among the oldest job of each kind in the window that fits; ties go
// to the oldest job.

// trueProfiles is every kind's mean solo demand per container, in
// profile's utilisation units: each phase's demand weighted by its solo
// seconds over the kind's solo duration (what running the job alone and
// averaging its usage would measure), as a fraction of the reference
// node's cores, disk bandwidth (reads and writes each) and NIC bandwidth
// per direction (the workload's node; in a cluster of node groups, the
// first group's: clusterView gives the others their Size).
func trueProfiles(w *sim.Workload) profile.Fixed {
	out := profile.Fixed{}
	n := w.Cluster.Node
	for _, k := range w.Kinds {
		var v profile.Vector
		var t float64
		add := func(ps []sim.Phase, times float64) {
			for _, p := range ps {
				t += p.Seconds * times
				v[profile.CPU] += times * p.Seconds * p.CPU / n.Cores
				v[profile.DiskRead] += times * p.Seconds * p.DiskReadMBps / n.DiskMBps
				v[profile.DiskWrite] += times * p.Seconds * p.DiskWriteMBps / n.DiskMBps
				v[profile.NetIn] += times * p.Seconds * p.NetInMBps / n.NetMBps
				v[profile.NetOut] += times * p.Seconds * p.NetOutMBps / n.NetMBps
			}
		}
		add(k.Setup, 1)
		add(k.Phases, float64(max(k.Repeat, 1)))
		add(k.Teardown, 1)
		for r := range v {
			v[r] /= t
		}
		out[k.Name] = v
	}
	return out
}

// clusterView is the simulator's nodes as profile.Nodes: placement room
// and the running containers by kind, as the RM would report them, and
// each node's size against the reference node (TrueProfiles' unit), from
// its hardware, which offline profiling knows.
func clusterView(s *sim.Sim) []profile.Node {
	infos := s.Nodes()
	nodes := make([]profile.Node, len(infos))
	ref := s.Cluster().Node
	for i, n := range infos {
		capa := profile.Room{VCores: int64(n.VCores), MemoryMB: n.MemoryMB}
		pn := profile.Node{Capacity: capa,
			Free: profile.Room{VCores: int64(n.VCores - n.UsedVCores), MemoryMB: n.MemoryMB - n.UsedMemoryMB}}
		if n.Cores != ref.Cores || n.DiskMBps != ref.DiskMBps || n.NetMBps != ref.NetMBps {
			c, d, nt := n.Cores/ref.Cores, n.DiskMBps/ref.DiskMBps, n.NetMBps/ref.NetMBps
			pn.Size = profile.Vector{c, c, d, d, nt, nt}
		}
		for _, id := range n.Apps {
			a, _ := s.App(id)
			c := float64(a.Placement[n.Name])
			found := false
			for j := range pn.Jobs {
				if pn.Jobs[j].Kind == a.Kind {
					pn.Jobs[j].Containers += c
					found = true
				}
			}
			if !found {
				pn.Jobs = append(pn.Jobs, profile.KindCount{Kind: a.Kind, Containers: c})
			}
		}
		nodes[i] = pn
	}
	return nodes
}

// shapeOf is the shape of a job of k with containers containers.
func shapeOf(k sim.KindSpec, containers int) profile.Shape {
	return profile.Shape{Containers: containers,
		Each: profile.Room{VCores: int64(k.Container.VCores), MemoryMB: k.Container.MemoryMB}}
}

// capLoads is node n's load of the four capacities (CPU, disk reads plus
// writes, network in, network out) from the profiles of its jobs plus add
// containers of kind extra, as fractions of its own capacity (its Size).
func capLoads(p profile.Fixed, n profile.Node, extra string, add float64) [4]float64 {
	l := refLoads(p, n.Jobs, extra, add)
	if sz := n.Size; sz != (profile.Vector{}) {
		l[0] /= sz[profile.CPU]
		l[1] /= sz[profile.DiskRead]
		l[2] /= sz[profile.NetIn]
		l[3] /= sz[profile.NetOut]
	}
	return l
}

// refLoads is capLoads on the reference node.
func refLoads(p profile.Fixed, jobs []profile.KindCount, extra string, add float64) [4]float64 {
	var l [4]float64
	put := func(kind string, c float64) {
		d := p.Profile(kind).Demand
		l[0] += c * d[profile.CPU]
		l[1] += c * (d[profile.DiskRead] + d[profile.DiskWrite])
		l[2] += c * d[profile.NetIn]
		l[3] += c * d[profile.NetOut]
	}
	for _, j := range jobs {
		put(j.Kind, j.Containers)
	}
	if add > 0 {
		put(extra, add)
	}
	return l
}

// dominant is the index of a kind's largest capacity demand.
func dominant(p profile.Fixed, kind string) int {
	l := refLoads(p, nil, kind, 1)
	best := 0
	for r := 1; r < 4; r++ {
		if l[r] > l[best] {
			best = r
		}
	}
	return best
}

// peerPick is a direct-driver picker that scores, with value, the oldest
// job of each kind in the window that fits and returns the best one's index
// (ties: the oldest).
func peerPick(value func(nodes []profile.Node, land []profile.Landing, k sim.KindSpec) float64) picker {
	var land []profile.Landing
	return func(d *driver, window []pendingJob) int {
		s := d.s
		nodes := clusterView(s)
		best, bestScore := -1, math.Inf(-1)
		seen := map[string]bool{}
		for i, j := range window {
			if seen[j.kind.Name] {
				continue
			}
			seen[j.kind.Name] = true
			var ok bool
			land, ok = profile.Place(nodes, shapeOf(j.kind, j.containers), profile.DefaultGroup, land)
			if !ok || !s.FitsApp(j.app("")) {
				continue
			}
			if v := value(nodes, land, j.kind); v > bestScore+1e-12 {
				best, bestScore = i, v
			}
		}
		return best
	}
}

// packfitPick: the least predicted overload. For each node the job lands
// on, the overload is Σ over capacities of max(0, load − 1); the score is
// minus its increase, weighted by the expected groups landing there.
func packfitPick(p profile.Fixed) picker {
	return peerPick(func(nodes []profile.Node, land []profile.Landing, k sim.KindSpec) float64 {
		var worse float64
		for _, l := range land {
			g := float64(max(l.Group, 1))
			before, after := capLoads(p, nodes[l.Node], "", 0), capLoads(p, nodes[l.Node], k.Name, g)
			for r := range 4 {
				worse += l.Containers / g * (max(0, after[r]-1) - max(0, before[r]-1))
			}
		}
		return -worse
	})
}

// alternatePick: the job whose dominant resource is least represented
// among the jobs on the nodes where it would land (containers of kinds with
// the same dominant resource, weighted by the expected groups landing on
// each node).
func alternatePick(p profile.Fixed) picker {
	return peerPick(func(nodes []profile.Node, land []profile.Landing, k sim.KindSpec) float64 {
		dom := dominant(p, k.Name)
		var same float64
		for _, l := range land {
			g := float64(max(l.Group, 1))
			for _, j := range nodes[l.Node].Jobs {
				if dominant(p, j.Kind) == dom {
					same += l.Containers / g * j.Containers
				}
			}
		}
		return -same
	})
}

// tetrisPick is Tetris's (Graphene's packer's) alignment: the dot product
// of the job's demand with the free resources of the nodes it lands on
// (1 − load per capacity), summed over its expected groups. Tetris places a
// task only where its demands fit; here the resource manager places by
// vcores and memory, so among the jobs that over-allocate no node's usage
// resources the best aligned goes, and when every job over-allocates, the
// one that over-allocates least (its alignment breaks ties).
func tetrisPick(p profile.Fixed) picker {
	return peerPick(func(nodes []profile.Node, land []profile.Landing, k sim.KindSpec) float64 {
		var align, over float64
		for _, l := range land {
			g := float64(max(l.Group, 1))
			load := capLoads(p, nodes[l.Node], "", 0)
			need := capLoads(p, profile.Node{Size: nodes[l.Node].Size}, k.Name, g)
			var dot float64
			for r := range 4 {
				dot += need[r] * max(0, 1-load[r])
				over += l.Containers / g * max(0, load[r]+need[r]-1)
			}
			align += l.Containers / g * dot
		}
		// Feasible jobs rank above every infeasible one: alignment is at
		// most 4 per container group, far below the offset.
		if over > 1e-12 {
			return -1e6*over + align
		}
		return align
	})
}
