package pipeline

import (
	"fmt"
	"math"

	"github.com/colocd/colocd/queue"
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
	if r.p.fair != nil {
		rec.Note = fmt.Sprintf("first %d of each fairness group: %d of %d pending jobs", s.size, len(r.window), r.pendingTotal)
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
	nodes := r.fitNodes(s.perNode)
	if nodes != nil {
		if r.sc.shapeFit == nil {
			r.sc.shapeFit = new(shapeMemo)
		}
		clear(r.sc.shapeFit[:])
	}
	kept := r.beginFilter()
	for _, c := range r.live {
		if fits, _ := fitsIn(c.res, free, nodes, false, r.sc.shapeFit, false); fits {
			kept = append(kept, c)
			continue
		}
		if r.firstNoFit == nil { // r.live is in FIFO order
			r.firstNoFit = c
		}
		if r.room(rec) {
			_, why := fitsIn(c.res, free, nodes, false, r.sc.shapeFit, true)
			rec.Dropped = append(rec.Dropped, Drop{c.job.ID, why})
		}
	}
	r.endFilter(kept)
	r.fit = append(r.fit[:0], kept...)
	if len(kept) == 0 && len(rec.Dropped)+rec.Omitted > 0 {
		rec.Note = "no job fits the free resources"
	}
}

// fitNodes is the node list the fit check uses: the snapshot's nodes with
// per-node placement, nil without.
func (r *run) fitNodes(perNode bool) []NodeFree {
	if !perNode {
		return nil
	}
	return r.snap.Nodes
}

// FitsCluster reports whether res would fit the cluster when idle: its
// whole capacity and, given nodes, their whole capacity container by
// container (their Free is ignored); why says what is short. A job that
// does not can never run, and is never given a reservation.
func FitsCluster(res queue.Resources, capa Capacity, nodes []NodeFree) (fits bool, why string) {
	return fitsIn(res, capa, nodes, true, nil, true)
}

// fitsIn reports whether res fits within avail and, given nodes, can be
// placed container by container on their free room (idle: on their whole
// capacity); memo may be nil. With explain it says why not.
func fitsIn(res queue.Resources, avail Capacity, nodes []NodeFree, idle bool, memo *shapeMemo, explain bool) (bool, string) {
	mem, vc := res.TotalMemoryMB(), res.TotalVCores()
	short := mem > avail.MemoryMB || vc > avail.VCores
	var n int64
	if !short && nodes != nil {
		n = placeable(memo, nodes, res, idle)
		short = n < int64(res.Containers)
	}
	if !short || !explain {
		// No formatting unless asked: boxing the arguments of a call to
		// Sprintf would allocate for every job that does not fit.
		return !short, ""
	}
	where := "free"
	if idle {
		where = "in the cluster"
	}
	switch {
	case mem > avail.MemoryMB:
		return false, fmt.Sprintf("needs %d MB, %d MB %s", mem, avail.MemoryMB, where)
	case vc > avail.VCores:
		return false, fmt.Sprintf("needs %d vcores, %d %s", vc, avail.VCores, where)
	}
	return false, fmt.Sprintf("%d containers of %d MB/%d vcores: only %d fit on the %d nodes",
		res.Containers, res.MemoryMB, res.VCores, n, len(nodes))
}

// shapeMemo caches placeable per container shape for one decision: a
// direct-mapped table (a collision just recomputes), cheaper than a map for
// the few shapes a queue holds.
type shapeMemo [512]shapeSlot

type shapeSlot struct {
	key uint64 // memory<<11 | vcores, +1 so that zero means empty
	n   int64
}

// placeable is how many containers of res's shape the nodes can hold in
// their free room (idle: in their whole capacity). memo, when not nil,
// caches the answer per shape.
func placeable(memo *shapeMemo, nodes []NodeFree, res queue.Resources, idle bool) int64 {
	// Valid shapes (memory ≤ 2^20, vcores ≤ 2^10) pack into one word.
	memoise := memo != nil && res.MemoryMB >= 0 && res.MemoryMB <= queue.MaxMemoryMB && res.VCores >= 0 && res.VCores <= queue.MaxVCores
	key := (uint64(res.MemoryMB)<<11 | uint64(res.VCores)) + 1
	var slot *shapeSlot
	if memoise {
		slot = &memo[(key*0x9E3779B97F4A7C15)>>55]
		if slot.key == key {
			return slot.n
		}
	}
	var n int64
	if res.MemoryMB > 0 && res.VCores > 0 {
		for _, nd := range nodes {
			room := nd.Free
			if idle {
				room = nd.Capacity
			}
			if room.MemoryMB <= 0 || room.VCores <= 0 {
				continue
			}
			n += min(room.MemoryMB/res.MemoryMB, room.VCores/int64(res.VCores))
			if n > queue.MaxContainers {
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
