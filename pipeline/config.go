package pipeline

import (
	"fmt"
	"math"
	"time"

	"github.com/colocd/colocd/queue"
)

// Config drives the ordering pipeline. Every stage can be switched off;
// parameters of a disabled stage are not validated. The zero Config is
// valid and means plain FIFO over all pending jobs (no fit check).
type Config struct {
	Window     WindowConfig     `json:"window" yaml:"window" mapstructure:"window"`
	Fit        FitConfig        `json:"fit" yaml:"fit" mapstructure:"fit"`
	Fairness   FairnessConfig   `json:"fairness" yaml:"fairness" mapstructure:"fairness"`
	Altruism   AltruismConfig   `json:"altruism" yaml:"altruism" mapstructure:"altruism"`
	Preference PreferenceConfig `json:"preference" yaml:"preference" mapstructure:"preference"`
	Starvation StarvationConfig `json:"starvation" yaml:"starvation" mapstructure:"starvation"`
	// Reservation runs right after the window: see ReservationConfig.
	Reservation ReservationConfig `json:"reservation" yaml:"reservation" mapstructure:"reservation"`
	// Tail runs after reservation, before preference: see TailConfig.
	Tail TailConfig `json:"tail" yaml:"tail" mapstructure:"tail"`
	// Lookahead runs after preference, before starvation: see
	// LookaheadConfig.
	Lookahead LookaheadConfig `json:"lookahead" yaml:"lookahead" mapstructure:"lookahead"`
	Select    SelectConfig    `json:"select" yaml:"select" mapstructure:"select"`
	// MaxRecorded caps the dropped jobs recorded per stage and the
	// candidates and groups recorded per decision (the rest are counted).
	// Zero: 32.
	MaxRecorded int `json:"max_recorded" yaml:"max_recorded" mapstructure:"max_recorded"`
}

// WindowConfig: choose among the first Size pending jobs only.
type WindowConfig struct {
	Enabled bool `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	Size    int  `json:"size" yaml:"size" mapstructure:"size"`
}

// FitConfig: drop jobs that do not fit the free resources.
type FitConfig struct {
	Enabled bool `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	// PerNode also checks that the containers can be placed on the nodes'
	// free capacity, when the snapshot lists nodes.
	PerNode bool `json:"per_node" yaml:"per_node" mapstructure:"per_node"`
}

// groupBy names what fairness groups jobs by.
type groupBy string

// Fairness groupings.
const (
	GroupByUser  groupBy = "user"
	GroupByQueue groupBy = "queue"
)

// shareMetric is how a multi-resource amount becomes one share.
type shareMetric string

// Share metrics.
const (
	// shareDominant is DRF's dominant share: the largest of the normalised
	// resource shares.
	shareDominant shareMetric = "dominant"
	// shareSum is X-Flex's instantaneous charge, Σ_d r_d/R_d, divided by
	// the number of resources so that the whole cluster is 1.
	shareSum shareMetric = "sum"
)

// FairnessConfig: bounded unfairness between users or YARN queues (DRF shares,
// Graphene §5.1 deficit counters, X-Flex long-term fairness). See
// fairnessStage for the rules.
type FairnessConfig struct {
	Enabled bool    `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	GroupBy groupBy `json:"group_by" yaml:"group_by" mapstructure:"group_by"`
	// Kappa is Graphene's κ: when the most-starved group's deficit reaches
	// κ·C (C, the cluster capacity, is 1 in share units) only its jobs stay.
	// In (0, 1].
	Kappa float64 `json:"kappa" yaml:"kappa" mapstructure:"kappa"`
	// Weights per group (default 1): a group's fair share is its weight over
	// the sum of the weights of the groups with pending jobs.
	Weights map[string]float64 `json:"weights,omitempty" yaml:"weights,omitempty" mapstructure:"weights"`
	Metric  shareMetric        `json:"metric" yaml:"metric" mapstructure:"metric"`
	// HalfLife > 0 selects long-term fairness (X-Flex): the deficit is the
	// group's shortfall from its fair share of the running allocation,
	// averaged over time with this half-life. Zero: Graphene's counters,
	// charged per admission.
	HalfLife time.Duration `json:"half_life" yaml:"half_life" mapstructure:"half_life"`
	// Mode is deficit (DRF deficit counters alone) or curves: the Queues'
	// service curves first, then DRF deficits among the elastic groups,
	// then strict priority (see curvesRule). "" means deficit.
	Mode fairnessMode `json:"mode" yaml:"mode" mapstructure:"mode"`
	// Queues are the curves mode's service queues, in the order admission
	// control considers them. Groups in no queue are elastic.
	Queues []ServiceQueue `json:"queues,omitempty" yaml:"queues,omitempty" mapstructure:"queues"`
	// BurstPeriod is the draft's T: the look-back window of the service
	// curves (curves mode).
	BurstPeriod time.Duration `json:"burst_period" yaml:"burst_period" mapstructure:"burst_period"`
	// KeepRoom (curves mode): while a guaranteed queue holds less than its
	// burst rate α, an elastic group's job goes only if it takes no more
	// vcores and memory than the group's oldest job that fits, the one
	// FIFO within the group would admit. The learned order may then
	// reorder the elastic jobs but not fill the room a guaranteed queue's
	// next burst needs faster than FIFO would: its jobs wait for room no
	// longer than under the curves alone (bench/README.md, "Guarantees").
	KeepRoom bool `json:"keep_room" yaml:"keep_room" mapstructure:"keep_room"`
	// Slot is the accounting time slot of the service curves (the draft's
	// unit of t); BurstPeriod/Slot slots are kept per queue.
	Slot time.Duration `json:"slot" yaml:"slot" mapstructure:"slot"`
	// Scan bounds how many pending jobs, from the FIFO head, the daemon
	// reads per decision to find each group's window (the window is the
	// first window.size jobs of each group while fairness is on): a
	// group whose first job lies further back is not seen until the queue
	// ahead shrinks. 0: DefaultFairScan.
	Scan int `json:"scan" yaml:"scan" mapstructure:"scan"`
}

// DefaultFairScan is fairness.scan's default.
const DefaultFairScan = 2000

// Curve accounting defaults and bounds.
const (
	defaultBurstPeriod = time.Hour
	defaultSlot        = time.Minute
	maxCurveSlots      = 10000
)

// AltruismConfig: Carbyne §3.4.2 — deadline jobs may yield to others while
// they have slack, with probability P.
type AltruismConfig struct {
	Enabled bool `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	// P is P(altruism): the probability that a deadline job with positive
	// slack lets jobs behind it go first in one decision. 0: never.
	P float64 `json:"p" yaml:"p" mapstructure:"p"`
	// DefaultRuntime is the expected runtime of a kind with no history.
	DefaultRuntime time.Duration `json:"default_runtime" yaml:"default_runtime" mapstructure:"default_runtime"`
}

// preferenceMode is how the preference stage scores candidates.
type preferenceMode string

// Preference modes.
const (
	// PreferenceModel scores each candidate kind with the co-location model
	// (a Scorer: learned resource profiles corrected by pair preferences)
	// and takes the softmax of the scores over Temperature.
	PreferenceModel preferenceMode = "model"
	// PreferenceBandit is the paper's: π(kind | running kinds) from the
	// gradient-bandit pair preferences alone.
	PreferenceBandit preferenceMode = "bandit"
)

// defaultTemperature is preference.temperature's default, in score units
// (the model's rate score is a job's predicted mean speed net of the
// slowdown it causes, in [−1, 1]): a score 0.05 higher is e times more
// likely before starvation weights, so a job passed over twice (weight 2
// at a = 0.5) outweighs a 0.035 lead.
const defaultTemperature = 0.05

// PreferenceConfig: score candidates by co-location. Disabled: the oldest
// survivor goes first.
type PreferenceConfig struct {
	Enabled bool           `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	Mode    preferenceMode `json:"mode" yaml:"mode" mapstructure:"mode"`
	// Temperature (mode model) turns scores into probabilities:
	// π ∝ exp(score / Temperature). > 0.
	Temperature float64 `json:"temperature" yaml:"temperature" mapstructure:"temperature"`
	// ObserveWait (mode model) is how long after its submission a job may
	// be held back so that a never-observed kind is first profiled where
	// its usage can be told apart (see modelStage); 0 never holds back. No
	// candidate confounds, so none is held back, while the engine reads
	// each kind's own usage (engine.Options.ContainerUsage).
	ObserveWait time.Duration `json:"observe_wait" yaml:"observe_wait" mapstructure:"observe_wait"`
	// WithinKind is which job of a kind stands for it: its oldest (FIFO
	// within a kind, the paper's §4.3), or, while the queue drains (at
	// DrainRatio), its largest in vcores (containers × vcores each; ties:
	// the oldest). Kinds are chosen as before; among jobs of the chosen
	// kind a drained batch ends sooner when the largest goes first.
	WithinKind WithinKindOrder `json:"within_kind" yaml:"within_kind" mapstructure:"within_kind"`
	// DrainRatio is when the queue counts as draining (Snapshot.Draining):
	// its pending work is more than DrainRatio times the span over which
	// it arrived; 0 counts it always. The scorer's size_weight reads it
	// too. [0, 1000].
	DrainRatio float64 `json:"drain_ratio" yaml:"drain_ratio" mapstructure:"drain_ratio"`
}

// WithinKindOrder is which job of a kind the preference stage scores.
type WithinKindOrder string

// Within-kind orders.
const (
	WithinKindOldest  WithinKindOrder = "oldest"  // FIFO within a kind
	WithinKindLargest WithinKindOrder = "largest" // the largest while the queue drains
)

// defaultDrainRatio is preference.drain_ratio's default: twice the span,
// as the work estimate counts vcores, not the co-located speed, and a
// flow's backlog briefly outgrows its span. Chosen on the tuning seeds
// (bench/README, "Job size while the queue drains").
const defaultDrainRatio = 2.0

// defaultObserveWait is preference.observe_wait's default: two learning
// ticks at the default 60 s schedule.
const defaultObserveWait = 2 * time.Minute

// shape is how the starvation weight grows with skips.
type shape string

// Starvation weight shapes.
const (
	shapeLinear      shape = "linear"      // 1 + a·skips
	shapeExponential shape = "exponential" // (1 + a)^skips
	// shapeNear weighs a job only once it has used half its bound: 1 + a·
	// (skips − max_skips/2) past half of max_skips, or the same share of
	// max_wait past half of it, whichever is more; 1 before. A job far from
	// its bound does not override the co-location choice; one near it is
	// pulled toward a good moment before the cap forces it at any moment.
	shapeNear shape = "near"
)

// StarvationConfig: paper §4.3, last paragraph — weight by times skipped,
// renormalise; a hard cap forces a job through.
type StarvationConfig struct {
	Enabled  bool    `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	Shape    shape   `json:"shape" yaml:"shape" mapstructure:"shape"`
	A        float64 `json:"a" yaml:"a" mapstructure:"a"`
	MaxSkips int     `json:"max_skips" yaml:"max_skips" mapstructure:"max_skips"`
	// MaxWait bounds waiting in time: a job that fits and was submitted
	// longer ago than this goes, as one passed over max_skips times does;
	// 0: no bound in time.
	MaxWait time.Duration `json:"max_wait" yaml:"max_wait" mapstructure:"max_wait"`
}

// ReservationConfig: no job starves for not fitting. Starvation's
// max_skips forces a job that fits; a job that does not fit is never a
// candidate, so younger jobs that fit could overtake it forever. Each
// decision that admits a younger job while an older window job does not
// fit adds one to the oldest such job that would fit the idle cluster
// (one write per admission, however large the window; a job that never
// fits must not absorb the count). Once a job has been blocked
// AfterBlocked times it holds a reservation: no other job is
// admitted until it fits, and it is admitted at the first decision where it
// does (YARN's reservations, at admission level). A job that would not fit
// even the idle cluster (its capacity now) holds none: waiting could not
// end.
//
// Bound: a job is blocked at most AfterBlocked times, and once it holds the
// reservation it waits only for the room the running jobs free; a job
// behind older ones that do not fit starts counting once they are gone.
type ReservationConfig struct {
	Enabled      bool `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	AfterBlocked int  `json:"after_blocked" yaml:"after_blocked" mapstructure:"after_blocked"`
}

// TailConfig: at the end of a draining queue, a job longer than Margin
// times what the rest of the queue needs goes first (longest first), so
// that it does not finish alone after everything else (tailStage). Not in
// the paper.
type TailConfig struct {
	Enabled bool    `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	Margin  float64 `json:"margin" yaml:"margin" mapstructure:"margin"`
}

// defaultTailMargin is TailConfig.Margin's default: a job must be a
// quarter longer than the rest of the queue's drain time, so that noise in
// the runtime estimates (runs under contention) does not override the
// co-location choice. Chosen on the tuning seeds and the generated
// workloads (bench/README.md, "The queue's tail").
const defaultTailMargin = 1.25

// LookaheadConfig: model-predictive admission. The TopK candidates the
// preference stage ranks first are rolled out on a model of the cluster
// (a Planner, WithPlanner), each admitted now and the one-step rule after
// it, over sampled futures; the candidate predicted best goes instead of
// the one-step choice only when it beats it by Margin standard errors of
// their paired difference. Where the model cannot tell (a kind without a
// runtime estimate), the one-step choice stands. Not in the paper.
type LookaheadConfig struct {
	Enabled bool    `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	TopK    int     `json:"top_k" yaml:"top_k" mapstructure:"top_k"`
	Margin  float64 `json:"margin" yaml:"margin" mapstructure:"margin"`
	// MinGain is the smallest predicted gain, as a share of the one-step
	// choice's predicted value, that replaces it: the model's own bias
	// (mean profiles, estimated runtimes) is not noise that more samples
	// average out.
	MinGain float64 `json:"min_gain" yaml:"min_gain" mapstructure:"min_gain"`
}

// Defaults of LookaheadConfig.
const (
	DefaultLookaheadTopK   = 3
	DefaultLookaheadMargin = 1.0
	maxLookaheadTopK       = 16
)

// selectMode is how the final distribution becomes one job.
type selectMode string

// Select modes.
const (
	SelectSample selectMode = "sample" // draw from the distribution (the paper)
	SelectArgmax selectMode = "argmax" // most probable; ties → oldest
	// SelectAnneal samples while the context's preference rows have seen
	// fewer than ExploreObservations observations (weighted by the context
	// weights), then takes the argmax: explore first, exploit what was learned.
	SelectAnneal selectMode = "anneal"
)

// defaultExploreObservations is select.explore_observations' default.
const defaultExploreObservations = 10

// SelectConfig: draw the job. Disabled: the oldest candidate.
type SelectConfig struct {
	Enabled bool       `json:"enabled" yaml:"enabled" mapstructure:"enabled"`
	Mode    selectMode `json:"mode" yaml:"mode" mapstructure:"mode"`
	// ExploreObservations (anneal): observations of the context's rows
	// below which the job is sampled; at or above, the argmax.
	ExploreObservations int64 `json:"explore_observations" yaml:"explore_observations" mapstructure:"explore_observations"`
}

// DefaultWindow is the default window size. The paper (§4.1) chooses among
// "the n first jobs of the queue" but gives no value for n; 8 keeps several
// kinds in view while bounding how far a job can be overtaken.
const DefaultWindow = 8

// DefaultConfig is the paper's scheduler with its suggested starvation
// guard: window 8, fit with per-node placement, fairness off, altruism on
// (P = 0.5, unknown runtime 10 min), preferences on, linear starvation
// weights (a = 0.5, max 8 skips), reservations after 8 blocks (not in the
// paper: a job that does not fit would otherwise starve; measured in
// bench/README.md, it costs ra nothing on the shipped workloads) — and one
// deviation: select mode anneal
// (sample until the context's preference rows have 10 observations, then
// argmax) instead of the paper's pure sampling, which measured worse on both
// paper queues in `colocd sim` (bench/README.md).
func DefaultConfig() Config {
	return Config{
		Window: WindowConfig{Enabled: true, Size: DefaultWindow},
		Fit:    FitConfig{Enabled: true, PerNode: true},
		Fairness: FairnessConfig{
			Enabled: false, GroupBy: GroupByUser, Kappa: 0.1, Metric: shareDominant,
			Mode: FairnessDeficit, BurstPeriod: defaultBurstPeriod, Slot: defaultSlot, Scan: DefaultFairScan,
		},
		Altruism: AltruismConfig{Enabled: true, P: 0.5, DefaultRuntime: 10 * time.Minute},
		Preference: PreferenceConfig{Enabled: true, Mode: PreferenceBandit, Temperature: defaultTemperature, ObserveWait: defaultObserveWait,
			WithinKind: WithinKindOldest, DrainRatio: defaultDrainRatio},
		Starvation:  StarvationConfig{Enabled: true, Shape: shapeLinear, A: 0.5, MaxSkips: 8},
		Reservation: ReservationConfig{Enabled: true, AfterBlocked: 8},
		Tail:        TailConfig{Enabled: false, Margin: defaultTailMargin},
		Lookahead:   LookaheadConfig{Enabled: false, TopK: DefaultLookaheadTopK, Margin: DefaultLookaheadMargin},
		Select:      SelectConfig{Enabled: true, Mode: SelectAnneal, ExploreObservations: defaultExploreObservations},
		MaxRecorded: 32,
	}
}

// maxWindow bounds Window.Size.
const maxWindow = 1 << 20

// Validate reports the first bad field as a *FieldError (wrapping
// ErrInvalid) named like "starvation.max_skips", with the bound it broke.
func (c Config) Validate() error {
	if c.MaxRecorded < 0 {
		return fieldErr("max_recorded", "%d is negative", c.MaxRecorded)
	}
	if w := c.Window; w.Enabled && (w.Size < 1 || w.Size > maxWindow) {
		return fieldErr("window.size", "%d outside [1, %d]", w.Size, maxWindow)
	}
	if f := c.Fairness; f.Enabled {
		if err := f.validate(); err != nil {
			return err
		}
	}
	if a := c.Altruism; a.Enabled {
		if !(a.P >= 0 && a.P <= 1) {
			return fieldErr("altruism.p", "%v outside [0, 1]", a.P)
		}
		if a.DefaultRuntime < 0 {
			return fieldErr("altruism.default_runtime", "%v is negative", a.DefaultRuntime)
		}
	}
	if err := c.validatePreference(); err != nil {
		return err
	}
	if r := c.Reservation; r.Enabled && (r.AfterBlocked < 1 || r.AfterBlocked > 1<<20) {
		return fieldErr("reservation.after_blocked", "%d outside [1, %d]", r.AfterBlocked, 1<<20)
	}
	if err := c.validateLookahead(); err != nil {
		return err
	}
	if t := c.Tail; t.Enabled && !(t.Margin > 0 && t.Margin <= 100) {
		return fieldErr("tail.margin", "%v outside (0, 100]", t.Margin)
	}
	if s := c.Starvation; s.Enabled {
		if err := s.validate(); err != nil {
			return err
		}
	}
	if s := c.Select; s.Enabled {
		switch s.Mode {
		case SelectSample, SelectArgmax, SelectAnneal:
		default:
			return fieldErr("select.mode", "%q is not sample, argmax or anneal", s.Mode)
		}
		if s.ExploreObservations < 0 {
			return fieldErr("select.explore_observations", "%d is negative", s.ExploreObservations)
		}
	}
	return nil
}

// validate checks the fairness stage's settings (when it is enabled).
func (f FairnessConfig) validate() error {
	switch f.GroupBy {
	case GroupByUser, GroupByQueue:
	default:
		return fieldErr("fairness.group_by", "%q is not user or queue", f.GroupBy)
	}
	if !(f.Kappa > 0 && f.Kappa <= 1) {
		return fieldErr("fairness.kappa", "%v outside (0, 1]", f.Kappa)
	}
	switch f.Metric {
	case shareDominant, shareSum:
	default:
		return fieldErr("fairness.metric", "%q is not dominant or sum", f.Metric)
	}
	if f.HalfLife < 0 {
		return fieldErr("fairness.half_life", "%v is negative", f.HalfLife)
	}
	if f.Scan < 0 || f.Scan > maxWindow {
		return fieldErr("fairness.scan", "%d outside [0, %d]", f.Scan, maxWindow)
	}
	for g, w := range f.Weights {
		if !(w > 0) || math.IsInf(w, 0) {
			return fieldErr(fmt.Sprintf("fairness.weights[%s]", g), "%v is not a positive finite weight", w)
		}
	}
	return f.validateCurves()
}

// validatePreference checks the co-location score's settings.
func (c Config) validatePreference() error {
	p := c.Preference
	if !p.Enabled {
		return nil
	}
	switch p.WithinKind {
	case WithinKindOldest, WithinKindLargest:
	default:
		return fieldErr("preference.within_kind", "%q is not oldest or largest", p.WithinKind)
	}
	if !(p.DrainRatio >= 0 && p.DrainRatio <= 1000) {
		return fieldErr("preference.drain_ratio", "%v outside [0, 1000]", p.DrainRatio)
	}
	switch p.Mode {
	case PreferenceModel:
		if !(p.Temperature > 0) || math.IsInf(p.Temperature, 0) {
			return fieldErr("preference.temperature", "%v is not a positive finite number", p.Temperature)
		}
		if p.ObserveWait < 0 {
			return fieldErr("preference.observe_wait", "%v is negative", p.ObserveWait)
		}
	case PreferenceBandit:
	default:
		return fieldErr("preference.mode", "%q is not model or bandit", p.Mode)
	}
	return nil
}

// validateLookahead checks the lookahead's settings.
func (c Config) validateLookahead() error {
	l := c.Lookahead
	if !l.Enabled {
		return nil
	}
	if l.TopK < 2 || l.TopK > maxLookaheadTopK {
		return fieldErr("lookahead.top_k", "%d outside [2, %d]", l.TopK, maxLookaheadTopK)
	}
	if !(l.Margin >= 0 && l.Margin <= 10) {
		return fieldErr("lookahead.margin", "%v outside [0, 10]", l.Margin)
	}
	if !(l.MinGain >= 0 && l.MinGain <= 1) {
		return fieldErr("lookahead.min_gain", "%v outside [0, 1]", l.MinGain)
	}
	if !c.Preference.Enabled || c.Preference.Mode != PreferenceModel {
		return fieldErr("lookahead.enabled", "needs preference mode model (the one-step rule it looks ahead of)")
	}
	return nil
}

// validate checks the starvation guard's settings (when it is enabled).
func (s StarvationConfig) validate() error {
	switch s.Shape {
	case shapeLinear, shapeExponential, shapeNear:
	default:
		return fieldErr("starvation.shape", "%q is not linear, exponential or near", s.Shape)
	}
	if s.MaxWait < 0 {
		return fieldErr("starvation.max_wait", "%v is negative", s.MaxWait)
	}
	if !(s.A >= 0) || math.IsInf(s.A, 0) {
		return fieldErr("starvation.a", "%v is not a finite number ≥ 0", s.A)
	}
	if s.MaxSkips < 1 || s.MaxSkips > 1<<20 {
		return fieldErr("starvation.max_skips", "%d outside [1, %d]", s.MaxSkips, 1<<20)
	}
	if s.Shape == shapeExponential && math.IsInf(math.Pow(1+s.A, float64(s.MaxSkips)), 0) {
		return fieldErr("starvation.a", "(1+%v)^%d overflows", s.A, s.MaxSkips)
	}
	return nil
}

// validateCurves checks the curves mode's settings.
func (f FairnessConfig) validateCurves() error {
	switch f.Mode {
	case "", FairnessDeficit:
		if len(f.Queues) > 0 {
			return fieldErr("fairness.queues", "only used with mode curves")
		}
		return nil
	case FairnessCurves:
	default:
		return fieldErr("fairness.mode", "%q is not deficit or curves", f.Mode)
	}
	if f.Slot <= 0 {
		return fieldErr("fairness.slot", "%v is not positive", f.Slot)
	}
	if f.BurstPeriod < f.Slot || f.BurstPeriod/f.Slot > maxCurveSlots {
		return fieldErr("fairness.burst_period", "%v must be between one slot (%v) and %d slots", f.BurstPeriod, f.Slot, maxCurveSlots)
	}
	seen := map[string]string{}
	for i, q := range f.Queues {
		field := fmt.Sprintf("fairness.queues[%d]", i)
		if err := q.validate(field); err != nil {
			return err
		}
		if q.Burst > f.BurstPeriod {
			return fieldErr(field+".burst", "%v exceeds burst_period %v", q.Burst, f.BurstPeriod)
		}
		for _, g := range append([]string{q.Name}, q.Members...) {
			if prev, ok := seen[g]; ok {
				return fieldErr(field, "group %q is already served by queue %q", g, prev)
			}
			seen[g] = q.Name
		}
	}
	return nil
}

// fieldErr is a queue.FieldError: the daemon names the configuration key
// from its Field.
func fieldErr(field, format string, args ...any) error {
	return &queue.FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}
