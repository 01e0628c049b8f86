package bench

import (
	"context"
	"fmt"
	"math"
	"slices"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/sim"
)

// Profile is a kind's solo resource profile, measured in the simulator:
// one job of the kind alone on the workload's cluster, the node samples of
// the nodes that ran it averaged over its run. CPU is the busy fraction,
// Disk and Net the utilisations (as in UsagePoint).
type Profile struct {
	Kind           string
	CPU, Disk, Net float64
}

// Vector is the profile as (CPU, Disk, Net).
func (p Profile) Vector() [3]float64 { return [3]float64{p.CPU, p.Disk, p.Net} }

// Profiles measures every kind of w alone (seed 1): what an operator gets
// from one solo run of a recurring job, with no co-location.
func Profiles(w *sim.Workload) ([]Profile, error) {
	out := make([]Profile, 0, len(w.Kinds))
	disk := w.Cluster.Node.DiskMBps * 1e6
	net := 2 * w.Cluster.Node.NetMBps * 1e6
	for _, k := range w.Kinds {
		s, err := w.NewSim(sim.Options{Seed: 1})
		if err != nil {
			return nil, fmt.Errorf("profile %s: %w", k.Name, err)
		}
		id := s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{JobID: "profile", Kind: k.Name}); err != nil {
			return nil, fmt.Errorf("profile %s: %w", k.Name, err)
		}
		s.RunUntilIdle()
		p := Profile{Kind: k.Name}
		var n float64
		for _, sm := range s.Samples() {
			if !slices.Contains(sm.Apps, id) {
				continue
			}
			p.CPU += sm.Usage.CPU
			p.Disk += (sm.Usage.DiskRead + sm.Usage.DiskWrite) / disk
			p.Net += (sm.Usage.NetRecv + sm.Usage.NetSent) / net
			n++
		}
		if n > 0 {
			p.CPU, p.Disk, p.Net = p.CPU/n, p.Disk/n, p.Net/n
		}
		out = append(out, p)
	}
	return out, nil
}

// Cosine is the cosine similarity of two profiles' vectors (0 when either
// is zero).
func Cosine(a, b Profile) float64 {
	x, y := a.Vector(), b.Vector()
	var dot, nx, ny float64
	for i := range x {
		dot += x[i] * y[i]
		nx += x[i] * x[i]
		ny += y[i] * y[i]
	}
	if nx == 0 || ny == 0 {
		return 0
	}
	return dot / math.Sqrt(nx*ny)
}

// DefaultSharpness is the exponent SimilarityWeights raises cosine
// similarities to. Resource profiles are all non-negative, so even a
// CPU-bound and an I/O-bound kind have a cosine around 0.5; the power
// lets the most similar kinds dominate the mix.
const DefaultSharpness = 8

// SimilarityWeights are the weights for bandit.Learner.AddSimilar: each
// known kind's cosine similarity to kind, raised to sharpness (0:
// DefaultSharpness). Kinds missing from profiles get none.
func SimilarityWeights(kind string, known []string, profiles []Profile, sharpness float64) map[string]float64 {
	if sharpness == 0 {
		sharpness = DefaultSharpness
	}
	byKind := map[string]Profile{}
	for _, p := range profiles {
		byKind[p.Kind] = p
	}
	p, ok := byKind[kind]
	if !ok {
		return nil
	}
	out := map[string]float64{}
	for _, k := range known {
		q, ok := byKind[k]
		if !ok || k == kind {
			continue
		}
		if c := Cosine(p, q); c > 0 {
			out[k] = math.Pow(c, sharpness)
		}
	}
	return out
}

// WarmStartConfig configures the warm-start study.
type WarmStartConfig struct {
	// Run is the template of every run (Workload: the full workload).
	Run   RunConfig
	Seeds []uint64
	// NewKinds are the kinds introduced late, one at a time (nil: every
	// kind of the workload in turn).
	NewKinds []string
	// PreRuns is the number of runs that learn on the workload without the
	// new kind first (0: 2).
	PreRuns int
	// MaxRuns bounds the runs after the new kind arrives (0: 5).
	MaxRuns int
	// Tolerance of the best partner sets (0: DefaultTolerance).
	Tolerance float64
	// Sharpness of SimilarityWeights (0: DefaultSharpness).
	Sharpness float64
	Workers   int
}

// WarmStartResult compares, for one new kind and one seed, the plain
// bandit (the new kind starts with zero preferences) with the
// similarity warm start (bandit.Learner.AddSimilar with SimilarityWeights),
// both from the same preferences learned without the new kind.
type WarmStartResult struct {
	NewKind string
	Seed    uint64
	Weights map[string]float64
	// Plain and Similar: the learning speed after the new kind was added
	// (observations count from then). The chain of runs stops once the new
	// kind's row passed Threshold; PerKind[NewKind] is the figure of merit,
	// Reached says whether every kind passed too.
	Plain, Similar SpeedResult
	// InitialPlain and InitialSimilar: Σ π(best partners of the new kind |
	// new kind) right after it was added.
	InitialPlain, InitialSimilar float64
}

// WarmStart runs the study: for each new kind k and seed, learn PreRuns
// runs of the workload without k (its queue entries removed), then run the
// full workload with k added plainly or warm-started from similarity, and
// count the observations until every kind's best partners pass Threshold.
func WarmStart(ctx context.Context, wc WarmStartConfig) ([]WarmStartResult, error) {
	w := wc.Run.Workload
	if w == nil {
		return nil, fmt.Errorf("%w: workload: missing", ErrInvalid)
	}
	truth, err := BestPartners(w, wc.Tolerance)
	if err != nil {
		return nil, err
	}
	profiles, err := Profiles(w)
	if err != nil {
		return nil, err
	}
	kinds := wc.NewKinds
	if kinds == nil {
		for _, k := range w.Kinds {
			kinds = append(kinds, k.Name)
		}
	}
	pre, maxRuns := wc.PreRuns, wc.MaxRuns
	if pre <= 0 {
		pre = 2
	}
	if maxRuns <= 0 {
		maxRuns = 5
	}
	type task struct {
		kind string
		seed uint64
	}
	var tasks []task
	for _, k := range kinds {
		if _, ok := w.Kind(k); !ok {
			return nil, fmt.Errorf("%w: new kind %q is not in the workload", ErrInvalid, k)
		}
		for _, s := range wc.Seeds {
			tasks = append(tasks, task{k, s})
		}
	}
	out := make([]WarmStartResult, len(tasks))
	err = forEach(ctx, len(tasks), wc.Workers, func(i int) error {
		t := tasks[i]
		without, err := withoutKind(w, t.kind)
		if err != nil {
			return err
		}
		// Learn on the other kinds.
		var snap *bandit.Snapshot
		for run := range pre {
			rc := wc.Run
			rc.Workload, rc.Policy, rc.Seed, rc.Warm, rc.Observe, rc.Setup = without, RA, t.seed+uint64(run)*WarmSeedOffset, snap, nil, nil
			if snap != nil {
				rc.Policy = RAWarm
			}
			r, err := Run(ctx, rc)
			if err != nil {
				return fmt.Errorf("warm start %s seed %d, learning run %d: %w", t.kind, t.seed, run+1, err)
			}
			snap = r.Preferences
		}
		res := WarmStartResult{NewKind: t.kind, Seed: t.seed}
		res.Weights = SimilarityWeights(t.kind, snap.Kinds, profiles, wc.Sharpness)
		newTruth := truthOf(truth, t.kind)
		tmpl := wc.Run
		tmpl.Workload = w
		seed := t.seed + uint64(pre)*WarmSeedOffset
		stop := func(r SpeedResult) bool { return r.PerKind[t.kind].Total >= 0 }
		res.Plain, err = learnUntil(ctx, tmpl, seed, maxRuns, truth, snap, func(l *bandit.Learner) {
			l.Add(t.kind)
			res.InitialPlain = setProb(l, newTruth.Set, t.kind)
		}, stop)
		if err != nil {
			return err
		}
		res.Similar, err = learnUntil(ctx, tmpl, seed, maxRuns, truth, snap, func(l *bandit.Learner) {
			l.AddSimilar(t.kind, res.Weights)
			res.InitialSimilar = setProb(l, newTruth.Set, t.kind)
		}, stop)
		if err != nil {
			return err
		}
		out[i] = res
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

func truthOf(truth []PartnerTruth, kind string) PartnerTruth {
	for _, t := range truth {
		if t.Kind == kind {
			return t
		}
	}
	return PartnerTruth{Kind: kind}
}

// withoutKind is w with kind's queue entries removed (the kind stays
// defined, so the cluster and the other kinds are unchanged).
func withoutKind(w *sim.Workload, kind string) (*sim.Workload, error) {
	c := *w
	c.Queue = nil
	for _, q := range w.Queue {
		if q.Kind != kind {
			c.Queue = append(c.Queue, q)
		}
	}
	if len(c.Queue) == 0 {
		return nil, fmt.Errorf("%w: the workload has no job of another kind than %q", ErrInvalid, kind)
	}
	return &c, nil
}
