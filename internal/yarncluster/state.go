package yarncluster

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/yarnclient"
)

// State reads the cluster: on every call the cluster metrics (capacity
// and free room in all, exact) and the running applications, colocd's and
// other tenants' (GET /ws/v1/cluster/apps?states=RUNNING, resourceRequests
// deselected); where colocd's applications run (their tags say which are
// colocd's), from yarnclient.Placements for those whose placement is older
// than placementTTL, all in one call; and the running nodes only when
// yarn.nodes_refresh has passed since they were last read, or the metrics'
// node counts changed (a node joined, left or changed state).
//
// Between two readings of the nodes, a node's free room is what it
// reported at the reading, plus the allocation colocd's applications held
// on it then, minus the allocation they hold on it now; an application's
// allocation (allocatedMB, allocatedVCores) is split over its nodes in
// proportion to its containers on each. Other tenants' applications are
// not placed per node (only colocd's placements are asked for), so their
// changes reach a node's free room at the next reading; they reach the
// cluster's free room at once, through the metrics.
func (y *Cluster) State(ctx context.Context) (cluster.State, error) {
	var st cluster.State
	m, err := y.c.ClusterMetrics(ctx)
	if err != nil {
		return st, fmt.Errorf("cluster metrics: %w", err)
	}
	st.Capacity = pipeline.Capacity{MemoryMB: m.TotalMB, VCores: m.TotalVirtualCores}
	st.Free = pipeline.Capacity{MemoryMB: m.AvailableMB, VCores: m.AvailableVirtualCores}
	apps, err := y.c.Apps(ctx, yarnclient.AppsFilter{States: []string{"RUNNING"}})
	if err != nil {
		return st, fmt.Errorf("running applications: %w", err)
	}
	var ours []string
	for _, a := range apps {
		as := cluster.App{ID: a.ID, User: a.User, Queue: a.Queue,
			Alloc: pipeline.Capacity{MemoryMB: a.AllocatedMB, VCores: a.AllocatedVCores}}
		if a.StartedTime > 0 {
			as.Starts = time.UnixMilli(a.StartedTime)
		}
		// The tags only choose whose placement to read: the engine decides
		// which job, if any, an application runs (cluster.App.JobID).
		if jobID, _ := yarnclient.ParseJobTags(a.Tags()); jobID != "" {
			ours = append(ours, a.ID)
		}
		as.Reservation = y.reservation(ctx, a)
		st.Apps = append(st.Apps, as)
	}
	pl := y.placements(ctx, ours)
	use := map[string]pipeline.Capacity{} // colocd's allocation per node, now
	for i := range st.Apps {
		a := &st.Apps[i]
		e, ok := pl[a.ID]
		if !ok {
			continue
		}
		a.Nodes, a.Placement = e.nodes, e.counts
		addUse(use, a.Alloc, e.counts)
	}
	nc, err := y.nodes(ctx, m, use)
	if err != nil {
		return st, err
	}
	idx := make(map[string]int, len(nc.nodes))
	st.Nodes = make([]cluster.Node, len(nc.nodes))
	for i, n := range nc.nodes {
		was, now := nc.use[n.Name], use[n.Name]
		n.Free.MemoryMB = min(max(n.Free.MemoryMB+was.MemoryMB-now.MemoryMB, 0), n.Capacity.MemoryMB)
		n.Free.VCores = min(max(n.Free.VCores+was.VCores-now.VCores, 0), n.Capacity.VCores)
		st.Nodes[i] = n
		idx[n.Name] = i
	}
	for _, a := range st.Apps {
		for _, n := range a.Nodes {
			if i, ok := idx[n]; ok {
				st.Nodes[i].Apps = append(st.Nodes[i].Apps, a.ID)
			}
		}
	}
	return st, nil
}

// addUse adds an application's allocation alloc to use, split over its
// nodes in proportion to its containers on each.
func addUse(use map[string]pipeline.Capacity, alloc pipeline.Capacity, counts map[string]int) {
	total := 0
	for _, c := range counts {
		total += c
	}
	if total == 0 {
		return
	}
	for n, c := range counts {
		u := use[n]
		u.MemoryMB += alloc.MemoryMB * int64(c) / int64(total)
		u.VCores += alloc.VCores * int64(c) / int64(total)
		use[n] = u
	}
}

// nodes returns the last reading of the running nodes, reading them again
// first when yarn.nodes_refresh has passed since, or the node counts of m
// differ from the reading's; use is colocd's allocation per node now,
// kept with a new reading.
func (y *Cluster) nodes(ctx context.Context, m yarnclient.ClusterMetrics, use map[string]pipeline.Capacity) (nodeCache, error) {
	now := y.now()
	y.mu.Lock()
	nc := y.node
	y.mu.Unlock()
	if !nc.at.IsZero() && now.Sub(nc.at) < y.cfg.NodesRefresh && nc.key == countsOf(m) {
		return nc, nil
	}
	nodes, err := y.c.Nodes(ctx, "RUNNING")
	if err != nil {
		return nodeCache{}, fmt.Errorf("nodes: %w", err)
	}
	nc = nodeCache{at: now, key: countsOf(m), nodes: make([]cluster.Node, 0, len(nodes)), use: use}
	for _, n := range nodes {
		nc.nodes = append(nc.nodes, cluster.Node{Name: yarnclient.NodeHost(n.ID),
			Capacity: pipeline.Capacity{MemoryMB: n.UsedMemoryMB + n.AvailMemoryMB, VCores: n.UsedVirtualCores + n.AvailableVirtualCores},
			Free:     pipeline.Capacity{MemoryMB: n.AvailMemoryMB, VCores: n.AvailableVirtualCores}})
	}
	y.mu.Lock()
	y.node = nc
	y.mu.Unlock()
	return nc, nil
}

// placements returns where each of colocd's running applications ids
// runs: the cached placement when it is younger than placementTTL; the
// others are asked for in one yarnclient.Placements call (on a Hadoop 2
// RM, one sweep of the NodeManagers for all of them). When that call
// fails, an application keeps its last placement, if it has one.
// Entries of applications no longer running are dropped.
func (y *Cluster) placements(ctx context.Context, ids []string) map[string]placementEntry {
	now := y.now()
	var due []string
	y.mu.Lock()
	for _, id := range ids {
		if e, ok := y.pl[id]; !ok || now.Sub(e.at) >= placementTTL {
			due = append(due, id)
		}
	}
	y.mu.Unlock()
	var got map[string]map[string]int
	if len(due) > 0 {
		var err error
		if got, err = y.c.Placements(ctx, due); err != nil {
			y.log.Warn("placement unavailable", "apps", len(due), "err", err)
		}
	}
	y.mu.Lock()
	defer y.mu.Unlock()
	for id, p := range got {
		y.pl[id] = newPlacement(now, p)
	}
	out := make(map[string]placementEntry, len(ids))
	for _, id := range ids {
		if e, ok := y.pl[id]; ok {
			out[id] = e
		}
	}
	for id := range y.pl {
		if _, ok := out[id]; !ok {
			delete(y.pl, id)
		}
	}
	return out
}

func newPlacement(at time.Time, p map[string]int) placementEntry {
	e := placementEntry{at: at, nodes: make([]string, 0, len(p)), counts: make(map[string]int, len(p))}
	for n, c := range p {
		if c > 0 {
			e.nodes = append(e.nodes, n)
			e.counts[n] = c
		}
	}
	slices.Sort(e.nodes)
	return e
}
