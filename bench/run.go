package bench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// Policy names an admission policy.
type Policy string

// The policies.
const (
	// FIFO admits the head of the queue while it fits (the paper's baseline:
	// the queue unchanged).
	FIFO Policy = "fifo"
	// policyRandom admits a job drawn uniformly from the jobs of the window (the
	// first pipeline.window.size pending jobs) that fit.
	policyRandom Policy = "random"
	// policyRA is colocd: the ordering pipeline with the bandit learning from
	// scratch, through engine.Engine (the paper's "resource-aware").
	policyRA Policy = "ra"
	// policyRAPressure is policyRA on a cluster whose metrics carry pressure stall
	// information (sim.Options.Pressure; a metrics source with
	// influx.pressure or prometheus.pressure on): the learning tick's
	// goodness then counts I/O stalls that busy CPUs hide from iowait, and
	// the profile model fits a saturated node at the demand its CPU and
	// I/O stalls say was not met instead of censoring it.
	policyRAPressure Policy = "ra-psi"
	// policyRAPlan is policyRA with model-predictive admission (the lookahead stage,
	// pipeline.lookahead): the top candidates of the one-step rule are
	// rolled out on a simulator built only from what colocd learned
	// (profiles and their uncertainty, runtimes from the predicted speeds,
	// the running jobs and the pending window), and one predicted better
	// by the stage's margin replaces the one-step choice.
	policyRAPlan Policy = "ra-plan"
	// policyRAWarm is policyRA starting from the preferences learned in a previous run
	// of the same workload (the paper's RA*): RunConfig.Warm, or, when it is
	// nil, the final preferences of an RA run with RunConfig.WarmSeed.
	policyRAWarm Policy = "ra-warm"
	// policyOracle is greedy with the simulator's ground truth: at each admission,
	// among the oldest job of each kind in the window that fits, the one
	// that maximises the cluster's progress once placed, found by what-if
	// runs on sim.Clone (see RunConfig.OracleHorizon).
	policyOracle Policy = "oracle"
	// policyPairwise is the best the paper's model can do: a kind-level greedy
	// that knows the true pairwise co-location effects (sim.Pairwise: the
	// change in the pair's duration when co-located) and predicts the new
	// job's partners from the placement rule (empty nodes first, then nodes
	// with room). It picks, among the oldest job of each kind in the window
	// that fits, the one with the largest expected pairwise gain. It is a
	// reference for what learned kind preferences could reach, not
	// something colocd could run (it needs profiles and the placement).
	policyPairwise Policy = "pairwise"
	// policyBound is no schedule: a lower bound on the makespan (see lowerBound).
	policyBound Policy = "bound"
	// policyPaper is the paper's method exactly, the reproduction: ra with the
	// per-pair gradient bandit alone (preference mode bandit, goodness as
	// its reward, H₀ = 0), sampling from π, no profile model.
	policyPaper Policy = "paper"
	// policyRAProfileTrue is ra's policy scoring with every kind's true mean solo
	// profile instead of the learned ones (it still learns the pair
	// correction): it separates estimation error from decision quality.
	policyRAProfileTrue Policy = "ra-profile-true"
	// policyPackFit admits the job with the least predicted overload of the nodes
	// it lands on, from the true mean solo profiles (offline profiling).
	policyPackFit Policy = "packfit"
	// policyAlternate admits the job whose dominant resource is least represented
	// among the jobs on the nodes where it would land (true profiles).
	policyAlternate Policy = "alternate"
	// policyTetris admits the job whose demand best aligns with the free
	// resources of the nodes it lands on (Graphene/Tetris's packing score,
	// true profiles).
	policyTetris Policy = "tetris"
	// policyRollout is the reference the tables measure every policy against, not
	// a scheduler: at each decision, each candidate is admitted on
	// RunConfig.RolloutSamples copies of the run, each with a fresh random
	// stream (placements, jitter, Poisson arrivals still to come), each
	// finished with the oracle; the candidate with the best mean on the
	// workload's metric is kept. It reads the ground truth but not the
	// future: no scheduler could do better by choosing one job at a time
	// with the oracle's completion (the ceiling the tables' "of rollout
	// gain" divides by).
	policyRollout Policy = "rollout"
	// policyRolloutForesight is policyRollout with one plain clone per candidate: the
	// clone draws the placements, jitter and arrivals the run itself will
	// draw, so the reference foresees them. It measures how much of a
	// rollout's gain is that foresight.
	policyRolloutForesight Policy = "rollout-foresight"
	// policyDRF is FIFO within DRF: the fairness stage's deficit counters between
	// the workload's queues (class weights as group weights), no learned
	// order. See fairnessConfig.
	policyDRF Policy = "drf"
	// policyCurves is FIFO within service curves: the workload's classes as the
	// fairness stage's service queues (mode curves), no learned order.
	policyCurves Policy = "curves"
	// policyRACurves is ra under the same service curves: colocd's learned order
	// within what the guarantees keep.
	policyRACurves Policy = "ra-curves"
)

// policies lists every policy, in the order of the comparison table.
func policies() []Policy {
	return []Policy{FIFO, policyRandom, policyPaper, policyRA, policyRAPressure, policyRAPlan, policyRAWarm, policyRAProfileTrue, policyPackFit, policyAlternate, policyTetris, policyDRF, policyCurves, policyRACurves, policyPairwise, policyOracle, policyRollout, policyRolloutForesight, policyBound}
}

// ParsePolicy parses a policy name.
func ParsePolicy(s string) (Policy, error) {
	p := Policy(strings.ToLower(strings.TrimSpace(s)))
	if !slices.Contains(policies(), p) {
		names := make([]string, 0, len(policies()))
		for _, q := range policies() {
			names = append(names, string(q))
		}
		return "", fmt.Errorf("%w %q (want one of %s)", errUnknownPolicy, s, strings.Join(names, ", "))
	}
	return p, nil
}

// ParsePolicies parses a comma-separated list of distinct policy names.
func ParsePolicies(list string) ([]Policy, error) {
	var out []Policy
	for item := range strings.SplitSeq(list, ",") {
		if strings.TrimSpace(item) == "" {
			continue
		}
		p, err := ParsePolicy(item)
		if err != nil {
			return nil, err
		}
		if slices.Contains(out, p) {
			return nil, fmt.Errorf("%w: policy %q listed twice", errInvalid, p)
		}
		out = append(out, p)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: empty policy list", errInvalid)
	}
	return out, nil
}

// DefaultRolloutSamples is how many futures the rollout samples per
// candidate and decision (RunConfig.RolloutSamples).
const DefaultRolloutSamples = 4

// defaultOracleHorizon is the oracle's look-ahead: one learning interval.
// Every horizon from 10 s to 5 min gives the same Queue A makespan.
const defaultOracleHorizon = time.Minute

// warmSeedOffset separates the seed of the run that produces ra-warm's
// preferences from the seed of the measured run.
const warmSeedOffset = 1_000_000

// LoadWorkload reads a workload file (configs/workloads/*.yaml) for
// RunConfig.Workload.
func LoadWorkload(path string) (*sim.Workload, error) { return sim.LoadWorkload(path) }

// RunConfig configures one run.
type RunConfig struct {
	Workload *sim.Workload // required
	// Name is the workload's name in the result (the CLI uses the file
	// name without its extension); "" means "workload".
	Name   string
	Policy Policy
	// Seed drives the simulator's placement, the admission sampler, Poisson
	// arrivals and the random policy: the same seed gives the same run.
	Seed uint64
	// Warm is ra-warm's starting preferences. Nil: ra-warm first runs ra
	// with WarmSeed (0 means Seed+warmSeedOffset) and starts from its
	// final preferences. Ignored by the other policies.
	Warm     *bandit.Snapshot
	WarmSeed uint64
	// WarmProfiles is ra-warm's starting profile model; with Warm nil it
	// comes from the same learning run as the preferences (what colocd
	// keeps across a restart: both).
	WarmProfiles *profile.Snapshot
	// WarmDaemon is the configuration of ra-warm's learning run; nil means
	// Daemon. It lets the learning run explore (select.mode sample) while
	// the measured run exploits (argmax), the paper's reading of RA*.
	WarmDaemon *daemon.Config
	// Daemon is the configuration ra and ra-warm run with: its pipeline,
	// learning and admission sections, as `colocd serve` would. Nil means
	// daemon.DefaultConfig(). fifo, random and oracle use its window size.
	Daemon *daemon.Config
	// LearnInterval, when positive, replaces learning.schedule by "every
	// LearnInterval" (virtual time); 0 keeps the schedule (default 60 s).
	LearnInterval time.Duration
	// AdmissionTick, when positive, adds a periodic admission point to ra's
	// loop every AdmissionTick after the previous one, as `colocd serve`
	// has (admission.tick); 0 admits only when a job arrives or finishes
	// and at learning ticks, which gives the same decisions at a fraction
	// of the cost (see runEngine).
	AdmissionTick time.Duration
	// MetricsInterval is the simulator's metrics period; 0 means 10 s.
	MetricsInterval time.Duration
	// Jitter is the simulator's work jitter (sim.Options.Jitter, in [0, 1)):
	// each container group's work per phase varies by up to ±Jitter, so
	// identical jobs started together no longer finish together. 0 (the
	// calibrated default) makes every duration exact.
	Jitter float64
	// OracleHorizon is how far ahead the oracle's what-if runs look: the
	// oracle scores the solo work the cluster does in that time after the
	// placement (no further admissions in the what-if). 0 means
	// defaultOracleHorizon.
	OracleHorizon time.Duration
	// OracleInstant makes the oracle score the progress rate at the
	// instant of the placement instead (Σ speed × containers). It is
	// myopic: it sees the phases that run now, not the ones about to
	// start, and it does markedly worse (bench/README.md).
	OracleInstant bool
	// RolloutSamples is how many sampled futures the rollout averages per
	// candidate and decision; 0 means DefaultRolloutSamples.
	RolloutSamples int
	// Observe, when set, is called after every learning tick of ra and
	// ra-warm, synchronously, with the learner (for read-only use).
	Observe func(learnEvent)
	// Setup, when set, is called with ra's and ra-warm's learner before the
	// first admission (after Warm is restored): the warm-start study adds
	// a new kind with AddSimilar here.
	Setup func(*bandit.Learner)
	// Dir is where ra's run makes the temporary directory of its queue
	// store (removed at the end of the run); "" means /dev/shm when usable,
	// else the system's temporary directory.
	Dir string
}

// learnEvent is one learning tick of an ra run.
type learnEvent struct {
	At       time.Duration // since the start of the run
	Report   engine.LearnReport
	Learner  *bandit.Learner
	Profiles *profile.Model
}

// Result is the outcome of one run. Its JSON form (one line of `colocd
// sim --json`) has exactly the keys workload, policy, seed, jobs,
// makespan_s, mean_jct_s, mean_cpu_util, mean_iowait, mean_disk_util,
// mean_net_util, decisions, max_wait_s and p95_wait_s, classes for a
// workload with classes, and rollout_share once SetRolloutShares has
// found fifo and rollout runs of the same workload and seed; the other
// fields are for plots and studies.
type Result struct {
	Workload string `json:"workload"`
	Policy   Policy `json:"policy"`
	Seed     uint64 `json:"seed"`
	Jobs     int    `json:"jobs"`
	// MakespanS: from the start of the run until the last job finished.
	MakespanS float64 `json:"makespan_s"`
	// MeanJCTS: mean of (finish − arrival) over the jobs.
	MeanJCTS float64 `json:"mean_jct_s"`
	// Cluster-wide means over the makespan of the node means (see
	// usagePoint): CPU busy fraction, iowait fraction, disk and network
	// utilisation.
	MeanCPUUtil  float64 `json:"mean_cpu_util"`
	MeanIOWait   float64 `json:"mean_iowait"`
	MeanDiskUtil float64 `json:"mean_disk_util"`
	MeanNetUtil  float64 `json:"mean_net_util"`
	// Decisions is the number of admission decisions taken: one per
	// admitted job (0 for bound).
	Decisions int `json:"decisions"`
	// MaxWaitS and P95WaitS: the longest and the 95th-percentile time a
	// job waited between its arrival and its admission.
	MaxWaitS float64 `json:"max_wait_s"`
	P95WaitS float64 `json:"p95_wait_s"`
	// Classes is the service per class, for workloads with classes (see
	// classResult); absent otherwise.
	Classes []classResult `json:"classes,omitempty"`
	// RolloutShare is this run's share of the rollout's gain on the same
	// seed in the workload's metric, (fifo − x)/(fifo − rollout); absent
	// when the seed has no fifo or rollout run, or the rollout no gain
	// (see SetRolloutShares).
	RolloutShare *float64 `json:"rollout_share,omitempty"`
	// Metric is the workload's (WorkloadMetric).
	Metric Metric `json:"-"`

	// Usage is the cluster's mean usage per metrics interval.
	Usage []usagePoint `json:"-"`
	// Admissions are the admitted jobs in order.
	Admissions []admission `json:"-"`
	// Preferences is the learner's final state (ra, ra-warm); Warm is the
	// state ra-warm started from. Profiles is the profile model's final
	// state.
	Preferences *bandit.Snapshot  `json:"-"`
	Warm        *bandit.Snapshot  `json:"-"`
	Profiles    *profile.Snapshot `json:"-"`
	// TrueProfiles is every kind's true mean solo profile (engine runs),
	// for the profiles plot.
	TrueProfiles profile.Fixed `json:"-"`
	// Updates counts the learner updates of this run.
	Updates int64 `json:"-"`
}

// usagePoint is the mean over the cluster's nodes of one metrics interval
// starting At after the start: CPU busy and iowait fractions, disk
// utilisation (reads + writes over the disk bandwidth) and network
// utilisation (received + sent over twice the NIC bandwidth, as the NIC is
// full duplex).
type usagePoint struct {
	At                     time.Duration
	CPU, IOWait, Disk, Net float64
}

// admission is one admitted job.
type admission struct {
	At   time.Duration // since the start
	Seq  int           // position in the workload's queue
	Kind string
}

// runOne plays the workload under the policy in virtual time until every job
// finished (bound: computes the bound) and measures it.
func runOne(ctx context.Context, rc RunConfig) (Result, error) {
	if err := rc.validate(); err != nil {
		return Result{}, err
	}
	cfg := rc.daemonConfig()
	jobs := rc.Workload.Jobs(rand.New(rand.NewPCG(rc.Seed, 0xa5a5_0001)))
	var (
		res Result
		err error
	)
	switch rc.Policy {
	case policyBound:
		res = boundResult(rc.Workload, jobs)
	case policyRA, policyRAWarm, policyRAPressure:
		warm, warmProfiles := rc.Warm, rc.WarmProfiles
		if rc.Policy == policyRAWarm && warm == nil {
			prev := rc
			prev.Policy, prev.Seed, prev.Observe, prev.Setup = policyRA, rc.warmSeed(), nil, nil
			if rc.WarmDaemon != nil {
				prev.Daemon = rc.WarmDaemon
			}
			r, err := runOne(ctx, prev)
			if err != nil {
				return Result{}, fmt.Errorf("ra-warm: learning run (seed %d): %w", prev.Seed, err)
			}
			warm, warmProfiles = r.Preferences, r.Profiles
		}
		if rc.Policy != policyRAWarm {
			warm, warmProfiles = nil, nil
		}
		res, err = runEngine(ctx, rc, cfg, jobs, warm, warmProfiles, nil)
	case policyPaper:
		res, err = runEngine(ctx, rc, daemon.PresetPaper.Apply(cfg), jobs, nil, nil, nil)
	case policyRAProfileTrue:
		res, err = runEngine(ctx, rc, cfg, jobs, nil, nil, trueProfiles(rc.Workload))
	case policyRAPlan:
		res, err = runEngine(ctx, rc, daemon.PresetPlan.Apply(cfg), jobs, nil, nil, nil)
	case policyDRF, policyCurves, policyRACurves:
		res, err = runEngine(ctx, rc, fairnessConfig(rc.Policy, cfg, rc.Workload), jobs, nil, nil, nil)
	default:
		res, err = runDirect(ctx, rc, cfg, jobs)
	}
	if err != nil {
		return Result{}, err
	}
	res.Workload, res.Policy, res.Seed, res.Jobs = rc.name(), rc.Policy, rc.Seed, len(jobs)
	res.Metric = WorkloadMetric(rc.Workload)
	if res.Profiles != nil {
		res.TrueProfiles = trueProfiles(rc.Workload)
	}
	return res, nil
}

// pairPreferences is rc with its daemon configuration (and warm run's)
// under daemon.PresetPairs.
func (rc RunConfig) pairPreferences() RunConfig {
	c := daemon.PresetPairs.Apply(rc.daemonConfig())
	rc.Daemon = &c
	if rc.WarmDaemon != nil {
		w := daemon.PresetPairs.Apply(*rc.WarmDaemon)
		rc.WarmDaemon = &w
	}
	return rc
}

func (rc RunConfig) validate() error {
	switch {
	case rc.Workload == nil:
		return fmt.Errorf("%w: workload: missing", errInvalid)
	case !slices.Contains(policies(), rc.Policy):
		return fmt.Errorf("policy: %w %q", errUnknownPolicy, rc.Policy)
	case rc.LearnInterval < 0:
		return fmt.Errorf("%w: learn_interval: %v is negative", errInvalid, rc.LearnInterval)
	case rc.AdmissionTick < 0:
		return fmt.Errorf("%w: admission_tick: %v is negative", errInvalid, rc.AdmissionTick)
	case rc.MetricsInterval < 0:
		return fmt.Errorf("%w: metrics_interval: %v is negative", errInvalid, rc.MetricsInterval)
	case !(rc.Jitter >= 0 && rc.Jitter < 1):
		return fmt.Errorf("%w: jitter: %v outside [0, 1)", errInvalid, rc.Jitter)
	case rc.OracleHorizon < 0:
		return fmt.Errorf("%w: oracle_horizon: %v is negative", errInvalid, rc.OracleHorizon)
	case rc.RolloutSamples < 0 || rc.RolloutSamples > MaxRolloutSamples:
		return fmt.Errorf("%w: rollout_samples: %d outside [0, %d]", errInvalid, rc.RolloutSamples, MaxRolloutSamples)
	}
	if rc.Daemon != nil {
		if err := rc.Daemon.Pipeline.Validate(); err != nil {
			return fmt.Errorf("%w: %w", errInvalid, err)
		}
		if _, err := rc.Daemon.Learning.BanditConfig(); err != nil {
			return fmt.Errorf("%w: %w", errInvalid, err)
		}
	}
	if rc.WarmDaemon != nil {
		if err := rc.WarmDaemon.Pipeline.Validate(); err != nil {
			return fmt.Errorf("%w: warm: %w", errInvalid, err)
		}
		if _, err := rc.WarmDaemon.Learning.BanditConfig(); err != nil {
			return fmt.Errorf("%w: warm: %w", errInvalid, err)
		}
	}
	return nil
}

func (rc RunConfig) daemonConfig() daemon.Config {
	if rc.Daemon != nil {
		return *rc.Daemon
	}
	return daemon.DefaultConfig()
}

// MaxRolloutSamples bounds RunConfig.RolloutSamples: each sample costs a
// whole run per candidate and decision.
const MaxRolloutSamples = 64

func (rc RunConfig) rolloutSamples() int {
	if rc.RolloutSamples > 0 {
		return rc.RolloutSamples
	}
	return DefaultRolloutSamples
}

func (rc RunConfig) name() string {
	if rc.Name == "" {
		return "workload"
	}
	return rc.Name
}

func (rc RunConfig) warmSeed() uint64 {
	if rc.WarmSeed != 0 {
		return rc.WarmSeed
	}
	return rc.Seed + warmSeedOffset
}

// simOptions are the simulator's options: its metrics carry pressure
// stall information for ra-psi, and for the daemon's policies when the
// daemon configuration says so (sim.pressure).
func (rc RunConfig) simOptions() sim.Options {
	return sim.Options{Seed: rc.Seed, MetricsInterval: rc.metricsInterval(), Jitter: rc.Jitter,
		Pressure:         rc.Policy == policyRAPressure || rc.daemonConfig().Sim.Pressure && rc.daemonPolicy(),
		ContainerMetrics: rc.daemonConfig().Learning.ContainerUsage && rc.daemonPolicy()}
}

// daemonPolicy reports whether rc's policy runs the daemon's engine.
func (rc RunConfig) daemonPolicy() bool {
	switch rc.Policy {
	case policyPaper, policyRA, policyRAPressure, policyRAPlan, policyRAWarm, policyRAProfileTrue, policyDRF, policyCurves, policyRACurves:
		return true
	}
	return false
}

func (rc RunConfig) metricsInterval() time.Duration {
	if rc.MetricsInterval > 0 {
		return rc.MetricsInterval
	}
	return 10 * time.Second
}

// windowSize is the number of pending jobs the direct policies look at:
// the pipeline's window, like ra.
func windowSize(cfg daemon.Config) int {
	if w := cfg.Pipeline.Window; w.Enabled && w.Size > 0 {
		return w.Size
	}
	return 1 << 30
}

// advanceUntil advances s to t, or to the first instant before t at which
// applications finish, and returns those finish events.
func advanceUntil(s *sim.Sim, t time.Time) []sim.Event {
	for {
		next, ok := s.NextEvent()
		if !ok || next.After(t) {
			s.Advance(t)
			return nil
		}
		if evs := s.Advance(next); len(evs) > 0 {
			return evs
		}
	}
}
