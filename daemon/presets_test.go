package daemon

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
)

// TestPresets: serve's configuration is the owners' defaults with colocd's
// choices and nothing else; each preset sets what its doc says over the
// configuration it is given and leaves that configuration alone.
func TestPresets(t *testing.T) {
	def := DefaultConfig()
	owners := ownerDefaults()
	if diff := cmp.Diff(pipeline.DefaultConfig().Window, owners.Pipeline.Window); diff != "" {
		t.Errorf("the window's default is not the pipeline's (-pipeline +daemon):\n%s", diff)
	}
	if owners.Learning.Config != bandit.DefaultConfig() || owners.Pipeline.Scorer != engine.DefaultScorerConfig() || owners.Pipeline.Plan != (plan.Config{}).WithDefaults() {
		t.Errorf("owner defaults: learning %+v, scorer %+v, plan %+v", owners.Learning.Config, owners.Pipeline.Scorer, owners.Pipeline.Plan)
	}
	// What colocd changes over its owners, and nothing more.
	want := owners
	want.Pipeline.Preference.Mode = pipeline.PreferenceModel
	want.Pipeline.Select.Mode = pipeline.SelectArgmax
	want.Pipeline.Tail.Enabled = true
	want.Pipeline.Preference.WithinKind = pipeline.WithinKindLargest
	want.Learning.StepSize, want.Learning.SelfPrior, want.Learning.PairReward = 0.005, 1, engine.RewardResidual
	if diff := cmp.Diff(want, def); diff != "" {
		t.Errorf("DefaultConfig is not the owners' defaults with colocd's choices (-want +got):\n%s", diff)
	}
	if err := def.Validate(); err != nil {
		t.Fatalf("DefaultConfig: %v", err)
	}

	paper := PresetPaper.Apply(def)
	if paper.Pipeline.Preference.Mode != pipeline.PreferenceBandit || paper.Pipeline.Select.Mode != pipeline.SelectSample ||
		paper.Pipeline.Reservation.Enabled || paper.Pipeline.Tail.Enabled || paper.Pipeline.Preference.WithinKind != pipeline.WithinKindOldest ||
		paper.Learning.SelfPrior != 0 || paper.Learning.PairReward != engine.RewardGoodness || paper.Learning.StepSize != bandit.DefaultStepSize {
		t.Errorf("paper: %+v / %+v", paper.Pipeline.Config, paper.Learning)
	}
	if def.Pipeline.Preference.Mode != pipeline.PreferenceModel || def.Learning.StepSize != 0.005 {
		t.Error("PresetPaper.Apply changed the configuration it was given")
	}
	if !PresetPlan.Apply(def).Pipeline.Lookahead.Enabled || def.Pipeline.Lookahead.Enabled {
		t.Error("plan: the lookahead is not on, or it was on by default")
	}
	pairs := PresetPairs.Apply(def)
	if pairs.Pipeline.Select.Mode != pipeline.SelectAnneal || pairs.Pipeline.Preference.Mode != pipeline.PreferenceBandit || pairs.Pipeline.Tail.Enabled ||
		pairs.Pipeline.Preference.WithinKind != pipeline.WithinKindOldest || pairs.Learning.SelfPrior != 1 {
		t.Errorf("pairs: %+v / %+v", pairs.Pipeline.Config, pairs.Learning)
	}
	seen := map[string]bool{}
	for _, p := range Presets() {
		if p.Name == "" || p.Doc == "" || seen[p.Name] {
			t.Errorf("preset %q: a name and a doc, each once", p.Name)
		}
		seen[p.Name] = true
		if err := p.Apply(def).Validate(); err != nil {
			t.Errorf("preset %s over the defaults: %v", p.Name, err)
		}
	}
}
