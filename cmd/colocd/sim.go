package main

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/colocd/colocd/bench"
	"github.com/colocd/colocd/daemon"
)

// simFlags are `colocd sim`'s flags.
type simFlags struct {
	workloads     []string
	policy        string
	seed          uint64
	runs          int
	json          bool
	plotDir       string
	compare       string
	parallel      int
	learnInterval time.Duration
	admissionTick time.Duration
	jitter        float64
	oracleHorizon time.Duration
	oracleInstant bool
	rollSamples   int
	study         string
	scale         string
}

// simLong is sim's help.
const simLong = `Play a workload (configs/workloads/*.yaml) on the cluster simulator in virtual
time under an admission policy, and report makespan, mean job completion time
and mean resource usage. Policies:

  fifo             the queue order, head first while it fits
  random           a uniformly random job of the window that fits
  paper            the paper's method: the pair bandit alone, sampling, no profile model
  ra               colocd: its loop, engine, ordering pipeline, profile model and bandit,
                   learning from scratch
  ra-psi           ra on a cluster whose metrics carry I/O and CPU pressure stall
                   information (the goodness counts I/O stalls that busy CPUs hide from
                   iowait; the profiles fit saturated nodes at the demand the stalls imply)
  ra-plan          ra with model-predictive admission (pipeline.lookahead): the top
                   candidates rolled out on a simulator built from what was learned
  ra-warm          ra starting from what a previous ra run learned (seed + 1000000)
  ra-profile-true  ra scoring with every kind's true mean solo profile (a reference:
                   decision quality without estimation error)
  packfit          least predicted overload of the nodes a job lands on (true profiles)
  alternate        the job whose dominant resource is least represented where it lands
                   (true profiles)
  tetris           Tetris/Graphene's alignment of demand with free resources, jobs that
                   fit first (true profiles)
  drf              FIFO within DRF deficits between the workload's queues (class weights)
  curves           FIFO within service curves: the workload's classes as the fairness
                   stage's service queues (pipeline.fairness.mode curves)
  ra-curves        ra under the same service curves
  pairwise         kind-level greedy on the simulator's pairwise ground truth (a reference)
  oracle           greedy with ground truth: what-if runs of every candidate on a clone
                   (a reference, not a ceiling: policies pass it)
  rollout          the ceiling: per decision, each candidate finished with the oracle on
                   --rollout-samples copies of the run with fresh random streams (no
                   foresight of placements, jitter or Poisson arrivals), the best mean
                   kept (a reference; slow)
  rollout-foresight
                   rollout on one plain clone per candidate, which draws the run's own
                   future (a reference to measure foresight)
  bound            a resource lower bound on the makespan (no schedule)

paper, ra, ra-warm, ra-profile-true, drf, curves and ra-curves use the daemon
configuration (--config FILE, COLOCD_* env): its pipeline, learning and
admission sections, exactly as colocd serve (drf and curves set its fairness
section from the workload's classes). A workload with queues or classes adds
per-class waits and shares to --json (classes). Runs are deterministic for a seed; --runs R plays seeds
N..N+R-1 in parallel.

--compare prints each policy against fifo on the same seeds, a table per
workload, with each policy's share of the rollout's gain in the workload's
metric (makespan; mean JCT for Poisson arrivals); with --json, each line
carries rollout_share, its seed's share, when fifo and rollout ran too; --workload may then be given more than once (one file per flag),
and with --plot-dir the runs also draw compare.png: per workload, each
policy's change against fifo in the workload's metric (makespan; mean JCT
for Poisson arrivals): a bar to the median over seeds, the interquartile
range, whiskers at the table's min and max and a circle at its mean.

  colocd sim --workload configs/workloads/paper-queue-a.yaml --policy ra --json
  colocd sim --workload configs/workloads/paper-queue-a.yaml --runs 20 \
      --compare fifo,ra,ra-warm,oracle,bound --plot-dir plots/
  colocd sim --workload configs/workloads/paper-queue-a.yaml \
      --workload configs/workloads/eight-kinds.yaml --runs 5 \
      --compare fifo,packfit,tetris,ra --plot-dir plots/
  colocd sim --workload configs/workloads/paper-queue-a.yaml --runs 20 --study speed
  colocd sim --workload configs/workloads/paper-queue-a.yaml --runs 10 --study warm-start
  colocd sim --workload configs/workloads/noisy.yaml --runs 10 --study reward
  colocd sim --workload configs/workloads/new-kinds.yaml --runs 10 --study profiles
  colocd sim --workload configs/workloads/eight-kinds.yaml --study scale --plot-dir plots/
  colocd sim --workload configs/workloads/eight-kinds.yaml --scale 10000:2000 --policy ra`

func newSimCmd() *cobra.Command {
	f := &simFlags{}
	var cf *configFlags
	cmd := &cobra.Command{
		Use:   "sim",
		Short: "Play a workload on the simulator under an admission policy and measure it",
		Long:  simLong,
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return runSim(cmd, cf, f) },
	}
	fl := cmd.Flags()
	cf = addConfigFlags(fl)
	cf.explicitOnly = true // never the default path: a node's config would change what is played
	f.register(fl)
	return cmd
}

// register adds the flags to fl.
func (f *simFlags) register(fl *pflag.FlagSet) {
	fl.StringArrayVar(&f.workloads, "workload", nil, "workload YAML file (required); with --compare, repeat it to compare on several workloads (a table each, one compare.png)")
	fl.StringVar(&f.policy, "policy", "ra", "policy: fifo|random|paper|ra|ra-psi|ra-plan|ra-warm|ra-profile-true|packfit|alternate|tetris|drf|curves|ra-curves|pairwise|oracle|rollout|rollout-foresight|bound")
	fl.Uint64Var(&f.seed, "seed", 1, "first seed")
	fl.IntVar(&f.runs, "runs", 1, "number of seeds (seed, seed+1, ...)")
	fl.BoolVar(&f.json, "json", false, "print one JSON object per run, one per line")
	fl.StringVar(&f.plotDir, "plot-dir", "", "write PNG plots here: per policy usage over time, learned profiles and preferences; with --compare, compare.png (change vs fifo per policy and workload)")
	fl.StringVar(&f.compare, "compare", "", "comma-separated policies to compare against fifo (table)")
	fl.IntVar(&f.parallel, "parallel", runtime.GOMAXPROCS(0), "runs at once")
	fl.DurationVar(&f.learnInterval, "learn-interval", 0, "virtual learning interval (0: learning.schedule, default 60s)")
	fl.DurationVar(&f.admissionTick, "admission-tick", 0, "also admit every this long in virtual time (0: on arrivals, completions and learning ticks)")
	fl.Float64Var(&f.jitter, "jitter", 0, "simulator work jitter in [0, 1) (0: exact durations)")
	fl.DurationVar(&f.oracleHorizon, "oracle-horizon", 0, "oracle look-ahead (0: 1m)")
	fl.BoolVar(&f.oracleInstant, "oracle-instant", false, "oracle scores the progress rate at the instant of placement")
	fl.IntVar(&f.rollSamples, "rollout-samples", bench.DefaultRolloutSamples, "futures the rollout samples per candidate and decision, each with a fresh random stream")
	fl.StringVar(&f.scale, "scale", "", "scale the workload to NODES:JOBS first (sim.Workload.Scaled; its name gets @NODESn), e.g. 10000:2000")
	fl.StringVar(&f.study, "study", "", "run a study instead: speed | warm-start (pair preferences), reward (goodness vs speed-up, objectives), profiles (profile learning speed), scale (wall time per run at 100, 1,000 and 10,000 nodes)")
}

func runSim(cmd *cobra.Command, cf *configFlags, f *simFlags) error {
	if err := checkSimFlags(f); err != nil {
		return err
	}
	tmpls, err := simTemplates(cf, f)
	if err != nil {
		return err
	}
	tmpl := tmpls[0]
	seeds := bench.Seeds(f.seed, f.runs)
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	ctx := cmd.Context()

	switch f.study {
	case "":
	case "speed":
		return simSpeedStudy(cmd, tmpl, seeds, f.parallel)
	case "warm-start":
		return simWarmStartStudy(cmd, tmpl, seeds, f.parallel)
	case "reward":
		r, err := bench.RewardStudy(ctx, bench.RewardConfig{Run: tmpl, Seeds: seeds, Workers: f.parallel})
		if err != nil {
			return err
		}
		fmt.Fprintf(out, "%s: the reward, %d seeds from %d, %s\n", tmpl.Name, f.runs, f.seed, machine())
		return bench.WriteRewardTable(out, r)
	case "profiles":
		return simProfileStudy(cmd, tmpl, seeds, f.parallel)
	case "scale":
		if f.scale != "" {
			return usagef("sim: --study scale scales the workload itself; leave out --scale")
		}
		return simScaleStudy(cmd, tmpl, f)
	default:
		return usagef("sim: --study must be speed, warm-start, reward, profiles or scale, got %q", f.study)
	}

	policies, err := simPolicies(f)
	if err != nil {
		return err
	}
	var cfgs []bench.RunConfig
	for _, t := range tmpls {
		cfgs = append(cfgs, bench.Configs(t, policies, seeds)...)
	}
	bar := newProgressBar(errOut, len(cfgs))
	results, err := bench.RunAll(ctx, cfgs, f.parallel, bar.update)
	bar.done()
	if err != nil {
		return err
	}
	bench.SetRolloutShares(results)
	var sums []bench.Summary
	if f.compare != "" {
		if sums, err = bench.Summarize(results); err != nil {
			return err
		}
	}
	if err := printSimResults(out, f, tmpls, sums, results); err != nil {
		return err
	}
	if f.plotDir == "" {
		return nil
	}
	return writeSimPlots(errOut, f.plotDir, tmpls, sums, results)
}

// checkSimFlags checks the flags that need no file: a workload, several
// only for a comparison, and positive counts.
func checkSimFlags(f *simFlags) error {
	n := len(f.workloads)
	switch {
	case n == 0:
		return usagef("sim: --workload is required")
	case n > 1 && f.study != "":
		return usagef("sim: --study takes one --workload, got %d", n)
	case n > 1 && f.compare == "":
		return usagef("sim: %d --workload flags need --compare (one table each and one compare.png)", n)
	case f.runs < 1:
		return usagef("sim: --runs must be >= 1, got %d", f.runs)
	case f.parallel < 1:
		return usagef("sim: --parallel must be >= 1, got %d", f.parallel)
	case f.rollSamples < 1 || f.rollSamples > bench.MaxRolloutSamples:
		return usagef("sim: --rollout-samples must be in [1, %d], got %d", bench.MaxRolloutSamples, f.rollSamples)
	}
	return nil
}

// simTemplates loads each --workload (scaled by --scale) into a run
// template with the daemon configuration, named by its file name without
// the extension. Results are keyed by that name, so two workloads may not
// share it.
func simTemplates(cf *configFlags, f *simFlags) ([]bench.RunConfig, error) {
	var out []bench.RunConfig
	for _, path := range f.workloads {
		w, err := bench.LoadWorkload(path)
		if err != nil {
			return nil, usageError{err}
		}
		name := strings.TrimSuffix(filepath.Base(path), filepath.Ext(path))
		if f.scale != "" {
			nodes, jobs, err := parseScale(f.scale)
			if err != nil {
				return nil, err
			}
			if w, err = w.Scaled(nodes, jobs); err != nil {
				return nil, usageError{fmt.Errorf("sim: --scale %s: %w", f.scale, err)}
			}
			name += fmt.Sprintf("@%dn", nodes)
		}
		if i := slices.IndexFunc(out, func(t bench.RunConfig) bool { return t.Name == name }); i >= 0 {
			return nil, usagef("sim: --workload %s and %s are both named %q (results are keyed by the file name)", f.workloads[i], path, name)
		}
		out = append(out, bench.RunConfig{
			Workload:       w,
			Name:           name,
			LearnInterval:  f.learnInterval,
			AdmissionTick:  f.admissionTick,
			Jitter:         f.jitter,
			OracleHorizon:  f.oracleHorizon,
			OracleInstant:  f.oracleInstant,
			RolloutSamples: f.rollSamples,
		})
	}
	cfg, err := simDaemonConfig(cf)
	if err != nil {
		return nil, err
	}
	for i := range out {
		out[i].Daemon = &cfg
	}
	return out, nil
}

// writeSimPlots writes the per-policy plots into dir and, for a
// comparison (sums), compare.png, drawn from the summaries the tables
// print; it names each file written on errOut.
func writeSimPlots(errOut io.Writer, dir string, tmpls []bench.RunConfig, sums []bench.Summary, results []bench.Result) error {
	files, err := bench.WritePlots(dir, results)
	if err != nil {
		return err
	}
	if sums != nil {
		metrics := map[string]bench.Metric{}
		for _, t := range tmpls {
			metrics[t.Name] = bench.WorkloadMetric(t.Workload)
		}
		data, err := bench.CompareData(sums, results, metrics)
		if err != nil {
			return err
		}
		path := filepath.Join(dir, "compare.png")
		if err := writeFileWith(path, func(w io.Writer) error { return bench.WriteComparePNG(w, data) }); err != nil {
			return err
		}
		files = append(files, path)
	}
	for _, p := range files {
		fmt.Fprintln(errOut, "wrote", p)
	}
	return nil
}

// writeFileWith creates path and fills it with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(file); err != nil {
		file.Close()
		return fmt.Errorf("%s: %w", path, err)
	}
	return file.Close()
}

// simScaleStudy times a run of fifo and ra (or --compare's policies) on
// the workload scaled to 100, 1,000 and 10,000 nodes, one run at a time,
// and draws the cost curves into --plot-dir.
func simScaleStudy(cmd *cobra.Command, tmpl bench.RunConfig, f *simFlags) error {
	out, errOut := cmd.OutOrStdout(), cmd.ErrOrStderr()
	var pols []bench.Policy
	if f.compare != "" {
		var err error
		if pols, err = bench.ParsePolicies(f.compare); err != nil {
			return usageError{err}
		}
	}
	tmpl.Seed = f.seed
	pts, err := bench.ScaleStudy(cmd.Context(), bench.ScaleConfig{Run: tmpl, Policies: pols, Now: time.Now,
		Progress: func(p bench.ScalePoint) {
			fmt.Fprintf(errOut, "%d nodes, %s: %.1f s\n", p.Nodes, p.Policy, p.Wall.Seconds())
		}})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: cost per run by cluster size, seed %d, %s\n", tmpl.Name, f.seed, machine())
	if err := bench.WriteScaleTable(out, pts); err != nil {
		return err
	}
	if f.plotDir == "" {
		return nil
	}
	if err := os.MkdirAll(f.plotDir, 0o755); err != nil {
		return err
	}
	path := filepath.Join(f.plotDir, tmpl.Name+"-scale.png")
	file, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := bench.WriteScalePNG(file, pts, tmpl.Name+": wall time per run ("+machine()+")"); err != nil {
		file.Close()
		return err
	}
	if err := file.Close(); err != nil {
		return err
	}
	fmt.Fprintln(errOut, "wrote", path)
	return nil
}

// parseScale parses --scale's NODES:JOBS.
func parseScale(v string) (nodes, jobs int, err error) {
	n, j, ok := strings.Cut(v, ":")
	if ok {
		nodes, err = strconv.Atoi(n)
		if err == nil {
			jobs, err = strconv.Atoi(j)
		}
	}
	if !ok || err != nil || nodes < 1 || jobs < 1 {
		return 0, 0, usagef("sim: --scale must be NODES:JOBS with both positive, e.g. 10000:2000, got %q", v)
	}
	return nodes, jobs, nil
}

// simPolicies is --compare's policies with fifo first (the reference), or
// --policy alone.
func simPolicies(f *simFlags) ([]bench.Policy, error) {
	if f.compare == "" {
		p, err := bench.ParsePolicy(f.policy)
		if err != nil {
			return nil, usageError{err}
		}
		return []bench.Policy{p}, nil
	}
	policies, err := bench.ParsePolicies(f.compare)
	if err != nil {
		return nil, usageError{err}
	}
	if !slices.Contains(policies, bench.FIFO) {
		policies = append([]bench.Policy{bench.FIFO}, policies...)
	}
	return policies, nil
}

// printSimResults writes the results as JSON lines (--json), the
// side-by-side tables of sums (--compare), one per workload of tmpls, or a
// line per run.
func printSimResults(out io.Writer, f *simFlags, tmpls []bench.RunConfig, sums []bench.Summary, results []bench.Result) error {
	switch {
	case f.json:
		enc := json.NewEncoder(out)
		for _, r := range results {
			if err := enc.Encode(r); err != nil {
				return err
			}
		}
	case f.compare != "":
		for i, t := range tmpls {
			if i > 0 {
				fmt.Fprintln(out)
			}
			fmt.Fprintf(out, "%s, %d seeds from %d, %s\n", t.Name, f.runs, f.seed, machine())
			var mine []bench.Summary
			for _, s := range sums {
				if s.Workload == t.Name {
					mine = append(mine, s)
				}
			}
			if err := bench.WriteTable(out, mine); err != nil {
				return err
			}
		}
	default:
		for _, r := range results {
			fmt.Fprintf(out, "%s %s seed %d: %d jobs, makespan %.0f s (%.1f min), mean JCT %.0f s, cpu %.2f iowait %.3f disk %.2f net %.2f, %d decisions\n",
				r.Workload, r.Policy, r.Seed, r.Jobs, r.MakespanS, r.MakespanS/60, r.MeanJCTS,
				r.MeanCPUUtil, r.MeanIOWait, r.MeanDiskUtil, r.MeanNetUtil, r.Decisions)
		}
	}
	return nil
}

// simDaemonConfig is the daemon configuration ra runs with: the defaults,
// then --config (or COLOCD_CONFIG) when given, then COLOCD_* env, as serve
// loads it.
func simDaemonConfig(cf *configFlags) (daemon.Config, error) {
	file, err := cf.path()
	if err != nil {
		return daemon.Config{}, err
	}
	return daemon.Load(daemon.LoadOptions{File: file, SkipTokenFile: true})
}

func machine() string {
	return fmt.Sprintf("%s/%s, %d CPUs, %s", runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), runtime.Version())
}

func simSpeedStudy(cmd *cobra.Command, tmpl bench.RunConfig, seeds []uint64, workers int) error {
	out := cmd.OutOrStdout()
	rs, truth, err := bench.LearningSpeed(cmd.Context(), bench.SpeedConfig{Run: tmpl, Seeds: seeds, Workers: workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: learning speed, %d seeds from %d, %s\n", tmpl.Name, len(seeds), seeds[0], machine())
	fmt.Fprintf(out, "best partners (pairwise gain ≥ %.0f%% of the best):\n", 100*(1-bench.DefaultTolerance))
	for _, t := range truth {
		fmt.Fprintf(out, "  %-10s best by speed %-10s by goodness %-10s set %v\n", t.Kind, t.Best, t.BestGoodness, t.Set)
	}
	var all, runs []float64
	reached := 0
	per := map[string][]float64{}
	for _, r := range rs {
		if r.Reached {
			reached++
			all = append(all, float64(r.Observations))
			runs = append(runs, float64(r.Runs))
		}
		for k, s := range r.PerKind {
			if s.Total >= 0 {
				per[k] = append(per[k], float64(s.Row))
			}
		}
	}
	st, rn := bench.NewStat(all), bench.NewStat(runs)
	fmt.Fprintf(out, "every kind π(best|a') > %.1f: %d/%d seeds; observations mean %.0f ± %.0f [%.0f, %.0f], in run %.1f [%.0f, %.0f] of the workload\n",
		bench.Threshold, reached, len(rs), st.Mean, st.Std, st.Min, st.Max, rn.Mean, rn.Min, rn.Max)
	for _, t := range truth {
		s := bench.NewStat(per[t.Kind])
		fmt.Fprintf(out, "  %-10s %d/%d seeds; own-row observations mean %.0f [%.0f, %.0f]\n", t.Kind, s.N, len(rs), s.Mean, s.Min, s.Max)
	}
	return nil
}

func simWarmStartStudy(cmd *cobra.Command, tmpl bench.RunConfig, seeds []uint64, workers int) error {
	out := cmd.OutOrStdout()
	rs, err := bench.WarmStart(cmd.Context(), bench.WarmStartConfig{Run: tmpl, Seeds: seeds, Workers: workers})
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: new-kind warm start from job similarity, %d seeds from %d, %s\n", tmpl.Name, len(seeds), seeds[0], machine())
	return bench.WriteWarmStartTable(out, rs)
}

// progressBar draws "[#####     ] 12/40" on a terminal's stderr; it does
// nothing when stderr is not a terminal or there is a single run.
type progressBar struct {
	w     io.Writer
	total int
	on    bool
}

func newProgressBar(w io.Writer, total int) *progressBar {
	on := false
	if f, ok := w.(*os.File); ok && total > 1 {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			on = true
		}
	}
	return &progressBar{w: w, total: total, on: on}
}

func (b *progressBar) update(done, total int) {
	if !b.on {
		return
	}
	const width = 30
	n := done * width / max(total, 1)
	fmt.Fprintf(b.w, "\r[%s%s] %d/%d runs", strings.Repeat("#", n), strings.Repeat(" ", width-n), done, total)
}

func (b *progressBar) done() {
	if b.on {
		fmt.Fprint(b.w, "\r\033[K")
	}
}

func simProfileStudy(cmd *cobra.Command, tmpl bench.RunConfig, seeds []uint64, workers int) error {
	out := cmd.OutOrStdout()
	rs, err := bench.ProfileSpeed(cmd.Context(), tmpl, seeds, workers)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "%s: profile learning speed (error of the dominant resource vs the true mean solo profile, median over seeds), %d seeds from %d, %s\n",
		tmpl.Name, len(seeds), seeds[0], machine())
	return bench.WriteProfileSpeedTable(out, rs)
}
