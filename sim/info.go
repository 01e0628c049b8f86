package sim

import (
	"cmp"
	"math"
	"slices"
)

// App describes an application that was submitted.
func (s *Sim) App(appID string) (AppInfo, bool) {
	a, ok := s.byID[appID]
	if !ok {
		return AppInfo{}, false
	}
	return s.info(a), true
}

// Apps describes every submitted application, in submission order (the
// order of their sequence numbers).
func (s *Sim) Apps() []AppInfo {
	out := make([]AppInfo, 0, len(s.apps))
	for _, a := range s.apps {
		out = append(out, s.info(a))
	}
	slices.SortStableFunc(out, func(x, y AppInfo) int { return cmp.Compare(s.byID[x.ID].seq, s.byID[y.ID].seq) })
	return out
}

func (s *Sim) info(a *app) AppInfo {
	inf := AppInfo{ID: a.id, JobID: a.spec.JobID, Kind: a.spec.Kind, User: a.spec.User, Queue: a.spec.Queue,
		Tags: slices.Clone(a.spec.Tags), State: a.state, Started: s.at(a.started), Containers: a.containers,
		Placement: make(map[string]int)}
	for i, c := range a.placement {
		if c > 0 {
			inf.Nodes = append(inf.Nodes, s.nodes[i].name)
			inf.Placement[s.nodes[i].name] = c
		}
	}
	if a.state != AppRunning {
		inf.Finished = s.at(a.finished)
		if a.state == AppFinished {
			inf.Progress = 1
		} else {
			inf.Progress = a.progress()
		}
		return inf
	}
	inf.Alloc = Resources{MemoryMB: int64(a.containers) * a.kind.memMB, VCores: int64(a.containers) * a.kind.vcores}
	inf.Progress = a.progress()
	inf.Speed = math.Inf(1)
	for _, g := range a.groups {
		if g.remaining > 0 {
			inf.Speed = min(inf.Speed, s.rateOf(g))
		}
	}
	if math.IsInf(inf.Speed, 1) {
		inf.Speed = 1
	}
	return inf
}

// rateOf is g's current rate, computing its node's shares if stale.
func (s *Sim) rateOf(g *group) float64 {
	if nd := s.nodes[g.node]; nd.dirty {
		s.share(nd)
	}
	return g.rate
}

// progress counts the current phase as done in the proportion its
// slowest group is.
func (a *app) progress() float64 {
	if a.phase >= a.kind.total {
		return 1
	}
	ph := a.kind.phase(a.phase)
	frac := 0.0
	if a.phaseWork > 0 {
		frac = 1 - maxRemaining(a)/a.phaseWork
	}
	return min(1, (a.doneSolo+ph.seconds*frac)/a.kind.solo)
}

func maxRemaining(a *app) float64 {
	var rem float64
	for _, g := range a.groups {
		rem = max(rem, g.remaining)
	}
	return rem
}

// Nodes describes every node, in name order.
func (s *Sim) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(s.nodes))
	for i, nd := range s.nodes {
		out[i] = NodeInfo{Name: nd.name, Cores: s.cluster.Node.Cores, VCores: s.cluster.Node.VCores,
			MemoryMB: s.cluster.Node.MemoryMB, UsedMemoryMB: nd.usedMem, UsedVCores: nd.usedVC, Apps: slices.Clone(nd.apps)}
	}
	return out
}
