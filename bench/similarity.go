package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"text/tabwriter"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/sim"
)

// soloProfile is a kind's solo resource profile, measured in the simulator:
// one job of the kind alone on the workload's cluster, the node samples of
// the nodes that ran it averaged over its run. CPU is the busy fraction,
// Disk and Net the utilisations (as in usagePoint).
type soloProfile struct {
	Kind           string
	CPU, Disk, Net float64
}

// Vector is the profile as (CPU, Disk, Net).
func (p soloProfile) Vector() [3]float64 { return [3]float64{p.CPU, p.Disk, p.Net} }

// soloProfiles measures every kind of w alone (seed 1): what an operator gets
// from one solo run of a recurring job, with no co-location.
func soloProfiles(w *sim.Workload) ([]soloProfile, error) {
	out := make([]soloProfile, 0, len(w.Kinds))
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
		p := soloProfile{Kind: k.Name}
		var n float64
		for r := range s.SampleRuns() {
			if !slices.Contains(r.Apps, id) {
				continue
			}
			m := float64(r.Intervals)
			p.CPU += m * r.Usage.CPU
			p.Disk += m * (r.Usage.DiskRead + r.Usage.DiskWrite) / disk
			p.Net += m * (r.Usage.NetRecv + r.Usage.NetSent) / net
			n += m
		}
		if n > 0 {
			p.CPU, p.Disk, p.Net = p.CPU/n, p.Disk/n, p.Net/n
		}
		out = append(out, p)
	}
	return out, nil
}

// cosine is the cosine similarity of two profiles' vectors (0 when either
// is zero).
func cosine(a, b soloProfile) float64 {
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

// defaultSharpness is the exponent similarityWeights raises cosine
// similarities to. Resource profiles are all non-negative, so even a
// CPU-bound and an I/O-bound kind have a cosine around 0.5; the power
// lets the most similar kinds dominate the mix.
const defaultSharpness = 8

// similarityWeights are the weights for bandit.Learner.AddSimilar: each
// known kind's cosine similarity to kind, raised to sharpness (0:
// defaultSharpness). Kinds missing from profiles get none.
func similarityWeights(kind string, known []string, profiles []soloProfile, sharpness float64) map[string]float64 {
	if sharpness == 0 {
		sharpness = defaultSharpness
	}
	byKind := map[string]soloProfile{}
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
		if c := cosine(p, q); c > 0 {
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
	// Sharpness of similarityWeights (0: defaultSharpness).
	Sharpness float64
	Workers   int
}

// warmStartResult compares, for one new kind and one seed, the plain
// bandit (the new kind starts with zero preferences) with the
// similarity warm start (bandit.Learner.AddSimilar with similarityWeights),
// both from the same preferences learned without the new kind.
type warmStartResult struct {
	NewKind string
	Seed    uint64
	Weights map[string]float64
	// Plain and Similar: the learning speed after the new kind was added
	// (observations count from then). The chain of runs stops once the new
	// kind's row passed Threshold; PerKind[NewKind] is the figure of merit,
	// Reached says whether every kind passed too.
	Plain, Similar speedResult
	// InitialPlain and InitialSimilar: Σ π(best partners of the new kind |
	// new kind) right after it was added.
	InitialPlain, InitialSimilar float64
}

// WarmStart runs the study: for each new kind k and seed, learn PreRuns
// runs of the workload without k (its queue entries removed), then run the
// full workload with k added plainly or warm-started from similarity, and
// count the observations until every kind's best partners pass Threshold.
func WarmStart(ctx context.Context, wc WarmStartConfig) ([]warmStartResult, error) {
	w := wc.Run.Workload
	if w == nil {
		return nil, fmt.Errorf("%w: workload: missing", errInvalid)
	}
	truth, err := bestPartners(w, wc.Tolerance)
	if err != nil {
		return nil, err
	}
	profiles, err := soloProfiles(w)
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
			return nil, fmt.Errorf("%w: new kind %q is not in the workload", errInvalid, k)
		}
		for _, s := range wc.Seeds {
			tasks = append(tasks, task{k, s})
		}
	}
	out := make([]warmStartResult, len(tasks))
	err = forEach(ctx, len(tasks), wc.Workers, func(i int) error {
		var err error
		out[i], err = wc.warmStartOne(ctx, truth, profiles, tasks[i].kind, tasks[i].seed, pre, maxRuns)
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// warmStartOne is one task of the study: new kind kind from seed, pre
// learning runs without it, then up to maxRuns with it added plainly and
// warm-started from similarity.
func (wc WarmStartConfig) warmStartOne(ctx context.Context, truth []partnerTruth, profiles []soloProfile,
	kind string, seed uint64, pre, maxRuns int) (warmStartResult, error) {
	w := wc.Run.Workload
	without, err := withoutKind(w, kind)
	if err != nil {
		return warmStartResult{}, err
	}
	// Learn on the other kinds.
	var snap *bandit.Snapshot
	for run := range pre {
		rc := wc.Run.pairPreferences()
		rc.Workload, rc.Policy, rc.Seed, rc.Warm, rc.Observe, rc.Setup = without, policyRA, seed+uint64(run)*warmSeedOffset, snap, nil, nil
		if snap != nil {
			rc.Policy = policyRAWarm
		}
		r, err := runOne(ctx, rc)
		if err != nil {
			return warmStartResult{}, fmt.Errorf("warm start %s seed %d, learning run %d: %w", kind, seed, run+1, err)
		}
		snap = r.Preferences
	}
	res := warmStartResult{NewKind: kind, Seed: seed}
	res.Weights = similarityWeights(kind, snap.Kinds, profiles, wc.Sharpness)
	newTruth := truthOf(truth, kind)
	tmpl := wc.Run
	tmpl.Workload = w
	after := seed + uint64(pre)*warmSeedOffset
	stop := func(r speedResult) bool { return r.PerKind[kind].Total >= 0 }
	res.Plain, err = learnUntil(ctx, tmpl, after, maxRuns, truth, snap, func(l *bandit.Learner) {
		l.Add(kind)
		res.InitialPlain = setProb(l, newTruth.Set, kind)
	}, stop)
	if err != nil {
		return warmStartResult{}, err
	}
	res.Similar, err = learnUntil(ctx, tmpl, after, maxRuns, truth, snap, func(l *bandit.Learner) {
		l.AddSimilar(kind, res.Weights)
		res.InitialSimilar = setProb(l, newTruth.Set, kind)
	}, stop)
	if err != nil {
		return warmStartResult{}, err
	}
	return res, nil
}

func truthOf(truth []partnerTruth, kind string) partnerTruth {
	for _, t := range truth {
		if t.Kind == kind {
			return t
		}
	}
	return partnerTruth{Kind: kind}
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
		return nil, fmt.Errorf("%w: the workload has no job of another kind than %q", errInvalid, kind)
	}
	return &c, nil
}

// warmStartSummary aggregates WarmStart results for one new kind.
type warmStartSummary struct {
	NewKind                      string
	Seeds                        int
	Weights                      map[string]float64
	InitialPlain, InitialSimilar float64 // means
	// Reached counts the seeds whose new-kind row passed Threshold within
	// MaxRuns; Obs are the observations until then (reached seeds only).
	PlainReached, SimilarReached int
	PlainObs, SimilarObs         stat
	// MedianPlain and MedianSimilar count a seed that never reached as
	// infinitely slow (+Inf when half or more never did).
	MedianPlain, MedianSimilar float64
}

// summarizeWarmStart groups results by new kind, in first-seen order.
func summarizeWarmStart(rs []warmStartResult) []warmStartSummary {
	var out []warmStartSummary
	idx := map[string]int{}
	plain, similar := map[string][]float64{}, map[string][]float64{}
	for _, r := range rs {
		i, ok := idx[r.NewKind]
		if !ok {
			i = len(out)
			idx[r.NewKind] = i
			out = append(out, warmStartSummary{NewKind: r.NewKind, Weights: r.Weights})
		}
		s := &out[i]
		s.Seeds++
		s.InitialPlain += r.InitialPlain
		s.InitialSimilar += r.InitialSimilar
		p, q := r.Plain.PerKind[r.NewKind], r.Similar.PerKind[r.NewKind]
		pv, qv := math.Inf(1), math.Inf(1)
		if p.Total >= 0 {
			s.PlainReached++
			pv = float64(p.Total)
		}
		if q.Total >= 0 {
			s.SimilarReached++
			qv = float64(q.Total)
		}
		plain[r.NewKind] = append(plain[r.NewKind], pv)
		similar[r.NewKind] = append(similar[r.NewKind], qv)
	}
	finite := func(xs []float64) []float64 {
		var out []float64
		for _, x := range xs {
			if !math.IsInf(x, 0) {
				out = append(out, x)
			}
		}
		return out
	}
	for i := range out {
		s := &out[i]
		s.InitialPlain /= float64(s.Seeds)
		s.InitialSimilar /= float64(s.Seeds)
		s.PlainObs, s.SimilarObs = NewStat(finite(plain[s.NewKind])), NewStat(finite(similar[s.NewKind]))
		s.MedianPlain, s.MedianSimilar = median(plain[s.NewKind]), median(similar[s.NewKind])
	}
	return out
}

func median(xs []float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// WriteWarmStartTable prints summarizeWarmStart(rs) as a table.
func WriteWarmStartTable(w io.Writer, rs []warmStartResult) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "new kind\tsimilarity weights\tπ(best|new) at start plain → similar\treached plain\treached similar\tobservations plain median [min, max]\tobservations similar median [min, max]")
	for _, s := range summarizeWarmStart(rs) {
		keys := make([]string, 0, len(s.Weights))
		for k := range s.Weights {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		ws := make([]string, len(keys))
		for i, k := range keys {
			ws[i] = fmt.Sprintf("%s %.3f", k, s.Weights[k])
		}
		fmt.Fprintf(tw, "%s\t%s\t%.2f → %.2f\t%d/%d\t%d/%d\t%s [%.0f, %.0f]\t%s [%.0f, %.0f]\n", s.NewKind, strings.Join(ws, ", "),
			s.InitialPlain, s.InitialSimilar, s.PlainReached, s.Seeds, s.SimilarReached, s.Seeds,
			fmtObs(s.MedianPlain), s.PlainObs.Min, s.PlainObs.Max, fmtObs(s.MedianSimilar), s.SimilarObs.Min, s.SimilarObs.Max)
	}
	return tw.Flush()
}

func fmtObs(x float64) string {
	if math.IsInf(x, 1) {
		return "never"
	}
	return fmt.Sprintf("%.0f", x)
}
