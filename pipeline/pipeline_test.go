package pipeline_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

var t0 = queuetest.Start

// pj is a pending job for pipeline tests: id "j<seq>", 1 container of
// 1024 MB / 1 vcore.
func pj(seq uint64, kind string, opts ...func(*queue.Job)) queue.Job {
	j := queue.Job{
		ID: fmt.Sprintf("j%02d", seq), Seq: seq, Kind: kind, User: "alice", State: queue.StatePending,
		Resources: queue.Resources{Containers: 1, MemoryMB: 1024, VCores: 1},
	}
	for _, o := range opts {
		o(&j)
	}
	return j
}

func user(u string) func(*queue.Job)    { return func(j *queue.Job) { j.User = u } }
func skips(n int) func(*queue.Job)      { return func(j *queue.Job) { j.Skips = n } }
func mem(mb int64) func(*queue.Job)     { return func(j *queue.Job) { j.Resources.MemoryMB = mb } }
func containers(n int) func(*queue.Job) { return func(j *queue.Job) { j.Resources.Containers = n } }
func deadline(d time.Duration) func(*queue.Job) {
	return func(j *queue.Job) { t := t0.Add(d); j.Deadline = &t }
}

// big is a cluster with room for everything.
var big = pipeline.Capacity{MemoryMB: 1 << 20, VCores: 1 << 10}

func snapshot(pending ...queue.Job) pipeline.Snapshot {
	return pipeline.Snapshot{Now: t0, Capacity: big, Free: big, Pending: pending,
		Running: []pipeline.Running{{JobID: "r1", Kind: "ctx", User: "carol", Weight: 1}}}
}

// only returns a config with every stage off but the named ones, which get
// their defaults, and argmax selection.
func only(stages ...string) pipeline.Config {
	d := pipeline.DefaultConfig()
	c := pipeline.Config{MaxRecorded: 32, Select: pipeline.SelectConfig{Enabled: true, Mode: pipeline.SelectArgmax}}
	for _, s := range stages {
		switch s {
		case "window":
			c.Window = d.Window
		case "fit":
			c.Fit = d.Fit
		case "fairness":
			c.Fairness = d.Fairness
			c.Fairness.Enabled = true
		case "altruism":
			c.Altruism = d.Altruism
		case "preference":
			c.Preference = d.Preference
		case "starvation":
			c.Starvation = d.Starvation
		case "tail":
			c.Tail = pipeline.TailConfig{Enabled: true, Margin: pipeline.DefaultTailMargin}
		}
	}
	return c
}

func mustPipeline(tb testing.TB, cfg pipeline.Config, prefs pipeline.Preferences) *pipeline.Pipeline {
	tb.Helper()
	p, err := pipeline.New(cfg, prefs)
	if err != nil {
		tb.Fatalf("New: %v", err)
	}
	return p
}

func stage(d pipeline.Decision, name string) pipeline.StageRecord {
	for _, s := range d.Stages {
		if s.Name == name {
			return s
		}
	}
	return pipeline.StageRecord{Name: "missing " + name}
}

func dropped(s pipeline.StageRecord) []string {
	var out []string
	for _, d := range s.Dropped {
		out = append(out, d.JobID)
	}
	return out
}

func TestConfigValidate(t *testing.T) {
	if err := pipeline.DefaultConfig().Validate(); err != nil {
		t.Fatalf("DefaultConfig invalid: %v", err)
	}
	if err := (pipeline.Config{}).Validate(); err != nil {
		t.Fatalf("zero Config invalid: %v", err)
	}
	tests := map[string]struct {
		mut   func(c *pipeline.Config)
		field string
	}{
		"window zero":        {func(c *pipeline.Config) { c.Window.Size = 0 }, "window.size"},
		"window huge":        {func(c *pipeline.Config) { c.Window.Size = 1 << 30 }, "window.size"},
		"group by":           {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.GroupBy = "team" }, "fairness.group_by"},
		"kappa zero":         {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.Kappa = 0 }, "fairness.kappa"},
		"kappa above one":    {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.Kappa = 1.5 }, "fairness.kappa"},
		"kappa NaN":          {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.Kappa = math.NaN() }, "fairness.kappa"},
		"metric":             {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.Metric = "max" }, "fairness.metric"},
		"half-life negative": {func(c *pipeline.Config) { c.Fairness.Enabled = true; c.Fairness.HalfLife = -time.Second }, "fairness.half_life"},
		"weight zero": {func(c *pipeline.Config) {
			c.Fairness.Enabled = true
			c.Fairness.Weights = map[string]float64{"bob": 0}
		}, "fairness.weights[bob]"},
		"p above one":      {func(c *pipeline.Config) { c.Altruism.P = 1.01 }, "altruism.p"},
		"p negative":       {func(c *pipeline.Config) { c.Altruism.P = -0.1 }, "altruism.p"},
		"runtime negative": {func(c *pipeline.Config) { c.Altruism.DefaultRuntime = -time.Minute }, "altruism.default_runtime"},
		"shape":            {func(c *pipeline.Config) { c.Starvation.Shape = "cubic" }, "starvation.shape"},
		"a negative":       {func(c *pipeline.Config) { c.Starvation.A = -1 }, "starvation.a"},
		"a infinite":       {func(c *pipeline.Config) { c.Starvation.A = math.Inf(1) }, "starvation.a"},
		"exp overflow": {func(c *pipeline.Config) {
			c.Starvation.Shape = pipeline.ShapeExponential
			c.Starvation.A = 1e10
			c.Starvation.MaxSkips = 1000
		}, "starvation.a"},
		"max skips zero":   {func(c *pipeline.Config) { c.Starvation.MaxSkips = 0 }, "starvation.max_skips"},
		"within kind":      {func(c *pipeline.Config) { c.Preference.WithinKind = "biggest" }, "preference.within_kind"},
		"drain ratio < 0":  {func(c *pipeline.Config) { c.Preference.DrainRatio = -1 }, "preference.drain_ratio"},
		"drain ratio NaN":  {func(c *pipeline.Config) { c.Preference.DrainRatio = math.NaN() }, "preference.drain_ratio"},
		"select mode":      {func(c *pipeline.Config) { c.Select.Mode = "best" }, "select.mode"},
		"explore negative": {func(c *pipeline.Config) { c.Select.ExploreObservations = -1 }, "select.explore_observations"},
		"max recorded < 0": {func(c *pipeline.Config) { c.MaxRecorded = -1 }, "max_recorded"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			c := pipeline.DefaultConfig()
			tc.mut(&c)
			err := c.Validate()
			var fe *queue.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, queue.ErrInvalid) {
				t.Fatalf("Validate() = %v, want FieldError on %s", err, tc.field)
			}
			if _, err := pipeline.New(c, nil); err == nil {
				t.Error("New accepted the config")
			}
		})
	}
	// A disabled stage's parameters are not checked.
	c := pipeline.DefaultConfig()
	c.Starvation.Enabled, c.Starvation.MaxSkips = false, 0
	if err := c.Validate(); err != nil {
		t.Errorf("disabled stage validated: %v", err)
	}
}

func TestDefaultConfig(t *testing.T) {
	c := pipeline.DefaultConfig()
	got := []any{c.Window.Enabled, c.Window.Size, c.Fit.Enabled, c.Fairness.Enabled, c.Altruism.Enabled, c.Altruism.P,
		c.Preference.Enabled, c.Starvation.Enabled, c.Starvation.Shape, c.Starvation.A, c.Starvation.MaxSkips, c.Select.Enabled, c.Select.Mode, c.Select.ExploreObservations}
	want := []any{true, 8, true, false, true, 0.5, true, true, pipeline.ShapeLinear, 0.5, 8, true, pipeline.SelectAnneal, int64(10)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
}

func TestWindowStage(t *testing.T) {
	var pend []queue.Job
	for i := uint64(1); i <= 20; i++ {
		pend = append(pend, pj(i, fmt.Sprintf("k%d", i)))
	}
	prefs := &queuetest.Prefs{Score: map[string]float64{"k3": 5, "k9": 100}} // k9 is outside the window
	cfg := only("window", "preference")
	cfg.Window.Size = 4
	d := mustPipeline(t, cfg, prefs).Decide(snapshot(pend...), nil)
	if d.Chosen != "j03" {
		t.Errorf("chosen %s, want j03 (best inside the window)", d.Chosen)
	}
	calls := prefs.Calls()
	if len(calls) != 1 {
		t.Fatalf("Mix called %d times, want 1", len(calls))
	}
	if diff := cmp.Diff([]string{"k1", "k2", "k3", "k4"}, calls[0].Candidates); diff != "" {
		t.Errorf("Mix candidates (-want +got):\n%s", diff)
	}
	if s := stage(d, "window"); s.In != 20 || s.Out != 4 {
		t.Errorf("window record %+v", s)
	}
}

func TestFitStage(t *testing.T) {
	nodes := []pipeline.NodeFree{{Name: "n1", Free: pipeline.Capacity{MemoryMB: 4096, VCores: 4}}, {Name: "n2", Free: pipeline.Capacity{MemoryMB: 4096, VCores: 4}}}
	free := pipeline.Capacity{MemoryMB: 8192, VCores: 8}
	pend := []queue.Job{
		pj(1, "a", mem(9000)),                // too much memory in total
		pj(2, "b", containers(9)),            // too many vcores in total
		pj(3, "c", containers(3), mem(2500)), // fits in total (7500 MB) but only 2 fit on the nodes
		pj(4, "d", containers(2), mem(4096)), // exactly one per node
		pj(5, "e", containers(8), mem(1024)), // four per node
	}
	tests := map[string]struct {
		perNode bool
		nodes   []pipeline.NodeFree
		drop    []string
	}{
		"per node":          {true, nodes, []string{"j01", "j02", "j03"}},
		"totals only":       {false, nodes, []string{"j01", "j02"}},
		"per node no nodes": {true, nil, []string{"j01", "j02"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := only("fit")
			cfg.Fit.PerNode = tc.perNode
			snap := snapshot(pend...)
			snap.Free, snap.Nodes = free, tc.nodes
			d := mustPipeline(t, cfg, nil).Decide(snap, nil)
			if diff := cmp.Diff(tc.drop, dropped(stage(d, "fit"))); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
			if d.Chosen != fmt.Sprintf("j%02d", len(tc.drop)+1) {
				t.Errorf("chosen %s", d.Chosen)
			}
			if len(d.Passed) != 0 {
				t.Errorf("passed %v: jobs that do not fit are not passed over", d.Passed)
			}
		})
	}
	t.Run("nothing fits", func(t *testing.T) {
		snap := snapshot(pend[:2]...)
		snap.Free = free
		d := mustPipeline(t, pipeline.DefaultConfig(), nil).Decide(snap, rand.New(rand.NewPCG(1, 1)))
		if d.Chosen != "" || !strings.Contains(d.Note, "fit") {
			t.Errorf("chosen %q note %q", d.Chosen, d.Note)
		}
	})
}

func TestPreferenceStage(t *testing.T) {
	pend := []queue.Job{pj(1, "a"), pj(2, "b"), pj(3, "a"), pj(4, "c"), pj(5, "b")}
	prefs := &queuetest.Prefs{Score: map[string]float64{"a": 1, "b": 3, "c": 4}}
	snap := snapshot(pend...)
	snap.Running = []pipeline.Running{
		{JobID: "r1", Kind: "z", Weight: 0.25}, {JobID: "r2", Kind: "y", Weight: 0.5}, {JobID: "r3", Kind: "z", Weight: 0.25},
	}
	cfg := only("preference")
	d := mustPipeline(t, cfg, prefs).Decide(snap, nil)
	calls := prefs.Calls()
	if len(calls) != 1 {
		t.Fatalf("Mix called %d times", len(calls))
	}
	want := queuetest.MixCall{Candidates: []string{"a", "b", "c"}, Given: []string{"y", "z"}, Weights: []float64{0.5, 0.5}}
	if diff := cmp.Diff(want, calls[0]); diff != "" {
		t.Errorf("Mix call (-want +got):\n%s", diff)
	}
	wantCands := []pipeline.Candidate{
		{JobID: "j01", Kind: "a", Prob: 0.125, Pref: 0.125, Weight: 1},
		{JobID: "j02", Kind: "b", Prob: 0.375, Pref: 0.375, Weight: 1},
		{JobID: "j04", Kind: "c", Prob: 0.5, Pref: 0.5, Weight: 1},
	}
	if diff := cmp.Diff(wantCands, d.Candidates); diff != "" {
		t.Errorf("candidates (-want +got):\n%s", diff)
	}
	if d.Chosen != "j04" || strings.Join(d.Passed, ",") != "j01,j02,j03" {
		t.Errorf("chosen %s passed %v", d.Chosen, d.Passed)
	}
	if diff := cmp.Diff([]pipeline.ContextKind{{"y", 0.5}, {"z", 0.5}}, d.Context); diff != "" {
		t.Errorf("context (-want +got):\n%s", diff)
	}

	t.Run("nothing running: FIFO head", func(t *testing.T) {
		prefs := &queuetest.Prefs{Score: map[string]float64{"c": 100}}
		s := snapshot(pend...)
		s.Running = nil
		d := mustPipeline(t, cfg, prefs).Decide(s, rand.New(rand.NewPCG(1, 2)))
		if d.Chosen != "j01" || len(prefs.Calls()) != 0 || len(d.Passed) != 0 {
			t.Errorf("chosen %s, %d Mix calls, passed %v", d.Chosen, len(prefs.Calls()), d.Passed)
		}
	})
	t.Run("nil preferences: uniform", func(t *testing.T) {
		d := mustPipeline(t, cfg, nil).Decide(snapshot(pend...), nil)
		for _, c := range d.Candidates {
			if math.Abs(c.Prob-1.0/3) > 1e-12 {
				t.Errorf("candidate %+v, want prob 1/3", c)
			}
		}
	})
	t.Run("huge scores stay finite", func(t *testing.T) {
		big := &queuetest.Prefs{Score: map[string]float64{"a": math.MaxFloat64, "b": math.MaxFloat64, "c": math.NaN()}}
		d := mustPipeline(t, cfg, big).Decide(snapshot(pend...), nil)
		var got []float64
		for _, c := range d.Candidates {
			got = append(got, c.Prob)
		}
		if diff := cmp.Diff([]float64{0.5, 0.5, 0}, got); diff != "" {
			t.Errorf("probabilities (-want +got):\n%s", diff)
		}
	})
	t.Run("off: FIFO head", func(t *testing.T) {
		d := mustPipeline(t, only(), prefs).Decide(snapshot(pend...), nil)
		if d.Chosen != "j01" {
			t.Errorf("chosen %s", d.Chosen)
		}
	})
}

// TestWithinKind: with within_kind largest, a kind's largest job (in
// vcores) stands for it while the queue drains — a batch submitted at one
// instant — in both preference modes, and its oldest under a flow (the
// same jobs an hour apart, their kinds' runtimes a minute) and with
// within_kind oldest; the kinds' order is the FIFO order of their oldest
// jobs either way.
func TestWithinKind(t *testing.T) {
	pending := func(gap time.Duration) []queue.Job {
		js := []queue.Job{pj(1, "a"), pj(2, "b"), pj(3, "a", containers(4)), pj(4, "b", containers(2)), pj(5, "a", containers(4))}
		for i := range js {
			js[i].CreatedAt = t0.Add(time.Duration(i-len(js)) * gap)
		}
		return js
	}
	history := map[string]queue.KindHistory{
		"a": {Kind: "a", Runs: 3, EWMARuntime: time.Minute}, "b": {Kind: "b", Runs: 3, EWMARuntime: time.Minute}}
	for _, mode := range []string{"model", "bandit"} {
		for _, tc := range []struct {
			within pipeline.WithinKindOrder
			gap    time.Duration
			want   []string // each kind's job, in order
			note   string
		}{
			{pipeline.WithinKindLargest, 0, []string{"j03", "j04"}, "2 kinds stood for by their largest job"},
			{pipeline.WithinKindLargest, time.Hour, []string{"j01", "j02"}, ""},
			{pipeline.WithinKindOldest, 0, []string{"j01", "j02"}, ""},
		} {
			t.Run(fmt.Sprintf("%s %s gap %v", mode, tc.within, tc.gap), func(t *testing.T) {
				cfg := only("preference")
				cfg.Preference.WithinKind = tc.within
				var opts []pipeline.Option
				var prefs pipeline.Preferences
				if mode == "model" {
					cfg.Preference.Mode = pipeline.PreferenceModel
					opts = append(opts, pipeline.WithScorer(kindScorer{"a": 1, "b": 0}))
				} else {
					prefs = &queuetest.Prefs{Score: map[string]float64{"a": 3, "b": 1}}
				}
				p, err := pipeline.New(cfg, prefs, opts...)
				if err != nil {
					t.Fatal(err)
				}
				snap := snapshot(pending(tc.gap)...)
				snap.History = history
				d := p.Decide(snap, nil)
				var got []string
				for _, c := range d.Candidates {
					got = append(got, c.JobID)
				}
				if diff := cmp.Diff(tc.want, got); diff != "" {
					t.Errorf("candidates (-want +got):\n%s", diff)
				}
				if d.Chosen != tc.want[0] {
					t.Errorf("chosen %s, want %s", d.Chosen, tc.want[0])
				}
				note := stage(d, "preference").Note
				if says := strings.Contains(note, "largest"); says != (tc.note != "") || !strings.Contains(note, tc.note) {
					t.Errorf("note %q, want it to say %q", note, tc.note)
				}
			})
		}
	}
}

func TestStarvationStage(t *testing.T) {
	pend := []queue.Job{pj(1, "a", skips(2)), pj(2, "b")}
	tests := map[string]struct {
		shape pipeline.Shape
		wantA float64 // probability of j01 (pref 1/2 each)
	}{
		"linear":      {pipeline.ShapeLinear, 2.0 / 3},          // weights 1+0.5·2 = 2 and 1
		"exponential": {pipeline.ShapeExponential, 2.25 / 3.25}, // 1.5² and 1
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := only("preference", "starvation")
			cfg.Starvation.Shape = tc.shape
			d := mustPipeline(t, cfg, nil).Decide(snapshot(pend...), nil)
			if len(d.Candidates) != 2 || math.Abs(d.Candidates[0].Prob-tc.wantA) > 1e-12 || math.Abs(d.Candidates[0].Prob+d.Candidates[1].Prob-1) > 1e-12 {
				t.Errorf("candidates %+v, want P(j01) = %v", d.Candidates, tc.wantA)
			}
		})
	}
	t.Run("forced", func(t *testing.T) {
		pend := []queue.Job{pj(1, "a"), pj(2, "b", skips(8)), pj(3, "c", skips(9)), pj(4, "d")}
		prefs := &queuetest.Prefs{Score: map[string]float64{"b": 0, "c": 0, "a": 0, "d": 1}}
		d := mustPipeline(t, only("preference", "starvation"), prefs).Decide(snapshot(pend...), rand.New(rand.NewPCG(3, 3)))
		if d.Chosen != "j02" || d.Forced == "" || strings.Join(d.Passed, ",") != "j01" {
			t.Errorf("chosen %s forced %q passed %v; want j02 forced", d.Chosen, d.Forced, d.Passed)
		}
	})
	t.Run("forced overrides fairness", func(t *testing.T) {
		cfg := only("fairness", "preference", "starvation")
		cfg.Fairness.Kappa = 0.01
		p := mustPipeline(t, cfg, &queuetest.Prefs{Score: map[string]float64{"a": 1, "b": 0}})
		snap := snapshot(pj(1, "b", user("bob")), pj(2, "a", mem(100000)))
		p.Decide(snap, nil) // alice's big job goes; bob is now owed
		snap = snapshot(pj(1, "b", user("bob")), pj(3, "a"))
		d := p.Decide(snap, nil)
		if d.Chosen != "j01" {
			t.Fatalf("setup: chosen %s, want bob's j01 (fairness)", d.Chosen)
		}
		snap = snapshot(pj(3, "a", skips(8)), pj(4, "b", user("bob")))
		if d := p.Decide(snap, nil); d.Chosen != "j03" || d.Forced == "" {
			t.Errorf("chosen %s forced %q; want alice's starved j03", d.Chosen, d.Forced)
		}
	})
}

func TestAltruismStage(t *testing.T) {
	prefs := &queuetest.Prefs{Score: map[string]float64{"best": 100}}
	hist := map[string]queue.KindHistory{"quick": {Kind: "quick", Runs: 3, EWMARuntime: time.Minute}}
	tests := map[string]struct {
		p       float64
		pending []queue.Job
		chosen  string
		drop    []string
	}{
		"P=0 never passed": {0, []queue.Job{pj(1, "a"), pj(2, "dl", deadline(time.Hour)), pj(3, "best")}, "j01", []string{"j03"}},
		"P=1 yields":       {1, []queue.Job{pj(1, "a"), pj(2, "dl", deadline(time.Hour)), pj(3, "best")}, "j03", nil},
		"no slack goes first": {1, []queue.Job{pj(1, "a"), pj(2, "best"), pj(3, "dl", deadline(5*time.Minute))}, "j03",
			[]string{"j01", "j02"}}, // default runtime 10 min > 5 min left
		"history gives slack": {1, []queue.Job{pj(1, "a"), pj(2, "quick", deadline(5*time.Minute)), pj(3, "best")}, "j03", nil},
		"first non-yielding cuts": {0, []queue.Job{pj(1, "a"), pj(2, "best", deadline(time.Hour)), pj(3, "best", deadline(time.Minute))}, "j02",
			[]string{"j03"}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			cfg := only("altruism", "preference")
			cfg.Altruism.P = tc.p
			snap := snapshot(tc.pending...)
			snap.History = hist
			d := mustPipeline(t, cfg, prefs).Decide(snap, rand.New(rand.NewPCG(5, 5)))
			if d.Chosen != tc.chosen {
				t.Errorf("chosen %s, want %s", d.Chosen, tc.chosen)
			}
			if diff := cmp.Diff(tc.drop, dropped(stage(d, "altruism"))); diff != "" {
				t.Errorf("dropped (-want +got):\n%s", diff)
			}
		})
	}
}

func TestFairnessStage(t *testing.T) {
	// Jobs take 1/8 of the memory (the dominant resource); alice's kind is
	// preferred, so only the deficit bound lets bob in.
	capa := pipeline.Capacity{MemoryMB: 8192, VCores: 1024}
	prefs := &queuetest.Prefs{Score: map[string]float64{"a": 1000, "b": 1}}
	cfg := only("fairness", "preference")
	cfg.Fairness.Kappa = 0.1
	p := mustPipeline(t, cfg, prefs)
	var chosen []string
	for i := 0; i < 4; i++ {
		snap := snapshot(pj(uint64(10+i), "a"), pj(uint64(20+i), "b", user("bob")))
		snap.Capacity, snap.Free = capa, capa
		d := p.Decide(snap, nil)
		chosen = append(chosen, d.Chosen)
		if i == 0 {
			want := map[string]float64{"alice": -0.0625, "bob": 0.0625}
			if diff := cmp.Diff(want, p.Deficits(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
				t.Errorf("deficits after one decision (-want +got):\n%s", diff)
			}
		}
	}
	// bob's deficit: 0.0625, 0.125 ≥ κ → bob, then back to alice.
	if diff := cmp.Diff([]string{"j10", "j11", "j22", "j13"}, chosen); diff != "" {
		t.Errorf("chosen (-want +got):\n%s", diff)
	}

	t.Run("weights", func(t *testing.T) {
		cfg := cfg
		cfg.Fairness.Weights = map[string]float64{"alice": 3}
		p := mustPipeline(t, cfg, prefs)
		snap := snapshot(pj(1, "a"), pj(2, "b", user("bob")))
		snap.Capacity, snap.Free = capa, capa
		p.Decide(snap, nil)
		want := map[string]float64{"alice": -0.125 * 0.25, "bob": 0.125 * 0.25}
		if diff := cmp.Diff(want, p.Deficits(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
			t.Errorf("deficits (-want +got):\n%s", diff)
		}
	})
	t.Run("waits for the owed group", func(t *testing.T) {
		cfg := cfg
		cfg.Fit = pipeline.DefaultConfig().Fit
		p := mustPipeline(t, cfg, prefs)
		for i := 0; i < 2; i++ {
			snap := snapshot(pj(uint64(10+i), "a"), pj(uint64(20+i), "b", user("bob")))
			snap.Capacity, snap.Free = capa, capa
			p.Decide(snap, nil)
		}
		snap := snapshot(pj(12, "a"), pj(22, "b", user("bob"), mem(4096)))
		snap.Capacity, snap.Free = capa, pipeline.Capacity{MemoryMB: 2048, VCores: 10}
		if d := p.Decide(snap, nil); d.Chosen != "" {
			t.Errorf("chosen %s; want none (bob is owed and his job needs room)", d.Chosen)
		}
		snap.Running = nil // nothing will free up: do not wait
		if d := p.Decide(snap, nil); d.Chosen != "j12" {
			t.Errorf("idle cluster: chosen %s, want j12", d.Chosen)
		}
	})
	t.Run("long-term", func(t *testing.T) {
		cfg := cfg
		cfg.Fairness.HalfLife = time.Minute
		cfg.Fairness.Kappa = 0.2
		p := mustPipeline(t, cfg, prefs)
		snap := snapshot(pj(1, "a"), pj(2, "b", user("bob")))
		snap.Capacity, snap.Free = capa, capa
		snap.Running = []pipeline.Running{{JobID: "r", Kind: "a", User: "alice", Alloc: pipeline.Capacity{MemoryMB: 4096}, Weight: 1}}
		if d := p.Decide(snap, nil); d.Chosen != "j01" {
			t.Errorf("first decision: %s, want j01 (no history yet)", d.Chosen)
		}
		snap.Now = t0.Add(time.Minute) // bob short by 0.5 for a half-life: deficit 0.25
		d := p.Decide(snap, nil)
		if d.Chosen != "j02" {
			t.Errorf("after a half-life: chosen %s, want bob's j02; groups %+v", d.Chosen, d.Groups)
		}
		if got := p.Deficits()["bob"]; math.Abs(got-0.25) > 1e-12 {
			t.Errorf("bob's deficit %v, want 0.25", got)
		}
	})
}

func TestSelectStage(t *testing.T) {
	pend := []queue.Job{pj(1, "a"), pj(2, "b"), pj(3, "c")}
	prefs := &queuetest.Prefs{Score: map[string]float64{"a": 1, "b": 2, "c": 2}}
	t.Run("argmax ties go to the oldest", func(t *testing.T) {
		d := mustPipeline(t, only("preference"), prefs).Decide(snapshot(pend...), rand.New(rand.NewPCG(1, 1)))
		if d.Chosen != "j02" {
			t.Errorf("chosen %s", d.Chosen)
		}
	})
	t.Run("sample follows the distribution", func(t *testing.T) {
		cfg := only("preference")
		cfg.Select.Mode = pipeline.SelectSample
		p := mustPipeline(t, cfg, prefs)
		rng := rand.New(rand.NewPCG(7, 7))
		const n = 20000
		count := map[string]int{}
		for i := 0; i < n; i++ {
			count[p.Decide(snapshot(pend...), rng).Chosen]++
		}
		for id, want := range map[string]float64{"j01": 0.2, "j02": 0.4, "j03": 0.4} {
			got := float64(count[id]) / n
			if math.Abs(got-want) > 0.015 { // > 4 standard deviations
				t.Errorf("P(%s) = %.3f, want %.1f", id, got, want)
			}
		}
	})
	t.Run("off: oldest candidate", func(t *testing.T) {
		cfg := only("preference")
		cfg.Select.Enabled = false
		if d := mustPipeline(t, cfg, prefs).Decide(snapshot(pend...), nil); d.Chosen != "j01" {
			t.Errorf("chosen %s", d.Chosen)
		}
	})
}

func TestDecisionJSON(t *testing.T) {
	p := mustPipeline(t, pipeline.DefaultConfig(), &queuetest.Prefs{})
	snap := snapshot(pj(1, "a"), pj(2, "b", deadline(time.Hour)), pj(3, "c", mem(1<<30)))
	d := p.Decide(snap, rand.New(rand.NewPCG(1, 1)))
	b, err := json.Marshal(d)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{`"at"`, `"chosen"`, `"chosen_kind"`, `"context"`, `"stages"`, `"candidates"`, `"passed"`, `"job_id"`, `"prob"`, `"dropped"`, `"reason"`, `"in"`, `"out"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("decision JSON lacks %s: %s", key, b)
		}
	}
	var back pipeline.Decision
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(d, back); diff != "" {
		t.Errorf("JSON round trip (-want +got):\n%s", diff)
	}
	var names []string
	for _, s := range d.Stages {
		names = append(names, s.Name)
	}
	if diff := cmp.Diff([]string{"window", "fit", "altruism", "reservation", "preference", "starvation", "select"}, names); diff != "" {
		t.Errorf("stages (-want +got):\n%s", diff)
	}
}

func TestDecideEmptyAndUnsorted(t *testing.T) {
	p := mustPipeline(t, pipeline.DefaultConfig(), nil)
	if d := p.Decide(snapshot(), rand.New(rand.NewPCG(1, 1))); d.Chosen != "" || d.Note != "queue empty" {
		t.Errorf("empty queue: %+v", d)
	}
	snap := snapshot(pj(3, "c"), pj(1, "a"), pj(2, "b"))
	snap.Running = nil
	if d := p.Decide(snap, nil); d.Chosen != "j01" {
		t.Errorf("unsorted pending: chosen %s, want the lowest seq", d.Chosen)
	}
}

func TestRecordLimit(t *testing.T) {
	pend := []queue.Job{pj(1, "a"), pj(2, "dl", deadline(time.Hour))}
	for i := uint64(3); i <= 12; i++ {
		pend = append(pend, pj(i, "b"))
	}
	cfg := only("altruism", "preference")
	cfg.Altruism.P = 0
	cfg.MaxRecorded = 3
	d := mustPipeline(t, cfg, nil).Decide(snapshot(pend...), nil)
	s := stage(d, "altruism")
	if diff := cmp.Diff([]string{"j03", "j04", "j05"}, dropped(s)); diff != "" || s.Omitted != 7 || s.In != 12 || s.Out != 2 {
		t.Errorf("in %d out %d omitted %d (want 12, 2, 7); dropped (-want +got):\n%s", s.In, s.Out, s.Omitted, diff)
	}
}
