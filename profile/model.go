package profile

import (
	"math"
	"slices"
	"sort"
	"sync"
)

// KindCount is the containers of one kind on a node, averaged over the
// interval: 3 containers present for half of it count 1.5.
type KindCount struct {
	Kind       string  `json:"kind"`
	Containers float64 `json:"containers"`
}

// Observation is one node over one learning interval: its mean usage (in
// utilisation units of that node, see Usage), the containers that ran
// there, when its metrics carry them its pressure stalls, and its size.
type Observation struct {
	Node       string
	Usage      Vector
	Containers []KindCount
	Stall      Stall
	// Size is the node's capacity of each resource as a multiple of the
	// reference node's (the node profile amounts are fractions of); zero
	// means 1 for every resource: the node is the reference. A resource's
	// zero entry also means 1.
	Size Vector
	// Parts, when set, is each kind's own use of the node, measured apart
	// from the others' (a cgroup per YARN container): what its containers
	// used of the resources in Measured, in the units of Usage (excess over
	// the baseline, which a container's cgroup does not count). They must
	// cover every kind of Containers with containers; otherwise they are
	// ignored and the node is fitted whole. See Observe.
	Parts []Part
}

// Part is one kind's containers' own use of a node over an interval.
type Part struct {
	Kind  string
	Usage Vector // only the resources in Measured are read
}

// Measured reports whether a Part carries resource r: a container's cgroup
// counts its CPU time and its block I/O, not its network traffic nor the
// CPU's idle time waiting on I/O.
func Measured(r Resource) bool { return r == CPU || r == DiskRead || r == DiskWrite }

// Stall is a node's pressure stall information over an interval (Linux
// PSI "some", goodness.Usage's CPUPressure and IOPressure): the share of
// time some task waited for a CPU, and for I/O. Known is false when its
// metrics carry none; zeros then mean "not read", not "no stall".
type Stall struct {
	Known   bool
	CPU, IO float64
}

// Profile is what the model knows of one kind.
type Profile struct {
	Kind string `json:"kind"`
	// Demand is the estimated use of one container, per resource, as a
	// fraction of the reference node's capacity (on a node of Size s, a
	// fraction d/s of that node's).
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
	Saturated    int     // of which censored for saturation (see Observe)
	Sweeps       int     // Gauss–Seidel sweeps of the solve
	NewKinds     int     // kinds seen for the first time
	Unstalled    int     // folded at the demand their stalls imply, not censored (see Observe)
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
	cg     cgScratch // column's working memory, under cmu
	base   Vector    // the node baseline: mean usage of nodes that ran nothing
	idle   float64   // idle observations behind base (forgotten like the rest)
	sigma2 Vector    // residual variance per resource (EWMA over ticks)
	ticks  []int64   // ticks each index was observed (index 0: every tick)
	obs    int64     // node observations folded in

	changes changes // what changed since the last Changes (delta.go)
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
	m.changes.everything()
}

// addLocked makes kind known, with the prior as its profile, unless it is;
// it returns kind's index.
func (m *Model) addLocked(kind string) int {
	if i, ok := m.index[kind]; ok {
		return i
	}
	i := len(m.diag)
	m.dropCov() // cached columns are one entry short now
	m.kinds = append(m.kinds, kind)
	m.index[kind] = i
	m.diag = append(m.diag, 0)
	m.adj = append(m.adj, row{})
	m.b = append(m.b, Vector{})
	m.theta = append(m.theta, m.priorLocked())
	m.ticks = append(m.ticks, 0)
	m.changes.any = true
	return i
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
		mu := m.priorLocked()
		p.Demand, p.Std = mu, m.spreadLocked(mu)
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

// demandProfile is Profile without a known kind's Weight and Std, which
// need a column of the covariance (column): what a goodness prediction
// reads.
func (m *Model) demandProfile(kind string) Profile {
	m.mu.RLock()
	defer m.mu.RUnlock()
	if i, ok := m.index[kind]; ok && m.ticks[i] > 0 {
		return Profile{Kind: kind, Known: true, Ticks: m.ticks[i], Demand: m.theta[i]}
	}
	return m.profileLocked(kind)
}

// Kinds returns the kinds the model knows, in the order they were added.
func (m *Model) Kinds() []string {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return slices.Clone(m.kinds)
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

// Observations counts the node observations folded in.
func (m *Model) Observations() int64 {
	m.mu.RLock()
	defer m.mu.RUnlock()
	return m.obs
}
