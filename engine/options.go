package engine

import (
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// Options are Engine's dependencies. Store, Learner, Cluster and Clock
// are required; Metrics nil disables learning.
type Options struct {
	Store *queue.Store
	// Learner is the pair preferences; from New on, the engine is its only
	// writer (AddKind, ImportPreferences, ResetPreferences, the learning
	// tick).
	Learner *bandit.Learner
	// Kinds are made known to the learner at New, before any job of them
	// is stored (the simulator's workload kinds).
	Kinds []string
	// Profiles is the resource profile model the learning tick fits; nil
	// makes one from Learning.Profile.
	Profiles *profile.Model
	// ScoreProfiles, when set, is what the co-location scorer reads instead
	// of Profiles (the benchmark's ra-profile-true gives the true profiles,
	// to separate estimation error from decision quality).
	ScoreProfiles profile.Profiles
	Cluster       Cluster
	Metrics       UsageSource
	// ContainerUsage, when set, is where the learning tick reads each
	// application's own CPU and disk on each node (nil: nodes are fitted
	// whole, from Metrics alone). It is read with Metrics, and fails the
	// tick as Metrics does.
	ContainerUsage ContainerUsageSource
	Clock          Clock
	Journal        journalSink
	Prom           telemetrySink
	Rand           *rand.Rand // nil: seeded with 1
	Logger         *slog.Logger
	// Wall times decision latency for metrics and the loop's iterations
	// for Ready's stall bound; nil means time.Now. It never influences a
	// decision.
	Wall func() time.Time
	// Placement, when set, is where the learning tick learns which kinds
	// ran where (learning.placement: influx); nil: the presence the
	// cluster syncs record.
	Placement *Placer
	// Fence, when set, is asked before every action on the cluster
	// (colocd replicated on ZooKeeper); nil: one colocd, always acting.
	Fence Fence
	// ForeignPrefix is learning.foreign.prefix: the kinds that start with it
	// are other tenants' applications, reserved for the placement read
	// ("": DefaultForeignPrefix; Placement's own prefix when it is set).
	ForeignPrefix string
	// SimulatedClock says Clock is a simulator's virtual clock: log lines
	// then name the times and durations they carry on it sim_from, sim_to
	// and sim_took, so that nobody reads them as wall-clock.
	SimulatedClock bool

	// Queue is the ordering pipeline's configuration (validated here).
	Queue pipeline.Config
	// Scorer is the co-location model's scorer, used when Queue's
	// preference stage is in mode model.
	Scorer ScorerConfig
	// Planner bounds the lookahead's rollouts, used when Queue's lookahead
	// stage is on.
	Planner plan.Config
	// Profile configures the model New makes when Profiles is nil.
	Profile profile.Config
	// MaxRunning caps admitted plus running jobs; 0: no cap.
	MaxRunning int
	// Mode: ModeActive admits the learned choice, ModeShadow the FIFO one
	// (the learned choice is journaled). Zero: ModeActive.
	Mode AdmissionMode
	// Credit, Aggregate, MaxKindsPerNode and PairReward shape the learning
	// tick's pair updates (zero: CreditLater, AggregatePair, 2,
	// RewardGoodness).
	Credit          CreditMode
	Aggregate       Aggregate
	MaxKindsPerNode int
	PairReward      PairReward
	// Limits are the reference node's disk and network maxima in bytes/s:
	// the node profile amounts are fractions of (with ReferenceVCores).
	Limits goodness.Limits
	// ReferenceVCores is the reference node's advertised vcores: a node
	// advertising twice as many has twice its CPU. Zero: every node's CPU
	// is the reference's.
	ReferenceVCores int64
	// NodeLimits gives the disk and network maxima of a node whose
	// hardware differs from the reference's, by node name (the resource
	// manager does not report them); a node it does not know (false), or
	// every node when nil, has Limits. LimitsByNode makes one of a map.
	NodeLimits func(node string) (goodness.Limits, bool)
	// StallAfter makes Ready fail once the loop has completed no iteration
	// for longer than this, in Wall time; zero never does (no loop drives
	// the engine, as in benchmarks).
	StallAfter time.Duration
	// DependencyOf, when set, names the dependency a failed call's error
	// is about when it is not the one called (DepKDC for a Kerberos
	// failure on a call to the RM); "" leaves it to the call.
	DependencyOf func(error) string
	// Backoff is how calls to a failing cluster back off (BackoffConfig);
	// zero: they do not. BackoffRand draws its jitter; nil: seeded with
	// (3, 4). It is a source of its own, so that a backoff never changes
	// the decisions Rand draws.
	Backoff     BackoffConfig
	BackoffRand *rand.Rand
}

// New builds an engine. It does no I/O besides restoring nothing: the
// caller restores the learner (RestoreLearner) and calls Reconcile before
// the first AdmitPass.
func New(o Options) (*Engine, error) {
	switch {
	case o.Store == nil:
		return nil, errors.New("new engine: nil store")
	case o.Learner == nil:
		return nil, errors.New("new engine: nil learner")
	case o.Cluster == nil:
		return nil, errors.New("new engine: nil cluster")
	case o.Clock == nil:
		return nil, errors.New("new engine: nil clock")
	}
	if err := o.Backoff.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	qc := o.Queue
	if err := qc.Validate(); err != nil {
		return nil, fmt.Errorf("new engine: pipeline: %w", err)
	}
	if o.Profiles == nil {
		if err := o.Profile.Validate(); err != nil {
			return nil, fmt.Errorf("new engine: profiles: %w", err)
		}
		o.Profiles = profile.New(o.Profile)
	}
	src := o.ScoreProfiles
	if src == nil {
		src = o.Profiles
	}
	apart := new(atomic.Bool)
	apart.Store(o.ContainerUsage != nil) // until a tick shows otherwise
	p, fifo, mp, err := newPipelines(o, src, apart.Load)
	if err != nil {
		return nil, err
	}
	e := &Engine{
		store: o.Store, learner: o.Learner, profiles: o.Profiles, scoreSrc: src, pipeline: p, fifo: fifo,
		cluster: o.Cluster, metrics: o.Metrics, clock: o.Clock,
		journal: o.Journal, mx: o.Prom, rng: o.Rand, log: o.Logger, wall: o.Wall, simClock: o.SimulatedClock, placer: o.Placement,
		fence:        o.Fence,
		parts:        o.ContainerUsage,
		apart:        apart,
		window:       windowSize(qc),
		fit:          qc.Fit.Enabled,
		fitPerNode:   qc.Fit.Enabled && qc.Fit.PerNode,
		weighContext: qc.Preference.Enabled && qc.Preference.Mode != pipeline.PreferenceModel,
		maxRunning:   o.MaxRunning,
		mode:         o.Mode,
		creditMode:   o.Credit,
		aggregate:    o.Aggregate,
		maxKinds:     o.MaxKindsPerNode,
		pairReward:   o.PairReward,
		sizes:        o.nodeSizes(),
		stallAfter:   o.StallAfter,
		dependencyOf: o.DependencyOf,
		kick:         make(chan struct{}, 1),
		presence:     map[string]map[string]*presence{},
		shareUsers:   map[string]bool{},
		bo:           backoffPolicy{cfg: o.Backoff, rng: o.BackoffRand},
		jobBackoff:   map[string]*backoff{},
	}
	if mp != nil {
		e.runtimes = newRuntimes() // only the lookahead reads them
		mp.runtimes = e.runtimes
	}
	e.foreignPrefix = o.ForeignPrefix
	if o.Placement != nil {
		e.foreignPrefix = o.Placement.cfg.ForeignPrefix
	}
	if e.foreignPrefix == "" {
		e.foreignPrefix = DefaultForeignPrefix
	}
	for _, k := range o.Kinds {
		e.learner.Add(k)
	}
	e.setDefaults()
	if qc.Fairness.Enabled && qc.Window.Enabled {
		f := qc.Fairness
		e.fairness = &f
	}
	if err := e.restoreFairness(); err != nil {
		return nil, fmt.Errorf("new engine: %w", err)
	}
	return e, nil
}

// newPipelines builds the engine's ordering pipeline (with its scorer and
// its lookahead's planner, as the configuration asks) and the FIFO
// pipeline that shadow mode and the demo's comparison decide with.
func newPipelines(o Options, src profile.Profiles, apart func() bool) (p, fifo *pipeline.Pipeline, mp *modelPlanner, err error) {
	qc := o.Queue
	var popts []pipeline.Option
	if qc.Preference.Enabled && qc.Preference.Mode == pipeline.PreferenceModel {
		sc, err := newModelScorer(o.Scorer, qc.Preference.DrainRatio, src, o.Learner)
		if err != nil {
			return nil, nil, nil, err
		}
		sc.size = o.nodeSizes().size
		sc.apart = apart
		popts = append(popts, pipeline.WithScorer(sc))
	}
	if qc.Lookahead.Enabled {
		if err := o.Planner.Validate(); err != nil {
			return nil, nil, nil, fmt.Errorf("new engine: lookahead: %w", err)
		}
		mp = &modelPlanner{cfg: o.Planner, profiles: src, size: o.nodeSizes().size}
		popts = append(popts, pipeline.WithPlanner(mp))
	}
	if p, err = pipeline.New(qc, o.Learner, popts...); err != nil {
		return nil, nil, nil, fmt.Errorf("new engine: pipeline: %w", err)
	}
	fifo, err = pipeline.New(fifoConfig(qc), o.Learner)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("new engine: fifo pipeline: %w", err)
	}
	return p, fifo, mp, nil
}

// setDefaults fills the settings New's options left zero.
func (e *Engine) setDefaults() {
	if e.rng == nil {
		e.rng = rand.New(rand.NewPCG(1, 2))
	}
	if e.bo.rng == nil {
		e.bo.rng = rand.New(rand.NewPCG(3, 4))
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	if e.wall == nil {
		e.wall = time.Now
	}
	if e.mode == "" {
		e.mode = ModeActive
	}
	if e.creditMode == "" {
		e.creditMode = CreditLater
	}
	if e.aggregate == "" {
		e.aggregate = AggregatePair
	}
	if e.maxKinds < 2 {
		e.maxKinds = 2
	}
	if e.pairReward == "" {
		e.pairReward = RewardGoodness
	}
}
