package profile

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/colocd/colocd/goodness"
)

// Profiles is what the scorer reads of a model: each kind's profile, the
// node baseline and the uncertainty. *Model satisfies it, and so does
// Fixed.
type Profiles interface {
	Profile(kind string) Profile
	Baseline() Vector
	// Covariance(a, b) × Sigma()[r]² is the covariance of known kinds a's
	// and b's per-container demand of resource r; a kind not Known is
	// independent, with its Profile's Std.
	Covariance(a, b string) float64
	Sigma() Vector
}

var _ Profiles = (*Model)(nil)

// Fixed is a Profiles of known demands per container (offline profiling;
// the benchmark's references give it the simulator's true mean profiles).
// A kind it does not list gets the mean of the listed ones. Nothing is
// uncertain.
type Fixed map[string]Vector

// Profile returns kind's demand.
func (f Fixed) Profile(kind string) Profile {
	if d, ok := f[kind]; ok {
		return Profile{Kind: kind, Demand: d, Known: true, Weight: math.Inf(1)}
	}
	var mean Vector
	for _, d := range f {
		for r := range NumResources {
			mean[r] += d[r] / float64(len(f))
		}
	}
	return Profile{Kind: kind, Demand: mean}
}

// Baseline is zero: the listed demands are all a node uses.
func (Fixed) Baseline() Vector { return Vector{} }

// Covariance is zero: the demands are known.
func (Fixed) Covariance(a, b string) float64 { return 0 }

// Sigma is zero.
func (Fixed) Sigma() Vector { return Vector{} }

// Correction adjusts the model's value of starting kind a beside a running
// kind: what the pair preferences learned from the profiles' residuals add
// to what the profiles predict. Observed returns the pair's preference,
// centred on the pairs observed in its row, and how many observations it
// rests on (0 for a pair never observed). bandit.Learner satisfies it.
type Correction interface {
	Observed(a, given string) (float64, int64)
}

// CorrectionPrior is the observations a pair's correction is shrunk by: it
// counts n/(n + CorrectionPrior) of its preference after n observations.
const CorrectionPrior = 5

// Objective is what the scorer maximises.
type Objective string

// Objectives.
const (
	// ObjectiveRate is the predicted progress rate: the containers of the
	// affected nodes, each at the speed its most overcommitted resource
	// leaves it, summed (solo seconds of work per second), with the
	// candidate minus without.
	ObjectiveRate Objective = "rate"
	// ObjectiveGoodness is the paper's goodness (Eq. 1) of the affected
	// nodes' predicted usage, with the candidate minus without.
	ObjectiveGoodness Objective = "goodness"
)

// ParseObjective accepts "rate" and "goodness".
func ParseObjective(s string) (Objective, error) {
	switch o := Objective(strings.ToLower(strings.TrimSpace(s))); o {
	case ObjectiveRate, ObjectiveGoodness:
		return o, nil
	}
	return "", fmt.Errorf("profile: unknown objective %q (want rate or goodness)", s)
}

// Scorer rates candidate jobs by what the profiles predict their
// containers do to the nodes they land on.
type Scorer struct {
	Profiles Profiles
	// Objective is what is maximised (default ObjectiveRate).
	Objective Objective
	// Risk is z: each resource's load is taken z standard deviations above
	// its mean, where the deviation comes from the profiles' uncertainty
	// (containers of one kind move together; different kinds independently).
	// 0 scores the mean; positive is cautious with unknown kinds.
	Risk float64
	// Group is the placement group (default DefaultGroup).
	Group int
	// Explore is the optimism, in standard deviations, with which a
	// candidate whose usage its landing would reveal is scored (its demand
	// lowered by Explore·σ); 0 scores the expectation.
	Explore float64
	// Correction, when set, adds CorrectionWeight × the pair preference of
	// the candidate beside each kind it lands with (Correction.Observed,
	// through tanh — preferences grow without bound as a bandit learns, the
	// correction must not — and shrunk by CorrectionPrior), weighted by
	// where its containers land.
	Correction       Correction
	CorrectionWeight float64
	// SizeWeight, in [0, 1], is how much a candidate's size counts in the
	// rate objective: Model is its predicted change per container times
	// Containers^SizeWeight. 0 (the default) scores per container, whatever
	// the job's size; 1 scores the change of the nodes' whole rate, so a
	// large job that runs well goes before a small one, as Tetris's score,
	// summed over a job's containers, does. The goodness objective ignores
	// it.
	SizeWeight float64
}

// Score is one candidate's rating and its explanation.
type Score struct {
	// Value is what the choice maximises: Model + Correction.
	Value float64 `json:"value"`
	// Model is the objective's predicted change per container of the
	// candidate (the rate: its containers' mean speed net of the slowdown
	// it causes; goodness: the affected nodes' change).
	Model      float64 `json:"model"`
	Correction float64 `json:"correction,omitempty"`
	// Size is the factor the candidate's size multiplied Model by
	// (Containers^SizeWeight); 0 when its size did not count.
	Size float64 `json:"size,omitempty"`
	// Alone is the expected share of its containers on empty nodes.
	Alone float64 `json:"alone"`
	// Beside is the expected share of its containers beside each running
	// kind (a node with two kinds counts for both).
	Beside []KindWeight `json:"beside,omitempty"`
	// Fits is false when the placement rule finds no room for it.
	Fits bool `json:"fits"`
	// Known is false when the candidate's kind was never observed.
	Known bool `json:"known"`
	// Confounds is true when admitting a kind never observed would run it
	// beside another kind never observed: neither's usage could be told
	// from the other's (Place's landings; the same kind beside itself does
	// not count). Beside observed kinds its usage shows as what they leave.
	Confounds bool `json:"confounds,omitempty"`
}

// KindWeight is a kind and a weight.
type KindWeight struct {
	Kind   string  `json:"kind"`
	Weight float64 `json:"weight"`
}

// View is a cluster prepared for scoring several candidates in one
// decision: profiles are looked up once per kind.
type View struct {
	sc    *Scorer
	nodes []Node
	prof  map[string]Profile
	cov   map[[2]string]float64
	sig2  [ncap]float64 // residual variance per capacity
	sg    Vector        // residual standard deviation per resource
	base  Vector
	land  []Landing
	obj   Objective
	group int
	// Per decision, not per candidate: each node's objective before any
	// candidate lands (NaN until computed) and each pair's correction term.
	before []float64
	pair   map[[2]string]float64
	// demandOnly: nothing read needs a known kind's Weight or Std (no
	// optimism), so profiles come from demandProfile where the Profiles
	// have it.
	demandOnly bool
	// fixed: the Profiles are Fixed, every covariance 0: no load variance
	// to compute.
	fixed bool
}

// demandProfiler is a Profiles that gives a kind's profile without a known
// kind's Weight and Std (the Model's need a column of its covariance).
type demandProfiler interface{ demandProfile(kind string) Profile }

// NewView prepares nodes (not copied: do not modify them while the view is
// in use).
func (sc *Scorer) NewView(nodes []Node) *View {
	v := &View{sc: sc, nodes: nodes, prof: map[string]Profile{}, obj: sc.Objective, group: sc.Group}
	_, v.fixed = sc.Profiles.(Fixed)
	if v.obj == "" {
		v.obj = ObjectiveRate
	}
	if v.group < 1 {
		v.group = DefaultGroup
	}
	if sc.Profiles != nil {
		v.base = sc.Profiles.Baseline()
		sg := sc.Profiles.Sigma()
		v.sg = sg
		v.sig2 = [ncap]float64{sg[CPU] * sg[CPU], sg[DiskRead]*sg[DiskRead] + sg[DiskWrite]*sg[DiskWrite], sg[NetIn] * sg[NetIn], sg[NetOut] * sg[NetOut]}
	}
	v.cov = map[[2]string]float64{}
	return v
}

func (v *View) covariance(a, b string) float64 {
	if a > b {
		a, b = b, a
	}
	k := [2]string{a, b}
	if c, ok := v.cov[k]; ok {
		return c
	}
	var c float64
	if v.sc.Profiles != nil {
		c = v.sc.Profiles.Covariance(a, b)
	}
	v.cov[k] = c
	return c
}

func (v *View) profile(kind string) Profile {
	if p, ok := v.prof[kind]; ok {
		return p
	}
	var p Profile
	if dp, ok := v.sc.Profiles.(demandProfiler); ok && v.demandOnly {
		p = dp.demandProfile(kind)
	} else if v.sc.Profiles != nil {
		p = v.sc.Profiles.Profile(kind)
	}
	v.prof[kind] = p
	return p
}

// Score rates a job of kind with shape s.
func (v *View) Score(kind string, s Shape) Score {
	var out Score
	var ok bool
	v.land, ok = Place(v.nodes, s, v.group, v.land)
	out.Fits = ok
	cand := v.profile(kind)
	out.Known = cand.Known
	if !ok || s.Containers <= 0 {
		return out
	}
	total := float64(s.Containers)
	out.Confounds = v.confounds(kind, cand)
	// Optimism where observing pays: a candidate whose usage can be told
	// apart on its nodes is scored at its demand lowered by Explore
	// standard deviations (upper confidence bound), so a kind still
	// uncertain is tried when the known choices are worse, and not when a
	// known one is as good. Not beside its own kind: two copies of one
	// unknown kind are as heavy as each other.
	optimistic := v.sc.Explore > 0 && !out.Confounds
	beside := map[string]float64{}
	var corr float64
	for _, l := range v.land {
		n := &v.nodes[l.Node]
		g := float64(max(l.Group, 1))
		before := v.nodeBefore(l.Node)
		after := v.node(n.Jobs, kind, g, optimistic, n.Size)
		out.Model += l.Containers / g * (after - before)
		share := l.Containers / total
		if n.empty() {
			out.Alone += share
			continue
		}
		var jobs float64
		for _, j := range n.Jobs {
			jobs += j.Containers
		}
		for _, j := range n.Jobs {
			w := share * j.Containers / jobs
			beside[j.Kind] += w
			if v.sc.Correction != nil {
				corr += w * v.pairCorrection(kind, j.Kind)
			}
		}
	}
	if v.obj == ObjectiveRate {
		out.Model /= total
		if w := v.sc.SizeWeight; w > 0 {
			out.Size = math.Pow(total, w)
			out.Model *= out.Size
		}
	}
	for k, w := range beside {
		out.Beside = append(out.Beside, KindWeight{Kind: k, Weight: w})
	}
	slices.SortFunc(out.Beside, func(a, b KindWeight) int { return strings.Compare(a.Kind, b.Kind) })
	out.Correction = v.sc.CorrectionWeight * corr
	out.Value = out.Model + out.Correction
	return out
}

// nodeBefore is node i's objective with no candidate, computed once per
// view.
func (v *View) nodeBefore(i int) float64 {
	if v.before == nil {
		v.before = make([]float64, len(v.nodes))
		for j := range v.before {
			v.before[j] = math.NaN()
		}
	}
	if math.IsNaN(v.before[i]) {
		v.before[i] = v.node(v.nodes[i].Jobs, "", 0, false, v.nodes[i].Size)
	}
	return v.before[i]
}

// pairCorrection is the correction of kind beside given: tanh of the
// observed preference, shrunk by CorrectionPrior; computed once per view.
func (v *View) pairCorrection(kind, given string) float64 {
	key := [2]string{kind, given}
	if c, ok := v.pair[key]; ok {
		return c
	}
	h, n := v.sc.Correction.Observed(kind, given)
	c := math.Tanh(h) * float64(n) / float64(n+CorrectionPrior)
	if v.pair == nil {
		v.pair = map[[2]string]float64{}
	}
	v.pair[key] = c
	return c
}

// confounds reports whether admitting kind, never observed, would leave a
// never-observed kind without a node where its usage can be told apart: a
// node running it with nothing else never observed. The candidate keeps
// one when part of it lands on an empty node or only beside observed
// kinds; a never-observed partner keeps one when some node runs it apart
// from other never-observed kinds and the candidate does not land there.
// Landing beside a job of its own kind, never observed either, stacks the
// same unknown twice before the first is profiled.
func (v *View) confounds(kind string, cand Profile) bool {
	if cand.Known {
		return false
	}
	clean := false // some landing of the candidate is observable
	hit := map[int]bool{}
	for _, l := range v.land {
		hit[l.Node] = true
		n := &v.nodes[l.Node]
		ok := true
		for _, j := range n.Jobs {
			if j.Containers <= 0 {
				continue
			}
			if j.Kind == kind {
				return true // beside a sibling never observed: the same unknown twice
			}
			if !v.profile(j.Kind).Known {
				ok = false
			}
		}
		clean = clean || ok
	}
	if !clean {
		return true
	}
	for _, l := range v.land {
		for _, j := range v.nodes[l.Node].Jobs {
			if j.Containers <= 0 || v.profile(j.Kind).Known {
				continue
			}
			// The partner is never observed: it needs a node apart from
			// other unknowns that the candidate leaves alone.
			apart := false
			for i := range v.nodes {
				if hit[i] || !slices.ContainsFunc(v.nodes[i].Jobs, func(k KindCount) bool { return k.Kind == j.Kind && k.Containers > 0 }) {
					continue
				}
				alone := true
				for _, k := range v.nodes[i].Jobs {
					if k.Kind != j.Kind && k.Containers > 0 && !v.profile(k.Kind).Known {
						alone = false
					}
				}
				if alone {
					apart = true
					break
				}
			}
			if !apart {
				return true
			}
		}
	}
	return false
}

// Capacity resources: what saturates on a node.
const (
	capCPU = iota
	capDisk
	capNetIn
	capNetOut
	ncap
)

// speedFloor is the smallest demand of a resource (per container, fraction
// of a node) that ties a container's speed to that resource.
const speedFloor = 0.005

// node is the objective's value of a node of size running jobs plus add
// containers of kind extra. On a node of another size than the
// reference's, each demand and its spread count as fractions of that
// node: divided by its size.
func (v *View) node(jobs []KindCount, extra string, add float64, optimistic bool, size Vector) float64 {
	var items [8]item
	list := items[:0]
	var mean, variance [ncap]float64
	push := func(kind string, c float64, opt bool) {
		p := v.profile(kind)
		d := p.Demand
		if opt {
			for r := range NumResources {
				d[r] = max(0, d[r]-v.sc.Explore*p.Std[r])
			}
		}
		onSize(&d, &p.Std, size)
		need := [ncap]float64{d[CPU], d[DiskRead] + d[DiskWrite], d[NetIn], d[NetOut]}
		for r := range ncap {
			mean[r] += c * need[r]
		}
		std := [ncap]float64{p.Std[CPU], p.Std[DiskRead] + p.Std[DiskWrite], p.Std[NetIn], p.Std[NetOut]}
		list = append(list, item{kind: kind, c: c, d: d, need: need, fixed: opt, known: p.Known, std: std})
	}
	for _, j := range jobs {
		c := j.Containers
		if j.Kind == extra {
			c += add
		}
		push(j.Kind, c, false)
	}
	if add > 0 && !slices.ContainsFunc(jobs, func(j KindCount) bool { return j.Kind == extra }) {
		push(extra, add, optimistic)
	}
	base := [ncap]float64{v.base[CPU], v.base[DiskRead] + v.base[DiskWrite], v.base[NetIn], v.base[NetOut]}
	// Var(load) = σ² Σ_ab c_a c_b C_ab over the kinds on the node (an
	// optimistic candidate counts as known at its bound). Where no load
	// can come near a capacity even at the largest variance the model
	// allows, and the load's expectation does not depend on it (no Risk),
	// it changes nothing and is not computed.
	sig2 := v.sig2On(size)
	var q float64
	if !v.fixed && (v.sc.Risk != 0 || v.mayCross(list, base, mean, sig2)) {
		q = v.loadVariance(list)
	}
	for r := range ncap {
		variance[r] = sig2[r] * q
		for _, it := range list { // kinds never observed: the spread of kinds
			if !it.fixed && !it.known {
				variance[r] += it.c * it.c * it.std[r] * it.std[r]
			}
		}
	}
	return v.expect(list, base, mean, variance)
}

// onSize turns a demand d and its spread std, in reference-node units, into
// fractions of a node of size (zero: the reference node).
func onSize(d, std *Vector, size Vector) {
	if size == (Vector{}) {
		return
	}
	for r := range NumResources {
		if s := size[r]; s > 0 {
			d[r] /= s
			std[r] /= s
		}
	}
}

// expect is the objective's expectation over the profiles' uncertainty
// for a node's list, each capacity's load of mean base + mean and of
// variance variance: each capacity's load is normal, with containers of
// one kind moving together (c² var) and kinds independently. Only loads
// that may cross the capacity matter; their expectation is taken on a
// three-point Gauss–Hermite grid per such capacity (μ and μ ± √3σ, weights
// 2/3 and 1/6).
func (v *View) expect(list []item, base, mean, variance [ncap]float64) float64 {
	var mu, sd [ncap]float64
	var uncertain [ncap]int
	nu := 0
	for r := range ncap {
		mu[r] = base[r] + mean[r] + v.sc.Risk*math.Sqrt(variance[r])
		sd[r] = math.Sqrt(variance[r])
		if sd[r] > 1e-9 && mu[r]+3*sd[r] > 1 {
			uncertain[nu] = r
			nu++
		}
	}
	points := 1
	for range nu {
		points *= 3
	}
	var expect float64
	for p := range points {
		var over [ncap]float64
		for r := range ncap {
			over[r] = max(1, mu[r])
		}
		w, q := 1.0, p
		for a := range nu {
			r := uncertain[a]
			switch q % 3 {
			case 0:
				w *= 2.0 / 3
			case 1:
				over[r] = max(1, mu[r]-sqrt3*sd[r])
				w /= 6
			case 2:
				over[r] = max(1, mu[r]+sqrt3*sd[r])
				w /= 6
			}
			q /= 3
		}
		expect += w * v.value(list, over)
	}
	return expect
}

// sig2On is the residual variance per capacity on a node of size: the
// reference's over the square of its size (reads and writes each over
// theirs).
func (v *View) sig2On(size Vector) [ncap]float64 {
	if size == (Vector{}) {
		return v.sig2
	}
	sg := v.sg
	one := func(r Resource) float64 {
		if size[r] > 0 {
			return sg[r] / size[r]
		}
		return sg[r]
	}
	c, dr, dw, in, out := one(CPU), one(DiskRead), one(DiskWrite), one(NetIn), one(NetOut)
	return [ncap]float64{c * c, dr*dr + dw*dw, in * in, out * out}
}

// loadVariance is Σ_ab c_a c_b C_ab over the known kinds of list that are
// not at an optimistic bound (at least 0).
func (v *View) loadVariance(list []item) float64 {
	var q float64
	for a := range list {
		if list[a].fixed || !list[a].known {
			continue
		}
		for b := range list {
			if list[b].fixed || !list[b].known {
				continue
			}
			q += list[a].c * list[b].c * v.covariance(list[a].kind, list[b].kind)
		}
	}
	return max(q, 0)
}

// covBounder is a Profiles that bounds its covariances: every
// Covariance(a, b) is an entry of a positive definite matrix whose largest
// eigenvalue is at most covarianceBound (the Model's (A + λI)⁻¹: 1/λ).
type covBounder interface{ covarianceBound() float64 }

// mayCross reports whether some capacity's load, of mean base + mean,
// could reach its capacity within three standard deviations under the
// largest load variance the Profiles allow for list: cᵀCc ≤ ‖c‖²·bound,
// with c the containers of each known kind (a kind listed twice counts
// once, with both counts), plus the spread of the kinds never observed.
// True when the Profiles give no bound.
func (v *View) mayCross(list []item, base, mean, sig2 [ncap]float64) bool {
	b, ok := v.sc.Profiles.(covBounder)
	if !ok {
		return true
	}
	var norm2 float64
	for a := range list {
		if list[a].fixed || !list[a].known || slices.ContainsFunc(list[:a], func(o item) bool { return o.kind == list[a].kind }) {
			continue
		}
		c := list[a].c
		for _, o := range list[a+1:] {
			if o.kind == list[a].kind && !o.fixed && o.known {
				c += o.c
			}
		}
		norm2 += c * c
	}
	q := norm2 * b.covarianceBound() * 1.01 // 1 %: the columns' own rounding
	for r := range ncap {
		variance := sig2[r] * q
		for _, it := range list {
			if !it.fixed && !it.known {
				variance += it.c * it.c * it.std[r] * it.std[r]
			}
		}
		if sd := math.Sqrt(variance); sd > 1e-9 && base[r]+mean[r]+3*sd > 1 {
			return true
		}
	}
	return false
}

const sqrt3 = 1.7320508075688772

type item struct {
	kind  string
	c     float64
	d     Vector
	need  [ncap]float64
	std   [ncap]float64
	known bool
	fixed bool // its demand is taken as known (an optimistic bound)
}

// value is the objective of a node's containers given each capacity's
// overcommitment factor (≥ 1).
func (v *View) value(list []item, over [ncap]float64) float64 {
	if v.obj == ObjectiveRate {
		var rate float64
		for _, it := range list {
			rate += it.c * speed(it.need, over)
		}
		return rate
	}
	// Goodness of the predicted usage: each container uses its demand at
	// its speed; CPU a disk-bound container cannot use is I/O wait.
	u := v.base
	var starved float64
	for _, it := range list {
		sp := speed(it.need, over)
		for r := range NumResources {
			u[r] += it.c * sp * it.d[r]
		}
		if over[capDisk] > 1 && it.need[capDisk] >= speedFloor && sp < 1 {
			starved += it.c * it.d[CPU] * (1 - sp)
		}
	}
	u[CPU] = min(u[CPU], 1)
	u[IOWait] = min(u[IOWait]+starved, 1-u[CPU])
	return goodness.Score(goodness.Usage{CPU: u[CPU], IOWait: max(u[IOWait], 0),
		DiskRead: u[DiskRead], DiskWrite: u[DiskWrite], NetRecv: u[NetIn], NetSent: u[NetOut]},
		goodness.Limits{DiskRead: 1, DiskWrite: 1, NetRecv: 1, NetSent: 1})
}

// speed is a container's progress rate: a saturated resource overcommitted
// by a factor o is shared in proportion to demand, so each container that
// uses it gets 1/o of what it asks; the container runs at the pace of its
// most overcommitted resource.
func speed(need [ncap]float64, over [ncap]float64) float64 {
	o := 1.0
	for r := range ncap {
		if need[r] >= speedFloor {
			o = max(o, over[r])
		}
	}
	return 1 / o
}
