package daemon

import (
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/pipeline"
)

// A Preset is a named set of choices over a configuration: the knobs it
// sets and why, in one place. Each knob's one default is its owner's
// (pipeline.DefaultConfig, bandit.DefaultConfig, engine.DefaultScorerConfig,
// plan.Config's, the daemon's own sections in DefaultConfig); a preset
// names what colocd, or a method it is compared with, chooses otherwise.
//
// `colocd serve` starts from PresetColocd (DefaultConfig applies it);
// `colocd sim --policy paper` runs PresetPaper, ra-plan PresetPlan and the
// pair-learning studies PresetPairs, each applied over the configuration
// the simulation was given; the tests read them from here.
type Preset struct {
	Name string
	Doc  string // one line: what it is for
	set  func(*Config)
}

// Apply returns cfg with the preset's choices (cfg itself is not changed).
func (p Preset) Apply(cfg Config) Config {
	p.set(&cfg)
	return cfg
}

// The presets.
var (
	// PresetColocd is colocd's own choice over the owners' defaults (the
	// paper's method): the profile model scores each candidate (preference
	// mode model), the best score goes (select argmax), a draining queue's
	// straggler goes first (tail on), and the pair preferences learn the
	// profiles' residual slowly, starting a kind below itself.
	PresetColocd = Preset{Name: "colocd", Doc: "what colocd serves with: the profile model's choice", set: func(c *Config) {
		c.Pipeline.Preference.Mode = pipeline.PreferenceModel
		c.Pipeline.Select.Mode = pipeline.SelectArgmax
		c.Pipeline.Tail.Enabled = true
		// While a batch drains, a kind's largest job stands for it: on the
		// workload whose jobs of one kind differ in size (hetero-sizes)
		// ra's makespan goes −8.9 % → −11.5 % on the tuning seeds, the
		// same workload under Poisson arrivals is unchanged, and a queue
		// whose jobs of a kind are of one size decides exactly as FIFO
		// within the kind (bench/README, "The largest job of a kind").
		c.Pipeline.Preference.WithinKind = pipeline.WithinKindLargest
		// γ of the pair preferences, which in mode model learn from the
		// profiles' goodness residuals. A tick's residual is mostly the
		// jobs' phases, which mean profiles do not see, so the correction
		// must follow what persists: at γ = 0.05 (bandit.DefaultStepSize,
		// the paper's) the preferences chased that noise and, carried into
		// a second run, cost queue A seven points of makespan (−19.6 % →
		// −12.7 % for ra-warm, tuning seeds); at 0.005 ra-warm keeps
		// −19.4 % and the workload with interference keeps the
		// correction's gain (noisy: ra −7.6 % without a correction, −9.5 %
		// with it).
		c.Learning.StepSize = 0.005
		c.Learning.SelfPrior = 1 // bandit.Config.SelfPrior: two jobs of one kind stress the same resources
		c.Learning.PairReward = engine.RewardResidual
	}}

	// PresetPaper is the paper's method: the pair preferences alone
	// (preference mode bandit) learning from the observed goodness at the
	// bandit's step size, H₀ = 0 everywhere (no self prior), sampling from
	// π, FIFO within a kind (§4.3), and only the paper's starvation guard
	// (no reservations, no tail stage).
	PresetPaper = Preset{Name: "paper", Doc: "the paper's method: pair preferences alone, sampled", set: func(c *Config) {
		c.Pipeline.Reservation.Enabled = false
		c.Pipeline.Tail.Enabled = false
		c.Pipeline.Preference.Mode = pipeline.PreferenceBandit
		c.Pipeline.Preference.WithinKind = pipeline.WithinKindOldest
		c.Pipeline.Select.Mode = pipeline.SelectSample
		c.Learning.SelfPrior = 0
		c.Learning.PairReward = engine.RewardGoodness
		c.Learning.StepSize = bandit.DefaultStepSize
	}}

	// PresetPlan turns the lookahead stage on (model-predictive
	// admission), its bounds as configured (pipeline.lookahead).
	PresetPlan = Preset{Name: "plan", Doc: "colocd with the lookahead's rollouts", set: func(c *Config) {
		c.Pipeline.Lookahead.Enabled = true
	}}

	// PresetPairs is the pair preferences alone deciding, without the
	// profile model: preference mode bandit learning from the observed
	// goodness, select mode anneal, FIFO within a kind, no tail stage (it
	// would reorder the queue's end for the makespan, not for what the
	// learner prefers); the rest (self prior, context, starvation) as
	// configured. The learning studies measure this learner.
	PresetPairs = Preset{Name: "pairs", Doc: "the pair preferences alone, annealed (the learning studies)", set: func(c *Config) {
		c.Pipeline.Tail.Enabled = false
		c.Pipeline.Preference.Mode = pipeline.PreferenceBandit
		c.Pipeline.Preference.WithinKind = pipeline.WithinKindOldest
		c.Pipeline.Select.Mode = pipeline.SelectAnneal
		c.Learning.PairReward = engine.RewardGoodness
		c.Learning.StepSize = bandit.DefaultStepSize
	}}
)

// Presets lists the presets, colocd's first.
func Presets() []Preset { return []Preset{PresetColocd, PresetPaper, PresetPlan, PresetPairs} }
