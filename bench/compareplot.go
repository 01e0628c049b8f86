package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"slices"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/colocd/colocd/sim"
)

// Metric is what a comparison judges a workload by.
type Metric string

// The metrics.
const (
	metricMakespan Metric = "makespan"
	metricJCT      Metric = "mean JCT"
)

// WorkloadMetric is w's metric: mean JCT when its jobs arrive as a Poisson
// process (an open system: its makespan is mostly the last arrival),
// makespan otherwise, as the rollout's cost and the studies judge it.
func WorkloadMetric(w *sim.Workload) Metric {
	if w.Arrivals.Mode == sim.ArrivalsPoisson {
		return metricJCT
	}
	return metricMakespan
}

// Change is s's change against fifo in m: the table's "vs fifo" column
// for m.
func (m Metric) Change(s Summary) stat {
	if m == metricJCT {
		return s.JCTChange
	}
	return s.MakespanChange
}

// policyBox is one policy's change against fifo on one workload in the
// workload's metric, (x − fifo)/fifo on each seed, as the comparison
// figure draws it. Mean, Min and Max are the Summary's (the table's "vs
// fifo" and [min, max]); the quartiles are of Changes (linear
// interpolation between order statistics).
type policyBox struct {
	Policy         Policy
	Seeds          []uint64
	Changes        []float64 // per seed, in the order of Seeds
	Mean, Min, Max float64
	Q1, Median, Q3 float64
}

// compareWorkload is one workload's comparison: a box per policy other
// than fifo, in the order of the summaries (the table's).
type compareWorkload struct {
	Workload string
	Metric   Metric
	Boxes    []policyBox
}

// CompareData is the comparison figure's data: for each workload of sums
// (in their order) and each policy but fifo, its change against fifo in
// the workload's metric (metrics, by workload name). The mean and the
// extremes are the summaries' own; the per-seed changes, for the
// quartiles, come from Summarize over each seed's results, the same
// computation, and must agree with them. It reads nothing but what the
// comparison measured and runs nothing.
func CompareData(sums []Summary, results []Result, metrics map[string]Metric) ([]compareWorkload, error) {
	perSeed, err := seedSummaries(results)
	if err != nil {
		return nil, err
	}
	var out []compareWorkload
	for _, s := range sums {
		m, ok := metrics[s.Workload]
		if !ok || (m != metricMakespan && m != metricJCT) {
			return nil, fmt.Errorf("%w: compare plot: workload %s has no metric (makespan or mean JCT)", errInvalid, s.Workload)
		}
		i := slices.IndexFunc(out, func(w compareWorkload) bool { return w.Workload == s.Workload })
		if i < 0 {
			out = append(out, compareWorkload{Workload: s.Workload, Metric: m})
			i = len(out) - 1
		}
		if s.Policy == FIFO {
			continue
		}
		b, err := compareBox(s, m, perSeed)
		if err != nil {
			return nil, err
		}
		out[i].Boxes = append(out[i].Boxes, b)
	}
	return out, nil
}

// seedKey names one run.
type seedKey struct {
	workload string
	policy   Policy
	seed     uint64
}

// seedSummaries summarises each workload's seeds one at a time: the
// change of every policy against fifo on that seed alone.
func seedSummaries(results []Result) (map[seedKey]Summary, error) {
	type group struct {
		workload string
		seed     uint64
	}
	groups := map[group][]Result{}
	var order []group
	for _, r := range results {
		g := group{r.Workload, r.Seed}
		if _, ok := groups[g]; !ok {
			order = append(order, g)
		}
		groups[g] = append(groups[g], r)
	}
	out := map[seedKey]Summary{}
	for _, g := range order {
		sums, err := Summarize(groups[g])
		if err != nil {
			return nil, fmt.Errorf("compare plot: %w", err)
		}
		for _, s := range sums {
			out[seedKey{s.Workload, s.Policy, g.seed}] = s
		}
	}
	return out, nil
}

// compareBox is s's box in metric m, its per-seed changes from perSeed.
func compareBox(s Summary, m Metric, perSeed map[seedKey]Summary) (policyBox, error) {
	st := m.Change(s)
	b := policyBox{Policy: s.Policy, Seeds: slices.Clone(s.Seeds), Mean: st.Mean, Min: st.Min, Max: st.Max}
	for _, seed := range s.Seeds {
		one, ok := perSeed[seedKey{s.Workload, s.Policy, seed}]
		if !ok {
			return policyBox{}, fmt.Errorf("%w: compare plot: %s %s seed %d is summarised but has no result", errInvalid, s.Workload, s.Policy, seed)
		}
		b.Changes = append(b.Changes, m.Change(one).Mean)
	}
	if got := NewStat(b.Changes); got.N != st.N || got.Mean != st.Mean || got.Min != st.Min || got.Max != st.Max {
		return policyBox{}, fmt.Errorf("%w: compare plot: %s %s: the results (mean %g, [%g, %g]) disagree with the summary (mean %g, [%g, %g])",
			errInvalid, s.Workload, s.Policy, got.Mean, got.Min, got.Max, st.Mean, st.Min, st.Max)
	}
	sorted := slices.Sorted(slices.Values(b.Changes))
	b.Q1, b.Median, b.Q3 = quantile(sorted, 0.25), quantile(sorted, 0.5), quantile(sorted, 0.75)
	return b, nil
}

// quantile is the p-quantile of sorted by linear interpolation between
// order statistics (R's type 7, NumPy's default); NaN for no values.
func quantile(sorted []float64, p float64) float64 {
	if len(sorted) == 0 {
		return math.NaN()
	}
	h := p * float64(len(sorted)-1)
	lo := int(math.Floor(h))
	if lo+1 >= len(sorted) {
		return sorted[len(sorted)-1]
	}
	return sorted[lo] + (h-float64(lo))*(sorted[lo+1]-sorted[lo])
}

// policyColor is each policy's colour in the comparison figure, the same
// in every figure: colocd's own in reds and purples, the offline peers in
// blues and greens, the references in greys and browns.
func policyColor(p Policy) color.RGBA {
	hex := map[Policy]uint32{
		FIFO: 0x7f7f7f, policyRandom: 0xbcbd22, policyPaper: 0xff7f0e,
		policyRA: 0xd62728, policyRAPressure: 0xff9896, policyRAPlan: 0x8b0000, policyRAWarm: 0x9467bd, policyRAProfileTrue: 0xc5b0d5,
		policyPackFit: 0x1f77b4, policyAlternate: 0x17becf, policyTetris: 0x2ca02c,
		policyDRF: 0x8c564b, policyCurves: 0xc49c94, policyRACurves: 0xe377c2,
		policyPairwise: 0x98df8a, policyOracle: 0x393939, policyRollout: 0xa0a0a0, policyRolloutForesight: 0x6b4f3a, policyBound: 0xdbdb8d,
	}[p]
	return color.RGBA{R: uint8(hex >> 16), G: uint8(hex >> 8), B: uint8(hex), A: 0xff}
}

// tint is c mixed halfway with white: a bar's fill, light enough for the
// black marks on it.
func tint(c color.RGBA) color.RGBA {
	mix := func(v uint8) uint8 { return uint8((int(v) + 0xff) / 2) }
	return color.RGBA{R: mix(c.R), G: mix(c.G), B: mix(c.B), A: 0xff}
}

// The comparison figure's marks.
var (
	compareWhisker = draw.LineStyle{Color: color.Black, Width: vg.Points(1)}
	compareIQR     = draw.LineStyle{Color: color.Black, Width: vg.Points(4)}
	compareZero    = draw.LineStyle{Color: color.Black, Width: vg.Points(1.2)}
	compareMean    = draw.GlyphStyle{Color: color.White, Radius: vg.Points(3), Shape: draw.CircleGlyph{}}
	compareMeanRim = draw.GlyphStyle{Color: color.Black, Radius: vg.Points(3), Shape: draw.RingGlyph{}}
)

// compareBars draws the boxes of every workload, grouped by workload on
// the X axis (workload g around x = g), each policy in its own slot of
// every group.
type compareBars struct {
	ws    []compareWorkload
	slots []Policy
}

// at is the centre and half width of policy p's bar in group g.
func (b compareBars) at(g int, p Policy) (x, half float64) {
	w := 0.8 / float64(len(b.slots))
	return float64(g) - 0.4 + (float64(slices.Index(b.slots, p))+0.5)*w, 0.35 * w
}

func (b compareBars) DataRange() (xmin, xmax, ymin, ymax float64) {
	for _, w := range b.ws {
		for _, box := range w.Boxes {
			ymin, ymax = min(ymin, 100*box.Min), max(ymax, 100*box.Max)
		}
	}
	return -0.5, float64(len(b.ws)) - 0.5, ymin, ymax
}

func (b compareBars) Plot(c draw.Canvas, p *plot.Plot) {
	trX, trY := p.Transforms(&c)
	zero := trY(0)
	for g, w := range b.ws { // bars to the median, under the rest
		for _, box := range w.Boxes {
			x, h := b.at(g, box.Policy)
			l, r, top := trX(x-h), trX(x+h), trY(100*box.Median)
			pts := []vg.Point{{X: l, Y: zero}, {X: r, Y: zero}, {X: r, Y: top}, {X: l, Y: top}}
			c.FillPolygon(tint(policyColor(box.Policy)), pts)
			c.StrokeLines(draw.LineStyle{Color: policyColor(box.Policy), Width: vg.Points(1)}, append(pts, pts[0]))
		}
	}
	c.StrokeLine2(compareZero, c.Min.X, zero, c.Max.X, zero)
	for g, w := range b.ws {
		for _, box := range w.Boxes {
			x, h := b.at(g, box.Policy)
			xc, cap := trX(x), (trX(x+h)-trX(x-h))/4
			lo, hi := trY(100*box.Min), trY(100*box.Max)
			c.StrokeLine2(compareWhisker, xc, lo, xc, hi)
			c.StrokeLine2(compareWhisker, xc-cap, lo, xc+cap, lo)
			c.StrokeLine2(compareWhisker, xc-cap, hi, xc+cap, hi)
			c.StrokeLine2(compareIQR, xc, trY(100*box.Q1), xc, trY(100*box.Q3))
			pt := vg.Point{X: xc, Y: trY(100 * box.Mean)}
			c.DrawGlyph(compareMean, pt)
			c.DrawGlyph(compareMeanRim, pt)
		}
	}
}

// WriteComparePNG draws the policy comparison: for each workload (side by
// side on the X axis) and each policy but fifo, the change of the
// workload's metric against fifo in per cent (lower is better), a bar to
// the median over seeds, a thick line over the interquartile range,
// whiskers from the best to the worst seed and a circle at the mean (the
// table's "vs fifo"); each policy in a fixed colour, the legend beside the
// plot, a line at zero. ws is CompareData's.
func WriteComparePNG(w io.Writer, ws []compareWorkload) error {
	fig, width, err := compareFigure(ws)
	if err != nil {
		return err
	}
	return writeFigurePNG(w, width, compareHeight, fig.draw)
}

// compareHeight is the comparison figure's height; its width grows with
// the workloads and policies.
var compareHeight = 4.5 * vg.Inch

// compareFigure is WriteComparePNG's figure and its width.
func compareFigure(ws []compareWorkload) (*sideLegend, vg.Length, error) {
	b := compareBars{ws: ws}
	var seeds []uint64
	for _, wl := range ws {
		for _, box := range wl.Boxes {
			if !slices.Contains(b.slots, box.Policy) {
				b.slots = append(b.slots, box.Policy)
			}
			for _, s := range box.Seeds {
				if !slices.Contains(seeds, s) {
					seeds = append(seeds, s)
				}
			}
		}
	}
	if len(b.slots) == 0 {
		return nil, 0, fmt.Errorf("%w: compare plot: no policy besides fifo", errInvalid)
	}
	slices.SortFunc(b.slots, func(x, y Policy) int { return slices.Index(policies(), x) - slices.Index(policies(), y) })
	p := plot.New()
	p.Title.Text = fmt.Sprintf("each policy against FIFO on the same seeds (%s)\nbars: median over seeds; thick lines: interquartile range; whiskers: min–max; circles: mean", seedRange(seeds))
	p.Y.Label.Text = "change vs FIFO, % (lower is better)"
	p.Y.Tick.Marker = roundTicks{}
	grid := plotter.NewGrid()
	grid.Vertical.Color = nil
	p.Add(grid, b)
	names := make([]string, len(ws))
	for i, wl := range ws {
		names[i] = wl.Workload + "\n" + string(wl.Metric)
	}
	p.NominalX(names...)
	p.X.Min, p.X.Max = -0.5, float64(len(ws))-0.5
	pad := 0.06 * (p.Y.Max - p.Y.Min)
	p.Y.Min, p.Y.Max = p.Y.Min-pad, p.Y.Max+pad
	for _, pol := range b.slots {
		p.Legend.Add(string(pol), barThumb(policyColor(pol)))
	}
	p.Legend.Padding = vg.Points(3)
	p.Legend.Add(" ") // a gap between the policies and the marks
	p.Legend.Add("median", barThumb(color.RGBA{R: 0x60, G: 0x60, B: 0x60, A: 0xff}))
	p.Legend.Add("interquartile range", vertThumb(compareIQR, false))
	p.Legend.Add("min–max", vertThumb(compareWhisker, true))
	p.Legend.Add("mean", thumbFunc(func(c *draw.Canvas) {
		c.DrawGlyph(compareMean, c.Center())
		c.DrawGlyph(compareMeanRim, c.Center())
	}))
	width := max(8*vg.Inch, 2.5*vg.Inch+vg.Length(len(ws))*(vg.Length(len(b.slots))*0.3*vg.Inch+0.5*vg.Inch))
	return newSideLegend(p), width, nil
}

// barThumb is a policy's legend thumbnail: its bar's fill and outline.
func barThumb(col color.RGBA) plot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) {
		pts := []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}}
		c.FillPolygon(tint(col), pts)
		c.StrokeLines(draw.LineStyle{Color: col, Width: vg.Points(1)}, append(pts, pts[0]))
	})
}

// vertThumb is a vertical line across the thumbnail, with caps for a
// whisker.
func vertThumb(sty draw.LineStyle, caps bool) plot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) {
		x, inset := c.Center().X, (c.Max.Y-c.Min.Y)/8
		lo, hi := c.Min.Y+inset, c.Max.Y-inset
		c.StrokeLine2(sty, x, lo, x, hi)
		if caps {
			w := (c.Max.X - c.Min.X) / 4
			c.StrokeLine2(sty, x-w, lo, x+w, lo)
			c.StrokeLine2(sty, x-w, hi, x+w, hi)
		}
	})
}

// seedRange writes seeds as "seeds 1–5" when consecutive, "3 seeds"
// otherwise.
func seedRange(seeds []uint64) string {
	s := slices.Sorted(slices.Values(seeds))
	switch {
	case len(s) == 0:
		return "no seeds"
	case len(s) == 1:
		return fmt.Sprintf("seed %d", s[0])
	case s[len(s)-1]-s[0] == uint64(len(s)-1):
		return fmt.Sprintf("%d seeds, %d–%d", len(s), s[0], s[len(s)-1])
	}
	parts := make([]string, len(s))
	for i, v := range s {
		parts[i] = fmt.Sprint(v)
	}
	return fmt.Sprintf("%d seeds: %s", len(s), strings.Join(parts, ", "))
}
