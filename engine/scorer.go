package engine

import (
	"fmt"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// modelScorer is the pipeline's co-location model (pipeline.Scorer): it
// hands the snapshot's nodes to a profile.Scorer, which predicts where
// each candidate's containers land and what they do to those nodes from
// the kinds' resource profiles, corrected by the pair preferences.
type modelScorer struct {
	sc profile.Scorer
	// size is a node's size from its name and advertised vcores
	// (nodeSizes.size); nil: every node is the reference.
	size func(node string, vcores int64) profile.Vector
	// drainRatio is pipeline.preference.drain_ratio: sc.SizeWeight counts
	// while the snapshot's queue drains at it (0: always).
	drainRatio float64
	// apart, when set and true, says the learning tick sees each kind's
	// own usage (Engine.apart): no candidate then Confounds for the
	// pipeline's observe-first hold-back. The profile scorer's own flag
	// stays: such a landing still hides the candidate's network, so it is
	// not scored optimistically.
	apart func() bool
}

var _ pipeline.Scorer = (*modelScorer)(nil)

// ScorerConfig is the co-location model's scorer (preference mode model):
// the objective it maximises (profile.ParseObjective: rate or goodness),
// its caution with uncertain profiles (Risk, in standard deviations), the
// optimism it gives a kind whose usage its landing would reveal (Explore),
// the weight of the pair preferences' correction and how much a job's size
// counts in the rate (SizeWeight, profile.Scorer's) while the queue drains
// (pipeline.Snapshot.Draining at the pipeline's preference.drain_ratio).
type ScorerConfig struct {
	Objective  string  `mapstructure:"objective"` // rate|goodness (profile.ParseObjective)
	Risk       float64 `mapstructure:"risk"`      // in standard deviations, [-10, 10]
	Explore    float64 `mapstructure:"explore"`   // [0, 10]
	Correction float64 `mapstructure:"correction"`
	SizeWeight float64 `mapstructure:"size_weight"` // [0, 1]
}

// Validate checks the scorer's settings; errors are *fieldError.
func (p ScorerConfig) Validate() error {
	if _, err := profile.ParseObjective(p.Objective); err != nil {
		return &fieldError{"objective", fmt.Sprintf("%q is not rate or goodness", p.Objective)}
	}
	if !(p.Risk >= -10 && p.Risk <= 10) {
		return &fieldError{"risk", fmt.Sprintf("%v outside [-10, 10]", p.Risk)}
	}
	if !(p.Explore >= 0 && p.Explore <= 10) {
		return &fieldError{"explore", fmt.Sprintf("%v outside [0, 10]", p.Explore)}
	}
	if !(p.Correction >= 0 && p.Correction <= 100) {
		return &fieldError{"correction", fmt.Sprintf("%v outside [0, 100]", p.Correction)}
	}
	if !(p.SizeWeight >= 0 && p.SizeWeight <= 1) {
		return &fieldError{"size_weight", fmt.Sprintf("%v outside [0, 1]", p.SizeWeight)}
	}
	return nil
}

// fieldError names the setting that is wrong and why.
type fieldError struct {
	Field, Reason string
}

func (e *fieldError) Error() string { return "engine: " + e.Field + ": " + e.Reason }

// FieldReason is the field and the reason, for a config loader that
// names the whole key.
func (e *fieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

// Defaults of the scorer (pipeline.preference).
const (
	defaultObjective  = "rate"
	defaultRisk       = 0.0
	defaultExplore    = 1.0
	defaultCorrection = 0.3
)

// DefaultScorerConfig is the scorer's defaults.
func DefaultScorerConfig() ScorerConfig {
	return ScorerConfig{Objective: defaultObjective, Risk: defaultRisk, Explore: defaultExplore, Correction: defaultCorrection}
}

// newModelScorer builds the scorer over profiles, with the pair
// preferences as the correction; size_weight counts while the queue
// drains at drainRatio.
func newModelScorer(p ScorerConfig, drainRatio float64, profiles profile.Profiles, corr profile.Correction) (*modelScorer, error) {
	if err := p.Validate(); err != nil {
		return nil, fmt.Errorf("scorer: %w", err)
	}
	obj, _ := profile.ParseObjective(p.Objective) // Validate parsed it
	return &modelScorer{sc: profile.Scorer{Profiles: profiles, Objective: obj, Risk: p.Risk, Explore: p.Explore, SizeWeight: p.SizeWeight,
		Correction: corr, CorrectionWeight: p.Correction}, drainRatio: drainRatio}, nil
}

// Score implements pipeline.Scorer.
func (m *modelScorer) Score(snap *pipeline.Snapshot, kinds []string, res []queue.Resources, out []pipeline.Score) {
	nodes := make([]profile.Node, len(snap.Nodes))
	for i, n := range snap.Nodes {
		pn := profile.Node{
			Capacity: profile.Room{VCores: n.Capacity.VCores, MemoryMB: n.Capacity.MemoryMB},
			Free:     profile.Room{VCores: n.Free.VCores, MemoryMB: n.Free.MemoryMB},
		}
		if m.size != nil {
			pn.Size = m.size(n.Name, n.Capacity.VCores)
		}
		for _, j := range n.Jobs {
			if j.Containers <= 0 {
				continue
			}
			k := len(pn.Jobs)
			for a := range pn.Jobs {
				if pn.Jobs[a].Kind == j.Kind {
					k = a
					break
				}
			}
			if k == len(pn.Jobs) {
				pn.Jobs = append(pn.Jobs, profile.KindCount{Kind: j.Kind})
			}
			pn.Jobs[k].Containers += float64(j.Containers)
		}
		nodes[i] = pn
	}
	sc := m.sc
	if sc.SizeWeight > 0 && m.drainRatio > 0 && !snap.Draining(m.drainRatio) {
		sc.SizeWeight = 0 // a flow: per container
	}
	v := sc.NewView(nodes)
	apart := m.apart != nil && m.apart()
	for i, k := range kinds {
		r := res[i]
		s := v.Score(k, profile.Shape{Containers: r.Containers, Each: profile.Room{VCores: int64(r.VCores), MemoryMB: r.MemoryMB}})
		q := pipeline.Score{Value: s.Value, Model: s.Model, Correction: s.Correction, Size: s.Size, Alone: s.Alone, Known: s.Known, Confounds: s.Confounds && !apart}
		for _, b := range s.Beside {
			q.Beside = append(q.Beside, pipeline.ContextKind{Kind: b.Kind, Weight: b.Weight})
		}
		if !s.Fits {
			q.Value = -1e9 // the placement rule finds no room: last
		}
		out[i] = q
	}
}
