package daemon

import (
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
)

// PipelineConfig is the config file's pipeline section: the ordering
// pipeline's stages, each decoded into its owner's type (queue), and the
// preference stage's scorer (engine).
type PipelineConfig struct {
	Window      pipeline.WindowConfig      `mapstructure:"window"`
	Fit         pipeline.FitConfig         `mapstructure:"fit"`
	Fairness    pipeline.FairnessConfig    `mapstructure:"fairness"`
	Altruism    pipeline.AltruismConfig    `mapstructure:"altruism"`
	Preference  PreferenceConfig           `mapstructure:"preference"`
	Starvation  pipeline.StarvationConfig  `mapstructure:"starvation"`
	Reservation pipeline.ReservationConfig `mapstructure:"reservation"`
	Tail        pipeline.TailConfig        `mapstructure:"tail"`
	Lookahead   LookaheadConfig            `mapstructure:"lookahead"`
	Select      pipeline.SelectConfig      `mapstructure:"select"`
	MaxRecorded int                        `mapstructure:"max_recorded"`
}

// PreferenceConfig is pipeline.preference: the stage's own settings
// (pipeline.PreferenceConfig) and, in mode model, the co-location model's
// scorer (engine.ScorerConfig), side by side under one key.
type PreferenceConfig struct {
	pipeline.PreferenceConfig `mapstructure:",squash"`
	engine.ScorerConfig       `mapstructure:",squash"`
}

// LookaheadConfig is pipeline.lookahead: the stage's own settings
// (pipeline.LookaheadConfig) and the rollouts' bounds (plan.Config), side by
// side under one key.
type LookaheadConfig struct {
	pipeline.LookaheadConfig `mapstructure:",squash"`
	plan.Config              `mapstructure:",squash"`
}

// DefaultPipelineConfig is pipeline.DefaultConfig with colocd's choice: the
// profile model scores (mode model, engine.DefaultScorerConfig), the best
// score goes (select mode argmax) and a draining queue's straggler goes
// first (tail on).
func DefaultPipelineConfig() PipelineConfig {
	q := pipeline.DefaultConfig()
	q.Preference.Mode = pipeline.PreferenceModel
	q.Select.Mode = pipeline.SelectArgmax
	q.Tail.Enabled = true
	q.Fairness.Weights = map[string]float64{}
	q.Fairness.Queues = []pipeline.ServiceQueue{}
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

// QueueConfig is the section as a pipeline.Config, validated by the queue
// (and, in mode model, the scorer by the engine); errors name the key
// under "pipeline.".
func (p PipelineConfig) QueueConfig() (pipeline.Config, error) {
	q := pipeline.Config{
		Window: p.Window, Fit: p.Fit, Fairness: p.Fairness, Altruism: p.Altruism,
		Preference: p.Preference.PreferenceConfig, Starvation: p.Starvation, Reservation: p.Reservation, Tail: p.Tail,
		Lookahead: p.Lookahead.LookaheadConfig, Select: p.Select,
		MaxRecorded: p.MaxRecorded,
	}
	if err := q.Validate(); err != nil {
		return q, sectionErr("pipeline", err)
	}
	if pr := p.Preference; pr.Enabled && pr.Mode == pipeline.PreferenceModel {
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
