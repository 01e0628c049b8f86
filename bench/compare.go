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
		r, err := Run(ctx, cfgs[i])
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

// Stat summarises a sample: mean, sample standard deviation, extremes.
type Stat struct {
	N                   int
	Mean, Std, Min, Max float64
}

// NewStat computes the statistics of xs.
func NewStat(xs []float64) Stat {
	s := Stat{N: len(xs)}
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
	Makespan, JCT Stat
	// Relative change against fifo on the same seed, (x − fifo)/fifo:
	// negative is faster.
	MakespanChange, JCTChange Stat
	// OracleShare is the fraction of the oracle's mean makespan gain over
	// fifo that this policy captures, mean(fifo − x)/mean(fifo − oracle)
	// over the common seeds; NaN without an oracle or with no oracle gain.
	OracleShare float64
	// Usage means over seeds.
	CPU, IOWait, Disk, Net float64
}

// Summarize groups results by workload and policy (in the order of
// Policies) and compares each with fifo on the same workload and seed.
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
			return nil, fmt.Errorf("%w: %s %s seed %d appears twice", ErrInvalid, r.Workload, r.Policy, r.Seed)
		}
		by[k][r.Seed] = r
		if !slices.Contains(wls, r.Workload) {
			wls = append(wls, r.Workload)
		}
	}
	var out []Summary
	for _, wl := range wls {
		fifo := by[key{wl, FIFO}]
		oracle := by[key{wl, Oracle}]
		for _, p := range Policies() {
			rs := by[key{wl, p}]
			if len(rs) == 0 {
				continue
			}
			seeds := make([]uint64, 0, len(rs))
			for s := range rs {
				seeds = append(seeds, s)
			}
			slices.Sort(seeds)
			sum := Summary{Workload: wl, Policy: p, Seeds: seeds, OracleShare: math.NaN()}
			var ms, jct, dms, djct []float64
			var gain, ogain float64
			var ng int
			for _, s := range seeds {
				r := rs[s]
				f, ok := fifo[s]
				if !ok {
					return nil, fmt.Errorf("%w: %s: no fifo run for seed %d (needed to compare %s)", ErrInvalid, wl, s, p)
				}
				ms = append(ms, r.MakespanS)
				jct = append(jct, r.MeanJCTS)
				dms = append(dms, (r.MakespanS-f.MakespanS)/f.MakespanS)
				djct = append(djct, (r.MeanJCTS-f.MeanJCTS)/f.MeanJCTS)
				if o, ok := oracle[s]; ok {
					gain += f.MakespanS - r.MakespanS
					ogain += f.MakespanS - o.MakespanS
					ng++
				}
				sum.CPU += r.MeanCPUUtil / float64(len(seeds))
				sum.IOWait += r.MeanIOWait / float64(len(seeds))
				sum.Disk += r.MeanDiskUtil / float64(len(seeds))
				sum.Net += r.MeanNetUtil / float64(len(seeds))
			}
			sum.Makespan, sum.JCT = NewStat(ms), NewStat(jct)
			sum.MakespanChange, sum.JCTChange = NewStat(dms), NewStat(djct)
			if ng > 0 && ogain > 0 {
				sum.OracleShare = gain / ogain
			}
			out = append(out, sum)
		}
	}
	return out, nil
}

// WriteTable prints the summaries as an aligned text table: makespan and
// mean JCT (mean ± standard deviation over seeds), their change against
// fifo (mean ± sd, [min, max]), the share of the oracle's gain, and the
// mean usage.
func WriteTable(w io.Writer, sums []Summary) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "workload\tpolicy\truns\tmakespan s\tvs fifo\t[min, max]\tmean JCT s\tvs fifo\t[min, max]\tof oracle gain\tcpu\tiowait\tdisk\tnet")
	for _, s := range sums {
		share := "-"
		if !math.IsNaN(s.OracleShare) && s.Policy != FIFO && s.Policy != Bound {
			share = fmt.Sprintf("%.0f%%", 100*s.OracleShare)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%.0f ± %.0f\t%s\t%s\t%.0f ± %.0f\t%s\t%s\t%s\t%.2f\t%.3f\t%.2f\t%.2f\n",
			s.Workload, s.Policy, s.Makespan.N, s.Makespan.Mean, s.Makespan.Std,
			pct(s.MakespanChange), pctRange(s.MakespanChange),
			s.JCT.Mean, s.JCT.Std, pct(s.JCTChange), pctRange(s.JCTChange),
			share, s.CPU, s.IOWait, s.Disk, s.Net)
	}
	return tw.Flush()
}

func pct(s Stat) string { return fmt.Sprintf("%+.1f%% ± %.1f", 100*s.Mean, 100*s.Std) }

func pctRange(s Stat) string {
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
