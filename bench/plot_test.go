package bench

import (
	"bytes"
	"image"
	"image/color"
	"image/png"
	"math"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"gonum.org/v1/plot"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"

	"github.com/colocd/colocd/bandit"
)

// prefSnapshot is a learner over cpu, disk and net (in that order) that
// observed starts beside a running cpu and a running net, never beside a
// running disk: disk's row is still its prior.
func prefSnapshot(tb testing.TB) bandit.Snapshot {
	tb.Helper()
	l := bandit.New(bandit.DefaultConfig())
	for _, k := range []string{"cpu", "disk", "net"} {
		l.Add(k)
	}
	for range 20 {
		l.Update("disk", "cpu", 2)
		l.Update("cpu", "cpu", -2)
	}
	l.Update("net", "net", 1)
	s := l.Snapshot()
	if s.RowObservations[0] == 0 || s.RowObservations[1] != 0 || s.RowObservations[2] == 0 {
		tb.Fatalf("row observations %v, want cpu and net observed, disk not", s.RowObservations)
	}
	return s
}

// decodePNG decodes b and checks its size in pixels for a w × h figure at
// vgimg's default resolution.
func decodePNG(tb testing.TB, b []byte, w, h vg.Length) image.Image {
	tb.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		tb.Fatal(err)
	}
	want := image.Rect(0, 0, int(w.Dots(vgimg.DefaultDPI)+0.5), int(h.Dots(vgimg.DefaultDPI)+0.5))
	if img.Bounds() != want {
		tb.Errorf("size %v, want %v", img.Bounds(), want)
	}
	return img
}

// pixelAt is the image's pixel under the figure's point pt (points from
// the bottom left; the image's origin is its top left).
func pixelAt(img image.Image, pt vg.Point) color.RGBA {
	x := int(pt.X.Dots(vgimg.DefaultDPI))
	y := img.Bounds().Dy() - 1 - int(pt.Y.Dots(vgimg.DefaultDPI))
	r, g, b, a := img.At(x, y).RGBA()
	return color.RGBA{R: uint8(r >> 8), G: uint8(g >> 8), B: uint8(b >> 8), A: uint8(a >> 8)}
}

func near(a, b color.Color, tol int) bool {
	ar, ag, ab, _ := a.RGBA()
	br, bg, bb, _ := b.RGBA()
	d := func(x, y uint32) bool { return math.Abs(float64(x>>8)-float64(y>>8)) <= float64(tol) }
	return d(ar, br) && d(ag, bg) && d(ab, bb)
}

// TestPreferencesLayout: rows are the running kind, the first kind's at
// the top; columns the queued kind, left to right; the axes say so; a
// prior row is NaN in the grid (grey).
func TestPreferencesLayout(t *testing.T) {
	s := prefSnapshot(t)
	f, err := newPrefFigure(s, "t")
	if err != nil {
		t.Fatal(err)
	}
	pi, n := s.Pi(), len(s.Kinds)
	for j := range n {
		if got := f.grid.Z(j, n-1); got != pi[0][j] {
			t.Errorf("top row, column %d: Z = %g, want π(%s | %s) = %g", j, got, s.Kinds[j], s.Kinds[0], pi[0][j])
		}
		if got := f.grid.Z(j, 0); got != pi[2][j] {
			t.Errorf("bottom row, column %d: Z = %g, want π(%s | %s) = %g", j, got, s.Kinds[j], s.Kinds[2], pi[2][j])
		}
		if got := f.grid.Z(j, 1); !math.IsNaN(got) {
			t.Errorf("disk's row (prior), column %d: Z = %g, want NaN (grey)", j, got)
		}
	}
	ticks := func(m plot.Ticker, lo, hi float64) map[string]float64 {
		out := map[string]float64{}
		for _, tk := range m.Ticks(lo, hi) {
			out[tk.Label] = tk.Value
		}
		return out
	}
	p := f.matrix
	if diff := cmp.Diff(map[string]float64{"cpu": 2, "disk": 1, "net": 0}, ticks(p.Y.Tick.Marker, p.Y.Min, p.Y.Max)); diff != "" {
		t.Errorf("running kinds on Y, top down (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(map[string]float64{"cpu": 0, "disk": 1, "net": 2}, ticks(p.X.Tick.Marker, p.X.Min, p.X.Max)); diff != "" {
		t.Errorf("queued kinds on X, left to right (-want +got):\n%s", diff)
	}
	if p.X.Label.Text != "queued kind" || p.Y.Label.Text != "running kind" || f.bar.Y.Label.Text != "π" {
		t.Errorf("labels X %q, Y %q, colour bar %q", p.X.Label.Text, p.Y.Label.Text, f.bar.Y.Label.Text)
	}
}

// TestPreferencesPNGCells samples the PNG inside each cell, away from its
// text: the prior row is grey, the others their π's colour on the fixed
// scale, and the first kind's row is the top one.
func TestPreferencesPNGCells(t *testing.T) {
	s := prefSnapshot(t)
	var buf bytes.Buffer
	if err := writePreferencesPNG(&buf, s, "cells"); err != nil {
		t.Fatal(err)
	}
	img := decodePNG(t, buf.Bytes(), heatWidth, heatHeight)
	f, err := newPrefFigure(s, "cells")
	if err != nil {
		t.Fatal(err)
	}
	m, _, _ := f.canvases(draw.New(vgimg.New(heatWidth, heatHeight)))
	data := f.matrix.DataCanvas(m)
	trX, trY := f.matrix.Transforms(&data)
	cm, err := prefColorMap()
	if err != nil {
		t.Fatal(err)
	}
	pal := cm.Palette(prefPaletteSize).Colors()
	pi, n := s.Pi(), len(s.Kinds)
	for i := range n { // matrix row i, the running kind, top down
		for j := range n {
			pt := vg.Point{X: trX(float64(j) - 0.35), Y: trY(float64(n-1-i) + 0.35)} // the cell's upper left, clear of its text
			got := pixelAt(img, pt)
			switch want := cellColor(pal, pi[i][j]); {
			case i == 1 && got != prefPrior:
				t.Errorf("cell (running %s, queued %s), a prior row: %v, want grey %v", s.Kinds[i], s.Kinds[j], got, prefPrior)
			case i != 1 && (got == prefPrior || !near(got, want, 2)):
				t.Errorf("cell (running %s, queued %s), π %.2f: %v, want %v", s.Kinds[i], s.Kinds[j], pi[i][j], got, color.RGBAModel.Convert(want))
			}
		}
	}
}

// TestPreferencesColours: the colour map is sequential (luminance falls
// steadily from 0 to 1, no diverging middle), grey is none of its colours,
// and a cell's text is white on dark cells and black on light ones.
func TestPreferencesColours(t *testing.T) {
	cm, err := prefColorMap()
	if err != nil {
		t.Fatal(err)
	}
	lum := func(c color.Color) float64 {
		r, g, b, _ := c.RGBA()
		return 0.2126*float64(r) + 0.7152*float64(g) + 0.0722*float64(b)
	}
	pal := cm.Palette(prefPaletteSize).Colors()
	for i := 1; i < len(pal); i++ {
		if lum(pal[i]) >= lum(pal[i-1]) {
			t.Fatalf("luminance rises at %d of %d: not sequential", i, len(pal))
		}
	}
	for i, c := range pal {
		if near(c, prefPrior, 8) {
			t.Errorf("palette colour %d %v is as grey as the prior's", i, c)
		}
	}
	if cm.Min() != 0 || cm.Max() != 1 {
		t.Errorf("range [%g, %g], want the fixed [0, 1]", cm.Min(), cm.Max())
	}
	for _, tc := range []struct {
		bg   color.Color
		want color.Color
	}{
		{cellColor(pal, 0), color.Black},
		{cellColor(pal, 1), color.White},
		{cellColor(pal, math.NaN()), color.Black},
	} {
		if got := textColorOn(tc.bg); got != tc.want {
			t.Errorf("text on %v: %v, want %v", tc.bg, got, tc.want)
		}
	}
	if cellColor(pal, math.NaN()) != prefPrior {
		t.Errorf("NaN is %v, want the prior's grey", cellColor(pal, math.NaN()))
	}
}

// TestMovingMean: a centred window of a minute over 10-s samples that
// alternate 0 and 1 averages them to 0.5, drawn at the sample's time
// inside the series; the window is at least 5 samples.
func TestMovingMean(t *testing.T) {
	step := 10 * time.Second
	var us []usagePoint
	for k := range 30 {
		us = append(us, usagePoint{At: time.Duration(k) * step, CPU: float64(k % 2)})
	}
	if got := usageStep(us); got != step {
		t.Fatalf("step %v, want %v", got, step)
	}
	xy := movingMean(us, step, usageWindow(step), func(u usagePoint) float64 { return u.CPU })
	for k := 3; k < 28; k++ {
		if math.Abs(xy[k].Y-0.5) > 1e-12 || math.Abs(xy[k].X-us[k].At.Minutes()) > 1e-12 {
			t.Errorf("point %d: (%g min, %g), want (%g min, 0.5)", k, xy[k].X, xy[k].Y, us[k].At.Minutes())
		}
	}
	if xy[0].X <= 0 || xy[0].X >= xy[3].X {
		t.Errorf("first point at %g min: want inside the first window", xy[0].X)
	}
	for _, tc := range []struct{ step, want time.Duration }{
		{5 * time.Second, time.Minute},
		{10 * time.Second, time.Minute},
		{30 * time.Second, 150 * time.Second},
	} {
		if got := usageWindow(tc.step); got != tc.want {
			t.Errorf("window for %v samples: %v, want %v", tc.step, got, tc.want)
		}
	}
	gappy := []usagePoint{{At: 0}, {At: 30 * time.Second}, {At: 40 * time.Second}}
	if got := usageStep(gappy); got != step {
		t.Errorf("step with a gap: %v, want %v", got, step)
	}
}

// TestLegendsBesideData: the usage and profiles legends sit right of the
// data area, and the PNGs have their stated size.
func TestLegendsBesideData(t *testing.T) {
	w := small(t, 1)
	r := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 1})
	usage, err := usageFigure(r)
	if err != nil {
		t.Fatal(err)
	}
	profiles, err := profilesFigure(*r.Profiles, r.TrueProfiles, "profiles")
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]*sideLegend{"usage": usage, "profiles": profiles} {
		pc, lc := f.canvases(draw.New(vgimg.New(usageWidth, usageHeight)))
		data := f.p.DataCanvas(pc)
		leg := f.legend.Rectangle(lc)
		if leg.Min.X < data.Max.X || leg.Max.X > usageWidth {
			t.Errorf("%s: legend spans x %v–%v, data ends at %v: want the legend right of the data, inside the figure", name, leg.Min.X, leg.Max.X, data.Max.X)
		}
		if own := f.p.Legend.Rectangle(pc); own.Max.X != own.Min.X || own.Max.Y != own.Min.Y {
			t.Errorf("%s: the plot still draws a legend of its own", name)
		}
	}
	if !bytes.Contains([]byte(usage.p.X.Label.Text), []byte("1-min moving mean")) {
		t.Errorf("usage X label %q does not state the window", usage.p.X.Label.Text)
	}
	var buf bytes.Buffer
	if err := writeUsagePNG(&buf, r); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, buf.Bytes(), usageWidth, usageHeight)
	buf.Reset()
	if err := writeProfilesPNG(&buf, *r.Profiles, r.TrueProfiles, "profiles"); err != nil {
		t.Fatal(err)
	}
	decodePNG(t, buf.Bytes(), usageWidth, usageHeight)
}

func TestRoundTicks(t *testing.T) {
	labels := func(lo, hi float64) []string {
		var out []string
		for _, tk := range (roundTicks{}).Ticks(lo, hi) {
			if tk.Label != "" {
				out = append(out, tk.Label)
			}
		}
		return out
	}
	tests := []struct {
		lo, hi float64
		want   []string
	}{
		{-1e-17, 1.02, []string{"0.0", "0.2", "0.4", "0.6", "0.8", "1.0"}}, // a rounding error below 0 is no "-0.0"
		{0, 0.26, []string{"0.00", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{-21.3, 0.6, []string{"-20", "-15", "-10", "-5", "0"}},
	}
	for _, tc := range tests {
		if diff := cmp.Diff(tc.want, labels(tc.lo, tc.hi)); diff != "" {
			t.Errorf("ticks over [%g, %g] (-want +got):\n%s", tc.lo, tc.hi, diff)
		}
	}
}
