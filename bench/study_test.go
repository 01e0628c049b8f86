package bench

import (
	"context"
	"flag"
	"fmt"
	"strings"
	"testing"
	"text/tabwriter"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/sim"
)

// TestStudyModelSweep is the sweep behind bench/README.md's "Tuning". It
// takes minutes, so it runs only with -study:
//
//	go test ./bench -run TestStudyModelSweep -v -timeout 2h -args -study
//
// Tuning seeds (101-120) differ from the reported ones (1-20).
var study = flag.Bool("study", false, "run the README studies (minutes)")

func studySeeds() []uint64 { return Seeds(101, 20) }

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

// shipped are the seven shipped workloads, by file name.
var shipped = []string{"paper-queue-a", "paper-queue-b", "poisson-mixed", "eight-kinds", "mixed-sizes", "new-kinds", "noisy"}

func loadShipped(tb testing.TB, name string) *sim.Workload {
	tb.Helper()
	w, err := sim.LoadWorkload("../configs/workloads/" + name + ".yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

// metricChange is the mean change against fifo of the workload's metric
// (mean JCT for Poisson arrivals, makespan for batch) over rs, which hold
// fifo and policy p on the same seeds.
func metricChange(tb testing.TB, w *sim.Workload, p Policy, rs []Result) float64 {
	tb.Helper()
	sums, err := Summarize(rs)
	if err != nil {
		tb.Fatal(err)
	}
	for _, s := range sums {
		if s.Policy == p {
			if w.Arrivals.Mode == sim.ArrivalsPoisson {
				return s.JCTChange.Mean
			}
			return s.MakespanChange.Mean
		}
	}
	tb.Fatalf("no summary for %s", p)
	return 0
}

// TestStudyModelSweep: ra and ra-warm under single changes to the
// co-location model's defaults, on the seven shipped workloads, against the
// best of the peers (packfit, alternate, tetris) on the same tuning seeds.
// A study, not a check: it prints each variant's total gap, ra's and
// ra-warm's, which bench/README.md ("Tuning") compares with the defaults'.
func TestStudyModelSweep(t *testing.T) {
	if !*study {
		t.Skip("needs -study")
	}
	variants := []struct {
		name string
		f    func(*daemon.Config)
	}{
		{"defaults", func(*daemon.Config) {}},
		{"preference.explore 0", func(c *daemon.Config) { c.Pipeline.Scorer.Explore = 0 }},
		{"preference.explore 2", func(c *daemon.Config) { c.Pipeline.Scorer.Explore = 2 }},
		{"preference.correction 0", func(c *daemon.Config) { c.Pipeline.Scorer.Correction = 0 }},
		{"preference.correction 1", func(c *daemon.Config) { c.Pipeline.Scorer.Correction = 1 }},
		{"learning.step_size 0.05", func(c *daemon.Config) { c.Learning.StepSize = 0.05 }},
		{"preference.observe_wait 0", func(c *daemon.Config) { c.Pipeline.Preference.ObserveWait = 0 }},
		{"preference.objective goodness", func(c *daemon.Config) { c.Pipeline.Scorer.Objective = "goodness" }},
		{"preference.risk 1", func(c *daemon.Config) { c.Pipeline.Scorer.Risk = 1 }},
		{"preference.temperature 0.2", func(c *daemon.Config) { c.Pipeline.Preference.Temperature = 0.2 }},
		{"select.mode sample", func(c *daemon.Config) { c.Pipeline.Select.Mode = "sample" }},
		{"learning.profile.saturation 0.8", func(c *daemon.Config) { c.Learning.Profile.Saturation = 0.8 }},
		{"learning.profile.prior_strength 4", func(c *daemon.Config) { c.Learning.Profile.PriorStrength = 4 }},
		{"pipeline.tail off", func(c *daemon.Config) { c.Pipeline.Tail.Enabled = false }},
	}
	best := map[string]float64{}
	refs := map[string][]Result{}
	for _, name := range shipped {
		w := loadShipped(t, name)
		rs, err := RunAll(context.Background(), Configs(RunConfig{Workload: w}, []Policy{FIFO, policyPackFit, policyAlternate, policyTetris}, studySeeds()), 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		refs[name] = rs[:len(studySeeds())]
		best[name] = 0
		for _, p := range []Policy{policyPackFit, policyAlternate, policyTetris} {
			best[name] = min(best[name], metricChange(t, w, p, rs))
		}
	}
	tab := newTable(append(append([]string{"change"}, shipped...), "total gap to the best peer", "ra-warm's total gap")...)
	fmt.Fprintf(tab.tw, "| best peer")
	for _, name := range shipped {
		fmt.Fprintf(tab.tw, "\t| %+.1f%%", 100*best[name])
	}
	fmt.Fprintln(tab.tw, "\t| —\t| —\t|")
	for _, v := range variants {
		cfg := daemon.DefaultConfig()
		v.f(&cfg)
		fmt.Fprintf(tab.tw, "| %s", v.name)
		var gap, warmGap float64
		for _, name := range shipped {
			w := loadShipped(t, name)
			rs, err := RunAll(context.Background(), Configs(RunConfig{Workload: w, Daemon: &cfg}, []Policy{policyRA, policyRAWarm}, studySeeds()), 0, nil)
			if err != nil {
				t.Fatal(err)
			}
			c := metricChange(t, w, policyRA, append(rs, refs[name]...))
			gap += c - best[name]
			warmGap += metricChange(t, w, policyRAWarm, append(rs, refs[name]...)) - best[name]
			fmt.Fprintf(tab.tw, "\t| %+.1f%%", 100*c)
		}
		fmt.Fprintf(tab.tw, "\t| %.1f\t| %.1f\t|\n", 100*gap, 100*warmGap)
	}
	tab.log(t, "ra's change vs fifo (makespan; mean JCT on poisson-mixed), mean over seeds 101-120")
}
