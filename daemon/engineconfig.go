package daemon

import (
	"log/slog"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/engine"
)

// EngineOptions is the engine's configuration from the config: the
// pipeline, the scorer, the profile model, the admission cap and mode,
// the learning tick's pair updates. The caller adds the parts that are
// not configuration (store, learner, cluster, clock, ...).
func (c Config) EngineOptions() (engine.Options, error) {
	if err := c.Pipeline.Validate(); err != nil {
		return engine.Options{}, err
	}
	pc := c.Learning.Profile
	return engine.Options{
		Queue:           c.Pipeline.Config,
		Scorer:          c.Pipeline.Scorer,
		Planner:         c.Pipeline.Plan,
		Profile:         pc,
		MaxRunning:      c.Admission.MaxRunning,
		Mode:            c.Admission.Mode,
		Backoff:         c.Admission.Backoff,
		Credit:          c.Learning.Credit,
		Aggregate:       c.Learning.Aggregate,
		MaxKindsPerNode: c.Learning.MaxKindsPerNode,
		PairReward:      c.Learning.PairReward,
		ForeignPrefix:   c.Learning.Foreign.Prefix,
	}, nil
}

// BanditConfig is the learner's configuration, validated.
func (l learningConfig) BanditConfig() (bandit.Config, error) {
	if err := l.validate(); err != nil {
		return bandit.Config{}, err
	}
	return l.Config, nil
}

// newServeLoop is the loop `colocd serve` runs: the configured admission
// tick, learning and retention schedules, and the backend's checkpoint.
func newServeLoop(e *engine.Engine, b backend, cfg Config, log *slog.Logger) (*engine.Loop, error) {
	learn, err := engine.ParseSchedule(cfg.Learning.Schedule)
	if err != nil {
		return nil, cfgErr("learning.schedule", "%v", err)
	}
	ret, err := engine.ParseSchedule(cfg.Retention.Schedule)
	if err != nil {
		return nil, cfgErr("retention.schedule", "%v", err)
	}
	return engine.NewLoop(e, engine.LoopOptions{
		Tick: cfg.Admission.Tick, KickGap: cfg.Admission.KickGap, Learn: learn, Retention: ret, FinishedAfter: cfg.Retention.FinishedAfter,
		Checkpoint: b.checkpoint, CheckpointEvery: time.Minute, Wake: b.wake, Logger: log,
	})
}
