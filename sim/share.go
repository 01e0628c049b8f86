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

// share recomputes the rates of nd's working groups and nd's usage rates.
func (s *Sim) share(nd *node) {
	nd.dirty = false
	node := s.cluster.Node
	caps := [nres]float64{node.Cores, node.DiskMBps, node.NetMBps, node.NetMBps}
	var used [nres]float64
	var active [16]*group
	act := active[:0]
	for _, g := range nd.groups {
		if g.remaining > 0 {
			g.rate, g.bound = 0, -1
			act = append(act, g)
		}
	}
	for len(act) > 0 {
		var demand [nres]float64
		for _, g := range act {
			d := &g.app.kind.phase(g.app.phase).d
			for r := range nres {
				demand[r] += float64(g.count) * d[r]
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
			for _, g := range act {
				g.rate = 1
			}
			break
		}
		// Guard against rounding: a rate must stay positive for time to move.
		level = max(level, 1e-9)
		keep := act[:0]
		for _, g := range act {
			d := &g.app.kind.phase(g.app.phase).d
			if d[bott] == 0 {
				keep = append(keep, g)
				continue
			}
			g.rate, g.bound = level, bott
			for r := range nres {
				used[r] += level * float64(g.count) * d[r]
			}
		}
		act = keep
	}
	var u usage
	var starved float64
	for _, g := range nd.groups {
		if g.remaining <= 0 {
			continue
		}
		p := g.app.kind.phase(g.app.phase)
		n := float64(g.count) * g.rate
		u.cpu += n * p.d[resCPU]
		u.read += n * p.read
		u.write += n * p.write
		u.in += n * p.d[resNetIn]
		u.out += n * p.d[resNetOut]
		if g.bound == resDisk {
			starved += float64(g.count) * p.d[resCPU] * (1 - g.rate)
		}
	}
	u.cpu = min(u.cpu, node.Cores)
	u.iowait = max(0, min(node.Cores-u.cpu, starved))
	nd.rate = u
}
