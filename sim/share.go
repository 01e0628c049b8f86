package sim

// The sharing model.
//
// Each working group g (the containers of one app on one node, in the same
// phase) demands, at full speed, d_g[r] of every resource r of its node:
// CPU cores, disk MB/s (reads and writes share the bandwidth), network
// in and out MB/s (a full-duplex NIC). A group progressing at rate x_g
// (solo seconds of work per second) consumes x_g·d_g[r]. Rates come from
// progressive filling, i.e. demand-weighted max-min fairness: all rates
// rise together from 0; when a resource saturates, every group using it
// stops at the current rate (so a saturated resource is shared in
// proportion to demand, and each group progresses at the rate of its most
// starved resource); the others keep rising, capped at 1 (solo speed).
// Capacity a group leaves unused because another resource limits it goes
// to the others, as a real CPU scheduler or disk queue would give it.
//
// I/O wait. Linux counts a CPU as iowait when it is idle while a task
// waits on block I/O. Here, a group limited by the disk would use
// d_g[cpu]·(1 − x_g) more cores at full speed; that CPU time is waiting
// on the disk. The node's iowait is that total, capped by the idle cores:
//
//	busy   = Σ_g x_g·d_g[cpu]
//	iowait = min(cores − busy, Σ_{g limited by disk} d_g[cpu]·(1 − x_g))
//
// so busy + iowait ≤ cores. Waiting on the network is idle time, not
// iowait, as in Linux.
//
// I/O pressure (Options.Pressure). Linux's PSI io "some" is the share of
// time in which at least one task is stalled on I/O, whether or not the
// CPUs are busy. A group limited by the disk at rate x_g is stalled
// (1 − x_g) of the time, so the node's pressure is the largest stall:
//
//	iopressure = max_{g limited by disk} (1 − x_g)
//
// It differs from iowait where other groups keep the cores busy: iowait
// is then capped at the idle cores (down to 0), pressure is not. CPU
// pressure (PSI cpu "some") is the same for the groups the CPU limits:
//
//	cpupressure = max_{g limited by cpu} (1 − x_g)
//
// so on a saturated node it says how much of their CPU demand its groups
// did not get, which the CPU usage (at most 1) cannot. Cache interference
// (below) is no stall: a slowed group still runs on its CPU.
//
// Interference (NodeSpec.Interference), both off at 0. A node holds at most
// one group per app, so counting groups counts jobs.
//
//   - Disk streams: when n ≥ 2 working groups have a disk demand, the disk
//     capacity the filling shares is DiskMBps / (1 + DiskStreams·(n−1)).
//   - CPU cache: with c ≥ 2 working CPU-bound groups (d_g[cpu] ≥ 0.5), each
//     of them progresses at y_g = x_g / (1 + CPUCache·(c−1)). x_g, the
//     filling's share, still sets its CPU use (busy above) and its iowait;
//     y_g sets its progress and its disk and network use, y_g·d_g[r]. The
//     disk and network the filling gave it beyond that stays idle.
//
// Only y_g outlives share: it becomes the group's rate. A group whose rate
// changes is settled first (its remaining work brought up to now at the old
// rate) and its completion rescheduled; a node whose usage rates change is
// settled first too. A rate that comes out bit for bit the same changes
// nothing, so untouched groups keep their completion times exactly.

// cpuBoundCores is the per-container CPU demand from which a phase is
// CPU-bound for Interference.CPUCache.
const cpuBoundCores = 0.5

// slot is a working group during share.
type slot struct {
	g     int32
	count float64
	p     *phaseRT
	fill  float64 // the filling's share x_g
	bound int     // resource that limits it, -1 when it runs at full speed
}

// share recomputes the rates of node i's working groups and its usage rates.
func (s *Sim) share(i int32) {
	nd := &s.nodes[i]
	nd.dirty = false
	node := s.spec(nd)
	inf := node.Interference
	var buf [16]slot
	act := buf[:0]
	var diskGroups, cpuGroups int // working groups using the disk, CPU-bound ones
	for _, gi := range nd.groups {
		g := &s.groups[gi]
		if g.remaining > 0 {
			a := &s.apps[g.app]
			p := a.kind.phase(a.phase)
			act = append(act, slot{g: gi, count: float64(g.count), p: p, bound: -1})
			if p.d[resDisk] > 0 {
				diskGroups++
			}
			if p.d[resCPU] >= cpuBoundCores {
				cpuGroups++
			}
		}
	}
	caps := [nres]float64{node.Cores, node.DiskMBps, node.NetMBps, node.NetMBps}
	if diskGroups >= 2 && inf.DiskStreams > 0 {
		caps[resDisk] /= 1 + inf.DiskStreams*float64(diskGroups-1)
	}
	fill(act, caps)
	cache := 1.0 // the CPU cache penalty of CPU-bound groups
	if cpuGroups >= 2 && inf.CPUCache > 0 {
		cache += inf.CPUCache * float64(cpuGroups-1)
	}
	var u usage
	var starved float64
	var rates []appUse // per app, for ContainerMetrics
	if s.cm != nil {
		rates = s.cm.rates[:0]
	}
	for _, sl := range act {
		p := sl.p
		rate := sl.fill
		if cache > 1 && p.d[resCPU] >= cpuBoundCores {
			rate = sl.fill / cache
		}
		busy, prog := sl.count*sl.fill, sl.count*rate
		u.cpu += busy * p.d[resCPU]
		u.read += prog * p.read
		u.write += prog * p.write
		u.in += prog * p.d[resNetIn]
		u.out += prog * p.d[resNetOut]
		if s.cm != nil {
			rates = append(rates, appUse{app: s.groups[sl.g].app, cpu: busy * p.d[resCPU], read: prog * p.read, write: prog * p.write})
		}
		switch sl.bound {
		case resDisk:
			starved += sl.count * p.d[resCPU] * (1 - sl.fill)
			u.iopress = max(u.iopress, 1-sl.fill)
		case resCPU:
			u.cpupress = max(u.cpupress, 1-sl.fill)
		}
		s.setRate(sl.g, rate)
	}
	u.cpu = min(u.cpu, node.Cores)
	u.iowait = max(0, min(node.Cores-u.cpu, starved))
	if u != nd.rate {
		s.settle(nd)
		nd.rate = u
	}
	if s.cm != nil {
		s.shareApps(i, rates)
		s.cm.rates = rates[:0]
	}
}

// fill is progressive filling: it sets each slot's fill and bound.
func fill(slots []slot, caps [nres]float64) {
	var buf [16]int
	act := buf[:0] // indices of the slots still rising
	for i := range slots {
		act = append(act, i)
	}
	var used [nres]float64
	for len(act) > 0 {
		var demand [nres]float64
		for _, i := range act {
			for r := range nres {
				demand[r] += slots[i].count * slots[i].p.d[r]
			}
		}
		level, bott := 1.0, -1
		for r := range nres {
			if demand[r] > 0 {
				if l := (caps[r] - used[r]) / demand[r]; l < level {
					level, bott = l, r
				}
			}
		}
		if bott < 0 {
			for _, i := range act {
				slots[i].fill = 1
			}
			return
		}
		// Guard against rounding: a rate must stay positive for time to move.
		level = max(level, 1e-9)
		keep := act[:0]
		for _, i := range act {
			sl := &slots[i]
			if sl.p.d[bott] == 0 {
				keep = append(keep, i)
				continue
			}
			sl.fill, sl.bound = level, bott
			for r := range nres {
				used[r] += level * sl.count * sl.p.d[r]
			}
		}
		act = keep
	}
}

// setRate gives working group gi a new rate from now: its remaining work
// is settled at the old one and its completion rescheduled. The same rate
// changes nothing.
func (s *Sim) setRate(gi int32, rate float64) {
	g := &s.groups[gi]
	if rate == g.rate {
		return
	}
	if g.rate > 0 {
		g.remaining = max(g.remaining-g.rate*(s.now-g.at), 1e-12)
	}
	g.at, g.rate = s.now, rate
	s.schedule(gi)
}
