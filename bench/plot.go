package bench

import (
	"fmt"
	"image/color"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/font"
	"gonum.org/v1/plot/palette"
	"gonum.org/v1/plot/palette/moreland"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/profile"
)

// Figure sizes.
var (
	usageWidth, usageHeight = 8 * vg.Inch, 3.5 * vg.Inch
	heatWidth, heatHeight   = 8 * vg.Inch, 6.5 * vg.Inch
)

// usageSmoothing is the usage plot's moving average: at least a minute of
// simulated time and at least this many samples.
const (
	usageSmoothingMin     = time.Minute
	usageSmoothingSamples = 5
)

// writeUsagePNG draws a run's cluster-mean resource usage over time, as
// the paper's Figures 6 and 7: CPU busy, iowait, disk and network
// utilisation as fractions of capacity, each line a centred moving mean of
// the metrics intervals over about a minute (usageWindow), the legend
// beside the plot.
func writeUsagePNG(w io.Writer, r Result) error {
	fig, err := usageFigure(r)
	if err != nil {
		return err
	}
	return writeFigurePNG(w, usageWidth, usageHeight, fig.draw)
}

// usageFigure is writeUsagePNG's figure.
func usageFigure(r Result) (*sideLegend, error) {
	if len(r.Usage) == 0 {
		return nil, fmt.Errorf("%w: %s %s seed %d has no usage series", errInvalid, r.Workload, r.Policy, r.Seed)
	}
	step := usageStep(r.Usage)
	window := usageWindow(step)
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, %s (seed %d): makespan %.0f min", r.Workload, r.Policy, r.Seed, r.MakespanS/60)
	p.X.Label.Text = fmt.Sprintf("time (min); each line a centred %s moving mean of %s samples", durationLabel(window), durationLabel(step))
	p.Y.Label.Text = "mean over nodes (fraction)"
	p.X.Min, p.X.Max = 0, max(r.MakespanS/60, (r.Usage[len(r.Usage)-1].At+step).Minutes())
	p.Y.Min, p.Y.Max = 0, 1
	p.Y.Tick.Marker = roundTicks{}
	p.Add(plotter.NewGrid())
	series := []struct {
		name string
		get  func(usagePoint) float64
		col  color.RGBA
	}{
		{"CPU", func(u usagePoint) float64 { return u.CPU }, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"iowait", func(u usagePoint) float64 { return u.IOWait }, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"disk", func(u usagePoint) float64 { return u.Disk }, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
		{"network", func(u usagePoint) float64 { return u.Net }, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
	}
	for _, s := range series {
		xy := movingMean(r.Usage, step, window, s.get)
		l, err := plotter.NewLine(xy)
		if err != nil {
			return nil, fmt.Errorf("usage plot %s: %w", s.name, err)
		}
		l.Color = s.col
		l.Width = vg.Points(1.5)
		p.Add(l)
		p.Legend.Add(s.name, l)
		for _, pt := range xy {
			p.Y.Max = max(p.Y.Max, pt.Y) // a fraction above 1 stays visible
		}
	}
	p.Y.Min = 0
	p.Y.Max *= 1.02 // lines at 1 clear of the top
	return newSideLegend(p), nil
}

// usageStep is the metrics interval of a usage series: the smallest gap
// between consecutive samples (intervals where no node was sampled are
// left out of the series, so a gap can be a multiple). A single sample
// counts as a minute.
func usageStep(us []usagePoint) time.Duration {
	step := time.Duration(0)
	for i := 1; i < len(us); i++ {
		if d := us[i].At - us[i-1].At; d > 0 && (step == 0 || d < step) {
			step = d
		}
	}
	if step == 0 {
		return time.Minute
	}
	return step
}

// usageWindow is the moving mean's width for samples step apart: about a
// minute of simulated time, and never fewer than usageSmoothingSamples
// samples.
func usageWindow(step time.Duration) time.Duration {
	return max(usageSmoothingMin, usageSmoothingSamples*step)
}

// movingMean is the centred moving mean of get over the samples: for each
// sample, the mean of the samples whose interval starts in [At − window/2,
// At + window/2), drawn at the middle of those samples' intervals (a
// sample covers [At, At+step)). Near the ends the window holds fewer
// samples and its point moves inwards.
func movingMean(us []usagePoint, step, window time.Duration, get func(usagePoint) float64) plotter.XYs {
	out := make(plotter.XYs, len(us))
	lo, hi := 0, 0 // us[lo:hi] is the window
	for i, u := range us {
		for hi < len(us) && us[hi].At < u.At+window/2 {
			hi++
		}
		for us[lo].At < u.At-window/2 {
			lo++
		}
		var sum, at float64 // summed afresh: no drift from subtracting
		for _, v := range us[lo:hi] {
			sum += get(v)
			at += (v.At + step/2).Minutes()
		}
		n := float64(hi - lo)
		out[i] = plotter.XY{X: at / n, Y: sum / n}
	}
	return out
}

// durationLabel writes d as "1-min", "90-s" or "10-s".
func durationLabel(d time.Duration) string {
	if d >= time.Minute && d%time.Minute == 0 {
		return fmt.Sprintf("%d-min", d/time.Minute)
	}
	return fmt.Sprintf("%g-s", d.Seconds())
}

// The preferences figure's cell colours: a sequential colour map on the
// fixed range [0, 1] for π, and a neutral grey, outside the map, for a row
// that is still its prior.
var (
	prefPrior = color.RGBA{R: 0x9e, G: 0x9e, B: 0x9e, A: 0xff}
	// prefControls is ColorBrewer's YlGnBu, dark to light.
	prefControls = []uint32{0x081d58, 0x253494, 0x225ea8, 0x1d91c0, 0x41b6c4, 0x7fcdbb, 0xc7e9b4, 0xedf8b1, 0xffffd9}
)

// prefPaletteSize is the number of colours the heat map picks from.
const prefPaletteSize = 256

// prefColorMap is π's colour map: light yellow at 0 through green to dark
// blue at 1, interpolated at even steps of luminance.
func prefColorMap() (palette.ColorMap, error) {
	cs := make([]color.Color, len(prefControls))
	for i, h := range prefControls {
		cs[i] = color.RGBA{R: uint8(h >> 16), G: uint8(h >> 8), B: uint8(h), A: 0xff}
	}
	cm, err := moreland.NewLuminance(cs)
	if err != nil {
		return nil, fmt.Errorf("preferences colour map: %w", err)
	}
	cm.SetMin(0)
	cm.SetMax(1)
	return palette.Reverse(cm), nil
}

// prefGrid lays the preference matrix out for the heat map. Matrix row i
// is the running kind Kinds[i], column j the queued kind Kinds[j]:
// pi[i][j] = π(Kinds[j] | Kinds[i]). The heat map draws grid row r at
// height r, bottom up, so matrix row i is grid row n−1−i and the first
// kind is the top row, as a table reads. A row with no observation is NaN,
// which the heat map draws in prefPrior.
type prefGrid struct {
	pi       [][]float64
	observed []bool // observed[i]: row i has at least one observation
}

func (g prefGrid) Dims() (c, r int) { return len(g.pi), len(g.pi) }
func (g prefGrid) X(c int) float64  { return float64(c) }
func (g prefGrid) Y(r int) float64  { return float64(r) }

// Z is the value of column c in grid row r: π of queued kind c beside
// running kind n−1−r, or NaN for a row without observations.
func (g prefGrid) Z(c, r int) float64 {
	i := g.matrixRow(r)
	if !g.observed[i] {
		return math.NaN()
	}
	return g.pi[i][c]
}

// matrixRow is the matrix row (running kind) drawn in grid row r.
func (g prefGrid) matrixRow(r int) int { return len(g.pi) - 1 - r }

// cellColor is the colour the heat map fills a cell of value v with, from
// the colours pal spread evenly over [0, 1] (HeatMap's own mapping); NaN
// is prefPrior.
func cellColor(pal []color.Color, v float64) color.Color {
	if math.IsNaN(v) {
		return prefPrior
	}
	return pal[int(v*float64(len(pal)-1)+0.5)]
}

// textColorOn is black on a light background and white on a dark one (by
// relative luminance), so a cell's text stays readable.
func textColorOn(bg color.Color) color.Color {
	r, g, b, _ := bg.RGBA()
	lum := (0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)) / 0xffff
	if lum < 0.45 {
		return color.White
	}
	return color.Black
}

// prefFigure is the preferences figure: the matrix, the colour bar beside
// it and the note on grey cells below the bar.
type prefFigure struct {
	grid   prefGrid
	matrix *plot.Plot
	bar    *plot.Plot
	note   plot.Legend
}

// prefSide is the width of the column right of the matrix that holds the
// colour bar and the note.
var prefSide = 1.6 * vg.Inch

// newPrefFigure lays out the learner's state s as π(queued | running):
// rows the running kind, columns the queued kind, both in the learner's
// kind order, each cell π to two decimals and the pair's observations n.
func newPrefFigure(s bandit.Snapshot, title string) (*prefFigure, error) {
	l := bandit.New(s.Config)
	if err := l.Restore(s); err != nil {
		return nil, fmt.Errorf("preferences plot: %w", err)
	}
	s = l.Snapshot() // the learner's kinds and its (clipped) preferences
	n := len(s.Kinds)
	if n == 0 {
		return nil, fmt.Errorf("%w: preferences plot: no kinds", errInvalid)
	}
	cm, err := prefColorMap()
	if err != nil {
		return nil, err
	}
	f := &prefFigure{grid: prefGrid{pi: s.Pi(), observed: make([]bool, n)}}
	for i := range n {
		f.grid.observed[i] = s.RowObservations[i] > 0
	}
	hm := plotter.NewHeatMap(f.grid, cm.Palette(prefPaletteSize))
	hm.Min, hm.Max, hm.NaN = 0, 1, prefPrior
	pal := hm.Palette.Colors()
	f.matrix = plot.New()
	p := f.matrix
	p.Title.Text = title + "\ncell: π(queued | running) and n, the pair's observations; each row sums to 1"
	p.X.Label.Text = "queued kind"
	p.Y.Label.Text = "running kind"
	p.Add(hm)
	lab, err := prefLabels(f.grid, s.PairObservations, pal, n)
	if err != nil {
		return nil, err
	}
	p.Add(lab)
	xt, yt := make([]plot.Tick, n), make([]plot.Tick, n)
	for i, k := range s.Kinds {
		xt[i] = plot.Tick{Value: float64(i), Label: k}
		yt[i] = plot.Tick{Value: float64(f.grid.matrixRow(i)), Label: k}
	}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.ConstantTicks(xt), plot.ConstantTicks(yt)
	if n > 5 {
		p.X.Tick.Label.Rotation = math.Pi / 6
		p.X.Tick.Label.XAlign, p.X.Tick.Label.YAlign = draw.XRight, draw.YTop
	}
	p.X.Min, p.X.Max = -0.5, float64(n)-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(n)-0.5

	f.bar = plot.New()
	f.bar.Add(&plotter.ColorBar{ColorMap: cm, Vertical: true})
	f.bar.HideX()
	f.bar.Y.Label.Text = "π"
	f.bar.Y.Min, f.bar.Y.Max = 0, 1
	f.note = plot.NewLegend()
	f.note.Top, f.note.Left = true, true
	f.note.Add("grey: prior,\nno observation", swatch(prefPrior))
	return f, nil
}

// prefLabels writes each cell's π and observation count at its centre, in
// a colour readable on the cell's fill.
func prefLabels(g prefGrid, pairs [][]int64, pal []color.Color, n int) (*plotter.Labels, error) {
	var xyl plotter.XYLabels
	var fills []color.Color
	for r := range n {
		i := g.matrixRow(r)
		for c := range n {
			xyl.XYs = append(xyl.XYs, plotter.XY{X: g.X(c), Y: g.Y(r)})
			xyl.Labels = append(xyl.Labels, fmt.Sprintf("%.2f\nn=%d", g.pi[i][c], pairs[i][c]))
			fills = append(fills, cellColor(pal, g.Z(c, r)))
		}
	}
	lab, err := plotter.NewLabels(xyl)
	if err != nil {
		return nil, fmt.Errorf("preferences plot: %w", err)
	}
	size := font.Length(10)
	if n > 5 {
		size = 8
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign, lab.TextStyle[i].YAlign = draw.XCenter, draw.YCenter
		lab.TextStyle[i].Color = textColorOn(fills[i])
		lab.TextStyle[i].Font.Size = size
	}
	return lab, nil
}

// canvases splits c into the matrix's area and, right of it, the colour
// bar's (level with the top of the matrix's data area, 65 % of its
// height) and the note's (below the bar).
func (f *prefFigure) canvases(c draw.Canvas) (matrix, bar, note draw.Canvas) {
	width := c.Max.X - c.Min.X
	matrix = draw.Crop(c, 0, -prefSide, 0, 0)
	data := f.matrix.DataCanvas(matrix)
	side := draw.Crop(c, width-prefSide+vg.Points(12), 0, 0, 0)
	h := data.Max.Y - data.Min.Y
	bar, note = side, side
	bar.Max.X = bar.Min.X + 0.8*vg.Inch
	bar.Min.Y, bar.Max.Y = data.Max.Y-0.65*h, data.Max.Y
	note.Min.Y, note.Max.Y = data.Min.Y, data.Max.Y-0.65*h-vg.Points(12)
	return matrix, bar, note
}

func (f *prefFigure) draw(c draw.Canvas) {
	m, b, n := f.canvases(c)
	f.matrix.Draw(m)
	f.bar.Draw(b)
	f.note.Draw(n)
}

// writePreferencesPNG draws learned preferences as probabilities, as the
// paper's Figure 8 with the rows and columns named as everywhere else:
// row i is the running kind, column j the queued kind, both in the
// learner's kind order (the first kind's row at the top), and cell (i, j)
// is π(queued j | running i), the probability of starting j next to a
// running i, with n, the observations of the pair. Each row sums to 1. A
// sequential colour map on the fixed range [0, 1] with its colour bar; a
// row without any observation (still its prior) is grey.
func writePreferencesPNG(w io.Writer, s bandit.Snapshot, title string) error {
	f, err := newPrefFigure(s, title)
	if err != nil {
		return err
	}
	return writeFigurePNG(w, heatWidth, heatHeight, f.draw)
}

// writeProfilesPNG draws each kind's learned demand per container of the
// four capacities (bars: CPU, disk reads + writes, network in, out, as
// fractions of a node) against its true mean solo profile (black marks),
// the kinds sorted by name, the legend beside the plot.
func writeProfilesPNG(w io.Writer, s profile.Snapshot, truth profile.Fixed, title string) error {
	fig, err := profilesFigure(s, truth, title)
	if err != nil {
		return err
	}
	return writeFigurePNG(w, usageWidth, usageHeight, fig.draw)
}

// profilesFigure is writeProfilesPNG's figure.
func profilesFigure(s profile.Snapshot, truth profile.Fixed, title string) (*sideLegend, error) {
	m := profile.New(s.Config)
	if err := m.Restore(s); err != nil {
		return nil, fmt.Errorf("profiles plot: %w", err)
	}
	profs := m.Profiles()
	if len(profs) == 0 {
		return nil, fmt.Errorf("%w: profiles plot: no kinds", errInvalid)
	}
	p := plot.New()
	p.Title.Text = title
	p.Y.Label.Text = "demand per container (fraction of a node)"
	p.Add(plotter.NewGrid())
	caps := []struct {
		name string
		get  func(profile.Vector) float64
		col  color.RGBA
	}{
		{"CPU", func(v profile.Vector) float64 { return v[profile.CPU] }, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"disk", func(v profile.Vector) float64 { return v[profile.DiskRead] + v[profile.DiskWrite] }, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
		{"net in", func(v profile.Vector) float64 { return v[profile.NetIn] }, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
		{"net out", func(v profile.Vector) float64 { return v[profile.NetOut] }, color.RGBA{R: 0x94, G: 0x67, B: 0xbd, A: 0xff}},
	}
	width := vg.Points(10)
	var truthMarks plot.Thumbnailer
	for c, cp := range caps {
		learned := make(plotter.Values, len(profs))
		marks := make(plotter.XYs, 0, len(profs))
		for i, pr := range profs {
			learned[i] = cp.get(pr.Demand)
			if t, ok := truth[pr.Kind]; ok {
				marks = append(marks, plotter.XY{X: float64(i) + 0.2*(float64(c)-1.5), Y: cp.get(t)})
			}
		}
		bars, err := plotter.NewBarChart(learned, width)
		if err != nil {
			return nil, fmt.Errorf("profiles plot: %w", err)
		}
		bars.Color = cp.col
		bars.LineStyle.Width = 0
		shift := 0.2 * (float64(c) - 1.5) // four bars around each kind's tick
		bars.XMin = shift
		p.Add(bars)
		p.Legend.Add(cp.name, bars)
		if len(marks) > 0 {
			sc, err := plotter.NewScatter(marks)
			if err != nil {
				return nil, fmt.Errorf("profiles plot: %w", err)
			}
			sc.GlyphStyle.Shape = draw.PyramidGlyph{}
			sc.GlyphStyle.Radius = vg.Points(3)
			p.Add(sc)
			truthMarks = sc
		}
	}
	if truthMarks != nil {
		p.Legend.Add("true mean solo", truthMarks)
	}
	names := make([]string, len(profs))
	for i, pr := range profs {
		names[i] = pr.Kind
	}
	p.NominalX(names...)
	p.Y.Min = 0
	p.Y.Max *= 1.05 // the tallest bar clear of the top
	p.Y.Tick.Marker = roundTicks{}
	return newSideLegend(p), nil
}

// writeFigurePNG renders a width × height figure drawn by fig as PNG.
func writeFigurePNG(w io.Writer, width, height vg.Length, fig func(draw.Canvas)) error {
	c, err := draw.NewFormattedCanvas(width, height, "png")
	if err != nil {
		return fmt.Errorf("render png: %w", err)
	}
	fig(draw.New(c))
	if _, err := c.WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
}

// legendGap is the space either side of a legend drawn beside a plot.
var legendGap = vg.Points(10)

// sideLegend draws a plot with its legend in a column right of the plot,
// its top level with the data area's, so that no entry covers data, and
// the plot's title centred over both.
type sideLegend struct {
	p      *plot.Plot // its title and legend are sideLegend's to draw
	title  string
	legend plot.Legend
}

// newSideLegend takes p's title and legend out of p, to draw them itself.
func newSideLegend(p *plot.Plot) *sideLegend {
	s := &sideLegend{p: p, title: p.Title.Text, legend: p.Legend}
	p.Title.Text, p.Legend = "", plot.NewLegend()
	s.legend.Top, s.legend.Left = true, true
	return s
}

// canvases splits c below the title into the plot's canvas and the
// legend's column, level with the plot's data area.
func (s *sideLegend) canvases(c draw.Canvas) (plotC, legendC draw.Canvas) {
	if s.title != "" {
		c.Max.Y -= s.p.Title.TextStyle.Rectangle(s.title).Size().Y + s.p.Title.Padding
	}
	r := s.legend.Rectangle(c)
	side := r.Max.X - r.Min.X + 2*legendGap
	plotC = draw.Crop(c, 0, -side, 0, 0)
	data := s.p.DataCanvas(plotC)
	legendC = draw.Crop(c, c.Max.X-c.Min.X-side+legendGap, 0, 0, 0)
	legendC.Min.Y, legendC.Max.Y = data.Min.Y, data.Max.Y
	return plotC, legendC
}

func (s *sideLegend) draw(c draw.Canvas) {
	if s.title != "" { // as plot.Draw does, over the whole width
		sty := s.p.Title.TextStyle
		c.FillText(sty, vg.Point{X: c.Center().X, Y: c.Max.Y + sty.FontExtents().Descent}, s.title)
	}
	pc, lc := s.canvases(c)
	s.p.Draw(pc)
	s.legend.Draw(lc)
}

// thumbFunc is a legend thumbnail drawn by a function.
type thumbFunc func(c *draw.Canvas)

func (f thumbFunc) Thumbnail(c *draw.Canvas) { f(c) }

// swatch is a legend thumbnail filled with col.
func swatch(col color.Color) plot.Thumbnailer {
	return thumbFunc(func(c *draw.Canvas) {
		c.FillPolygon(col, []vg.Point{c.Min, {X: c.Max.X, Y: c.Min.Y}, c.Max, {X: c.Min.X, Y: c.Max.Y}})
	})
}

// WritePlots writes, into dir, for each workload and policy the usage plot
// of its lowest seed's run (<workload>-<policy>-usage.png) and, for
// policies that learn, the final profiles and preferences of that run
// (<workload>-<policy>-profiles.png, -preferences.png). It returns the
// files written.
func WritePlots(dir string, results []Result) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("plots: %w", err)
	}
	type key struct {
		wl string
		p  Policy
	}
	first := map[key]Result{}
	var order []key
	for _, r := range results {
		k := key{r.Workload, r.Policy}
		f, ok := first[k]
		if !ok {
			order = append(order, k)
		}
		if !ok || r.Seed < f.Seed {
			first[k] = r
		}
	}
	var files []string
	write := func(name string, f func(io.Writer) error) error {
		path := filepath.Join(dir, name)
		fh, err := os.Create(path)
		if err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		if err := f(fh); err != nil {
			fh.Close()
			return fmt.Errorf("plots: %s: %w", name, err)
		}
		if err := fh.Close(); err != nil {
			return fmt.Errorf("plots: %w", err)
		}
		files = append(files, path)
		return nil
	}
	for _, k := range order {
		r := first[k]
		base := fileSafe(k.wl) + "-" + fileSafe(string(k.p))
		if len(r.Usage) > 0 {
			if err := write(base+"-usage.png", func(w io.Writer) error { return writeUsagePNG(w, r) }); err != nil {
				return files, err
			}
		}
		if r.Profiles != nil && len(r.Profiles.Kinds) > 0 {
			title := fmt.Sprintf("learned profiles, %s %s seed %d (bars) vs true mean solo (marks)", r.Workload, r.Policy, r.Seed)
			if err := write(base+"-profiles.png", func(w io.Writer) error { return writeProfilesPNG(w, *r.Profiles, r.TrueProfiles, title) }); err != nil {
				return files, err
			}
		}
		if r.Preferences != nil && len(r.Preferences.Kinds) > 0 {
			title := fmt.Sprintf("learned preferences, %s %s seed %d (%d observations)", r.Workload, r.Policy, r.Seed, r.Preferences.Observations)
			if err := write(base+"-preferences.png", func(w io.Writer) error { return writePreferencesPNG(w, *r.Preferences, title) }); err != nil {
				return files, err
			}
		}
	}
	return files, nil
}

// fileSafe keeps letters, digits, '.', '_' and '-' of s.
func fileSafe(s string) string {
	b := []byte(s)
	for i, c := range b {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			b[i] = '_'
		}
	}
	return string(b)
}

// roundTicks labels 1, 2 or 5 × a power of ten, at most six labels over
// the range, with an unlabelled tick halfway between.
type roundTicks struct{}

func (roundTicks) Ticks(lo, hi float64) []plot.Tick {
	if !(hi > lo) || math.IsInf(hi-lo, 0) {
		return plot.DefaultTicks{}.Ticks(lo, hi)
	}
	mag := math.Pow(10, math.Floor(math.Log10((hi-lo)/6)))
	step := 10 * mag
	for _, m := range []float64{1, 2, 5} {
		if (hi-lo)/(m*mag) <= 6 {
			step = m * mag
			break
		}
	}
	prec := max(0, -int(math.Floor(math.Log10(step)+1e-9)))
	var ts []plot.Tick
	for k := math.Ceil(2 * lo / step); k <= math.Floor(2*hi/step); k++ {
		t := plot.Tick{Value: k * step / 2}
		if t.Value == 0 {
			t.Value = 0 // not −0, which would print "-0"
		}
		if math.Mod(k, 2) == 0 {
			t.Label = strconv.FormatFloat(t.Value, 'f', prec, 64)
		}
		ts = append(ts, t)
	}
	return ts
}
