package bench

import (
	"fmt"
	"image/color"
	"io"
	"os"
	"path/filepath"

	"gonum.org/v1/plot"
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
	heatWidth, heatHeight   = 7 * vg.Inch, 6 * vg.Inch
)

// WriteUsagePNG draws a run's cluster-mean resource usage over time, as
// the paper's Figures 6 and 7: CPU busy, iowait, disk and network
// utilisation per metrics interval, as fractions of capacity.
func WriteUsagePNG(w io.Writer, r Result) error {
	if len(r.Usage) == 0 {
		return fmt.Errorf("%w: %s %s seed %d has no usage series", ErrInvalid, r.Workload, r.Policy, r.Seed)
	}
	p := plot.New()
	p.Title.Text = fmt.Sprintf("%s, %s (seed %d): makespan %.0f min", r.Workload, r.Policy, r.Seed, r.MakespanS/60)
	p.X.Label.Text = "time (min)"
	p.Y.Label.Text = "mean over nodes (fraction)"
	p.Y.Min, p.Y.Max = 0, 1.35 // room for the legend above the data
	p.Add(plotter.NewGrid())
	series := []struct {
		name string
		get  func(UsagePoint) float64
		col  color.RGBA
	}{
		{"CPU", func(u UsagePoint) float64 { return u.CPU }, color.RGBA{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}},
		{"iowait", func(u UsagePoint) float64 { return u.IOWait }, color.RGBA{R: 0xd6, G: 0x27, B: 0x28, A: 0xff}},
		{"disk", func(u UsagePoint) float64 { return u.Disk }, color.RGBA{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}},
		{"network", func(u UsagePoint) float64 { return u.Net }, color.RGBA{R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}},
	}
	for _, s := range series {
		xy := make(plotter.XYs, len(r.Usage))
		for i, u := range r.Usage {
			xy[i].X, xy[i].Y = u.At.Minutes(), s.get(u)
		}
		l, err := plotter.NewLine(xy)
		if err != nil {
			return fmt.Errorf("usage plot %s: %w", s.name, err)
		}
		l.Color = s.col
		l.Width = vg.Points(1)
		p.Add(l)
		p.Legend.Add(s.name, l)
	}
	p.Legend.Top = true
	p.Legend.Left = false
	return writePNG(w, p, usageWidth, usageHeight)
}

// probGrid is the preference probabilities as a heat map grid: column c
// is the queued kind, row r the scheduled (running) kind.
type probGrid struct {
	kinds []string
	p     [][]float64 // p[given][a]
}

func (g probGrid) Dims() (int, int)   { return len(g.kinds), len(g.kinds) }
func (g probGrid) Z(c, r int) float64 { return g.p[r][c] }
func (g probGrid) X(c int) float64    { return float64(c) }
func (g probGrid) Y(r int) float64    { return float64(r) }
func (g probGrid) Min() float64       { return 0 }
func (g probGrid) Max() float64       { return 1 }

// WritePreferencesPNG draws learned preferences as probabilities, as the
// paper's Figure 8: cell (queued a, scheduled a') is π(a | a'), the
// probability of starting a next to a running a'. Each row sums to 1.
func WritePreferencesPNG(w io.Writer, s bandit.Snapshot, title string) error {
	l := bandit.New(s.Config)
	if err := l.Restore(s); err != nil {
		return fmt.Errorf("preferences plot: %w", err)
	}
	kinds := l.Kinds()
	if len(kinds) == 0 {
		return fmt.Errorf("%w: preferences plot: no kinds", ErrInvalid)
	}
	g := probGrid{kinds: kinds, p: make([][]float64, len(kinds))}
	var labels plotter.XYLabels
	for r, given := range kinds {
		g.p[r] = make([]float64, len(kinds))
		for c, a := range kinds {
			v := l.Prob(a, given)
			g.p[r][c] = v
			labels.XYs = append(labels.XYs, plotter.XY{X: float64(c), Y: float64(r)})
			labels.Labels = append(labels.Labels, fmt.Sprintf("%.2f", v))
		}
	}
	cm := moreland.SmoothBlueRed()
	cm.SetMin(0)
	cm.SetMax(1)
	hm := plotter.NewHeatMap(g, cm.Palette(255))
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "queued kind a"
	p.Y.Label.Text = "scheduled kind a'"
	p.Add(hm)
	lab, err := plotter.NewLabels(labels)
	if err != nil {
		return fmt.Errorf("preferences plot: %w", err)
	}
	for i := range lab.TextStyle {
		lab.TextStyle[i].XAlign = draw.XCenter
		lab.TextStyle[i].YAlign = draw.YCenter
	}
	p.Add(lab)
	ticks := make([]plot.Tick, len(kinds))
	for i, k := range kinds {
		ticks[i] = plot.Tick{Value: float64(i), Label: k}
	}
	p.X.Tick.Marker = plot.ConstantTicks(ticks)
	p.Y.Tick.Marker = plot.ConstantTicks(ticks)
	p.X.Min, p.X.Max = -0.5, float64(len(kinds))-0.5
	p.Y.Min, p.Y.Max = -0.5, float64(len(kinds))-0.5
	return writePNG(w, p, heatWidth, heatHeight)
}

// WriteProfilesPNG draws each kind's learned demand per container of the
// four capacities (bars: CPU, disk reads + writes, network in, out, as
// fractions of a node) against its true mean solo profile (black marks),
// the kinds sorted by name.
func WriteProfilesPNG(w io.Writer, s profile.Snapshot, truth profile.Fixed, title string) error {
	m := profile.New(s.Config)
	if err := m.Restore(s); err != nil {
		return fmt.Errorf("profiles plot: %w", err)
	}
	profs := m.Profiles()
	if len(profs) == 0 {
		return fmt.Errorf("%w: profiles plot: no kinds", ErrInvalid)
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
			return fmt.Errorf("profiles plot: %w", err)
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
				return fmt.Errorf("profiles plot: %w", err)
			}
			sc.GlyphStyle.Shape = draw.PyramidGlyph{}
			sc.GlyphStyle.Radius = vg.Points(3)
			p.Add(sc)
			if c == 0 {
				p.Legend.Add("true mean solo", sc)
			}
		}
	}
	names := make([]string, len(profs))
	for i, pr := range profs {
		names[i] = pr.Kind
	}
	p.NominalX(names...)
	p.Legend.Top = true
	p.Legend.Left = true
	p.Y.Min, p.Y.Max = 0, 1.45*p.Y.Max // room for the legend above the bars
	return writePNG(w, p, usageWidth, usageHeight)
}

func writePNG(w io.Writer, p *plot.Plot, width, height vg.Length) error {
	wt, err := p.WriterTo(width, height, "png")
	if err != nil {
		return fmt.Errorf("render png: %w", err)
	}
	if _, err := wt.WriteTo(w); err != nil {
		return fmt.Errorf("write png: %w", err)
	}
	return nil
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
			if err := write(base+"-usage.png", func(w io.Writer) error { return WriteUsagePNG(w, r) }); err != nil {
				return files, err
			}
		}
		if r.Profiles != nil && len(r.Profiles.Kinds) > 0 {
			title := fmt.Sprintf("learned profiles, %s %s seed %d (bars) vs true mean solo (marks)", r.Workload, r.Policy, r.Seed)
			if err := write(base+"-profiles.png", func(w io.Writer) error { return WriteProfilesPNG(w, *r.Profiles, r.TrueProfiles, title) }); err != nil {
				return files, err
			}
		}
		if r.Preferences != nil && len(r.Preferences.Kinds) > 0 {
			title := fmt.Sprintf("π(a | a'), %s %s seed %d (%d observations)", r.Workload, r.Policy, r.Seed, r.Preferences.Observations)
			if err := write(base+"-preferences.png", func(w io.Writer) error { return WritePreferencesPNG(w, *r.Preferences, title) }); err != nil {
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
