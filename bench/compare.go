package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"text/tabwriter"
)

// RunAll runs every configuration on a pool of workers (≤ 0: GOMAXPROCS)
// and returns the results in the order of cfgs. Each run owns its
// simulator, store and random sources, so the results do not depend on
// the number of workers or on scheduling. progress, when set, is called
// after each run with the number of runs done (from one goroutine at a
// time). The first error cancels the remaining runs and is returned.
func RunAll(ctx context.Context, cfgs []RunConfig, workers int, progress func(done, total int)) ([]Result, error) {
	out := make([]Result, len(cfgs))
	var mu sync.Mutex
	done := 0
	err := forEach(ctx, len(cfgs), workers, func(i int) error {
		r, err := runOne(ctx, cfgs[i])
		if err != nil {
			return fmt.Errorf("%s seed %d: %w", cfgs[i].Policy, cfgs[i].Seed, err)
		}
		out[i] = r
		mu.Lock()
		defer mu.Unlock()
		done++
		if progress != nil {
			progress(done, len(cfgs))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// forEach calls f(0..n-1) on a pool of workers (≤ 0: GOMAXPROCS). The
// first error cancels ctx for the calls still to start and is returned.
func forEach(ctx context.Context, n, workers int, f func(i int) error) error {
	if workers <= 0 {
		workers = runtime.GOMAXPROCS(0)
	}
	workers = min(workers, max(n, 1))
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	idx := make(chan int)
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		firstErr error
	)
	for range workers {
		wg.Go(func() {
			for i := range idx {
				if err := f(i); err != nil {
					mu.Lock()
					if firstErr == nil {
						firstErr = err
						cancel()
					}
					mu.Unlock()
				}
			}
		})
	}
feed:
	for i := range n {
		select {
		case idx <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(idx)
	wg.Wait()
	if firstErr != nil {
		return firstErr
	}
	return ctx.Err()
}

// stat summarises a sample: mean, sample standard deviation, extremes.
type stat struct {
	N                   int
	Mean, Std, Min, Max float64
}

// NewStat computes the statistics of xs.
func NewStat(xs []float64) stat {
	s := stat{N: len(xs)}
	if len(xs) == 0 {
		return s
	}
	s.Min, s.Max = math.Inf(1), math.Inf(-1)
	for _, x := range xs {
		s.Mean += x
		s.Min, s.Max = min(s.Min, x), max(s.Max, x)
	}
	s.Mean /= float64(len(xs))
	if len(xs) > 1 {
		for _, x := range xs {
			s.Std += (x - s.Mean) * (x - s.Mean)
		}
		s.Std = math.Sqrt(s.Std / float64(len(xs)-1))
	}
	return s
}

// Summary is one policy's results over seeds, against fifo on the same
// seeds.
type Summary struct {
	Workload string
	Policy   Policy
	Seeds    []uint64
	// Absolute figures, seconds.
	Makespan, JCT stat
	// Relative change against fifo on the same seed, (x − fifo)/fifo:
	// negative is faster.
	MakespanChange, JCTChange stat
	// Metric is the workload's (WorkloadMetric): what RolloutShare is of.
	Metric Metric
	// RolloutShare is the fraction of the rollout's mean gain over fifo in
	// the workload's metric that this policy captures, mean(fifo −
	// x)/mean(fifo − rollout) over the seeds both ran; NaN without a
	// rollout or with no rollout gain. The rollout (no foresight) is the
	// ceiling; the greedy oracle is only a reference, which policies can
	// pass.
	RolloutShare float64
	// MaxWait and P95Wait: each run's longest and 95th-percentile wait,
	// seconds, over seeds.
	MaxWait, P95Wait stat
	// Usage means over seeds.
	CPU, IOWait, Disk, Net float64
}

// metricOf is r's value in m, seconds.
func metricOf(r Result, m Metric) float64 {
	if m == metricJCT {
		return r.MeanJCTS
	}
	return r.MakespanS
}

// SetRolloutShares sets each result's RolloutShare from the fifo and
// rollout results of its workload and seed among results, in its
// workload's metric: (fifo − x)/(fifo − rollout). It leaves it nil
// where either run is missing, where the rollout gained nothing over
// fifo (less than a millionth), and for bound (no schedule).
func SetRolloutShares(results []Result) {
	type key struct {
		wl   string
		seed uint64
	}
	fifo, roll := map[key]Result{}, map[key]Result{}
	for _, r := range results {
		switch r.Policy {
		case FIFO:
			fifo[key{r.Workload, r.Seed}] = r
		case policyRollout:
			roll[key{r.Workload, r.Seed}] = r
		}
	}
	for i := range results {
		r := &results[i]
		r.RolloutShare = nil
		f, ok1 := fifo[key{r.Workload, r.Seed}]
		o, ok2 := roll[key{r.Workload, r.Seed}]
		if !ok1 || !ok2 || r.Policy == policyBound {
			continue
		}
		fv, ov := metricOf(f, r.Metric), metricOf(o, r.Metric)
		if fv-ov <= 1e-6*fv {
			continue
		}
		share := (fv - metricOf(*r, r.Metric)) / (fv - ov)
		r.RolloutShare = &share
	}
}

// Summarize groups results by workload and policy (in the order of
// policies()) and compares each with fifo on the same workload and seed.
// Every workload needs fifo results for the seeds of its other policies.
func Summarize(results []Result) ([]Summary, error) {
	type key struct {
		wl string
		p  Policy
	}
	by := map[key]map[uint64]Result{}
	var wls []string
	for _, r := range results {
		k := key{r.Workload, r.Policy}
		if by[k] == nil {
			by[k] = map[uint64]Result{}
		}
		if _, dup := by[k][r.Seed]; dup {
			return nil, fmt.Errorf("%w: %s %s seed %d appears twice", errInvalid, r.Workload, r.Policy, r.Seed)
		}
		by[k][r.Seed] = r
		if !slices.Contains(wls, r.Workload) {
			wls = append(wls, r.Workload)
		}
	}
	var out []Summary
	for _, wl := range wls {
		fifo := by[key{wl, FIFO}]
		roll := by[key{wl, policyRollout}]
		for _, p := range policies() {
			rs := by[key{wl, p}]
			if len(rs) == 0 {
				continue
			}
			seeds := make([]uint64, 0, len(rs))
			for s := range rs {
				seeds = append(seeds, s)
			}
			slices.Sort(seeds)
			sum := Summary{Workload: wl, Policy: p, Seeds: seeds, RolloutShare: math.NaN(), Metric: rs[seeds[0]].Metric}
			if sum.Metric == "" {
				sum.Metric = metricMakespan
			}
			var ms, jct, dms, djct, mw, pw []float64
			var gain, rgain float64
			var ng int
			for _, s := range seeds {
				r := rs[s]
				f, ok := fifo[s]
				if !ok {
					return nil, fmt.Errorf("%w: %s: no fifo run for seed %d (needed to compare %s)", errInvalid, wl, s, p)
				}
				ms = append(ms, r.MakespanS)
				jct = append(jct, r.MeanJCTS)
				dms = append(dms, (r.MakespanS-f.MakespanS)/f.MakespanS)
				djct = append(djct, (r.MeanJCTS-f.MeanJCTS)/f.MeanJCTS)
				mw = append(mw, r.MaxWaitS)
				pw = append(pw, r.P95WaitS)
				if o, ok := roll[s]; ok {
					gain += metricOf(f, sum.Metric) - metricOf(r, sum.Metric)
					rgain += metricOf(f, sum.Metric) - metricOf(o, sum.Metric)
					ng++
				}
				sum.CPU += r.MeanCPUUtil / float64(len(seeds))
				sum.IOWait += r.MeanIOWait / float64(len(seeds))
				sum.Disk += r.MeanDiskUtil / float64(len(seeds))
				sum.Net += r.MeanNetUtil / float64(len(seeds))
			}
			sum.Makespan, sum.JCT = NewStat(ms), NewStat(jct)
			sum.MakespanChange, sum.JCTChange = NewStat(dms), NewStat(djct)
			sum.MaxWait, sum.P95Wait = NewStat(mw), NewStat(pw)
			if ng > 0 && rgain > 0 {
				sum.RolloutShare = gain / rgain
			}
			out = append(out, sum)
		}
	}
	return out, nil
}

// WriteTable prints the summaries as an aligned text table: makespan and
// mean JCT (mean ± standard deviation over seeds), their change against
// fifo (mean ± sd, [min, max]), the share of the rollout's gain in the
// workload's metric, the mean over seeds of each run's longest and
// 95th-percentile wait, and the mean usage.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tpolicy\truns\tmakespan s\tvs fifo\t[min, max]\tmean JCT s\tvs fifo\t[min, max]\tof rollout gain\tmax wait s\tp95 wait s\tcpu\tiowait\tdisk\tnet")
	for _, s := range sums {
		share := "-"
		if !math.IsNaN(s.RolloutShare) && s.Policy != FIFO && s.Policy != policyBound {
			share = fmt.Sprintf("%.0f%% (%s)", 100*s.RolloutShare, s.Metric)
		}
		waits := []string{"-", "-"}
		if s.Policy != policyBound {
			waits = []string{fmt.Sprintf("%.0f", s.MaxWait.Mean), fmt.Sprintf("%.0f", s.P95Wait.Mean)}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f ± %.0f\t%s\t%s\t%.0f ± %.0f\t%s\t%s\t%s\t%s\t%s\t%.2f\t%.3f\t%.2f\t%.2f\n",
			s.Workload, s.Policy, s.Makespan.N, s.Makespan.Mean, s.Makespan.Std,
			pct(s.MakespanChange), pctRange(s.MakespanChange),
			s.JCT.Mean, s.JCT.Std, pct(s.JCTChange), pctRange(s.JCTChange),
			share, waits[0], waits[1], s.CPU, s.IOWait, s.Disk, s.Net)
	}
	return tw.Flush()
}

func pct(s stat) string { return fmt.Sprintf("%+.1f%% ± %.1f", 100*s.Mean, 100*s.Std) }

func pctRange(s stat) string {
	return fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*s.Min, 100*s.Max)
}

// Configs expands policies × seeds into run configurations from a
// template (its Policy and Seed are replaced), policy-major.
func Configs(tmpl RunConfig, policies []Policy, seeds []uint64) []RunConfig {
	out := make([]RunConfig, 0, len(policies)*len(seeds))
	for _, p := range policies {
		for _, s := range seeds {
			c := tmpl
			c.Policy, c.Seed = p, s
			out = append(out, c)
		}
	}
	return out
}

// Seeds returns n consecutive seeds from first.
func Seeds(first uint64, n int) []uint64 {
	out := make([]uint64, n)
	for i := range out {
		out[i] = first + uint64(i)
	}
	return out
}
