package daemon

import (
	"errors"
	"time"

	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// PipelineConfig is the config file's pipeline section: queue.Config's
// stages under the same names.
type PipelineConfig struct {
	Window      WindowStage     `mapstructure:"window"`
	Fit         FitStage        `mapstructure:"fit"`
	Fairness    FairnessStage   `mapstructure:"fairness"`
	Altruism    AltruismStage   `mapstructure:"altruism"`
	Preference  PreferenceStage `mapstructure:"preference"`
	Starvation  StarvationStage `mapstructure:"starvation"`
	Select      SelectStage     `mapstructure:"select"`
	MaxRecorded int             `mapstructure:"max_recorded"`
}

// WindowStage mirrors queue.WindowConfig.
type WindowStage struct {
	Enabled bool `mapstructure:"enabled"`
	Size    int  `mapstructure:"size"`
}

// FitStage mirrors queue.FitConfig.
type FitStage struct {
	Enabled bool `mapstructure:"enabled"`
	PerNode bool `mapstructure:"per_node"`
}

// FairnessStage mirrors queue.FairnessConfig. From the environment,
// weights are "group=weight" items separated by commas.
type FairnessStage struct {
	Enabled  bool               `mapstructure:"enabled"`
	GroupBy  string             `mapstructure:"group_by"`
	Kappa    float64            `mapstructure:"kappa"`
	Weights  map[string]float64 `mapstructure:"weights"`
	Metric   string             `mapstructure:"metric"`
	HalfLife time.Duration      `mapstructure:"half_life"`
}

// AltruismStage mirrors queue.AltruismConfig.
type AltruismStage struct {
	Enabled        bool          `mapstructure:"enabled"`
	P              float64       `mapstructure:"p"`
	DefaultRuntime time.Duration `mapstructure:"default_runtime"`
}

// PreferenceStage mirrors queue.PreferenceConfig, plus the co-location
// model's scorer settings (mode model): the objective it maximises, its
// caution with uncertain profiles (risk, in standard deviations) and the
// weight of the pair preferences' correction.
type PreferenceStage struct {
	Enabled     bool          `mapstructure:"enabled"`
	Mode        string        `mapstructure:"mode"`
	Temperature float64       `mapstructure:"temperature"`
	ObserveWait time.Duration `mapstructure:"observe_wait"`
	Objective   string        `mapstructure:"objective"`
	Risk        float64       `mapstructure:"risk"`
	Explore     float64       `mapstructure:"explore"`
	Correction  float64       `mapstructure:"correction"`
}

// StarvationStage mirrors queue.StarvationConfig.
type StarvationStage struct {
	Enabled  bool    `mapstructure:"enabled"`
	Shape    string  `mapstructure:"shape"`
	A        float64 `mapstructure:"a"`
	MaxSkips int     `mapstructure:"max_skips"`
}

// SelectStage mirrors queue.SelectConfig.
type SelectStage struct {
	Enabled             bool   `mapstructure:"enabled"`
	Mode                string `mapstructure:"mode"`
	ExploreObservations int64  `mapstructure:"explore_observations"`
}

// DefaultPipelineConfig is queue.DefaultConfig.
func DefaultPipelineConfig() PipelineConfig {
	q := queue.DefaultConfig()
	return PipelineConfig{
		Window: WindowStage{Enabled: q.Window.Enabled, Size: q.Window.Size},
		Fit:    FitStage{Enabled: q.Fit.Enabled, PerNode: q.Fit.PerNode},
		Fairness: FairnessStage{Enabled: q.Fairness.Enabled, GroupBy: string(q.Fairness.GroupBy), Kappa: q.Fairness.Kappa,
			Weights: map[string]float64{}, Metric: string(q.Fairness.Metric), HalfLife: q.Fairness.HalfLife},
		Altruism: AltruismStage{Enabled: q.Altruism.Enabled, P: q.Altruism.P, DefaultRuntime: q.Altruism.DefaultRuntime},
		Preference: PreferenceStage{Enabled: q.Preference.Enabled, Mode: string(queue.PreferenceModel), Temperature: q.Preference.Temperature,
			ObserveWait: q.Preference.ObserveWait,
			Objective:   engine.DefaultObjective, Risk: engine.DefaultRisk, Explore: engine.DefaultExplore, Correction: engine.DefaultCorrection},
		Starvation:  StarvationStage{Enabled: q.Starvation.Enabled, Shape: string(q.Starvation.Shape), A: q.Starvation.A, MaxSkips: q.Starvation.MaxSkips},
		Select:      SelectStage{Enabled: q.Select.Enabled, Mode: string(queue.SelectArgmax), ExploreObservations: q.Select.ExploreObservations},
		MaxRecorded: q.MaxRecorded,
	}
}

// QueueConfig translates the section into queue.Config and validates it;
// errors name the key under "pipeline.".
func (p PipelineConfig) QueueConfig() (queue.Config, error) {
	q := queue.Config{
		Window: queue.WindowConfig{Enabled: p.Window.Enabled, Size: p.Window.Size},
		Fit:    queue.FitConfig{Enabled: p.Fit.Enabled, PerNode: p.Fit.PerNode},
		Fairness: queue.FairnessConfig{Enabled: p.Fairness.Enabled, GroupBy: queue.GroupBy(p.Fairness.GroupBy),
			Kappa: p.Fairness.Kappa, Weights: p.Fairness.Weights, Metric: queue.ShareMetric(p.Fairness.Metric), HalfLife: p.Fairness.HalfLife},
		Altruism: queue.AltruismConfig{Enabled: p.Altruism.Enabled, P: p.Altruism.P, DefaultRuntime: p.Altruism.DefaultRuntime},
		Preference: queue.PreferenceConfig{Enabled: p.Preference.Enabled, Mode: queue.PreferenceMode(p.Preference.Mode),
			Temperature: p.Preference.Temperature, ObserveWait: p.Preference.ObserveWait},
		Starvation:  queue.StarvationConfig{Enabled: p.Starvation.Enabled, Shape: queue.Shape(p.Starvation.Shape), A: p.Starvation.A, MaxSkips: p.Starvation.MaxSkips},
		Select:      queue.SelectConfig{Enabled: p.Select.Enabled, Mode: queue.SelectMode(p.Select.Mode), ExploreObservations: p.Select.ExploreObservations},
		MaxRecorded: p.MaxRecorded,
	}
	if err := q.Validate(); err != nil {
		var fe *queue.FieldError
		if errors.As(err, &fe) {
			return q, &ConfigError{Key: "pipeline." + fe.Field, Reason: fe.Reason}
		}
		return q, &ConfigError{Key: "pipeline", Reason: err.Error()}
	}
	if pr := p.Preference; pr.Enabled && queue.PreferenceMode(pr.Mode) == queue.PreferenceModel {
		if _, err := profile.ParseObjective(pr.Objective); err != nil {
			return q, cfgErr("pipeline.preference.objective", "%q is not rate or goodness", pr.Objective)
		}
		if !(pr.Risk >= -10 && pr.Risk <= 10) {
			return q, cfgErr("pipeline.preference.risk", "%v outside [-10, 10]", pr.Risk)
		}
		if !(pr.Explore >= 0 && pr.Explore <= 10) {
			return q, cfgErr("pipeline.preference.explore", "%v outside [0, 10]", pr.Explore)
		}
		if !(pr.Correction >= 0 && pr.Correction <= 100) {
			return q, cfgErr("pipeline.preference.correction", "%v outside [0, 100]", pr.Correction)
		}
	}
	return q, nil
}

func (p PipelineConfig) validate() error {
	_, err := p.QueueConfig()
	return err
}
