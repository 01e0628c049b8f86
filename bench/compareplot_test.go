package bench

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/colocd/colocd/sim"
)

func handResult(wl string, p Policy, seed uint64, makespan, jct float64) Result {
	return Result{Workload: wl, Policy: p, Seed: seed, MakespanS: makespan, MeanJCTS: jct}
}

// handResults: "batch" judged by makespan over seeds 1–3 (ra −10 %, −20 %,
// +5 %; packfit −20 %, 0, 0), "open" by mean JCT over seeds 1–2 (ra −20 %,
// −10 %; its makespan changes by −10 % and +10 % and must not be drawn).
func handResults() ([]Result, map[string]Metric) {
	return []Result{
		handResult("batch", FIFO, 1, 100, 50), handResult("batch", FIFO, 2, 200, 50), handResult("batch", FIFO, 3, 100, 50),
		handResult("batch", policyRA, 1, 90, 40), handResult("batch", policyRA, 2, 160, 60), handResult("batch", policyRA, 3, 105, 50),
		handResult("batch", policyPackFit, 1, 80, 50), handResult("batch", policyPackFit, 2, 200, 50), handResult("batch", policyPackFit, 3, 100, 50),
		handResult("open", FIFO, 1, 1000, 100), handResult("open", FIFO, 2, 1000, 100),
		handResult("open", policyRA, 1, 900, 80), handResult("open", policyRA, 2, 1100, 90),
	}, map[string]Metric{"batch": metricMakespan, "open": metricJCT}
}

func TestCompareData(t *testing.T) {
	rs, metrics := handResults()
	sums, err := Summarize(rs)
	if err != nil {
		t.Fatal(err)
	}
	got, err := CompareData(sums, rs, metrics)
	if err != nil {
		t.Fatal(err)
	}
	want := []compareWorkload{
		{Workload: "batch", Metric: metricMakespan, Boxes: []policyBox{
			{Policy: policyRA, Seeds: []uint64{1, 2, 3}, Changes: []float64{-0.1, -0.2, 0.05},
				Mean: -0.25 / 3, Min: -0.2, Max: 0.05, Q1: -0.15, Median: -0.1, Q3: -0.025},
			{Policy: policyPackFit, Seeds: []uint64{1, 2, 3}, Changes: []float64{-0.2, 0, 0},
				Mean: -0.2 / 3, Min: -0.2, Max: 0, Q1: -0.1, Median: 0, Q3: 0},
		}},
		{Workload: "open", Metric: metricJCT, Boxes: []policyBox{
			{Policy: policyRA, Seeds: []uint64{1, 2}, Changes: []float64{-0.2, -0.1},
				Mean: -0.15, Min: -0.2, Max: -0.1, Q1: -0.175, Median: -0.15, Q3: -0.125},
		}},
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("compare data (-want +got):\n%s", diff)
	}
	// What the figure draws for the mean and the extremes is the table's
	// "vs fifo" and [min, max], to the bit.
	for _, w := range got {
		for _, b := range w.Boxes {
			for _, s := range sums {
				if s.Workload != w.Workload || s.Policy != b.Policy {
					continue
				}
				if st := w.Metric.Change(s); b.Mean != st.Mean || b.Min != st.Min || b.Max != st.Max {
					t.Errorf("%s %s: drawn mean %g [%g, %g], table %g [%g, %g]", w.Workload, b.Policy, b.Mean, b.Min, b.Max, st.Mean, st.Min, st.Max)
				}
			}
		}
	}
}

func TestCompareDataErrors(t *testing.T) {
	rs, metrics := handResults()
	sums, err := Summarize(rs)
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]func() ([]Summary, []Result, map[string]Metric){
		"no metric": func() ([]Summary, []Result, map[string]Metric) {
			return sums, rs, map[string]Metric{"batch": metricMakespan}
		},
		"unknown metric": func() ([]Summary, []Result, map[string]Metric) {
			return sums, rs, map[string]Metric{"batch": metricMakespan, "open": "p95 wait"}
		},
		"summary disagrees": func() ([]Summary, []Result, map[string]Metric) {
			bad := append([]Summary(nil), sums...)
			bad[1].MakespanChange.Min = -0.5
			return bad, rs, metrics
		},
		"summarised seed without a result": func() ([]Summary, []Result, map[string]Metric) {
			return sums, rs[:len(rs)-1], metrics
		},
	}
	for name, args := range tests {
		t.Run(name, func(t *testing.T) {
			if _, err := CompareData(args()); !errors.Is(err, errInvalid) {
				t.Errorf("err = %v, want errInvalid", err)
			}
		})
	}
}

func TestQuantile(t *testing.T) {
	tests := []struct {
		xs   []float64
		p    float64
		want float64
	}{
		{[]float64{7}, 0.25, 7},
		{[]float64{1, 2, 3, 4}, 0.25, 1.75},
		{[]float64{1, 2, 3, 4}, 0.5, 2.5},
		{[]float64{1, 2, 3, 4}, 0.75, 3.25},
		{[]float64{1, 2, 3, 4, 5}, 0.5, 3},
		{[]float64{1, 2, 3, 4, 5}, 1, 5},
	}
	for _, tc := range tests {
		if got := quantile(tc.xs, tc.p); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("quantile(%v, %g) = %g, want %g", tc.xs, tc.p, got, tc.want)
		}
	}
	if got := quantile(nil, 0.5); !math.IsNaN(got) {
		t.Errorf("quantile of nothing = %g, want NaN", got)
	}
}

// TestComparePNG: the figure decodes at its size, grows with the
// workloads, says what its marks are, keeps the legend off the data and
// draws a bar to the median in the policy's colour.
func TestComparePNG(t *testing.T) {
	rs, metrics := handResults()
	sums, err := Summarize(rs)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := CompareData(sums, rs, metrics)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := WriteComparePNG(&buf, ws); err != nil {
		t.Fatal(err)
	}
	fig, width, err := compareFigure(ws)
	if err != nil {
		t.Fatal(err)
	}
	if width != 8*vg.Inch {
		t.Errorf("width %v for 2 workloads, want 8 in", width)
	}
	img := decodePNG(t, buf.Bytes(), width, compareHeight)
	for _, s := range []string{"interquartile range", "min–max", "median", "mean", "3 seeds, 1–3"} {
		if !strings.Contains(fig.title, s) {
			t.Errorf("title %q does not say %q", fig.title, s)
		}
	}
	if fig.p.Y.Label.Text != "change vs FIFO, % (lower is better)" {
		t.Errorf("Y label %q", fig.p.Y.Label.Text)
	}
	pc, lc := fig.canvases(draw.New(vgimg.New(width, compareHeight)))
	data := fig.p.DataCanvas(pc)
	if leg := fig.legend.Rectangle(lc); leg.Min.X < data.Max.X || leg.Max.X > width {
		t.Errorf("legend spans x %v–%v, data ends at %v: want it right of the data", leg.Min.X, leg.Max.X, data.Max.X)
	}
	trX, trY := fig.p.Transforms(&data)
	bars := compareBars{ws: ws, slots: []Policy{policyRA, policyPackFit}}
	x, half := bars.at(0, policyRA) // batch, ra: median −10 %
	pt := vg.Point{X: trX(x - half/2), Y: trY(-5)}
	if got, want := pixelAt(img, pt), tint(policyColor(policyRA)); !near(got, want, 2) {
		t.Errorf("inside ra's bar on batch: %v, want its fill %v", got, want)
	}
	if got := pixelAt(img, vg.Point{X: pt.X, Y: trY(-15)}); near(got, tint(policyColor(policyRA)), 2) {
		t.Errorf("below ra's median on batch: %v, want no bar", got)
	}

	many := make([]compareWorkload, 6)
	for i := range many {
		many[i] = ws[0]
		many[i].Workload = fmt.Sprint("w", i)
	}
	if _, w, err := compareFigure(many); err != nil || w != 2.5*vg.Inch+6*(2*0.3*vg.Inch+0.5*vg.Inch) {
		t.Errorf("6 workloads of 2 policies: width %v, err %v", w, err)
	}
	if err := WriteComparePNG(&buf, []compareWorkload{{Workload: "fifo only"}}); !errors.Is(err, errInvalid) {
		t.Errorf("no policy but fifo: err = %v, want errInvalid", err)
	}
}

// TestCompareMatchesTable: on real runs (the small workload, 2 seeds), the
// figure's mean and extremes are the numbers WriteTable prints.
func TestCompareMatchesTable(t *testing.T) {
	w := small(t, 1)
	cfgs := Configs(RunConfig{Workload: w, Name: "small"}, []Policy{FIFO, policyRandom, policyPackFit}, Seeds(1, 2))
	rs, err := RunAll(context.Background(), cfgs, 2, nil)
	if err != nil {
		t.Fatal(err)
	}
	sums, err := Summarize(rs)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := CompareData(sums, rs, map[string]Metric{"small": WorkloadMetric(w)})
	if err != nil {
		t.Fatal(err)
	}
	var table bytes.Buffer
	if err := WriteTable(&table, sums); err != nil {
		t.Fatal(err)
	}
	if len(ws) != 1 || len(ws[0].Boxes) != 2 {
		t.Fatalf("compare data %+v, want one workload of 2 policies", ws)
	}
	for _, b := range ws[0].Boxes {
		mean := fmt.Sprintf("%+.1f%% ± ", 100*b.Mean)
		span := fmt.Sprintf("[%+.1f%%, %+.1f%%]", 100*b.Min, 100*b.Max)
		found := false
		for _, line := range strings.Split(table.String(), "\n") {
			if f := strings.Fields(line); len(f) > 1 && f[1] == string(b.Policy) {
				found = strings.Contains(line, mean) && strings.Contains(line, span)
			}
		}
		if !found {
			t.Errorf("%s: the table has no row with %q and %q:\n%s", b.Policy, mean, span, table.String())
		}
	}
}

func TestWorkloadMetric(t *testing.T) {
	if got := WorkloadMetric(small(t, 1)); got != metricMakespan {
		t.Errorf("batch: %s, want makespan", got)
	}
	open := small(t, 1)
	open.Arrivals = sim.Arrivals{Mode: sim.ArrivalsPoisson, RatePerHour: 60}
	if got := WorkloadMetric(open); got != metricJCT {
		t.Errorf("Poisson: %s, want mean JCT", got)
	}
}

func TestPolicyColoursDistinct(t *testing.T) {
	seen := map[string]Policy{}
	for _, p := range policies() {
		c := policyColor(p)
		k := fmt.Sprint(c)
		if q, dup := seen[k]; dup {
			t.Errorf("%s and %s share the colour %v", p, q, c)
		}
		seen[k] = p
	}
}
