package profile

import (
	"math"
	"slices"
)

// saturated reports whether a node's usage shows a saturated resource: its
// busiest capacity at or above the saturation threshold, or CPU waiting on
// I/O. There every container using the resource slowed down and used less
// of everything than it would alone, so the usage only bounds the demand
// (censor).
func (m *Model) saturated(u Vector) bool {
	util := max(u[CPU]+u[IOWait], u[DiskRead]+u[DiskWrite], u[NetIn], u[NetOut])
	return util >= m.cfg.Saturation || u[IOWait] >= ioWaitSaturated
}

// ioWaitSaturated is the I/O wait fraction that marks a saturated disk.
const ioWaitSaturated = 0.03

// predictLocked is the usage the current fit predicts for containers.
func (m *Model) predictLocked(containers []KindCount) Vector {
	v := m.base
	for _, kc := range containers {
		if kc.Containers <= 0 {
			continue
		}
		var d Vector
		if i, ok := m.index[kc.Kind]; ok {
			d = m.theta[i] // a kind added but never observed holds the prior
		} else {
			d = m.priorLocked()
		}
		for r := range NumResources {
			v[r] += kc.Containers * d[r]
		}
	}
	return v
}

// Observe folds one learning tick's node observations into the model and
// refits. Observations with a non-finite or negative usage or count, or
// with no containers and no usage at all, are skipped; kinds seen for the
// first time are added. A node with no containers informs the baseline.
//
// A node whose busiest resource saturated shows less than its containers
// ask. Without stalls its observation is censored (an interval: see
// censor). With them (Observation.Stall) it says how much less: a shared
// resource is shared in proportion to demand, so every container that uses
// the CPU or the disk where it saturated runs at 1 − its pressure, and a
// container runs at the pace of its most stalled resource. Each kind's
// containers then count at that pace (effective), which a kind's current
// profile says it uses, and the observation is fitted as it is — its usage
// is what the effective containers' demands add up to. Only a saturated
// network, which PSI does not cover, is still censored.
//
// A node observed in parts (Observation.Parts: each kind's own CPU and
// disk, from its containers' cgroups) is fitted as one row per kind
// (partRows), each censored as the node is; parts that miss a kind or hold
// a non-finite amount are ignored, and the node is fitted whole.
//
// Cost: O(Σ m²) to fold in nodes of m kinds each, plus the sweeps of the
// solve, O(K + P) each.
func (m *Model) Observe(obs []Observation) TickReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rep TickReport
	rho := m.forget()
	t := tick{inv: 1 / m.scale, seen: map[int]bool{}, idx: make([]int, 0, 8), cnt: make([]float64, 0, 8)}
	eff := make([][]KindCount, len(obs)) // the containers each observation is fitted with
	for i, o := range obs {
		if !validObservation(o) {
			continue
		}
		rep.Observations++
		if idleObservation(o) {
			m.foldIdle(o.Usage, rho)
			continue
		}
		y, cs := m.inRef(o), o.Containers
		censored := m.saturated(o.Usage) // saturation is of the node's own capacity
		if o.Stall.Known {
			if cs = m.effective(o); o.Stall.CPU > 0 || o.Stall.IO > 0 {
				rep.Unstalled++
			}
			censored = m.netSaturated(o.Usage)
		}
		eff[i] = cs
		if rows, ok := m.partRows(o, cs, y); ok {
			if censored {
				rep.Saturated++
			}
			for _, pr := range rows {
				yk := pr.y
				if censored {
					var pulls bool
					if yk, pulls = m.censor(yk, pr.kc[:]); !pulls {
						continue
					}
				}
				rep.NewKinds += m.fold(&t, pr.kc[:], yk)
			}
			continue
		}
		if censored {
			rep.Saturated++
			var pulls bool
			if y, pulls = m.censor(y, cs); !pulls {
				continue
			}
		}
		rep.NewKinds += m.fold(&t, cs, y)
	}
	for i := range t.seen {
		m.ticks[i]++
	}
	m.ticks[0]++
	m.obs += int64(rep.Observations)
	m.changes.any = true
	rep.Sweeps = m.solve()
	m.dropCov()
	m.residuals(obs, eff, &rep)
	return rep
}

// partRow is one kind's row of a node observed in parts: its containers
// and the usage they account for, baseline included (as a node's).
type partRow struct {
	kc [1]KindCount
	y  Vector
}

// partRows splits a node observed in parts (Observation.Parts) into one
// row per kind, fitted each on its own: no kind's usage can then be
// taken for another's, which is what a node's sum leaves open when kinds
// never observed alone run together. A row's measured resources are its
// part (scaled to the reference node like inRef); the others (network, I/O
// wait) are the node's excess over the baseline, y, split among the kinds
// in proportion to what the current fit predicts of each (by containers
// where it predicts nothing): on those a part is an estimate, as the node
// sum is. cs are the containers the node is fitted with (effective ones
// under stalls). false when o has no parts or they miss a kind of cs.
func (m *Model) partRows(o Observation, cs []KindCount, y Vector) ([]partRow, bool) {
	if len(o.Parts) == 0 {
		return nil, false
	}
	rows := make([]partRow, 0, len(cs))
	var predSum, count Vector
	for _, kc := range cs {
		if kc.Containers <= 0 || kc.Kind == "" {
			continue
		}
		j := slices.IndexFunc(o.Parts, func(p Part) bool { return p.Kind == kc.Kind })
		if j < 0 || !validPart(o.Parts[j]) {
			return nil, false
		}
		r := partRow{kc: [1]KindCount{kc}}
		var d Vector
		if i, ok := m.index[kc.Kind]; ok {
			d = m.theta[i]
		} else {
			d = m.priorLocked() // O(K): only for a kind never seen
		}
		for q := range NumResources {
			if Measured(Resource(q)) {
				u := o.Parts[j].Usage[q]
				if s := o.Size[q]; s > 0 {
					u *= s
				}
				r.y[q] = m.base[q] + u
				continue
			}
			r.y[q] = kc.Containers * d[q] // the prediction, until split below
			predSum[q] += r.y[q]
			count[q] += kc.Containers
		}
		rows = append(rows, r)
	}
	for q := range NumResources {
		if Measured(Resource(q)) {
			continue
		}
		excess := max(0, y[q]-m.base[q])
		for k := range rows {
			share := rows[k].kc[0].Containers / count[q]
			if predSum[q] > 0 {
				share = rows[k].y[q] / predSum[q]
			}
			rows[k].y[q] = m.base[q] + share*excess
		}
	}
	return rows, len(rows) > 0
}

// validPart: every measured amount finite, non-negative and sane (as
// validObservation's usage).
func validPart(p Part) bool {
	for q, v := range p.Usage {
		if Measured(Resource(q)) && (math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e3) {
			return false
		}
	}
	return true
}

// inRef is o's usage with its containers' part in reference-node units:
// the baseline (an idle node's, a fraction of whichever node) plus the
// excess over it times the node's Size, so that the containers of a node
// twice the reference's size count twice their share of it. A node of
// zero Size is the reference: its usage as measured.
func (m *Model) inRef(o Observation) Vector {
	y := o.Usage
	if o.Size == (Vector{}) {
		return y
	}
	for r := range NumResources {
		if s := o.Size[r]; s > 0 {
			y[r] = m.base[r] + (y[r]-m.base[r])*s
		}
	}
	return y
}

// minPace is the slowest pace a saturated node leaves a container: it
// bounds the pace Stall implies from below (a container stalled 99 % of
// the time would otherwise count as almost nothing and its usage as an
// enormous demand), and a censored observation's demand from above
// (censor).
const minPace = 0.1

// effective is o's containers, each kind's counted at the pace its
// stalls leave it: 1 − the largest pressure of the resources (CPU, disk)
// its current profile uses (a kind never observed: the prior's, which
// uses every resource).
func (m *Model) effective(o Observation) []KindCount {
	out := make([]KindCount, 0, len(o.Containers))
	for _, kc := range o.Containers {
		var d Vector
		if i, ok := m.index[kc.Kind]; ok {
			d = m.theta[i]
		} else {
			d = m.priorLocked()
		}
		var p float64
		if d[CPU] >= usesFloor {
			p = max(p, o.Stall.CPU)
		}
		if d[DiskRead]+d[DiskWrite] >= usesFloor {
			p = max(p, o.Stall.IO)
		}
		out = append(out, KindCount{Kind: kc.Kind, Containers: kc.Containers * max(1-p, minPace)})
	}
	return out
}

// usesFloor is the demand of a resource (per container, a fraction of a
// node) from which a kind counts as using it: the scorer's speedFloor.
const usesFloor = speedFloor

// netSaturated reports whether a network direction's utilisation is at or
// above the saturation threshold: pressure stalls do not cover it.
func (m *Model) netSaturated(u Vector) bool {
	return max(u[NetIn], u[NetOut]) >= m.cfg.Saturation
}

// forget scales the stored equations by ρ, lazily through scale, and
// returns ρ.
func (m *Model) forget() float64 {
	rho := math.Exp2(-1 / m.cfg.HalfLife)
	m.scale *= rho
	if m.scale < 1e-150 {
		m.rescale()
	}
	return rho
}

// foldIdle folds an idle node's usage into the baseline, a forgotten mean.
func (m *Model) foldIdle(u Vector, rho float64) {
	m.idle = m.idle*rho + 1
	for r := range NumResources {
		m.base[r] += (u[r] - m.base[r]) / m.idle
	}
}

// censor treats a saturated node's usage y as what it is, an interval of
// what its containers ask: at least y (they slowed down), and at most y at
// minPace — no container of a saturated node runs slower than that — so
// what a resource's usage leaves at or near zero no kind there asks for
// much. It returns y raised to the current prediction where the fit
// predicts less, lowered to the interval's top where the fit predicts
// more than that, and whether y pulls the fit anywhere. Where the fit is
// inside the interval everywhere, the observation agrees with it and adds
// nothing; folding the prediction in as data would only anchor the fit to
// itself. Without the top, a kind that saturates a node wherever it runs
// would keep an overestimate of its other resources for ever: none of its
// observations could pull it down. I/O wait has no top: a slowed node
// waits more, not less.
func (m *Model) censor(y Vector, containers []KindCount) (Vector, bool) {
	pred := m.predictLocked(containers)
	pulls := false
	for r := range NumResources {
		if r != IOWait {
			if top := m.base[r] + max(0, y[r]-m.base[r])/minPace; pred[r] > top {
				y[r], pulls = top, true
				continue
			}
		}
		if y[r] > pred[r] {
			pulls = true
		}
		y[r] = max(y[r], pred[r])
	}
	return y, pulls
}

// tick is one Observe's scratch: the weight of an observation in the
// stored (scaled) equations, the kinds observed, and one node's kinds and
// their counts.
type tick struct {
	inv  float64
	seen map[int]bool
	idx  []int
	cnt  []float64
}

// fold adds one node's usage y, with containers, to the normal equations,
// adding the kinds seen for the first time; it returns how many were.
func (m *Model) fold(t *tick, containers []KindCount, y Vector) (added int) {
	t.idx, t.cnt = t.idx[:0], t.cnt[:0]
	for _, kc := range containers {
		if kc.Containers <= 0 || kc.Kind == "" {
			continue
		}
		before := len(m.kinds)
		i := m.addLocked(kc.Kind)
		if len(m.kinds) > before {
			added++
		}
		if j := slices.Index(t.idx, i); j >= 0 {
			t.cnt[j] += kc.Containers
			continue
		}
		t.idx, t.cnt = append(t.idx, i), append(t.cnt, kc.Containers)
	}
	ws := t.inv
	for a, i := range t.idx {
		m.diag[i] += ws * t.cnt[a] * t.cnt[a]
		for r := range NumResources {
			m.b[i][r] += ws * t.cnt[a] * (y[r] - m.base[r])
		}
		for c := a + 1; c < len(t.idx); c++ {
			j := t.idx[c]
			v := ws * t.cnt[a] * t.cnt[c]
			m.adj[i].add(int32(j), v)
			m.adj[j].add(int32(i), v)
		}
		t.seen[i] = true
		m.changes.row(i)
	}
	return added
}

// residuals puts in rep the residuals of this tick's observations (with
// the containers each was fitted with, eff) under the new fit, and folds
// their variance into sigma2. A censored observation is an interval, not
// a residual.
func (m *Model) residuals(obs []Observation, eff [][]KindCount, rep *TickReport) {
	mean, ok := m.meanUsage(obs)
	if !ok {
		return
	}
	var sse, sst Vector
	var n float64
	for i, o := range obs {
		if !validObservation(o) {
			continue
		}
		if o.Stall.Known && m.netSaturated(o.Usage) || !o.Stall.Known && m.saturated(o.Usage) {
			continue
		}
		cs := o.Containers
		if eff[i] != nil {
			cs = eff[i]
		}
		pred := m.base
		for _, kc := range cs {
			if i, ok := m.index[kc.Kind]; ok && kc.Containers > 0 {
				for r := range NumResources {
					pred[r] += kc.Containers * m.theta[i][r]
				}
			}
		}
		y := m.inRef(o)
		for r := range NumResources {
			e := y[r] - pred[r]
			sse[r] += e * e
			d := y[r] - mean[r]
			sst[r] += d * d
		}
		n++
	}
	var tsse, tsst float64
	for r := range NumResources {
		if n > 0 {
			v := sse[r] / n
			rep.Residual[r] = math.Sqrt(v)
			// EWMA over ticks, floored so that a perfectly fitted tick
			// cannot make the model certain forever.
			m.sigma2[r] = max(0.9*m.sigma2[r]+0.1*v, 1e-6)
		}
		tsse += sse[r]
		tsst += sst[r]
	}
	rep.Explained = math.NaN()
	if tsst > 0 {
		rep.Explained = 1 - tsse/tsst
	}
}

// meanUsage is the mean usage (inRef) of the valid observations; false
// if none is.
func (m *Model) meanUsage(obs []Observation) (Vector, bool) {
	var mean Vector
	var n float64
	for _, o := range obs {
		if !validObservation(o) {
			continue
		}
		y := m.inRef(o)
		for r := range NumResources {
			mean[r] += y[r]
		}
		n++
	}
	if n == 0 {
		return mean, false
	}
	for r := range mean {
		mean[r] /= n
	}
	return mean, true
}

// idleObservation: a node that ran no container for the whole interval.
func idleObservation(o Observation) bool {
	for _, kc := range o.Containers {
		if kc.Containers > 0 {
			return false
		}
	}
	return true
}

func validObservation(o Observation) bool {
	some := false
	for _, v := range o.Usage {
		if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v > 1e3 {
			return false
		}
	}
	for _, v := range o.Size {
		if math.IsNaN(v) || v < 0 || v > 1e6 {
			return false
		}
	}
	for _, kc := range o.Containers {
		if math.IsNaN(kc.Containers) || math.IsInf(kc.Containers, 0) || kc.Containers < 0 || kc.Containers > 1e6 {
			return false
		}
		some = some || kc.Containers > 0
	}
	return some || o.Usage != Vector{}
}

// rescale folds scale into the stored equations.
func (m *Model) rescale() {
	s := m.scale
	for i := range m.diag {
		m.diag[i] *= s
		for r := range NumResources {
			m.b[i][r] *= s
		}
		for j := range m.adj[i].val {
			m.adj[i].val[j] *= s
		}
	}
	m.scale = 1
	m.changes.everything()
}

// Solver parameters: sweeps per tick and the convergence tolerance on the
// largest change of a demand (utilisation units).
const (
	maxSweeps = 200
	tolerance = 1e-7
)

// solve runs projected Gauss–Seidel on the regularised normal equations,
// warm-started from the current solution:
//
//	θ_i ← max(0, (b_i + λ μ − Σ_j A_ij θ_j) / (A_ii + λ))
//
// with λ the prior weight and μ the prior mean (the population mean). The
// fixed point is the non-negative minimiser of the weighted squared error
// plus the prior.
func (m *Model) solve() int {
	s := m.scale
	lambda := m.cfg.PriorStrength
	prior := m.priorLocked()
	sweeps := 0
	for sweeps < maxSweeps {
		sweeps++
		var change float64
		for i := 1; i < len(m.diag); i++ {
			l, mu := lambda, prior
			den := m.diag[i]*s + l
			var num Vector
			for r := range NumResources {
				num[r] = m.b[i][r]*s + l*mu[r]
			}
			rw := &m.adj[i]
			for k, j := range rw.nb {
				a := rw.val[k] * s
				for r := range NumResources {
					num[r] -= a * m.theta[j][r]
				}
			}
			for r := range NumResources {
				v := max(0, num[r]/den)
				change = max(change, math.Abs(v-m.theta[i][r]))
				m.theta[i][r] = v
			}
		}
		if change < tolerance {
			break
		}
	}
	return sweeps
}
