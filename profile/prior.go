package profile

import (
	"math"
)

// DefaultPrior is the demand of one container of a kind when the model
// knows no kind at all: 5 % of a node's capacity of every resource (a node
// full of six such containers uses 30 % of each), no I/O wait.
var DefaultPrior = Vector{0.05, 0, 0.05, 0.05, 0.05, 0.05}

// priorLocked is the prior mean of a kind: the observed kinds' mean profile
// (weighted by how well each is known), shrunk toward the same mean level
// in every capacity (an average kind with no dominant resource) with the
// weight of priorKinds kinds, so that a first profiled kind does not make
// every unknown kind look like itself. DefaultPrior when none was observed.
func (m *Model) priorLocked() Vector {
	var sum Vector
	var w float64
	for i := 1; i < len(m.theta); i++ {
		if m.ticks[i] == 0 {
			continue
		}
		wi := m.confidence(i)
		for r := range NumResources {
			sum[r] += wi * m.theta[i][r]
		}
		w += wi
	}
	if w == 0 {
		return DefaultPrior
	}
	for r := range sum {
		sum[r] /= w
	}
	level := neutralLevel(sum)
	neutral := Vector{level, 0, level / 2, level / 2, level, level}
	a := w / (w + priorKinds)
	for r := range sum {
		sum[r] = a*sum[r] + (1-a)*neutral[r]
	}
	return sum
}

// neutralLevel is v's mean demand per capacity (disk counts reads and
// writes together as one capacity).
func neutralLevel(v Vector) float64 {
	return (v[CPU] + v[DiskRead] + v[DiskWrite] + v[NetIn] + v[NetOut]) / 4
}

// priorKinds is the weight, in kinds, of the neutral profile in the prior.
const priorKinds = 2

// confidence is how well kind i is known, in (0, 1): its information in
// the normal equations against the prior's, the weight of its profile in
// the population's mean and spread.
func (m *Model) confidence(i int) float64 {
	wi := m.diag[i] * m.scale
	return wi / (wi + m.cfg.PriorStrength)
}

// spreadLocked is how far an unknown kind may be from the prior mean: the
// spread of the observed kinds' profiles around their mean (weighted as in
// priorLocked), never below the neutral level, so that a kind never seen
// is uncertain by as much as kinds differ, however well the known ones are
// measured. mu is priorLocked's mean.
func (m *Model) spreadLocked(mu Vector) Vector {
	var v Vector
	var w float64
	for i := 1; i < len(m.theta); i++ {
		if m.ticks[i] == 0 {
			continue
		}
		wi := m.confidence(i)
		for r := range NumResources {
			d := m.theta[i][r] - mu[r]
			v[r] += wi * d * d
		}
		w += wi
	}
	level := neutralLevel(mu)
	var out Vector
	for r := range NumResources {
		if w > 0 {
			v[r] /= w
		}
		floor := level
		if r == DiskRead || r == DiskWrite {
			floor = level / 2
		}
		if r == IOWait {
			floor = level / 4
		}
		out[r] = math.Sqrt(v[r] + floor*floor)
	}
	return out
}
