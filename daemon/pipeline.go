package daemon

import (
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
)

// pipelineConfig is the config file's pipeline section: the ordering
// pipeline's own configuration (pipeline.Config, every stage under its
// key), and beside two of its stages the settings of what they call, under
// the same keys: the co-location model's scorer (engine.ScorerConfig)
// under pipeline.preference, and the rollouts' bounds (plan.Config) under
// pipeline.lookahead. No key belongs to two owners.
type pipelineConfig struct {
	pipeline.Config `mapstructure:",squash"`
	Scorer          engine.ScorerConfig `mapstructure:"preference"`
	Plan            plan.Config         `mapstructure:"lookahead"`
}

// Validate checks the section: the pipeline by its owner, and the scorer
// and the rollouts' bounds where their stage is on; errors name the key
// under "pipeline.".
func (p pipelineConfig) Validate() error {
	if err := p.Config.Validate(); err != nil {
		return sectionErr("pipeline", err)
	}
	if pr := p.Preference; pr.Enabled && pr.Mode == pipeline.PreferenceModel {
		if err := p.Scorer.Validate(); err != nil {
			return sectionErr("pipeline.preference", err)
		}
	}
	if p.Lookahead.Enabled {
		if err := p.Plan.Validate(); err != nil {
			return cfgErr("pipeline.lookahead", "%v", err)
		}
	}
	return nil
}
