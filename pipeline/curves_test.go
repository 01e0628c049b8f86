package pipeline_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

func TestAdmitQueues(t *testing.T) {
	r := func(v float64) pipeline.Rate { return pipeline.Rate{VCores: v, Memory: v} }
	qs := []pipeline.ServiceQueue{
		{Name: "ls", Level: 1, Alpha: r(0.5), Beta: r(0.2), Burst: 10 * time.Minute},
		{Name: "ls2", Level: 1, Alpha: r(0.6), Beta: r(0.1), Burst: 10 * time.Minute}, // Σα = 1.1
		{Name: "etl", Level: 2, Alpha: r(0.3)},                                        // α = β
		{Name: "etl2", Level: 2, Alpha: r(0.6)},                                       // Σα 0.9, but 0.6 > min(1−0.3, 1/2)
		{Name: "etl3", Level: 2, Alpha: r(0.3)},                                       // 0.3 ≤ min(0.7, 1/2)
		{Name: "adhoc", Level: 3},
	}
	got := pipeline.AdmitQueues(qs, time.Hour)
	want := []struct {
		g      pipeline.Guarantee
		class  string
		reason string
	}{
		{pipeline.GuaranteeHard, "latency-sensitive", "conditions hold"},
		{pipeline.GuaranteeElastic, "latency-sensitive", "resource condition fails on memory"},
		{pipeline.GuaranteeSoft, "batch", "conditions hold"},
		{pipeline.GuaranteeElastic, "batch", "fairness condition fails on memory"},
		{pipeline.GuaranteeSoft, "batch", "conditions hold at level 2 (2 guaranteed there)"},
		{pipeline.GuaranteeElastic, "batch", "no service curve"},
	}
	for i, w := range want {
		g := got[i]
		if g.Guarantee != w.g || g.Class != w.class || !strings.Contains(g.Reason, w.reason) {
			t.Errorf("%s: got %s %s %q, want %s %s containing %q", g.Name, g.Guarantee, g.Class, g.Reason, w.g, w.class, w.reason)
		}
	}
}

func TestCurvesConfigValidate(t *testing.T) {
	base := func() pipeline.Config {
		c := only("fairness")
		c.Fairness.Mode = pipeline.FairnessCurves
		c.Fairness.GroupBy = pipeline.GroupByQueue
		c.Fairness.Queues = []pipeline.ServiceQueue{{Name: "ls", Level: 1, Alpha: pipeline.Rate{VCores: 0.5}, Burst: time.Minute}}
		return c
	}
	for _, tc := range []struct {
		name, field string
		mod         func(*pipeline.Config)
	}{
		{"mode", "fairness.mode", func(c *pipeline.Config) { c.Fairness.Mode = "wfq" }},
		{"queues in deficit mode", "fairness.queues", func(c *pipeline.Config) { c.Fairness.Mode = pipeline.FairnessDeficit }},
		{"slot", "fairness.slot", func(c *pipeline.Config) { c.Fairness.Slot = 0 }},
		{"period below slot", "fairness.burst_period", func(c *pipeline.Config) { c.Fairness.BurstPeriod = time.Second }},
		{"level", "fairness.queues[0].level", func(c *pipeline.Config) { c.Fairness.Queues[0].Level = 0 }},
		{"rate", "fairness.queues[0].alpha.vcores", func(c *pipeline.Config) { c.Fairness.Queues[0].Alpha.VCores = 1.5 }},
		{"beta above alpha", "fairness.queues[0].beta", func(c *pipeline.Config) { c.Fairness.Queues[0].Beta.Memory = 0.1 }},
		{"burst missing", "fairness.queues[0].burst", func(c *pipeline.Config) {
			c.Fairness.Queues[0].Beta.VCores = 0.1
			c.Fairness.Queues[0].Burst = 0
		}},
		{"burst over period", "fairness.queues[0].burst", func(c *pipeline.Config) { c.Fairness.Queues[0].Burst = 2 * time.Hour }},
		{"name", "fairness.queues[1].name", func(c *pipeline.Config) {
			c.Fairness.Queues = append(c.Fairness.Queues, pipeline.ServiceQueue{Level: 1})
		}},
		{"member twice", "fairness.queues[1]", func(c *pipeline.Config) {
			c.Fairness.Queues = append(c.Fairness.Queues, pipeline.ServiceQueue{Name: "b", Level: 2, Members: []string{"ls"}})
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := base()
			if err := c.Validate(); err != nil {
				t.Fatalf("base config: %v", err)
			}
			tc.mod(&c)
			err := c.Validate()
			var fe *queue.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field {
				t.Errorf("Validate() = %v, want a field error on %s", err, tc.field)
			}
		})
	}
}

// curvesPipeline: a 10-vcore, 10 GB cluster; queue ls (level 1, hard)
// with α 0.4 for 10 min then β 0.1, queue etl (level 2, α = β = 0.2),
// everything else elastic; jobs take 1 vcore and 1 GB per container.
func curvesPipeline(t *testing.T) *pipeline.Pipeline {
	c := only("fit", "fairness")
	c.Fit.PerNode = false
	c.Fairness.Mode = pipeline.FairnessCurves
	c.Fairness.GroupBy = pipeline.GroupByQueue
	c.Fairness.Queues = []pipeline.ServiceQueue{
		{Name: "ls", Level: 1, Alpha: pipeline.Rate{VCores: 0.4, Memory: 0.4}, Beta: pipeline.Rate{VCores: 0.1, Memory: 0.1}, Burst: 10 * time.Minute},
		{Name: "etl", Level: 2, Alpha: pipeline.Rate{VCores: 0.2, Memory: 0.2}, Members: []string{"etl-nightly"}},
	}
	return mustPipeline(t, c, nil)
}

var small = pipeline.Capacity{MemoryMB: 10240, VCores: 10}

func inQueue(q string) func(*queue.Job) { return func(j *queue.Job) { j.Queue = q } }

func run(q string, n int64) pipeline.Running {
	return pipeline.Running{JobID: "r-" + q, Kind: "x", User: "u", Queue: q, Alloc: pipeline.Capacity{MemoryMB: 1024 * n, VCores: n}}
}

func curvesSnap(now time.Duration, running []pipeline.Running, pending ...queue.Job) pipeline.Snapshot {
	free := small
	for _, r := range running {
		free.MemoryMB -= r.Alloc.MemoryMB
		free.VCores -= r.Alloc.VCores
	}
	return pipeline.Snapshot{Now: t0.Add(now), Capacity: small, Free: free, Running: running, Pending: pending}
}

func TestCurvesOrder(t *testing.T) {
	t.Run("owed latency queue goes before older batch jobs", func(t *testing.T) {
		p := curvesPipeline(t)
		d := p.Decide(curvesSnap(0, nil, pj(1, "a", inQueue("adhoc")), pj(2, "b", inQueue("ls"))), nil)
		if d.Chosen != "j02" {
			t.Fatalf("chose %q, want the owed ls job j02; fairness: %+v", d.Chosen, stage(d, "fairness"))
		}
		if n := stage(d, "fairness").Note; !strings.Contains(n, "level 1 owed") {
			t.Errorf("note %q does not say level 1 is owed", n)
		}
		if len(d.Queues) != 2 || d.Queues[0].Queue != "ls" || !(d.Queues[0].Owed.VCores > 0) {
			t.Errorf("decision queues %+v: want ls first, owed", d.Queues)
		}
	})
	t.Run("a queue past its curve yields to elastic jobs", func(t *testing.T) {
		p := curvesPipeline(t)
		// ls holds 6 vcores (0.6 > α) for 20 minutes.
		for m := time.Duration(0); m <= 20*time.Minute; m += time.Minute {
			p.Decide(curvesSnap(m, []pipeline.Running{run("ls", 6)}), nil)
		}
		d := p.Decide(curvesSnap(21*time.Minute, []pipeline.Running{run("ls", 6)}, pj(1, "b", inQueue("ls")), pj(2, "a", inQueue("adhoc"))), nil)
		if d.Chosen != "j02" {
			t.Fatalf("chose %q, want the elastic job j02: ls has had more than its curve", d.Chosen)
		}
	})
	t.Run("members are served as their queue", func(t *testing.T) {
		p := curvesPipeline(t)
		d := p.Decide(curvesSnap(0, nil, pj(1, "a", inQueue("adhoc")), pj(2, "b", inQueue("etl-nightly"))), nil)
		if d.Chosen != "j02" {
			t.Fatalf("chose %q, want etl-nightly's job (queue etl, owed)", d.Chosen)
		}
	})
	t.Run("strict priority when no elastic job fits", func(t *testing.T) {
		p := curvesPipeline(t)
		// Both guaranteed queues past their curves: ls at 0.6, etl at 0.3.
		running := []pipeline.Running{run("ls", 6), run("etl", 3)}
		for m := time.Duration(0); m <= 20*time.Minute; m += time.Minute {
			p.Decide(curvesSnap(m, running), nil)
		}
		d := p.Decide(curvesSnap(21*time.Minute, running, pj(1, "a", inQueue("etl")), pj(2, "b", inQueue("ls")),
			pj(3, "c", inQueue("adhoc"), containers(5))), nil)
		if d.Chosen != "j02" {
			t.Fatalf("chose %q, want ls's j02 (level 1) by strict priority: %+v", d.Chosen, stage(d, "fairness"))
		}
	})
	t.Run("an owed hard queue holds the cluster", func(t *testing.T) {
		p := curvesPipeline(t)
		running := []pipeline.Running{run("adhoc", 8)}
		d := p.Decide(curvesSnap(0, running, pj(1, "a", inQueue("adhoc")), pj(2, "b", inQueue("ls"), containers(3))), nil)
		if d.Chosen != "" || !strings.Contains(d.Note, "hard queue owed") {
			t.Fatalf("chose %q (note %q), want nothing while ls's job waits for room", d.Chosen, d.Note)
		}
	})
	t.Run("an owed soft queue holds nothing", func(t *testing.T) {
		p := curvesPipeline(t)
		running := []pipeline.Running{run("adhoc", 8)}
		d := p.Decide(curvesSnap(0, running, pj(1, "a", inQueue("adhoc")), pj(2, "b", inQueue("etl"), containers(3))), nil)
		if d.Chosen != "j01" {
			t.Fatalf("chose %q (note %q), want the elastic j01: a soft queue holds no room", d.Chosen, d.Note)
		}
	})
}

func TestFairnessStateRoundTrip(t *testing.T) {
	drive := func(p *pipeline.Pipeline, from, to time.Duration) []string {
		var chosen []string
		for m := from; m < to; m += time.Minute {
			running := []pipeline.Running{run("ls", int64(m/time.Minute)%5), run("adhoc", 2)}
			d := p.Decide(curvesSnap(m, running, pj(uint64(m/time.Minute)*2, "a", inQueue("adhoc")), pj(uint64(m/time.Minute)*2+1, "b", inQueue("ls"))), nil)
			chosen = append(chosen, d.Chosen)
		}
		return chosen
	}
	a := curvesPipeline(t)
	drive(a, 0, 30*time.Minute)
	st, ok := a.FairnessState()
	if !ok {
		t.Fatal("FairnessState: fairness reported off")
	}
	b, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var back pipeline.FairnessState
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	restored, fresh := curvesPipeline(t), curvesPipeline(t)
	if why := restored.RestoreFairness(back); why != "" {
		t.Fatalf("RestoreFairness: %s", why)
	}
	want := drive(a, 30*time.Minute, 60*time.Minute)
	if got := drive(restored, 30*time.Minute, 60*time.Minute); !cmp.Equal(want, got) {
		t.Errorf("after a restore the choices differ:\n%s", cmp.Diff(want, got))
	}
	if got := drive(fresh, 30*time.Minute, 60*time.Minute); cmp.Equal(want, got) {
		t.Error("a pipeline that forgot its accounting chooses the same: the test shows nothing")
	}
	qa, qr := a.Queues(), restored.Queues()
	if diff := cmp.Diff(qa, qr); diff != "" {
		t.Errorf("queues report after restore (-kept +restored):\n%s", diff)
	}
}

// TestFairWindow: with fairness on, the window is the first window.size
// jobs of each group, so a group behind another's backlog is seen.
func TestFairWindow(t *testing.T) {
	c := only("window", "fairness")
	c.Window.Size = 2
	c.Fairness.Kappa = 0.01
	p := mustPipeline(t, c, nil)
	pend := []queue.Job{pj(1, "a"), pj(2, "a"), pj(3, "a"), pj(4, "a"), pj(5, "b", user("bob"))}
	snap := func(jobs ...queue.Job) pipeline.Snapshot {
		s := snapshot(jobs...)
		s.Capacity, s.Free = small, small
		return s
	}
	d := p.Decide(snap(pend...), nil)
	if n := stage(d, "window").Note; n != "first 2 of each fairness group: 3 of 5 pending jobs" {
		t.Errorf("window note %q", n)
	}
	// alice's j01 goes first (FIFO); her deficit then favours bob.
	d = p.Decide(snap(pend[1:]...), nil)
	if d.Chosen != "j05" {
		t.Errorf("second decision chose %q, want bob's j05 from behind alice's backlog", d.Chosen)
	}
	off := only("window")
	off.Window.Size = 2
	if d := mustPipeline(t, off, nil).Decide(snapshot(pend...), nil); stage(d, "window").Out != 2 {
		t.Errorf("without fairness the window holds %d jobs, want the first 2", stage(d, "window").Out)
	}
}

// TestCurvesKeepRoom: the learned order (here: a model scoring the big
// kind first) may reorder what the curves keep, but while a guaranteed queue
// may still burst it takes no job larger than its group's oldest, which
// FIFO would admit: the room a burst needs fills no faster than under the
// curves alone, and an owed queue's older jobs do not wait for a bigger
// one of its own.
func TestCurvesKeepRoom(t *testing.T) {
	newPipe := func(keep bool) *pipeline.Pipeline {
		c := only("fit", "fairness", "preference")
		c.Fit.PerNode = false
		c.Fairness.Mode = pipeline.FairnessCurves
		c.Fairness.GroupBy = pipeline.GroupByQueue
		c.Fairness.KeepRoom = keep
		c.Fairness.Queues = []pipeline.ServiceQueue{
			{Name: "ls", Level: 1, Alpha: pipeline.Rate{VCores: 0.4, Memory: 0.4}, Beta: pipeline.Rate{VCores: 0.1, Memory: 0.1}, Burst: 10 * time.Minute},
		}
		c.Preference.Mode = pipeline.PreferenceModel
		p, err := pipeline.New(c, nil, pipeline.WithScorer(kindScorer{"big": 1, "a": 0}))
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	for _, tc := range []struct {
		name string
		keep bool
		jobs []queue.Job
		want string
	}{
		{"elastic, room kept", true, []queue.Job{pj(1, "a", inQueue("adhoc")), pj(2, "big", inQueue("adhoc"), containers(3))}, "j01"},
		{"elastic, off", false, []queue.Job{pj(1, "a", inQueue("adhoc")), pj(2, "big", inQueue("adhoc"), containers(3))}, "j02"},
		{"owed queue, room kept", true, []queue.Job{pj(1, "a", inQueue("ls")), pj(2, "big", inQueue("ls"), containers(3))}, "j01"},
		{"owed queue, off", false, []queue.Job{pj(1, "a", inQueue("ls")), pj(2, "big", inQueue("ls"), containers(3))}, "j02"},
		{"no larger than the head: reordered", true, []queue.Job{pj(1, "a", inQueue("adhoc"), containers(3)), pj(2, "big", inQueue("adhoc"), containers(2))}, "j02"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := newPipe(tc.keep).Decide(curvesSnap(0, nil, tc.jobs...), nil)
			if d.Chosen != tc.want {
				t.Errorf("chose %q, want %s; fairness %+v", d.Chosen, tc.want, stage(d, "fairness"))
			}
		})
	}
	// Once ls holds its burst rate, nothing is at stake: the learned order
	// takes the bigger elastic job.
	d := newPipe(true).Decide(curvesSnap(0, []pipeline.Running{run("ls", 4)}, pj(1, "a", inQueue("adhoc")), pj(2, "big", inQueue("adhoc"), containers(3))), nil)
	if d.Chosen != "j02" {
		t.Errorf("ls at α: chose %q, want j02", d.Chosen)
	}
}
