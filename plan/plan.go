package plan

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// Errors.
var (
	// errUncertain: the model cannot predict the candidates' outcomes (a
	// kind in play has no runtime estimate yet); the one-step choice
	// stands.
	errUncertain = errors.New("plan: model too uncertain")
	// ErrInvalid: the model or the configuration is malformed.
	ErrInvalid = errors.New("plan: invalid model")
)

// Defaults of Config.
const (
	defaultSamples = 4
	// defaultHorizon and defaultObjective: on the shipped workloads (20
	// seeds, bench/README.md "Model-predictive admission") the flow
	// objective to 3 hours beats ra on five of eight and trails it on two;
	// the work done in 20 minutes beats it on four and trails on four, at
	// about half the cost per decision at 16 nodes.
	defaultHorizon   = 3 * time.Hour
	defaultObjective = objectiveFlow
	// defaultMaxNodes bounds the nodes a rollout simulates: past it, the
	// nodes with the most room are kept (where the candidates and the
	// jobs after them land), with the jobs running there.
	// 128 keeps a decision within 500 ms at 10,000 nodes (256: about
	// 580 ms; BenchmarkDecideLookahead).
	defaultMaxNodes = 128
)

// Config bounds a rollout: Samples futures × Horizon of simulated time per
// candidate, on at most MaxNodes nodes (how many candidates is the queue's
// lookahead.top_k). Zero fields take the defaults.
type Config struct {
	Samples  int           `mapstructure:"samples"`
	Horizon  time.Duration `mapstructure:"horizon"`
	MaxNodes int           `mapstructure:"max_nodes"`
	// Objective is what a rollout's value measures (see the objective
	// constants); "" means defaultObjective.
	Objective objective `mapstructure:"objective"`
	// MaxUncertainty bounds how uncertain a candidate's profile may be for
	// its rollouts to count: its demand's standard deviation over its mean
	// (Euclidean norms over the resources). Past it Evaluate says the model
	// is too uncertain, and the one-step choice stands. 0: no bound (the
	// sampled futures still draw each demand from its uncertainty).
	MaxUncertainty float64 `mapstructure:"max_uncertainty"`
}

// objective is what a rollout's value measures; higher is better.
type objective string

// Objectives.
const (
	// objectiveWork: the solo container-seconds of work done by the
	// horizon.
	objectiveWork objective = "work"
	// objectiveDrain: minus the time until every job of the model (running
	// and pending) finished, seconds; a rollout that reaches the horizon
	// first counts the horizon plus the solo container-seconds left over
	// the cluster's vcores (a lower bound of the rest).
	objectiveDrain objective = "drain"
	// objectiveFlow: minus the mean time from now until each job of the
	// model finishes, seconds, with the same bound for those left at the
	// horizon.
	objectiveFlow objective = "flow"
)

// WithDefaults is c with its zero fields set to the defaults.
func (c Config) WithDefaults() Config {
	if c.Samples == 0 {
		c.Samples = defaultSamples
	}
	if c.Horizon == 0 {
		c.Horizon = defaultHorizon
	}
	if c.MaxNodes == 0 {
		c.MaxNodes = defaultMaxNodes
	}
	if c.Objective == "" {
		c.Objective = defaultObjective
	}
	return c
}

// Validate reports the first field out of its bounds.
func (c Config) Validate() error {
	switch {
	case c.Samples < 0 || c.Samples > 64:
		return fmt.Errorf("%w: samples %d outside [0, 64] (0: %d)", ErrInvalid, c.Samples, defaultSamples)
	case c.Horizon < 0 || c.Horizon > 24*time.Hour:
		return fmt.Errorf("%w: horizon %v outside [0, 24h] (0: %v)", ErrInvalid, c.Horizon, defaultHorizon)
	case c.MaxNodes < 0 || c.MaxNodes > sim.MaxNodes:
		return fmt.Errorf("%w: max_nodes %d outside [0, %d] (0: %d)", ErrInvalid, c.MaxNodes, sim.MaxNodes, defaultMaxNodes)
	case !(c.MaxUncertainty >= 0 && c.MaxUncertainty <= 100):
		return fmt.Errorf("%w: max_uncertainty %v outside [0, 100] (0: no bound)", ErrInvalid, c.MaxUncertainty)
	}
	switch c.Objective {
	case "", objectiveWork, objectiveDrain, objectiveFlow:
	default:
		return fmt.Errorf("%w: objective %q is not work, drain or flow", ErrInvalid, c.Objective)
	}
	return nil
}

// Kind is what colocd knows of a kind: its per-container demand and its
// uncertainty (profile units: fractions of a node), and its estimated
// solo runtime (0: none yet).
type Kind struct {
	Demand, Std profile.Vector
	Solo        time.Duration
}

// Job is a job's identity and shape.
type Job struct {
	ID, Kind   string
	Containers int
	VCores     int
	MemoryMB   int64
}

// Running is a job running now: its containers per node (indices into
// Model.Nodes) and the share of its solo work done, in [0, 1).
type Running struct {
	Job
	Placement map[int]int
	Done      float64
}

// Node is a node's placement capacity and its size (profile.Node.Size:
// its capacity per resource over the reference node's; zero, the
// reference's).
type Node struct {
	VCores   int
	MemoryMB int64
	Size     profile.Vector
}

// Model is the cluster as colocd sees it, and what it knows of the kinds.
type Model struct {
	Nodes   []Node
	Running []Running
	Pending []Job // the window, oldest first
	Kinds   map[string]Kind
}

// outcome is one candidate's predicted value in each sampled future (the
// same futures for every candidate, in order): solo container-seconds of
// work done over the horizon. Fits is false when the candidate found no
// room in the model.
type outcome struct {
	Values []float64
	Fits   bool
}

// Evaluate rolls out each candidate (an index into m.Pending) and returns
// their outcomes. Every kind in play (running, pending) needs a solo
// runtime, else errUncertain. seed draws the samples: the same model,
// candidates and seed give the same outcomes.
func Evaluate(m *Model, cands []int, cfg Config, seed uint64) ([]outcome, error) {
	cfg = cfg.WithDefaults()
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if err := tooUncertain(m, cands, cfg.MaxUncertainty); err != nil {
		return nil, err
	}
	b, err := newBuilder(m, cfg)
	if err != nil {
		return nil, err
	}
	out := make([]outcome, len(cands))
	for i := range out {
		out[i].Values = make([]float64, cfg.Samples)
		out[i].Fits = true
	}
	for s := range cfg.Samples {
		rng := rand.New(rand.NewPCG(seed, uint64(s)))
		base, err := b.world(rng)
		if err != nil {
			return nil, err
		}
		place := rng.Uint64()
		for i, c := range cands {
			if c < 0 || c >= len(m.Pending) {
				return nil, fmt.Errorf("%w: candidate %d of %d pending", ErrInvalid, c, len(m.Pending))
			}
			w := base.Clone()
			w.Reseed(place) // the same placements for every candidate
			v, fits := b.rollout(w, c)
			out[i].Values[s] = v
			out[i].Fits = out[i].Fits && fits
		}
	}
	return out, nil
}

// tooUncertain is errUncertain when a candidate's profile is more
// uncertain than bound (Config.MaxUncertainty; 0: no bound).
func tooUncertain(m *Model, cands []int, bound float64) error {
	if bound <= 0 {
		return nil
	}
	for _, c := range cands {
		if c < 0 || c >= len(m.Pending) {
			continue // Evaluate refuses it
		}
		k := m.Pending[c].Kind
		kd := m.Kinds[k]
		var sd, mean float64
		for r := range kd.Demand {
			sd += kd.Std[r] * kd.Std[r]
			mean += kd.Demand[r] * kd.Demand[r]
		}
		if u := math.Sqrt(sd / mean); !(u <= bound) {
			return fmt.Errorf("%w: kind %q's demand is uncertain by %.2f of itself, over max_uncertainty %v", errUncertain, k, u, bound)
		}
	}
	return nil
}

// builder turns the model into simulators.
type builder struct {
	m       *Model
	cfg     Config
	cluster sim.ClusterSpec
	nodeOf  []int          // model node index → simulated node index (−1: not simulated)
	names   []string       // simulated node names
	shape   map[string]int // shape key → index into kinds
	kinds   []sim.KindSpec // one per kind and shape
	kindOf  []string       // the colocd kind of kinds[i]
	solo    []float64      // seconds, per kinds[i]
	running []int          // kinds index of each m.Running
	pending []int          // kinds index of each m.Pending
	kindIdx map[string]int // sim kind name → index
	scratch []sim.NodeUse  // Occupancy's
	pnodes  []profile.Node // the one-step rule's nodes (room only)
	land    []profile.Landing
	prog    []sim.AppProgress
	needs   []need // per kinds[i]: its mean demand
	// Per node, the kinds (indices into kinds) running there and their
	// containers: the one-step rule's picture.
	nodeKinds  [][]int
	nodeCounts [][]float64
	before     []float64    // per node, its rate before the candidate (NaN: not yet)
	base       [][4]float64 // per node, its containers' summed demand
	// caps are the simulated nodes' capacities in reference-node units,
	// and least each capacity's smallest, when the nodes differ in size
	// (nil and zero: every node is the reference).
	caps  []need
	least need
}

// simulate sets the simulated cluster: the nodes of m at indices keep.
func (b *builder) simulate(keep []int) {
	m := b.m
	b.nodeOf = make([]int, len(m.Nodes))
	for i := range b.nodeOf {
		b.nodeOf[i] = -1
	}
	var spec sim.NodeSpec
	sized := false
	for k, i := range keep {
		b.nodeOf[i] = k
		spec.VCores = max(spec.VCores, m.Nodes[i].VCores)
		spec.MemoryMB = max(spec.MemoryMB, m.Nodes[i].MemoryMB)
		sized = sized || m.Nodes[i].Size != (profile.Vector{})
	}
	// Profile units are fractions of the reference node: one core, one
	// unit of disk and of network per direction.
	spec.Cores, spec.DiskMBps, spec.NetMBps = 1, 1, 1
	b.cluster = sim.ClusterSpec{Nodes: len(keep), Node: spec}
	if sized {
		b.cluster, b.caps, b.least = sizedCluster(m, keep)
	}
}

// sizedCluster is the kept nodes of m (indices in keep) as node groups:
// each run of consecutive nodes of one placement capacity and size a
// group, its node's cores, disk and network its size in reference-node
// units (so a demand of the profiles' units is the same share of it as of
// the real node). It returns each simulated node's capacities and the
// smallest of each.
func sizedCluster(m *Model, keep []int) (sim.ClusterSpec, []need, need) {
	one := func(x float64) float64 {
		if x > 0 {
			return x
		}
		return 1
	}
	var c sim.ClusterSpec
	caps := make([]need, 0, len(keep))
	least := need{math.Inf(1), math.Inf(1), math.Inf(1), math.Inf(1)}
	for k, i := range keep {
		n := m.Nodes[i]
		spec := sim.NodeSpec{VCores: n.VCores, MemoryMB: n.MemoryMB, Cores: one(n.Size[profile.CPU]),
			DiskMBps: one(n.Size[profile.DiskRead]), NetMBps: one(n.Size[profile.NetIn])}
		if k == 0 || c.Groups[len(c.Groups)-1].Node != spec {
			c.Groups = append(c.Groups, sim.NodeGroup{Name: "g" + strconv.Itoa(len(c.Groups)+1), Node: spec})
		}
		c.Groups[len(c.Groups)-1].Nodes++
		nd := need{spec.Cores, spec.DiskMBps, spec.NetMBps, spec.NetMBps}
		caps = append(caps, nd)
		for r := range least {
			least[r] = min(least[r], nd[r])
		}
	}
	return c, caps, least
}

// capOf is simulated node i's capacities; nil when every node is the
// reference.
func (b *builder) capOf(i int) *need {
	if b.caps == nil {
		return nil
	}
	return &b.caps[i]
}

func shapeKey(j Job) string {
	return j.Kind + "\x00" + strconv.Itoa(j.Containers) + "\x00" + strconv.Itoa(j.VCores) + "\x00" + strconv.FormatInt(j.MemoryMB, 10)
}

// keptNodes are the indices of the simulated nodes of m: all of them, or
// past cfg.MaxNodes those with the most free room (ties: the lower index),
// which is where the jobs decided next land.
func keptNodes(m *Model, cfg Config) []int {
	keep := make([]int, len(m.Nodes))
	for i := range keep {
		keep[i] = i
	}
	if len(keep) > cfg.MaxNodes {
		used := make([]int, len(m.Nodes))
		for _, r := range m.Running {
			for n, c := range r.Placement {
				if n >= 0 && n < len(used) {
					used[n] += c * r.VCores
				}
			}
		}
		slices.SortStableFunc(keep, func(a, c int) int {
			return (m.Nodes[c].VCores - used[c]) - (m.Nodes[a].VCores - used[a])
		})
		keep = keep[:cfg.MaxNodes]
		slices.Sort(keep)
	}
	return keep
}

func newBuilder(m *Model, cfg Config) (*builder, error) {
	if len(m.Nodes) == 0 {
		return nil, fmt.Errorf("%w: no nodes", ErrInvalid)
	}
	b := &builder{m: m, cfg: cfg, shape: map[string]int{}, kindIdx: map[string]int{}}
	keep := keptNodes(m, cfg)
	b.simulate(keep)
	width := max(2, len(strconv.Itoa(len(keep))))
	for k := range keep {
		b.names = append(b.names, fmt.Sprintf("node%0*d", width, k+1))
	}
	add := func(j Job) (int, error) {
		key := shapeKey(j)
		if i, ok := b.shape[key]; ok {
			return i, nil
		}
		kd, ok := m.Kinds[j.Kind]
		if !ok || kd.Solo <= 0 {
			return 0, fmt.Errorf("%w: kind %q has no runtime estimate", errUncertain, j.Kind)
		}
		if j.Containers <= 0 || j.VCores <= 0 || j.MemoryMB <= 0 {
			return 0, fmt.Errorf("%w: job %s: %d containers of %d vcores, %d MB", ErrInvalid, j.ID, j.Containers, j.VCores, j.MemoryMB)
		}
		i := len(b.kinds)
		name := "k" + strconv.Itoa(i)
		b.shape[key] = i
		b.kindIdx[name] = i
		b.kinds = append(b.kinds, sim.KindSpec{Name: name, Containers: j.Containers,
			Container: sim.ContainerSpec{VCores: j.VCores, MemoryMB: j.MemoryMB}})
		b.kindOf = append(b.kindOf, j.Kind)
		b.solo = append(b.solo, kd.Solo.Seconds())
		b.needs = append(b.needs, needOf(kd.Demand))
		return i, nil
	}
	for _, r := range m.Running {
		// Its containers on the simulated nodes: a job partly on nodes not
		// simulated runs as a kind of its own shape there.
		j, n := r.Job, 0
		for node, c := range r.Placement {
			if node >= 0 && node < len(b.nodeOf) && b.nodeOf[node] >= 0 && c > 0 {
				n += c
			}
		}
		if n == 0 {
			b.running = append(b.running, -1)
			continue
		}
		j.Containers = n
		i, err := add(j)
		if err != nil {
			return nil, err
		}
		b.running = append(b.running, i)
	}
	for _, p := range m.Pending {
		i, err := add(p)
		if err != nil {
			return nil, err
		}
		b.pending = append(b.pending, i)
	}
	return b, nil
}

// world is one sampled model of the cluster: every kind's demand drawn
// from its profile's uncertainty, the running jobs resumed where they
// run, with the share of their work they have done.
func (b *builder) world(rng *rand.Rand) (*sim.Sim, error) {
	kinds := slices.Clone(b.kinds)
	for i := range kinds {
		kd := b.m.Kinds[b.kindOf[i]]
		var d profile.Vector
		for r := range profile.NumResources {
			d[r] = max(0, kd.Demand[r]+kd.Std[r]*rng.NormFloat64())
		}
		if b.caps != nil { // one container alone must fit the smallest node
			d[profile.CPU] = min(d[profile.CPU], b.least[0])
			if io := d[profile.DiskRead] + d[profile.DiskWrite]; io > b.least[1] {
				d[profile.DiskRead], d[profile.DiskWrite] = d[profile.DiskRead]*b.least[1]/io, d[profile.DiskWrite]*b.least[1]/io
			}
			d[profile.NetIn], d[profile.NetOut] = min(d[profile.NetIn], b.least[2]), min(d[profile.NetOut], b.least[3])
		}
		kinds[i].Phases = []sim.Phase{{Seconds: b.solo[i], CPU: d[profile.CPU],
			DiskReadMBps: d[profile.DiskRead], DiskWriteMBps: d[profile.DiskWrite],
			NetInMBps: d[profile.NetIn], NetOutMBps: d[profile.NetOut]}}
	}
	s, err := sim.New(b.cluster, kinds, sim.Options{Seed: rng.Uint64(), MetricsInterval: 24 * time.Hour})
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	s.DiscardMetrics()
	for ri, r := range b.m.Running {
		if b.running[ri] < 0 {
			continue // runs on nodes not simulated
		}
		place := map[string]int{}
		for node, c := range r.Placement {
			if node >= 0 && node < len(b.nodeOf) && b.nodeOf[node] >= 0 && c > 0 {
				place[b.names[b.nodeOf[node]]] += c
			}
		}
		k := &b.kinds[b.running[ri]]
		err := s.Resume(s.NewApplication(), sim.AppSpec{JobID: r.ID, Kind: k.Name}, place, min(max(r.Done, 0), 0.99))
		if err != nil && !errors.Is(err, sim.ErrNoFit) {
			return nil, fmt.Errorf("%w: running job %s: %w", ErrInvalid, r.ID, err)
		}
	}
	return s, nil
}

// rollout admits pending job c on w, then lets the one-step rule admit
// what fits at every completion until the horizon, and returns the solo
// container-seconds of work done meanwhile.
func (b *builder) rollout(w *sim.Sim, c int) (float64, bool) {
	start := w.Now()
	until := start.Add(b.cfg.Horizon)
	b.prog = w.Progresses(b.prog[:0])
	before := map[string]float64{}
	for _, p := range b.prog {
		before[p.ID] = p.Progress
	}
	left := make([]bool, len(b.m.Pending)) // still pending in this rollout
	for i := range left {
		left[i] = i != c
	}
	if !b.admit(w, c) {
		return 0, false
	}
	for {
		for {
			next := b.choose(w, left)
			if next < 0 || !b.admit(w, next) {
				break
			}
			left[next] = false
		}
		t, ok := w.NextEvent()
		if !ok || t.After(until) {
			w.Advance(until)
			break
		}
		for len(w.Advance(t)) == 0 { // to the next completion
			if t, ok = w.NextEvent(); !ok || t.After(until) {
				break
			}
		}
		if !ok || t.After(until) {
			w.Advance(until)
			break
		}
	}
	var work, rest, flow, last float64
	n := 0
	b.prog = w.Progresses(b.prog[:0])
	for _, p := range b.prog {
		i := b.kindIdx[p.Kind]
		work += (p.Progress - before[p.ID]) * b.solo[i] * float64(p.Containers)
		rest += (1 - p.Progress) * b.solo[i] * float64(p.Containers) * float64(b.kinds[i].Container.VCores)
		n++
		if !p.Finished.IsZero() {
			end := p.Finished.Sub(start).Seconds()
			flow += end
			last = max(last, end)
		} else {
			flow += b.cfg.Horizon.Seconds()
		}
	}
	for i, ok := range left { // never admitted: at the horizon at best
		if ok {
			k := b.pending[i]
			rest += b.solo[k] * float64(b.kinds[k].Containers*b.kinds[k].Container.VCores)
			flow += b.cfg.Horizon.Seconds()
			n++
		}
	}
	vcores := float64(b.cluster.Nodes * b.cluster.Node.VCores)
	if len(b.cluster.Groups) > 0 {
		vcores = 0
		for _, g := range b.cluster.Groups {
			vcores += float64(g.Nodes * g.Node.VCores)
		}
	}
	switch b.cfg.Objective {
	case objectiveDrain:
		if rest > 1e-9 {
			return -(b.cfg.Horizon.Seconds() + rest/vcores), true
		}
		return -last, true
	case objectiveFlow:
		return -(flow + rest/vcores) / float64(max(n, 1)), true
	}
	return work, true
}

// admit submits pending job i on w; false when it does not fit.
func (b *builder) admit(w *sim.Sim, i int) bool {
	k := b.kinds[b.pending[i]].Name
	if !w.Fits(k) {
		return false
	}
	return w.Submit(w.NewApplication(), sim.AppSpec{JobID: b.m.Pending[i].ID, Kind: k}) == nil
}

// speedFloor is the demand of a resource (per container, a fraction of a
// node) from which a container's speed follows it: profile's.
const speedFloor = 0.005

// need is a kind's mean demand of the four capacities: CPU, disk (reads
// and writes), network in and out.
type need [4]float64

func needOf(d profile.Vector) need {
	return need{d[profile.CPU], d[profile.DiskRead] + d[profile.DiskWrite], d[profile.NetIn], d[profile.NetOut]}
}

// baseLoad is the summed demand of the containers cs of kinds ks.
func baseLoad(needs []need, ks []int, cs []float64) [4]float64 {
	var load [4]float64
	for i, k := range ks {
		for r := range 4 {
			load[r] += cs[i] * needs[k][r]
		}
	}
	return load
}

// rateOn is the progress rate (Σ containers × speed) of a node running
// the containers cs of kinds ks (indices into needs), whose summed demand
// is base (baseLoad's, computed once per node and shared by every
// candidate), plus add containers of kind extra: a capacity asked beyond 1
// is shared in proportion to demand, a container runs at the pace of its
// most overcommitted resource — the scorer's rate objective at the mean
// profiles. size is the node's capacity of each in reference-node units;
// nil: 1.
func rateOn(needs []need, ks []int, cs []float64, base *[4]float64, extra int, add float64, size *need) float64 {
	load := *base
	if add > 0 {
		for r := range 4 {
			load[r] += add * needs[extra][r]
		}
	}
	if size != nil {
		for r := range 4 {
			load[r] /= size[r]
		}
	}
	var v float64
	for i, k := range ks {
		v += cs[i] / pace(&needs[k], &load)
	}
	if add > 0 {
		v += add / pace(&needs[extra], &load)
	}
	return v
}

// pace is how many times slower than alone a container of demand n runs
// under load: its most overcommitted resource's overcommitment.
func pace(n *need, load *[4]float64) float64 {
	o := 1.0
	for r := range 4 {
		if n[r] >= speedFloor && load[r] > o {
			o = load[r]
		}
	}
	return o
}

// choose is the one-step rule on w: among the oldest pending job of each
// kind that fits, the one whose containers are predicted to add the most
// progress where they land, per container (the scorer's rate objective at
// the mean profiles, with profile.Place's landing; no exploration and no
// pair correction); ties go to the oldest, −1 when none fits.
func (b *builder) choose(w *sim.Sim, left []bool) int {
	b.scratch = w.Occupancy(b.scratch)
	n := len(b.scratch)
	if cap(b.pnodes) < n {
		b.pnodes = make([]profile.Node, n)
		b.nodeKinds = make([][]int, n)
		b.nodeCounts = make([][]float64, n)
	}
	b.pnodes = b.pnodes[:n]
	for i, u := range b.scratch {
		spec := b.cluster.Node
		if len(b.cluster.Groups) > 0 {
			spec, _ = b.cluster.NodeAt(i)
		}
		pn := &b.pnodes[i]
		pn.Capacity = profile.Room{VCores: int64(spec.VCores), MemoryMB: spec.MemoryMB}
		pn.Free = profile.Room{VCores: int64(u.FreeVCores), MemoryMB: u.FreeMemoryMB}
		pn.Jobs = nil // Place reads only the room
		ks, cs := b.nodeKinds[i][:0], b.nodeCounts[i][:0]
		for _, a := range u.Apps {
			k := b.kindIdx[a.Kind]
			if at := slices.Index(ks, k); at >= 0 {
				cs[at] += float64(a.Containers)
			} else {
				ks, cs = append(ks, k), append(cs, float64(a.Containers))
			}
		}
		b.nodeKinds[i], b.nodeCounts[i] = ks, cs
	}
	if cap(b.base) < n {
		b.base = make([][4]float64, n)
	}
	b.base = b.base[:n]
	for i := range b.base {
		b.base[i] = baseLoad(b.needs, b.nodeKinds[i], b.nodeCounts[i])
	}
	if cap(b.before) < n {
		b.before = make([]float64, n)
	}
	b.before = b.before[:n]
	for i := range b.before {
		b.before[i] = math.NaN()
	}
	best, bestV := -1, math.Inf(-1)
	seen := make([]bool, len(b.kinds))
	for i, ok := range left {
		if !ok {
			continue
		}
		k := b.pending[i]
		if seen[k] {
			continue
		}
		seen[k] = true
		ks := &b.kinds[k]
		if !w.Fits(ks.Name) {
			continue
		}
		var fits bool
		b.land, fits = profile.Place(b.pnodes, profile.Shape{Containers: ks.Containers,
			Each: profile.Room{VCores: int64(ks.Container.VCores), MemoryMB: ks.Container.MemoryMB}}, 0, b.land)
		if !fits {
			continue
		}
		var v float64
		for _, l := range b.land {
			g := float64(max(l.Group, 1))
			size := b.capOf(l.Node)
			if math.IsNaN(b.before[l.Node]) {
				b.before[l.Node] = rateOn(b.needs, b.nodeKinds[l.Node], b.nodeCounts[l.Node], &b.base[l.Node], 0, 0, size)
			}
			after := rateOn(b.needs, b.nodeKinds[l.Node], b.nodeCounts[l.Node], &b.base[l.Node], k, g, size)
			v += l.Containers / g * (after - b.before[l.Node])
		}
		v /= float64(ks.Containers)
		if v > bestV+1e-12 {
			best, bestV = i, v
		}
	}
	return best
}
