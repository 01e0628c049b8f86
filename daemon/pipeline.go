package daemon

import (
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/queue"
)

// PipelineConfig is the config file's pipeline section: the ordering
// pipeline's stages, each decoded into its owner's type (queue), and the
// preference stage's scorer (engine).
type PipelineConfig struct {
	Window      queue.WindowConfig      `mapstructure:"window"`
	Fit         queue.FitConfig         `mapstructure:"fit"`
	Fairness    queue.FairnessConfig    `mapstructure:"fairness"`
	Altruism    queue.AltruismConfig    `mapstructure:"altruism"`
	Preference  PreferenceConfig        `mapstructure:"preference"`
	Starvation  queue.StarvationConfig  `mapstructure:"starvation"`
	Reservation queue.ReservationConfig `mapstructure:"reservation"`
	Tail        queue.TailConfig        `mapstructure:"tail"`
	Lookahead   LookaheadConfig         `mapstructure:"lookahead"`
	Select      queue.SelectConfig      `mapstructure:"select"`
	MaxRecorded int                     `mapstructure:"max_recorded"`
}

// PreferenceConfig is pipeline.preference: the stage's own settings
// (queue.PreferenceConfig) and, in mode model, the co-location model's
// scorer (engine.ScorerConfig), side by side under one key.
type PreferenceConfig struct {
	queue.PreferenceConfig `mapstructure:",squash"`
	engine.ScorerConfig    `mapstructure:",squash"`
}

// LookaheadConfig is pipeline.lookahead: the stage's own settings
// (queue.LookaheadConfig) and the rollouts' bounds (plan.Config), side by
// side under one key.
type LookaheadConfig struct {
	queue.LookaheadConfig `mapstructure:",squash"`
	plan.Config           `mapstructure:",squash"`
}

// DefaultPipelineConfig is queue.DefaultConfig with colocd's choice: the
// profile model scores (mode model, engine.DefaultScorerConfig), the best
// score goes (select mode argmax) and a draining queue's straggler goes
// first (tail on).
func DefaultPipelineConfig() PipelineConfig {
	q := queue.DefaultConfig()
	q.Preference.Mode = queue.PreferenceModel
	q.Select.Mode = queue.SelectArgmax
	q.Tail.Enabled = true
	q.Fairness.Weights = map[string]float64{}
	q.Fairness.Queues = []queue.ServiceQueue{}
	return PipelineConfig{
		Window: q.Window, Fit: q.Fit, Fairness: q.Fairness, Altruism: q.Altruism,
		Preference:  PreferenceConfig{PreferenceConfig: q.Preference, ScorerConfig: engine.DefaultScorerConfig()},
		Starvation:  q.Starvation,
		Reservation: q.Reservation,
		Tail:        q.Tail,
		Lookahead:   LookaheadConfig{LookaheadConfig: q.Lookahead, Config: plan.Config{}.WithDefaults()},
		Select:      q.Select,
		MaxRecorded: q.MaxRecorded,
	}
}

// QueueConfig is the section as a queue.Config, validated by the queue
// (and, in mode model, the scorer by the engine); errors name the key
// under "pipeline.".
func (p PipelineConfig) QueueConfig() (queue.Config, error) {
	q := queue.Config{
		Window: p.Window, Fit: p.Fit, Fairness: p.Fairness, Altruism: p.Altruism,
		Preference: p.Preference.PreferenceConfig, Starvation: p.Starvation, Reservation: p.Reservation, Tail: p.Tail,
		Lookahead: p.Lookahead.LookaheadConfig, Select: p.Select,
		MaxRecorded: p.MaxRecorded,
	}
	if err := q.Validate(); err != nil {
		return q, sectionErr("pipeline", err)
	}
	if pr := p.Preference; pr.Enabled && pr.Mode == queue.PreferenceModel {
		if err := pr.ScorerConfig.Validate(); err != nil {
			return q, sectionErr("pipeline.preference", err)
		}
	}
	if la := p.Lookahead; la.Enabled {
		if err := la.Config.Validate(); err != nil {
			return q, cfgErr("pipeline.lookahead", "%v", err)
		}
	}
	return q, nil
}

func (p PipelineConfig) validate() error {
	_, err := p.QueueConfig()
	return err
}
