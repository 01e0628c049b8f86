package pipeline_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// kindScorer scores each kind by a fixed value: the one-step rule.
type kindScorer map[string]float64

func (k kindScorer) Score(_ *pipeline.Snapshot, kinds []string, _ []queue.Resources, out []pipeline.Score) {
	for i, kd := range kinds {
		out[i] = pipeline.Score{Value: k[kd], Model: k[kd], Known: true}
	}
}

// fakePlanner predicts, per candidate job id, values around a mean with a
// spread; err makes it unable to tell.
type fakePlanner struct {
	mean   map[string]float64
	spread float64
	err    error
	asked  [][]string
}

func (f *fakePlanner) Plan(_ *pipeline.Snapshot, cands []string, _ uint64) ([]pipeline.PlanOutcome, error) {
	f.asked = append(f.asked, cands)
	if f.err != nil {
		return nil, f.err
	}
	out := make([]pipeline.PlanOutcome, len(cands))
	for i, id := range cands {
		m := f.mean[id]
		// The same four futures for every candidate, shifted by its mean;
		// the spread moves the candidates apart from the first one.
		out[i] = pipeline.PlanOutcome{Fits: true, Values: []float64{m - 3, m - 1, m + 1, m + 3}}
		if i > 0 {
			for s := range out[i].Values {
				out[i].Values[s] += f.spread * float64(s%2*2-1)
			}
		}
	}
	return out, nil
}

func lookaheadPipeline(t *testing.T, pl pipeline.Planner, mod func(*pipeline.LookaheadConfig)) *pipeline.Pipeline {
	t.Helper()
	cfg := only("preference")
	cfg.Preference.Mode = pipeline.PreferenceModel
	cfg.Lookahead = pipeline.LookaheadConfig{Enabled: true, TopK: 3, Margin: 1}
	if mod != nil {
		mod(&cfg.Lookahead)
	}
	p, err := pipeline.New(cfg, nil, pipeline.WithScorer(kindScorer{"a": 1, "b": 0.9, "c": 0.8, "d": 0.1}), pipeline.WithPlanner(pl))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// The one-step rule ranks a > b > c > d. The lookahead rolls out the top
// three and replaces a only with one predicted better by the margin.
func TestLookaheadStage(t *testing.T) {
	pend := []queue.Job{pj(1, "a"), pj(2, "b"), pj(3, "c"), pj(4, "d")}
	for name, tc := range map[string]struct {
		pl      *fakePlanner
		mod     func(*pipeline.LookaheadConfig)
		want    string
		note    string
		records int
	}{
		"a better candidate goes": {pl: &fakePlanner{mean: map[string]float64{"j01": 100, "j02": 110, "j03": 105}},
			want: "j02", note: "instead of the one-step choice j01", records: 3},
		"within the noise: the one-step choice stands": {pl: &fakePlanner{mean: map[string]float64{"j01": 100, "j02": 101}, spread: 5},
			want: "j01", note: "stands", records: 3},
		"below min_gain: it stands": {pl: &fakePlanner{mean: map[string]float64{"j01": 100, "j02": 101}},
			mod: func(l *pipeline.LookaheadConfig) { l.MinGain = 0.02 }, want: "j01", note: "stands", records: 3},
		"the model cannot tell": {pl: &fakePlanner{err: errors.New("plan: model too uncertain")},
			want: "j01", note: "too uncertain"},
		"top_k 2 rolls out two": {pl: &fakePlanner{mean: map[string]float64{"j01": 100, "j02": 90, "j03": 200}},
			mod: func(l *pipeline.LookaheadConfig) { l.TopK = 2 }, want: "j01", note: "stands", records: 2},
	} {
		t.Run(name, func(t *testing.T) {
			d := lookaheadPipeline(t, tc.pl, tc.mod).Decide(snapshot(pend...), nil)
			if d.Chosen != tc.want || !strings.Contains(stage(d, "lookahead").Note, tc.note) || len(d.Lookahead) != tc.records {
				t.Errorf("chosen %s, note %q, %d records; want %s, a note with %q, %d records", d.Chosen, stage(d, "lookahead").Note, len(d.Lookahead), tc.want, tc.note, tc.records)
			}
			if len(tc.pl.asked) != 1 || tc.pl.asked[0][0] != "j01" {
				t.Errorf("asked %v, want one call, the one-step choice first", tc.pl.asked)
			}
		})
	}
	t.Run("needs a planner and the model", func(t *testing.T) {
		cfg := only("preference")
		cfg.Preference.Mode = pipeline.PreferenceModel
		cfg.Lookahead = pipeline.LookaheadConfig{Enabled: true, TopK: 3, Margin: 1}
		if _, err := pipeline.New(cfg, nil, pipeline.WithScorer(kindScorer{})); !errors.Is(err, queue.ErrInvalid) {
			t.Errorf("without a planner: err = %v", err)
		}
		cfg.Preference.Mode = pipeline.PreferenceBandit
		if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "lookahead.enabled") {
			t.Errorf("in bandit mode: err = %v", err)
		}
	})
}

// The near shape leaves a job far from its bound at weight 1 and weighs
// it past half the bound; max_wait forces a job that waited that long.
func TestStarvationNearAndMaxWait(t *testing.T) {
	cfg := only("preference", "starvation")
	cfg.Starvation = pipeline.StarvationConfig{Enabled: true, Shape: pipeline.ShapeNear, A: 0.5, MaxSkips: 16, MaxWait: time.Hour}
	for name, tc := range map[string]struct {
		job    queue.Job
		weight float64
	}{
		"far from its bound":  {pj(1, "a", skips(7)), 1},
		"past half its skips": {pj(1, "a", skips(12)), 1 + 0.5*4},
		"past half its wait":  {pj(1, "a", func(j *queue.Job) { j.CreatedAt = t0.Add(-45 * time.Minute) }), 1 + 0.5*0.25*16},
		"skips weigh more":    {pj(1, "a", skips(14), func(j *queue.Job) { j.CreatedAt = t0.Add(-35 * time.Minute) }), 1 + 0.5*6},
	} {
		t.Run(name, func(t *testing.T) {
			j := tc.job
			if j.CreatedAt.IsZero() {
				j.CreatedAt = t0
			}
			d := mustPipeline(t, cfg, nil).Decide(snapshot(j, pj(2, "b", func(j *queue.Job) { j.CreatedAt = t0 })), nil)
			if math.Abs(d.Candidates[0].Weight-tc.weight) > 1e-9 {
				t.Errorf("weight %v, want %v", d.Candidates[0].Weight, tc.weight)
			}
		})
	}
	t.Run("max_wait forces", func(t *testing.T) {
		old := pj(2, "b", func(j *queue.Job) { j.CreatedAt = t0.Add(-61 * time.Minute) })
		prefs := &queueFavour{"a"}
		d := mustPipeline(t, cfg, prefs).Decide(snapshot(pj(1, "a", func(j *queue.Job) { j.CreatedAt = t0 }), old), nil)
		if d.Chosen != "j02" || !strings.Contains(d.Forced, "max_wait") {
			t.Errorf("chosen %s forced %q; want j02 forced by max_wait", d.Chosen, d.Forced)
		}
	})
	if err := (pipeline.Config{Starvation: pipeline.StarvationConfig{Enabled: true, Shape: pipeline.ShapeNear, MaxSkips: 1, MaxWait: -1}}).Validate(); err == nil {
		t.Error("a negative max_wait validated")
	}
}

// queueFavour prefers its kind over every other.
type queueFavour struct{ kind string }

func (f *queueFavour) Mix(cands, _ []string, _ []float64, out []float64) {
	for i, c := range cands {
		out[i] = 0.01
		if c == f.kind {
			out[i] = 1
		}
	}
}
