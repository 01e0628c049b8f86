package sim

import (
	"cmp"
	"math"
	"slices"
	"time"
)

// App describes an application that was submitted.
func (s *Sim) App(appID string) (AppInfo, bool) {
	ai, ok := s.byID[appID]
	if !ok {
		return AppInfo{}, false
	}
	return s.info(&s.apps[ai]), true
}

// Apps describes every submitted application, in submission order (the
// order of their sequence numbers).
func (s *Sim) Apps() []AppInfo {
	out := make([]AppInfo, 0, len(s.apps))
	for i := range s.apps {
		out = append(out, s.info(&s.apps[i]))
	}
	slices.SortStableFunc(out, func(x, y AppInfo) int { return cmp.Compare(s.apps[s.byID[x.ID]].seq, s.apps[s.byID[y.ID]].seq) })
	return out
}

// AppProgress is what Progresses reports of an application.
type AppProgress struct {
	ID, Kind   string
	State      AppState
	Containers int
	// Scale is its AppSpec.Scale (1 when not set): its solo work is the
	// kind's times Scale.
	Scale float64
	// Progress is AppInfo.Progress: the fraction of its solo work done.
	Progress float64
	// Finished is AppInfo.Finished: zero while it runs.
	Finished time.Time
}

// Progresses appends every submitted application's progress to out[:0],
// in submission order, as Apps would report it, without the rest of
// AppInfo (placements, speeds): what a what-if that counts the work done
// needs, at a fraction of Apps' cost.
func (s *Sim) Progresses(out []AppProgress) []AppProgress {
	out = out[:0]
	for i := range s.apps {
		a := &s.apps[i]
		p := AppProgress{ID: a.id, Kind: a.spec.Kind, State: a.state, Containers: a.containers, Scale: a.scale, Progress: 1}
		if a.state != AppFinished {
			p.Progress = s.progress(a)
		}
		if a.state != AppRunning {
			p.Finished = s.at(a.finished)
		}
		out = append(out, p)
	}
	slices.SortStableFunc(out, func(x, y AppProgress) int { return cmp.Compare(s.apps[s.byID[x.ID]].seq, s.apps[s.byID[y.ID]].seq) })
	return out
}

func (s *Sim) info(a *app) AppInfo {
	inf := AppInfo{ID: a.id, JobID: a.spec.JobID, Kind: a.spec.Kind, User: a.spec.User, Queue: a.spec.Queue,
		Tags: slices.Clone(a.spec.Tags), State: a.state, Started: s.at(a.started), Containers: a.containers,
		Placement: make(map[string]int)}
	for _, gi := range a.groups { // in node order
		g := &s.groups[gi]
		name := s.nodes[g.node].name
		inf.Nodes = append(inf.Nodes, name)
		inf.Placement[name] = int(g.count)
	}
	if a.state != AppRunning {
		inf.Finished = s.at(a.finished)
		if a.state == AppFinished {
			inf.Progress = 1
		} else {
			inf.Progress = s.progress(a)
		}
		return inf
	}
	inf.Alloc = Resources{MemoryMB: int64(a.containers) * a.kind.memMB, VCores: int64(a.containers) * a.kind.vcores}
	inf.Progress = s.progress(a)
	inf.Speed = math.Inf(1)
	for _, gi := range a.groups {
		if s.groups[gi].remaining > 0 {
			inf.Speed = min(inf.Speed, s.rateOf(gi))
		}
	}
	if math.IsInf(inf.Speed, 1) {
		inf.Speed = 1
	}
	return inf
}

// rateOf is group gi's current rate, computing its node's shares if stale.
func (s *Sim) rateOf(gi int32) float64 {
	if n := s.groups[gi].node; s.nodes[n].dirty {
		s.share(n)
	}
	return s.groups[gi].rate
}

// progress counts the current phase as done in the proportion its
// slowest group is.
func (s *Sim) progress(a *app) float64 {
	if a.phase >= a.kind.total {
		return 1
	}
	ph := a.kind.phase(a.phase)
	frac := 0.0
	if a.phaseWork > 0 {
		var rem float64
		for _, gi := range a.groups {
			rem = max(rem, s.remainingNow(&s.groups[gi]))
		}
		frac = 1 - rem/a.phaseWork
	}
	return min(1, (a.doneSolo+ph.seconds*frac)/a.kind.solo)
}

// remainingNow is g's remaining work at the current time.
func (s *Sim) remainingNow(g *group) float64 {
	if g.remaining <= 0 || g.rate == 0 {
		return g.remaining
	}
	return max(g.remaining-g.rate*(s.now-g.at), 1e-12)
}

// Nodes describes every node, in name order.
func (s *Sim) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(s.nodes))
	for i := range s.nodes {
		nd := &s.nodes[i]
		spec := s.spec(nd)
		out[i] = NodeInfo{Name: nd.name, Cores: spec.Cores, VCores: spec.VCores, MemoryMB: spec.MemoryMB,
			DiskMBps: spec.DiskMBps, NetMBps: spec.NetMBps, Group: s.groupName(nd),
			UsedMemoryMB: nd.usedMem, UsedVCores: nd.usedVC, Apps: slices.Clone(nd.apps)}
	}
	return out
}

// NodeUse is what Occupancy reports of one node: its free placement room
// and the containers of each running application on it.
type NodeUse struct {
	FreeVCores   int
	FreeMemoryMB int64
	Apps         []AppCount // in placement order
}

// AppCount is one application's containers on a node, with its kind.
type AppCount struct {
	ID, Kind   string
	Containers int
}

// Occupancy fills out (grown to one entry per node, in name order, its
// Apps slices reused) with each node's free room and running containers:
// what a scheduler sees of the cluster, without the copies Nodes and Apps
// make.
func (s *Sim) Occupancy(out []NodeUse) []NodeUse {
	if cap(out) < len(s.nodes) {
		out = append(out[:cap(out)], make([]NodeUse, len(s.nodes)-cap(out))...)
	}
	out = out[:len(s.nodes)]
	for i := range s.nodes {
		nd := &s.nodes[i]
		u := &out[i]
		spec := s.spec(nd)
		u.FreeVCores = spec.VCores - nd.usedVC
		u.FreeMemoryMB = spec.MemoryMB - nd.usedMem
		u.Apps = u.Apps[:0]
		for _, gi := range nd.groups {
			g := &s.groups[gi]
			a := &s.apps[g.app]
			u.Apps = append(u.Apps, AppCount{ID: a.id, Kind: a.spec.Kind, Containers: int(g.count)})
		}
	}
	return out
}
