package pipeline_test

import (
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// countedPrefs is queuetest.Prefs with row observation counts.
type countedPrefs struct {
	*queuetest.Prefs
	rows map[string]int64
}

func (p countedPrefs) RowObservations(given string) int64 { return p.rows[given] }

// TestSelectAnneal: below explore_observations (context-weighted over the
// rows of the running kinds) the job is sampled, at or above it the argmax.
func TestSelectAnneal(t *testing.T) {
	score := map[string]float64{"a": 1, "b": 3}
	pending := []queue.Job{pj(1, "a"), pj(2, "b")}
	running := []pipeline.Running{
		{JobID: "r1", Kind: "x", Weight: 3},
		{JobID: "r2", Kind: "y", Weight: 1},
	}
	tests := map[string]struct {
		prefs   pipeline.Preferences
		explore int64
		want    map[string]bool // kinds chosen over the seeds
		note    string
	}{
		"young rows sample": {countedPrefs{&queuetest.Prefs{Score: score}, map[string]int64{"x": 5, "y": 100}}, 40,
			map[string]bool{"a": true, "b": true}, "anneal: 28.8 of 40 observations, sampled"},
		"learned rows argmax": {countedPrefs{&queuetest.Prefs{Score: score}, map[string]int64{"x": 40, "y": 40}}, 40,
			map[string]bool{"b": true}, "anneal: 40.0 of 40 observations, argmax"},
		"weights count": {countedPrefs{&queuetest.Prefs{Score: score}, map[string]int64{"x": 60, "y": 0}}, 40,
			map[string]bool{"b": true}, "anneal: 45.0 of 40 observations, argmax"},
		"no counter samples": {&queuetest.Prefs{Score: score}, 1,
			map[string]bool{"a": true, "b": true}, "anneal: 0.0 of 1 observations, sampled"},
		"zero threshold argmax": {&queuetest.Prefs{Score: score}, 0,
			map[string]bool{"b": true}, "anneal: 0.0 of 0 observations, argmax"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := only("preference")
			cfg.Select = pipeline.SelectConfig{Enabled: true, Mode: pipeline.SelectAnneal, ExploreObservations: tc.explore}
			p := mustPipeline(t, cfg, tc.prefs)
			got := map[string]bool{}
			for seed := range uint64(64) {
				snap := snapshot(pending...)
				snap.Running = running
				d := p.Decide(snap, rand.New(rand.NewPCG(seed, 1)))
				got[d.ChosenKind] = true
				if note := stage(d, "select").Note; !strings.HasPrefix(note, tc.note) {
					t.Fatalf("seed %d: select note %q, want prefix %q", seed, note, tc.note)
				}
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("chosen kinds (-want +got):\n%s", diff)
			}
		})
	}
}

// TestContextWithoutWeightIsFIFO: running jobs that all weigh 0 in the
// context (the next job lands beside none of them) leave the FIFO head.
func TestContextWithoutWeightIsFIFO(t *testing.T) {
	prefs := &queuetest.Prefs{Score: map[string]float64{"a": 1, "b": 100}}
	p := mustPipeline(t, only("preference"), prefs)
	snap := snapshot(pj(1, "a"), pj(2, "b"))
	snap.Running = []pipeline.Running{{JobID: "r1", Kind: "x", Weight: 0}}
	d := p.Decide(snap, rand.New(rand.NewPCG(1, 1)))
	if d.Chosen != "j01" || len(d.Context) != 0 || len(prefs.Calls()) != 0 {
		t.Errorf("chose %s with context %v and %d Mix calls, want the FIFO head j01, no context, no call",
			d.Chosen, d.Context, len(prefs.Calls()))
	}
	snap.Running[0].Weight = 0.5
	if d := p.Decide(snap, rand.New(rand.NewPCG(1, 1))); d.Chosen != "j02" {
		t.Errorf("weighted context: chose %s, want the preferred j02", d.Chosen)
	}
}
