package queue

import (
	"fmt"
	"math"
	"strings"
)

// windowStage keeps the first size pending jobs (paper §4.1: "the scheduler
// chooses the most suitable of the n first jobs of the queue"). Jobs beyond
// the window are not dropped, just not considered: they keep their place.
type windowStage struct{ size int }

func (windowStage) name() string { return "window" }

func (s windowStage) run(r *run, rec *StageRecord) {
	// load already cut the snapshot to the window; record it.
	rec.In = r.pendingTotal
	if r.pendingTotal <= s.size {
		rec.Note = fmt.Sprintf("all %d pending jobs (window %d)", r.pendingTotal, s.size)
		return
	}
	rec.Note = fmt.Sprintf("first %d of %d pending jobs", s.size, r.pendingTotal)
}

// fitStage drops jobs whose whole reservation does not fit the cluster's
// free memory and vcores (paper §5.2: "we filter out the jobs that do not
// fit the available cluster resources"). With perNode and a node list it
// also places the containers greedily on the nodes' free capacity: a node
// with free (m, v) holds min(m/mem, v/vcores) containers of the job, and the
// job fits when the nodes together hold all of them.
type fitStage struct{ perNode bool }

func (fitStage) name() string { return "fit" }

func (s fitStage) run(r *run, rec *StageRecord) {
	free := r.snap.Free
	nodes := r.snap.Nodes
	if !s.perNode {
		nodes = nil
	}
	if nodes != nil {
		if r.sc.shapeFit == nil {
			r.sc.shapeFit = new(shapeMemo)
		}
		clear(r.sc.shapeFit[:])
	}
	kept := r.beginFilter()
	for _, c := range r.live {
		if fits, _ := fitsIn(c.res, free, nodes, r.sc.shapeFit, false); fits {
			kept = append(kept, c)
			continue
		}
		c.noFit = true
		if r.room(rec) {
			_, why := fitsIn(c.res, free, nodes, r.sc.shapeFit, true)
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, why})
		}
	}
	r.endFilter(kept)
	r.fit = append(r.fit[:0], kept...)
	if len(kept) == 0 && len(rec.Dropped)+rec.Omitted > 0 {
		rec.Note = "no job fits the free resources"
	}
}

// FitsCluster reports whether res would fit the cluster when idle: its
// whole capacity and, given nodes, their whole capacity container by
// container (their Free is ignored); why says what is short. A job that
// does not can never run, and is never given a reservation.
func FitsCluster(res Resources, capa Capacity, nodes []NodeFree) (fits bool, why string) {
	var idle []NodeFree
	if nodes != nil {
		idle = make([]NodeFree, len(nodes))
		for i, n := range nodes {
			idle[i] = NodeFree{Name: n.Name, Free: n.Capacity, Capacity: n.Capacity}
		}
	}
	ok, why := fitsIn(res, capa, idle, nil, true)
	if !ok {
		why = strings.NewReplacer(" free", " in the cluster").Replace(why)
	}
	return ok, why
}

// fitsIn reports whether res fits the free capacity and, given nodes, can
// be placed container by container on their free room (memo may be nil);
// with explain, why not.
func fitsIn(res Resources, free Capacity, nodes []NodeFree, memo *shapeMemo, explain bool) (bool, string) {
	mem, vc := res.TotalMemoryMB(), res.TotalVCores()
	switch {
	case mem > free.MemoryMB:
		return false, explained(explain, "needs %d MB, %d MB free", mem, free.MemoryMB)
	case vc > free.VCores:
		return false, explained(explain, "needs %d vcores, %d free", vc, free.VCores)
	}
	if nodes == nil {
		return true, ""
	}
	if memo == nil {
		memo = new(shapeMemo)
	}
	if n := placeable(memo, nodes, res); n < int64(res.Containers) {
		return false, explained(explain, "%d containers of %d MB/%d vcores: only %d fit on the %d nodes",
			res.Containers, res.MemoryMB, res.VCores, n, len(nodes))
	}
	return true, ""
}

func explained(explain bool, format string, args ...any) string {
	if !explain {
		return ""
	}
	return fmt.Sprintf(format, args...)
}

// shapeMemo caches placeable per container shape for one decision: a
// direct-mapped table (a collision just recomputes), cheaper than a map for
// the few shapes a queue holds.
type shapeMemo [512]struct {
	key uint64 // memory<<11 | vcores, +1 so that zero means empty
	n   int64
}

// placeable is how many containers of res's shape the nodes can hold.
func placeable(memo *shapeMemo, nodes []NodeFree, res Resources) int64 {
	// Valid shapes (memory ≤ 2^20, vcores ≤ 2^10) pack into one word.
	memoise := res.MemoryMB >= 0 && res.MemoryMB <= MaxMemoryMB && res.VCores >= 0 && res.VCores <= MaxVCores
	key := (uint64(res.MemoryMB)<<11 | uint64(res.VCores)) + 1
	slot := &memo[(key*0x9E3779B97F4A7C15)>>55]
	if memoise && slot.key == key {
		return slot.n
	}
	var n int64
	if res.MemoryMB > 0 && res.VCores > 0 {
		for _, nd := range nodes {
			if nd.Free.MemoryMB <= 0 || nd.Free.VCores <= 0 {
				continue
			}
			n += min(nd.Free.MemoryMB/res.MemoryMB, nd.Free.VCores/int64(res.VCores))
			if n > MaxContainers {
				break // enough for any valid job
			}
		}
	} else {
		n = math.MaxInt64 // invalid shape: nothing to place
	}
	if memoise {
		slot.key, slot.n = key, n
	}
	return n
}
