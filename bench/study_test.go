package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"strings"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/sim"
)

// The studies behind bench/README.md's analysis. They take minutes, so
// they run only with -study:
//
//	go test ./bench -run TestStudy -v -timeout 1h -args -study
//
// Tuning seeds (101-120) differ from the reported ones (1-20).
var study = flag.Bool("study", false, "run the README studies (minutes)")

func studySeeds() []uint64 { return Seeds(101, 20) }

func loadQueue(tb testing.TB, q string) *sim.Workload {
	tb.Helper()
	w, err := sim.LoadWorkload("../configs/workloads/paper-queue-" + q + ".yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// change runs rc's policy over the study seeds and returns the mean and
// sd of its makespan change against fifo and its share of the oracle's gain.
func change(tb testing.TB, rc RunConfig, ref []Result) (Stat, float64) {
	tb.Helper()
	rs, err := RunAll(context.Background(), Configs(rc, []Policy{rc.Policy}, studySeeds()), 0, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return summaryOf(tb, rc.Policy, append(rs, ref...))
}

func summaryOf(tb testing.TB, p Policy, rs []Result) (Stat, float64) {
	tb.Helper()
	sums, err := Summarize(rs)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range sums {
		if s.Policy == p {
			return s.MakespanChange, s.OracleShare
		}
	}
	tb.Fatalf("no summary for %s", p)
	return Stat{}, 0
}

func references(tb testing.TB, w *sim.Workload) []Result {
	tb.Helper()
	rs, err := RunAll(context.Background(), Configs(RunConfig{Workload: w}, []Policy{FIFO, Oracle}, studySeeds()), 0, nil)
	if err != nil {
		tb.Fatal(err)
	}
	return rs
}

// pickerChange is change for a direct-driver picker: it runs pick over the
// study seeds (labelled Random for the summary).
func pickerChange(tb testing.TB, w *sim.Workload, pick picker, ref []Result) (Stat, float64) {
	tb.Helper()
	var rs []Result
	for _, seed := range studySeeds() {
		r, err := runPicker(context.Background(), RunConfig{Workload: w, Policy: Random, Seed: seed}, windowSize(daemon.DefaultConfig()), w.Jobs(nil), pick)
		if err != nil {
			tb.Fatal(err)
		}
		r.Workload, r.Policy, r.Seed, r.Jobs = "workload", Random, seed, len(w.Jobs(nil))
		rs = append(rs, r)
	}
	return summaryOf(tb, Random, append(rs, ref...))
}

// table is a study's Markdown table, logged when done.
type table struct {
	b  strings.Builder
	tw *tabwriter.Writer
}

// newTable starts a table with the given column headers.
func newTable(cols ...string) *table {
	t := &table{}
	t.tw = tabwriter.NewWriter(&t.b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(t.tw, "| %s\t|\n", strings.Join(cols, "\t| "))
	fmt.Fprintln(t.tw, strings.Repeat("|---\t", len(cols))+"|")
	return t
}

// log flushes the table into the test log under title.
func (t *table) log(tb testing.TB, title string) {
	tb.Helper()
	t.tw.Flush()
	tb.Logf("%s:\n%s", title, t.b.String())
}

func cell(s Stat, share float64) string {
	return fmt.Sprintf("%+.1f%% ± %.1f (%.0f%%)", 100*s.Mean, 100*s.Std, 100*share)
}

// TestStudyConfigSweep: ra and ra-warm under single changes to the
// daemon's pipeline and learning defaults, queues A and B.
func TestStudyConfigSweep(t *testing.T) {
	if !*study {
		t.Skip("needs -study")
	}
	variants := []struct {
		name string
		f    func(*daemon.Config, *RunConfig)
	}{
		{"defaults", func(*daemon.Config, *RunConfig) {}},
		{"learning.credit symmetric", func(c *daemon.Config, _ *RunConfig) { c.Learning.Credit = daemon.CreditSymmetric }},
		{"learning.step_size 0.1", func(c *daemon.Config, _ *RunConfig) { c.Learning.StepSize = 0.1 }},
		{"learning.step_size 0.02", func(c *daemon.Config, _ *RunConfig) { c.Learning.StepSize = 0.02 }},
		{"learning.baseline row", func(c *daemon.Config, _ *RunConfig) { c.Learning.Baseline = "row" }},
		{"learning.clip 2", func(c *daemon.Config, _ *RunConfig) { c.Learning.Clip = 2 }},
		{"learning.self_prior 0 (paper)", func(c *daemon.Config, _ *RunConfig) { c.Learning.SelfPrior = 0 }},
		{"learning.self_prior 2", func(c *daemon.Config, _ *RunConfig) { c.Learning.SelfPrior = 2 }},
		{"learning.aggregate node", func(c *daemon.Config, _ *RunConfig) { c.Learning.Aggregate = daemon.AggregateNode }},
		{"learning interval 30s", func(_ *daemon.Config, rc *RunConfig) { rc.LearnInterval = 30 * time.Second }},
		{"learning interval 120s", func(_ *daemon.Config, rc *RunConfig) { rc.LearnInterval = 120 * time.Second }},
		{"pipeline.window.size 4", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Window.Size = 4 }},
		{"pipeline.window.size 12", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Window.Size = 12 }},
		{"pipeline.window.size 16", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Window.Size = 16 }},
		{"pipeline.starvation.a 0.2", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Starvation.A = 0.2 }},
		{"pipeline.starvation.a 1", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Starvation.A = 1 }},
		{"pipeline.select.mode argmax", func(c *daemon.Config, _ *RunConfig) { c.Pipeline.Select.Mode = "argmax" }},
	}
	tab := newTable("change", "A ra", "A ra-warm", "B ra", "B ra-warm")
	tw := tab.tw
	queues := []string{"a", "b"}
	refs := map[string][]Result{}
	for _, q := range queues {
		refs[q] = references(t, loadQueue(t, q))
	}
	for _, v := range variants {
		fmt.Fprintf(tw, "| %s", v.name)
		for _, q := range queues {
			for _, p := range []Policy{RA, RAWarm} {
				cfg := daemon.DefaultConfig()
				rc := RunConfig{Workload: loadQueue(t, q), Policy: p, Daemon: &cfg}
				v.f(&cfg, &rc)
				s, share := change(t, rc, refs[q])
				fmt.Fprintf(tw, "\t| %s", cell(s, share))
			}
		}
		fmt.Fprintln(tw, "\t|")
	}
	tab.log(t, "makespan change vs fifo, mean ± sd over seeds 101-120 (share of the default-window oracle's gain)")
}

// idealSnapshot is class preferences with no learning: H = +h between a
// CPU-bound and an I/O-bound kind, −h within a class.
func idealSnapshot(h float64) *bandit.Snapshot {
	kinds := []string{"tpch-q10", "kmeans", "tpch-q3", "cc"}
	io := map[string]bool{"tpch-q10": true, "tpch-q3": true}
	l := bandit.New(bandit.Config{})
	for _, k := range kinds {
		l.Add(k)
	}
	s := l.Snapshot()
	for gi, g := range kinds {
		for ai, a := range kinds {
			s.H[gi][ai] = -h
			if io[g] != io[a] {
				s.H[gi][ai] = h
			}
		}
	}
	return &s
}

// idleContext hides the running applications from the engine's admission
// snapshot when the empty nodes alone can hold a job (need containers, in
// groups of 3): the next job lands there, beside nothing, so the
// preference stage's "nothing running: FIFO head" rule applies. Sync and
// learning still see every application through the nodes and App.
type idleContext struct {
	*daemon.SimCluster
	s    *sim.Sim
	need int
}

func (c idleContext) State(ctx context.Context) (daemon.ClusterState, error) {
	st, err := c.SimCluster.State(ctx)
	room := 0
	for _, n := range c.s.Nodes() {
		if n.UsedVCores == 0 && n.UsedMemoryMB == 0 {
			room += 3
		}
	}
	if room >= c.need {
		st.Apps = nil
	}
	return st, err
}

// daemonContextPairwise is Pairwise with the daemon's context instead of a
// placement-aware one: running applications weighted by the mean free
// share of their nodes (memory, as daemon.Engine computes it, or vcores,
// the resource that binds on queue A's nodes), empty nodes ignored.
// goodnessReward scores pairs by their goodness instead of their speed gain.
func daemonContextPairwise(w *sim.Workload, goodnessReward, byVCores bool) picker {
	gain := map[[2]string]float64{}
	for _, a := range w.Kinds {
		for _, b := range w.Kinds {
			r, err := sim.Pairwise(w, a.Name, b.Name, 1)
			if err != nil {
				panic(err)
			}
			gain[[2]string{a.Name, b.Name}] = -r.DeltaAll()
			if goodnessReward {
				gain[[2]string{a.Name, b.Name}] = r.Colocated.Goodness
			}
		}
	}
	return func(d *driver, window []pendingJob) int {
		s := d.s
		free := map[string]float64{}
		for _, n := range s.Nodes() {
			free[n.Name] = float64(n.MemoryMB-n.UsedMemoryMB) / float64(n.MemoryMB)
			if byVCores {
				free[n.Name] = float64(n.VCores-n.UsedVCores) / float64(n.VCores)
			}
		}
		best, bestScore := -1, math.Inf(-1)
		seen := map[string]bool{}
		for i, j := range window {
			if seen[j.kind.Name] || !fits(s, j.kind) {
				continue
			}
			seen[j.kind.Name] = true
			var score, ws float64
			for _, a := range s.Apps() {
				if a.State != sim.AppRunning {
					continue
				}
				var wa float64
				for _, n := range a.Nodes {
					wa += free[n] / float64(len(a.Nodes))
				}
				score += wa * gain[[2]string{j.kind.Name, a.Kind}]
				ws += wa
			}
			if ws > 0 {
				score /= ws
			}
			if score > bestScore+1e-9 {
				best, bestScore = i, score
			}
		}
		return best
	}
}

// TestStudyAblation separates what limits ra on queue A: the learned
// preferences, sampling, and the admission context.
func TestStudyAblation(t *testing.T) {
	if !*study {
		t.Skip("needs -study")
	}
	tab := newTable("variant", "queue A", "queue B")
	tw := tab.tw
	type variant struct {
		name string
		rc   func(w *sim.Workload) RunConfig
		pick func(w *sim.Workload) picker
	}
	frozen := func(mode string, ideal float64, idle bool) func(w *sim.Workload) RunConfig {
		return func(w *sim.Workload) RunConfig {
			cfg := daemon.DefaultConfig()
			cfg.Pipeline.Select.Mode = mode
			rc := RunConfig{Workload: w, Policy: RA, Daemon: &cfg}
			if ideal > 0 {
				cfg.Learning.StepSize = 1e-9 // frozen
				rc.Policy, rc.Warm = RAWarm, idealSnapshot(ideal)
			}
			if idle {
				rc.wrapCluster = func(c *daemon.SimCluster, s *sim.Sim) daemon.Cluster { return idleContext{c, s, 24} }
			}
			return rc
		}
	}
	variants := []variant{
		{name: "ra (defaults: learned, sample, daemon context)", rc: frozen("sample", 0, false)},
		{name: "ra, idle-aware context", rc: frozen("sample", 0, true)},
		{name: "ideal class preferences H=±0.5, sample", rc: frozen("sample", 0.5, false)},
		{name: "ideal H=±0.5, argmax", rc: frozen("argmax", 0.5, false)},
		{name: "ideal H=±1, argmax", rc: frozen("argmax", 1, false)},
		{name: "ideal H=±0.5, sample, idle-aware context", rc: frozen("sample", 0.5, true)},
		{name: "ideal H=±0.5, argmax, idle-aware context", rc: frozen("argmax", 0.5, true)},
		{name: "pairwise truth (speed), daemon context (memory), argmax", pick: func(w *sim.Workload) picker { return daemonContextPairwise(w, false, false) }},
		{name: "pairwise truth (goodness), daemon context (memory), argmax", pick: func(w *sim.Workload) picker { return daemonContextPairwise(w, true, false) }},
		{name: "pairwise truth (speed), daemon context by vcores, argmax", pick: func(w *sim.Workload) picker { return daemonContextPairwise(w, false, true) }},
		{name: "pairwise truth (goodness), daemon context by vcores, argmax", pick: func(w *sim.Workload) picker { return daemonContextPairwise(w, true, true) }},
		{name: "pairwise truth (speed), placement-aware context (policy pairwise)", rc: func(w *sim.Workload) RunConfig { return RunConfig{Workload: w, Policy: Pairwise} }},
		{name: "oracle, instantaneous rate", rc: func(w *sim.Workload) RunConfig { return RunConfig{Workload: w, Policy: Oracle, OracleInstant: true} }},
	}
	queues := []string{"a", "b"}
	refs := map[string][]Result{}
	for _, q := range queues {
		refs[q] = references(t, loadQueue(t, q))
	}
	for _, v := range variants {
		fmt.Fprintf(tw, "| %s", v.name)
		for _, q := range queues {
			w := loadQueue(t, q)
			var s Stat
			var share float64
			if v.pick != nil {
				s, share = pickerChange(t, w, v.pick(w), refs[q])
			} else {
				rc := v.rc(w)
				if rc.Policy == Oracle {
					// Compare with the default oracle, relabelled.
					rs, err := RunAll(context.Background(), Configs(rc, []Policy{Oracle}, studySeeds()), 0, nil)
					if err != nil {
						t.Fatal(err)
					}
					for i := range rs {
						rs[i].Policy = Random
					}
					s, share = summaryOf(t, Random, append(rs, refs[q]...))
				} else {
					s, share = change(t, rc, refs[q])
				}
			}
			fmt.Fprintf(tw, "\t| %s", cell(s, share))
		}
		fmt.Fprintln(tw, "\t|")
	}
	tab.log(t, "makespan change vs fifo, mean ± sd over seeds 101-120 (share of the oracle's gain)")
}

// trueGoodness is the goodness (Eq. 1) of every kind pair of w co-located,
// from sim.Pairwise: the value the learner estimates, known exactly.
func trueGoodness(tb testing.TB, w *sim.Workload) map[[2]string]float64 {
	tb.Helper()
	g := map[[2]string]float64{}
	for i, a := range w.Kinds {
		for _, b := range w.Kinds[i:] {
			r, err := sim.Pairwise(w, a.Name, b.Name, 1)
			if err != nil {
				tb.Fatal(err)
			}
			g[[2]string{a.Name, b.Name}] = r.Colocated.Goodness
			g[[2]string{b.Name, a.Name}] = r.Colocated.Goodness
		}
	}
	return g
}

// knownTruth is an Observe hook that replaces the learner's estimates by
// the truth after every learning tick: H(a|given) = scale·(G(given, a) −
// neutral) for the pairs the learner "knows", 0 for the others. With
// seenKinds false it knows the pairs it has observed at least once; with
// seenKinds true every pair of two kinds it has observed in any pair (a
// perfect model that predicts unobserved pairs from what the kinds did
// elsewhere).
func knownTruth(g map[[2]string]float64, scale, neutral float64, seenKinds bool) func(LearnEvent) {
	return func(ev LearnEvent) {
		s := ev.Learner.Snapshot()
		seen := map[int]bool{}
		for gi := range s.Kinds {
			for ai := range s.Kinds {
				if s.PairObservations[gi][ai] > 0 {
					seen[gi], seen[ai] = true, true
				}
			}
		}
		for gi, given := range s.Kinds {
			for ai, a := range s.Kinds {
				s.H[gi][ai] = 0
				if s.PairObservations[gi][ai] > 0 || (seenKinds && seen[gi] && seen[ai]) {
					s.H[gi][ai] = scale * (g[[2]string{given, a}] - neutral)
				}
			}
		}
		if err := ev.Learner.Restore(s); err != nil {
			panic(err) // the snapshot came from the learner: a bug here
		}
	}
}

// truthSnapshot is frozen preferences from the true goodness of every pair:
// H(a|given) = scale·(G(given, a) − mean of given's row).
func truthSnapshot(g map[[2]string]float64, w *sim.Workload, scale float64) *bandit.Snapshot {
	l := bandit.New(bandit.Config{})
	for _, k := range w.Kinds {
		l.Add(k.Name)
	}
	s := l.Snapshot()
	for gi, given := range s.Kinds {
		var mean float64
		for _, a := range s.Kinds {
			mean += g[[2]string{given, a}] / float64(len(s.Kinds))
		}
		for ai, a := range s.Kinds {
			s.H[gi][ai] = scale * (g[[2]string{given, a}] - mean)
		}
	}
	return &s
}

// firstChoiceSnapshot is ra's empty start with a single known preference:
// H(best|given) = h and the rest of given's row −h, every count 0 (so the
// anneal select still samples, as from scratch).
func firstChoiceSnapshot(w *sim.Workload, given, best string, h float64) *bandit.Snapshot {
	l := bandit.New(bandit.Config{})
	for _, k := range w.Kinds {
		l.Add(k.Name)
	}
	s := l.Snapshot()
	for gi, g := range s.Kinds {
		if g != given {
			continue
		}
		for ai, a := range s.Kinds {
			s.H[gi][ai] = -h
			if a == best {
				s.H[gi][ai] = h
			}
		}
	}
	return &s
}

// TestStudyCeilings asks how far learning can take ra and ra-warm: it
// replaces the learner's estimates by the truth (what a perfect estimator
// would know from the same observations) and the learned preferences by
// the true goodness of every pair (what no learning run could improve on).
func TestStudyCeilings(t *testing.T) {
	if !*study {
		t.Skip("needs -study")
	}
	tab := newTable("variant", "A ra", "A ra-warm", "B ra", "B ra-warm")
	tw := tab.tw
	type variant struct {
		name string
		rc   func(w *sim.Workload, g map[[2]string]float64, p Policy) RunConfig
	}
	frozen := func(scale float64, starvation bool) func(*sim.Workload, map[[2]string]float64, Policy) RunConfig {
		return func(w *sim.Workload, g map[[2]string]float64, p Policy) RunConfig {
			cfg := daemon.DefaultConfig()
			cfg.Learning.StepSize = 1e-9        // frozen
			cfg.Pipeline.Select.Mode = "argmax" // nothing left to explore
			if !starvation {
				cfg.Pipeline.Starvation.A, cfg.Pipeline.Starvation.MaxSkips = 0, 1<<20
			}
			return RunConfig{Workload: w, Policy: RAWarm, Daemon: &cfg, Warm: truthSnapshot(g, w, scale)}
		}
	}
	variants := []variant{
		{"defaults (learned)", func(w *sim.Workload, _ map[[2]string]float64, p Policy) RunConfig {
			return RunConfig{Workload: w, Policy: p}
		}},
		{"perfect estimate of every observed pair", func(w *sim.Workload, g map[[2]string]float64, p Policy) RunConfig {
			return RunConfig{Workload: w, Policy: p, Observe: knownTruth(g, 0.3, 15, false)}
		}},
		{"perfect estimate of every pair of kinds seen so far", func(w *sim.Workload, g map[[2]string]float64, p Policy) RunConfig {
			return RunConfig{Workload: w, Policy: p, Observe: knownTruth(g, 0.3, 15, true)}
		}},
		{"only the first choice known: H(kmeans | tpch-q10) = 3, the rest learned", func(w *sim.Workload, _ map[[2]string]float64, p Policy) RunConfig {
			return RunConfig{Workload: w, Policy: RAWarm, Warm: firstChoiceSnapshot(w, "tpch-q10", "kmeans", 3)}
		}},
		{"true goodness of all pairs, frozen, argmax, H = 0.1·(G − row mean)", frozen(0.1, true)},
		{"true goodness of all pairs, frozen, argmax, H = 0.3·(G − row mean)", frozen(0.3, true)},
		{"true goodness of all pairs, frozen, argmax, H = 1·(G − row mean)", frozen(1, true)},
		{"true goodness of all pairs, frozen, argmax, 0.3, no starvation weights", frozen(0.3, false)},
	}
	queues := []string{"a", "b"}
	refs := map[string][]Result{}
	truth := map[string]map[[2]string]float64{}
	for _, q := range queues {
		w := loadQueue(t, q)
		refs[q], truth[q] = references(t, w), trueGoodness(t, w)
	}
	for _, v := range variants {
		fmt.Fprintf(tw, "| %s", v.name)
		for _, q := range queues {
			for _, p := range []Policy{RA, RAWarm} {
				rc := v.rc(loadQueue(t, q), truth[q], p)
				if rc.Policy != p { // a fixed ra-warm start: no ra column
					fmt.Fprintf(tw, "\t| —")
					continue
				}
				s, share := change(t, rc, refs[q])
				fmt.Fprintf(tw, "\t| %s", cell(s, share))
			}
		}
		fmt.Fprintln(tw, "\t|")
	}
	// The greedy of the pairwise policy (the simulator's placement rule)
	// fed the pairs' true goodness instead of their speed gain.
	fmt.Fprintf(tw, "| greedy on true goodness, simulator's placement rule (pairwise picker)")
	for _, q := range queues {
		g := truth[q]
		s, share := pickerChange(t, loadQueue(t, q), func(d *driver, win []pendingJob) int { return pairwisePick(d.s, win, g) }, refs[q])
		fmt.Fprintf(tw, "\t| —\t| %s", cell(s, share))
	}
	fmt.Fprintln(tw, "\t|")
	tab.log(t, "makespan change vs fifo, mean ± sd over seeds 101-120 (share of the oracle's gain)")
}
