package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sort"
	"sync"
	"text/tabwriter"

	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// The reward study asks whether the paper's goodness (Eq. 1) is a sound
// thing to maximise on a workload: does a pair's goodness rank pairs as
// their measured speed-up does, does the profile model predict goodness,
// and does ra do better maximising goodness or the predicted progress rate?

// RewardConfig configures RewardStudy.
type RewardConfig struct {
	// Run is the template of the ra runs (Workload, Daemon, …); Policy,
	// Seed and Observe are set by the study.
	Run     RunConfig
	Seeds   []uint64
	Workers int // ≤ 0: GOMAXPROCS
}

// pairReward is one pair of kinds in the paper's §3.1 experiment
// (sim.Pairwise): both jobs co-located on every node against separated.
type pairReward struct {
	A, B string
	// Goodness is the mean goodness of the node samples while both ran
	// co-located; Speedup is −ΔAll, the fraction of time the pair saves
	// co-located.
	Goodness, Speedup float64
}

// rewardResult is the study's outcome on one workload.
type rewardResult struct {
	Workload string
	Pairs    []pairReward
	// GoodnessVsSpeedup is Spearman's ρ between the pairs' goodness and
	// their speed-up: 1 when goodness ranks pairs as their speed does.
	GoodnessVsSpeedup float64
	// PredictedVsObserved is Spearman's ρ between the goodness the
	// profiles predicted for a co-located node (before the tick that
	// observed it) and the goodness observed, over every such node and
	// learning tick of ra's runs; Checks counts them, and MeanAbsError is
	// the mean |observed − predicted|. One tick's goodness follows the
	// jobs' phases, which mean profiles do not see, so PairsPredicted is
	// the same ρ over the pairs of kinds, each pair's observations
	// averaged (Spearman over PairChecks pairs).
	PredictedVsObserved float64
	Checks              int
	MeanAbsError        float64
	PairsPredicted      float64
	PairChecks          int
	// Objectives is ra's makespan and mean JCT against fifo, on the same
	// seeds, with each scorer objective (rate, goodness).
	Objectives []Summary
}

// RewardStudy runs the study on rc.Run.Workload.
func RewardStudy(ctx context.Context, rc RewardConfig) (rewardResult, error) {
	w := rc.Run.Workload
	res := rewardResult{Workload: rc.Run.name()}
	for i, a := range w.Kinds {
		for _, b := range w.Kinds[i:] {
			r, err := sim.Pairwise(w, a.Name, b.Name, 1)
			if err != nil {
				return res, fmt.Errorf("reward study: %w", err)
			}
			res.Pairs = append(res.Pairs, pairReward{A: a.Name, B: b.Name, Goodness: r.Colocated.Goodness, Speedup: -r.DeltaAll()})
		}
	}
	g := make([]float64, len(res.Pairs))
	sp := make([]float64, len(res.Pairs))
	for i, p := range res.Pairs {
		g[i], sp[i] = p.Goodness, p.Speedup
	}
	res.GoodnessVsSpeedup = spearman(g, sp)

	// ra with each objective; the rate runs also record the predictions.
	var mu sync.Mutex
	var pred, obs []float64
	type sums struct{ pred, obs, n float64 }
	byPair := map[string]*sums{}
	base := rc.Run.daemonConfig()
	var cfgs []RunConfig
	for _, obj := range []profile.Objective{profile.ObjectiveRate, profile.ObjectiveGoodness} {
		c := base
		c.Pipeline.Scorer.Objective = string(obj)
		for _, seed := range rc.Seeds {
			r := rc.Run
			r.Daemon, r.Policy, r.Seed, r.Setup = &c, policyRA, seed, nil
			r.Name = res.Workload + " ra objective " + string(obj)
			if obj == profile.ObjectiveRate {
				r.Observe = func(ev learnEvent) {
					mu.Lock()
					defer mu.Unlock()
					for _, gc := range ev.Report.Goodness {
						pred = append(pred, gc.Predicted)
						obs = append(obs, gc.Observed)
						k := slices.Clone(gc.Kinds)
						slices.Sort(k)
						key := fmt.Sprint(k)
						if byPair[key] == nil {
							byPair[key] = &sums{}
						}
						p := byPair[key]
						p.pred += gc.Predicted
						p.obs += gc.Observed
						p.n++
					}
				}
			}
			f := r
			f.Policy, f.Observe = FIFO, nil
			cfgs = append(cfgs, r, f)
		}
	}
	results, err := RunAll(ctx, cfgs, rc.Workers, nil)
	if err != nil {
		return res, fmt.Errorf("reward study: %w", err)
	}
	if res.Objectives, err = Summarize(results); err != nil {
		return res, err
	}
	res.Objectives = slices.DeleteFunc(res.Objectives, func(s Summary) bool { return s.Policy == FIFO })
	res.Checks = len(obs)
	res.PredictedVsObserved = spearman(pred, obs)
	for i := range obs {
		res.MeanAbsError += math.Abs(obs[i]-pred[i]) / float64(len(obs))
	}
	var pp, po []float64
	for _, p := range byPair {
		pp = append(pp, p.pred/p.n)
		po = append(po, p.obs/p.n)
	}
	res.PairChecks, res.PairsPredicted = len(pp), spearman(pp, po)
	return res, nil
}

// WriteRewardTable prints the study.
func WriteRewardTable(out io.Writer, r rewardResult) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "pair\tgoodness co-located\tspeed-up co-located (−ΔAll)\n")
	for _, p := range r.Pairs {
		fmt.Fprintf(tw, "%s + %s\t%.1f\t%+.1f%%\n", p.A, p.B, p.Goodness, 100*p.Speedup)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintf(out, "Spearman ρ(goodness, speed-up) over %d pairs: %.2f\n", len(r.Pairs), r.GoodnessVsSpeedup)
	fmt.Fprintf(out, "Spearman ρ(predicted, observed goodness) over %d co-located node observations: %.2f (mean |error| %.2f); over the %d co-located kind pairs, each averaged: %.2f\n",
		r.Checks, r.PredictedVsObserved, r.MeanAbsError, r.PairChecks, r.PairsPredicted)
	fmt.Fprintln(out, "ra by scorer objective:")
	return WriteTable(out, r.Objectives)
}

// spearman is Spearman's rank correlation of x and y (ties get their mean
// rank); NaN when either is constant or they have fewer than 2 points.
func spearman(x, y []float64) float64 {
	if len(x) != len(y) || len(x) < 2 {
		return math.NaN()
	}
	rx, ry := ranks(x), ranks(y)
	var mx, my float64
	for i := range rx {
		mx += rx[i] / float64(len(rx))
		my += ry[i] / float64(len(ry))
	}
	var sxy, sxx, syy float64
	for i := range rx {
		dx, dy := rx[i]-mx, ry[i]-my
		sxy += dx * dy
		sxx += dx * dx
		syy += dy * dy
	}
	if sxx == 0 || syy == 0 {
		return math.NaN()
	}
	return sxy / math.Sqrt(sxx*syy)
}

// ranks are 1-based ranks with ties averaged.
func ranks(x []float64) []float64 {
	idx := make([]int, len(x))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return x[idx[a]] < x[idx[b]] })
	r := make([]float64, len(x))
	for i := 0; i < len(idx); {
		j := i
		for j+1 < len(idx) && x[idx[j+1]] == x[idx[i]] {
			j++
		}
		mean := float64(i+j)/2 + 1
		for k := i; k <= j; k++ {
			r[idx[k]] = mean
		}
		i = j + 1
	}
	return r
}
