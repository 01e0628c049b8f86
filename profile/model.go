package profile

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
)

// Resource indexes a Vector.
type Resource int

// The resources of a profile. Every amount is a fraction of one node's
// capacity: CPU and IOWait of its CPU time, the others of its maximum
// rates (goodness.Limits).
const (
	CPU Resource = iota
	IOWait
	DiskRead
	DiskWrite
	NetIn
	NetOut
	NumResources
)

var resourceNames = [NumResources]string{"cpu", "iowait", "disk_read", "disk_write", "net_in", "net_out"}

// String is the resource's JSON name.
func (r Resource) String() string {
	if r >= 0 && r < NumResources {
		return resourceNames[r]
	}
	return fmt.Sprintf("Resource(%d)", int(r))
}

// Vector is an amount of every resource.
type Vector [NumResources]float64

// Errors.
var (
	// ErrInvalidConfig: Config.Validate found a field out of its domain.
	ErrInvalidConfig = errors.New("profile: invalid config")
	// ErrInvalidSnapshot: Restore refused a snapshot (the model is unchanged).
	ErrInvalidSnapshot = errors.New("profile: invalid snapshot")
)

// FieldError names the bad field of a Config or Snapshot; it unwraps to
// ErrInvalidConfig or ErrInvalidSnapshot.
type FieldError struct {
	Field, Reason string
	Err           error
}

func (e *FieldError) Error() string { return e.Err.Error() + ": " + e.Field + ": " + e.Reason }

// Unwrap returns the sentinel.
func (e *FieldError) Unwrap() error { return e.Err }

// Defaults of Config.
const (
	// DefaultHalfLife is the forgetting half-life in learning ticks: 720
	// ticks are 12 hours at the default 60 s, so a kind's profile follows
	// drifting inputs within a day while one run's noise averages out.
	DefaultHalfLife = 720
	// DefaultPriorStrength is the prior's weight in container² units: one
	// container observed alone for one tick counts 1, a group of three 9.
	// A new kind starts at the population's mean profile with this weight,
	// so its first observation beside known kinds already moves it most of
	// the way.
	DefaultPriorStrength = 1
	// DefaultSaturation is the utilisation of a node's busiest resource
	// from which its observation is censored: where a resource saturates,
	// every container using it slows down and uses less of everything than
	// it would alone, so usage no longer adds up to demand. 60-second means
	// of phases that saturate part of the time sit around 0.9.
	DefaultSaturation = 0.9
)

// Config configures a Model. Zero fields take their defaults.
type Config struct {
	// HalfLife, in learning ticks, of the forgetting of old observations.
	HalfLife float64 `json:"half_life,omitempty"`
	// PriorStrength is the weight of a kind's prior (the population mean),
	// in container² observation units.
	PriorStrength float64 `json:"prior_strength,omitempty"`
	// Saturation is the utilisation of a node's busiest resource in (0, 1)
	// from which its observation is censored: its usage is taken as a lower
	// bound of its containers' demand (see Observe).
	Saturation float64 `json:"saturation,omitempty"`
}

// Validate reports the first field outside its domain.
func (c Config) Validate() error {
	switch {
	case !(c.HalfLife >= 0) || math.IsInf(c.HalfLife, 0):
		return &FieldError{"half_life", fmt.Sprintf("%v is not a finite number >= 0 (0 = default %v ticks)", c.HalfLife, DefaultHalfLife), ErrInvalidConfig}
	case !(c.PriorStrength >= 0) || c.PriorStrength > 1e6:
		return &FieldError{"prior_strength", fmt.Sprintf("%v outside [0, 1e6] (0 = default %v)", c.PriorStrength, DefaultPriorStrength), ErrInvalidConfig}
	case !(c.Saturation >= 0 && c.Saturation < 1):
		return &FieldError{"saturation", fmt.Sprintf("%v outside [0, 1) (0 = default %v)", c.Saturation, DefaultSaturation), ErrInvalidConfig}
	}
	return nil
}

func (c Config) withDefaults() Config {
	if c.HalfLife == 0 {
		c.HalfLife = DefaultHalfLife
	}
	if c.PriorStrength == 0 {
		c.PriorStrength = DefaultPriorStrength
	}
	if c.Saturation == 0 {
		c.Saturation = DefaultSaturation
	}
	return c
}

// KindCount is the containers of one kind on a node, averaged over the
// interval: 3 containers present for half of it count 1.5.
type KindCount struct {
	Kind       string  `json:"kind"`
	Containers float64 `json:"containers"`
}

// Observation is one node over one learning interval: its mean usage (in
// utilisation units, see Usage) and the containers that ran there.
type Observation struct {
	Node       string
	Usage      Vector
	Containers []KindCount
}

// Profile is what the model knows of one kind.
type Profile struct {
	Kind string `json:"kind"`
	// Demand is the estimated use of one container, per resource, as a
	// fraction of a node's capacity.
	Demand Vector `json:"demand"`
	// Std is the standard deviation of each estimate.
	Std Vector `json:"std"`
	// Weight is the kind's effective observations in container² units
	// (a group of three for one tick is 9), after forgetting and after
	// discounting what it shares with the kinds it ran beside; the prior
	// counts Config.PriorStrength.
	Weight float64 `json:"weight"`
	// Ticks counts the learning ticks that observed the kind on some node.
	Ticks int64 `json:"ticks"`
	// Known is false for a kind the model has never observed: Demand is
	// then the prior (the population mean).
	Known bool `json:"known"`
}

// Dominant is the resource with the largest demand (CPU, disk read+write
// or a network direction; I/O wait is an effect, not a demand).
func (p Profile) Dominant() (Resource, float64) {
	r, v := CPU, p.Demand[CPU]
	if d := p.Demand[DiskRead] + p.Demand[DiskWrite]; d > v {
		r, v = DiskRead, d
	}
	for _, q := range []Resource{NetIn, NetOut} {
		if p.Demand[q] > v {
			r, v = q, p.Demand[q]
		}
	}
	return r, v
}

// TickReport says what one Observe did.
type TickReport struct {
	Observations int     // node observations folded in
	Saturated    int     // of which down-weighted for saturation
	Sweeps       int     // Gauss–Seidel sweeps of the solve
	NewKinds     int     // kinds seen for the first time
	Residual     Vector  // root mean square residual of this tick's observations, after the fit
	Explained    float64 // 1 − SSE/SST over this tick's observations, all resources (NaN if SST = 0)
}

// Model is the online per-kind profile regression. Index 0 of its arrays
// is unused (it was the intercept; the node baseline is learned apart, from
// nodes that ran nothing: on a busy cluster every node always runs about
// as many containers, and an intercept fitted with the kinds would absorb
// their mean demand); kind i is at i+1.
type Model struct {
	mu  sync.RWMutex
	cfg Config

	kinds []string
	index map[string]int // kind → index (≥ 1)

	// The normal equations of the weighted least squares, scaled: the true
	// values are stored × scale (forgetting multiplies scale by ρ per tick
	// instead of touching every entry).
	diag  []float64
	adj   []row
	b     []Vector
	scale float64

	theta []Vector // the current solution (true units)

	// cov caches columns of C = (A + λI)⁻¹, the posterior covariance of
	// the demands per unit of residual variance, computed on demand (by
	// conjugate gradients on the kind's connected component) and dropped
	// when the equations change. Readers fill it under cmu.
	cmu    sync.Mutex
	cov    map[int][]float64
	base   Vector  // the node baseline: mean usage of nodes that ran nothing
	idle   float64 // idle observations behind base (forgotten like the rest)
	sigma2 Vector  // residual variance per resource (EWMA over ticks)
	ticks  []int64 // ticks each index was observed (index 0: every tick)
	obs    int64   // node observations folded in
}

// row is the off-diagonal of one index: neighbour indices and values.
type row struct {
	nb  []int32
	val []float64
}

func (r *row) add(j int32, v float64) {
	if i := slices.Index(r.nb, j); i >= 0 {
		r.val[i] += v
		return
	}
	r.nb = append(r.nb, j)
	r.val = append(r.val, v)
}

// Initial residual standard deviation per resource, in utilisation units:
// what a node's mean usage is expected to deviate from the linear sum of
// its containers' profiles before anything is learned.
var initialSigma = Vector{0.1, 0.05, 0.1, 0.1, 0.1, 0.1}

// DefaultPrior is the demand of one container of a kind when the model
// knows no kind at all: 5 % of a node's capacity of every resource (a node
// full of six such containers uses 30 % of each), no I/O wait.
var DefaultPrior = Vector{0.05, 0, 0.05, 0.05, 0.05, 0.05}

// New returns an empty model. It panics if cfg is invalid: validate
// user-supplied configuration first.
func New(cfg Config) *Model {
	if err := cfg.Validate(); err != nil {
		panic(err)
	}
	m := &Model{cfg: cfg.withDefaults()}
	m.reset()
	return m
}

func (m *Model) reset() {
	m.kinds = []string{}
	m.index = map[string]int{}
	m.diag = []float64{0}
	m.adj = []row{{}}
	m.b = []Vector{{}}
	m.scale = 1
	m.theta = []Vector{{}}
	m.cov = map[int][]float64{}
	m.base, m.idle = Vector{}, 0
	m.ticks = []int64{0}
	m.obs = 0
	for r := range NumResources {
		m.sigma2[r] = initialSigma[r] * initialSigma[r]
	}
}

// Config returns the configuration with defaults filled in.
func (m *Model) Config() Config {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.cfg
}

// Kinds returns the kinds the model knows, in the order they were added.
func (m *Model) Kinds() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.kinds)
}

// Add makes kind known (with the prior as its profile). Adding a known kind
// or "" does nothing.
func (m *Model) Add(kind string) {
	if kind == "" {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.addLocked(kind)
}

func (m *Model) addLocked(kind string) int {
	if i, ok := m.index[kind]; ok {
		return i
	}
	i := len(m.diag)
	m.cmu.Lock()
	clear(m.cov) // cached columns are one entry short now
	m.cmu.Unlock()
	m.kinds = append(m.kinds, kind)
	m.index[kind] = i
	m.diag = append(m.diag, 0)
	m.adj = append(m.adj, row{})
	m.b = append(m.b, Vector{})
	m.theta = append(m.theta, m.priorLocked())
	m.ticks = append(m.ticks, 0)
	return i
}

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
	// The level: mean demand per capacity (disk counts reads and writes).
	level := (sum[CPU] + sum[DiskRead] + sum[DiskWrite] + sum[NetIn] + sum[NetOut]) / 4
	neutral := Vector{level, 0, level / 2, level / 2, level, level}
	a := w / (w + priorKinds)
	for r := range sum {
		sum[r] = a*sum[r] + (1-a)*neutral[r]
	}
	return sum
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
// measured. DefaultPrior's level when none was observed.
func (m *Model) spreadLocked() Vector {
	mu := m.priorLocked()
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
	level := (mu[CPU] + mu[DiskRead] + mu[DiskWrite] + mu[NetIn] + mu[NetOut]) / 4
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

// saturated reports whether a node's usage shows a saturated resource: its
// busiest capacity at or above the saturation threshold, or CPU waiting on
// I/O. There every container using the resource slowed down and used less
// of everything than it would alone, so the usage is only a lower bound of
// the demand.
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
// first time are added. A node with no containers still informs the
// intercept. Cost: O(Σ m²) to fold in nodes of m kinds each, plus the
// sweeps of the solve, O(K + P) each.
func (m *Model) Observe(obs []Observation) TickReport {
	m.mu.Lock()
	defer m.mu.Unlock()
	var rep TickReport
	// Forget: scale the stored equations by ρ (lazily, through scale).
	rho := math.Exp2(-1 / m.cfg.HalfLife)
	m.scale *= rho
	if m.scale < 1e-150 {
		m.rescale()
	}
	inv := 1 / m.scale
	seen := map[int]bool{}
	idx := make([]int, 0, 8)
	cnt := make([]float64, 0, 8)
	for _, o := range obs {
		if !validObservation(o) {
			continue
		}
		if idleObservation(o) {
			// The baseline: a forgotten mean of idle nodes' usage.
			m.idle = m.idle*rho + 1
			for r := range NumResources {
				m.base[r] += (o.Usage[r] - m.base[r]) / m.idle
			}
			rep.Observations++
			continue
		}
		// Censored: a saturated node's usage is a lower bound of what its
		// containers ask, so it pulls the fit up where the fit predicts
		// less, and adds nothing but its mix where the fit predicts more.
		y, sat := o.Usage, m.saturated(o.Usage)
		if sat {
			// Where the fit already predicts at least what was seen, the
			// observation agrees with it and adds nothing; folding the
			// prediction in as data would only anchor the fit to itself.
			pred := m.predictLocked(o.Containers)
			pulls := false
			for r := range NumResources {
				if y[r] > pred[r] {
					pulls = true
				}
				y[r] = max(y[r], pred[r])
			}
			if !pulls {
				rep.Observations++
				rep.Saturated++
				continue
			}
		}
		idx, cnt = idx[:0], cnt[:0]
		for _, kc := range o.Containers {
			if kc.Containers <= 0 || kc.Kind == "" {
				continue
			}
			before := len(m.kinds)
			i := m.addLocked(kc.Kind)
			if len(m.kinds) > before {
				rep.NewKinds++
			}
			if j := slices.Index(idx, i); j >= 0 {
				cnt[j] += kc.Containers
				continue
			}
			idx, cnt = append(idx, i), append(cnt, kc.Containers)
		}
		ws := inv
		for a, i := range idx {
			m.diag[i] += ws * cnt[a] * cnt[a]
			for r := range NumResources {
				m.b[i][r] += ws * cnt[a] * (y[r] - m.base[r])
			}
			for c := a + 1; c < len(idx); c++ {
				j := idx[c]
				v := ws * cnt[a] * cnt[c]
				m.adj[i].add(int32(j), v)
				m.adj[j].add(int32(i), v)
			}
			seen[i] = true
		}
		rep.Observations++
		if sat {
			rep.Saturated++
		}
	}
	for i := range seen {
		m.ticks[i]++
	}
	m.ticks[0]++
	m.obs += int64(rep.Observations)
	rep.Sweeps = m.solve()
	m.cmu.Lock()
	clear(m.cov)
	m.cmu.Unlock()
	// Residuals of this tick's observations under the new fit.
	var sse, sst, wsum Vector
	var mean Vector
	var n float64
	for _, o := range obs {
		if !validObservation(o) {
			continue
		}
		for r := range NumResources {
			mean[r] += o.Usage[r]
		}
		n++
	}
	if n == 0 {
		return rep
	}
	for r := range mean {
		mean[r] /= n
	}
	for _, o := range obs {
		if !validObservation(o) {
			continue
		}
		w := 1.0
		if m.saturated(o.Usage) {
			continue // a lower bound: not a residual
		}
		pred := m.base
		for _, kc := range o.Containers {
			if i, ok := m.index[kc.Kind]; ok && kc.Containers > 0 {
				for r := range NumResources {
					pred[r] += kc.Containers * m.theta[i][r]
				}
			}
		}
		for r := range NumResources {
			e := o.Usage[r] - pred[r]
			sse[r] += w * e * e
			d := o.Usage[r] - mean[r]
			sst[r] += w * d * d
			wsum[r] += w
		}
	}
	var tsse, tsst float64
	for r := range NumResources {
		if wsum[r] > 0 {
			v := sse[r] / wsum[r]
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
	return rep
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

// Profile returns what the model knows of kind: for an unknown kind (or
// one never observed) the prior, with Known false.
func (m *Model) Profile(kind string) Profile {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.profileLocked(kind)
}

func (m *Model) profileLocked(kind string) Profile {
	p := Profile{Kind: kind}
	i, ok := m.index[kind]
	if !ok || m.ticks[i] == 0 {
		p.Demand, p.Std = m.priorLocked(), m.spreadLocked()
		p.Weight = m.cfg.PriorStrength
		if ok {
			p.Demand = m.theta[i]
		}
		return p
	}
	p.Known, p.Ticks, p.Demand = true, m.ticks[i], m.theta[i]
	p.Weight = 1 / m.column(i)[i]
	for r := range NumResources {
		p.Std[r] = math.Sqrt(m.sigma2[r] / p.Weight)
	}
	return p
}

// Covariance is the posterior covariance of observed kinds a's and b's
// per-container demands, per unit of residual variance (multiply by a
// resource's Sigma² for that resource): [(A + λI)⁻¹]_ab. Two kinds that
// only ever ran side by side have a large negative covariance: their sum
// is known, their split is not. A kind never observed is independent of
// every other; its own uncertainty is its Profile's Std (the spread of
// kinds), not a multiple of the residual variance, and Covariance is 0.
func (m *Model) Covariance(a, b string) float64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.covLocked(a, b)
}

func (m *Model) covLocked(a, b string) float64 {
	i, iok := m.index[a]
	j, jok := m.index[b]
	if !iok || !jok || m.ticks[i] == 0 || m.ticks[j] == 0 {
		return 0
	}
	return m.column(i)[j]
}

// column returns column i of C = (A + λI)⁻¹, from the cache or by
// preconditioned conjugate gradients on i's connected component of the
// co-location graph (entries outside it are 0). The caller holds mu (read).
func (m *Model) column(i int) []float64 {
	m.cmu.Lock()
	defer m.cmu.Unlock()
	if c, ok := m.cov[i]; ok {
		return c
	}
	// The component: breadth-first over the adjacency.
	comp := []int{i}
	pos := map[int]int{i: 0}
	for q := 0; q < len(comp); q++ {
		for _, j := range m.adj[comp[q]].nb {
			if _, ok := pos[int(j)]; !ok {
				pos[int(j)] = len(comp)
				comp = append(comp, int(j))
			}
		}
	}
	n := len(comp)
	s, lambda := m.scale, m.cfg.PriorStrength
	diag := make([]float64, n)
	for a, k := range comp {
		diag[a] = m.diag[k]*s + lambda
	}
	mul := func(x, out []float64) { // out = M x
		for a, k := range comp {
			v := diag[a] * x[a]
			rw := &m.adj[k]
			for e, j := range rw.nb {
				v += rw.val[e] * s * x[pos[int(j)]]
			}
			out[a] = v
		}
	}
	x := make([]float64, n)
	r := make([]float64, n)
	z := make([]float64, n)
	p := make([]float64, n)
	q := make([]float64, n)
	r[0] = 1 // b = e_i; x = 0
	for a := range n {
		z[a] = r[a] / diag[a]
		p[a] = z[a]
	}
	rz := r[0] * z[0]
	for it := 0; it < 4*n+20 && rz > 1e-24; it++ {
		mul(p, q)
		var pq float64
		for a := range n {
			pq += p[a] * q[a]
		}
		if pq <= 0 {
			break
		}
		alpha := rz / pq
		var rr float64
		for a := range n {
			x[a] += alpha * p[a]
			r[a] -= alpha * q[a]
			rr += r[a] * r[a]
		}
		if rr < 1e-20 {
			break
		}
		var rzNew float64
		for a := range n {
			z[a] = r[a] / diag[a]
			rzNew += r[a] * z[a]
		}
		beta := rzNew / rz
		rz = rzNew
		for a := range n {
			p[a] = z[a] + beta*p[a]
		}
	}
	col := make([]float64, len(m.diag))
	for a, k := range comp {
		col[k] = x[a]
	}
	col[i] = max(col[i], 1/diag[0]) // [M⁻¹]_ii ≥ 1/M_ii; guards the iteration's rounding
	m.cov[i] = col
	return col
}

// Profiles returns every known kind's profile, sorted by kind.
func (m *Model) Profiles() []Profile {
	m.mu.RLock()
	defer m.mu.RUnlock()
	out := make([]Profile, 0, len(m.kinds))
	for _, k := range m.kinds {
		out = append(out, m.profileLocked(k))
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Kind < out[b].Kind })
	return out
}

// Baseline is a node's usage with no container: the forgotten mean of the
// nodes observed running nothing (zero until one is).
func (m *Model) Baseline() Vector {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.base
}

// Sigma is the residual standard deviation per resource.
func (m *Model) Sigma() Vector {
	m.mu.RLock()
	defer m.mu.RUnlock()
	var s Vector
	for r := range NumResources {
		s[r] = math.Sqrt(m.sigma2[r])
	}
	return s
}

// Predict is a node's expected usage with the given containers: the
// baseline plus each kind's demand times its containers, before any
// saturation (see Node for that).
func (m *Model) Predict(containers []KindCount) Vector {
	m.mu.RLock()
	defer m.mu.RUnlock()
	v := m.base
	for _, kc := range containers {
		p := m.profileLocked(kc.Kind)
		for r := range NumResources {
			v[r] += kc.Containers * p.Demand[r]
		}
	}
	return v
}

// Observations counts the node observations folded in.
func (m *Model) Observations() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.obs
}
