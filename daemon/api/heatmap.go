package api

import (
	"bytes"
	"cmp"
	"encoding/xml"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strconv"
	"unicode/utf8"
)

// The heatmap's kinds: without ?kinds=, the defaultHeatmapKinds kinds
// that took part in the most observations (?top= for another number);
// never more than maxHeatmapKinds (a cell is about 300 bytes of SVG: 100
// kinds make 3 MB).
const (
	defaultHeatmapKinds = 50
	maxHeatmapKinds     = 100
)

// heatmapSVG: GET /v1/preferences/heatmap.svg[?matrix=pi|h][&kinds=a,b|&top=n].
// The rows and columns are the kinds of ?kinds= in that order, or the top
// kinds (50 unless ?top=) by the observations they took part in, in the
// learner's order; the title says when kinds are left out.
func (s *server) heatmapSVG(w http.ResponseWriter, r *http.Request, _ principal) error {
	q := r.URL.Query()
	m, err := matrixParam(q.Get("matrix"))
	if err != nil {
		return err
	}
	kinds, err := parseKindFilter(q.Get("kinds"), "kinds")
	if err != nil {
		return err
	}
	top := defaultHeatmapKinds
	if v := q.Get("top"); v != "" {
		if top, err = strconv.Atoi(v); err != nil || top < 1 || top > maxHeatmapKinds {
			return errorf(http.StatusBadRequest, "top", "top %q is not an integer in [1, %d]", v, maxHeatmapKinds)
		}
	}
	all, obs := s.kindObservations()
	note := ""
	switch {
	case len(kinds) > maxHeatmapKinds:
		return errorf(http.StatusBadRequest, "kinds", "%d kinds, over the %d a heatmap draws", len(kinds), maxHeatmapKinds)
	case kinds != nil:
		if err := unknownKinds(all, kinds); err != nil {
			return err
		}
	case len(all) > top:
		kinds = mostObserved(all, obs, top)
		note = fmt.Sprintf(" — the %d most observed of %d kinds (?kinds= or ?top= for others)", top, len(all))
	default:
		kinds = all
	}
	sub := s.sub(kinds, kinds)
	hm := heatmap{
		Title: "π(queued | running): learned co-location preferences" + note, RowAxis: "running kind", ColAxis: "queued kind",
		Rows: sub.Rows, Cols: sub.Cols, Values: sub.Pi, Kinds: sub.Kinds,
	}
	if m == "h" {
		hm.Title, hm.Values, hm.Diverging = "H(queued | running): learned preference scores"+note, sub.H, true
	}
	w.Header().Set("Content-Type", "image/svg+xml")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	_, _ = w.Write(hm.render())
	return nil
}

// mostObserved is the n kinds with the most observations, in their order
// in kinds (ties go to the earlier kind).
func mostObserved(kinds []string, obs []int64, n int) []string {
	idx := make([]int, len(kinds))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(obs[b], obs[a]) })
	idx = idx[:n]
	slices.Sort(idx)
	out := make([]string, n)
	for i, k := range idx {
		out[i] = kinds[k]
	}
	return out
}

// heatmap describes one matrix to draw: Rows[i] labels row i, Cols[j]
// column j, Values[i][j] the cell.
type heatmap struct {
	Title     string
	RowAxis   string // what rows are, e.g. "running kind"
	ColAxis   string // what columns are, e.g. "queued kind"
	Rows      []string
	Cols      []string
	Values    [][]float64
	Diverging bool // centre the scale on zero (H); else 0..max (π)
	// Kinds is how many kinds the probabilities spread over (0: the
	// columns): the scale of π reaches at least the uniform 1/Kinds.
	Kinds int
}

// Heatmap layout, in SVG user units (px).
const (
	hmCell     = 56
	hmCellH    = 30
	hmPad      = 12
	hmCharW    = 7 // approximate advance of the 12px sans-serif font
	hmLegendW  = 16
	hmLegendH  = 180
	hmMaxLabel = 28 // runes; longer labels are cut with an ellipsis (full name in <title>)
)

// colour stops: a perceptually ordered sequential scale (viridis, sampled)
// and a diverging blue–white–red scale.
var (
	seqStops = [][3]float64{{68, 1, 84}, {59, 82, 139}, {33, 145, 140}, {94, 201, 98}, {253, 231, 37}}
	divStops = [][3]float64{{33, 102, 172}, {146, 197, 222}, {247, 247, 247}, {244, 165, 130}, {178, 24, 43}}
)

// render returns the heatmap as a standalone SVG document.
func (h heatmap) render() []byte {
	var b bytes.Buffer
	lo, hi := h.scale()
	labelW := 0
	for _, s := range h.Rows {
		labelW = max(labelW, utf8.RuneCountInString(clip(s)))
	}
	colLabelH := 0
	for _, s := range h.Cols {
		colLabelH = max(colLabelH, utf8.RuneCountInString(clip(s)))
	}
	left := hmPad + 18 + labelW*hmCharW + 8
	// Column labels are rotated by −45°: their height is about len·w/√2.
	top := hmPad + 28 + int(float64(colLabelH*hmCharW)/math.Sqrt2) + 16
	gridW, gridH := len(h.Cols)*hmCell, len(h.Rows)*hmCellH
	legendX := left + gridW + 24
	width := legendX + hmLegendW + 70
	height := top + max(gridH, hmLegendH) + 40

	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" id="heatmap" class="colocd-heatmap" width="%d" height="%d" viewBox="0 0 %d %d" role="img" font-family="sans-serif" font-size="12">`, width, height, width, height)
	b.WriteString("\n<title>")
	esc(&b, h.Title)
	b.WriteString("</title>\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="14" font-weight="bold">`, hmPad, hmPad+12)
	esc(&b, h.Title)
	b.WriteString("</text>\n")
	if len(h.Rows) == 0 || len(h.Cols) == 0 {
		fmt.Fprintf(&b, `<text x="%d" y="%d" class="empty">no kinds learned yet</text>`+"\n</svg>\n", hmPad, hmPad+40)
		return b.Bytes()
	}
	// Axis names.
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-style="italic" fill="#555">`, left, hmPad+30)
	esc(&b, h.ColAxis+" →")
	b.WriteString("</text>\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-style="italic" fill="#555" text-anchor="middle" transform="rotate(-90 %d %d)">`,
		hmPad+10, top+gridH/2, hmPad+10, top+gridH/2)
	esc(&b, h.RowAxis+" →")
	b.WriteString("</text>\n")
	// Column labels.
	for j, c := range h.Cols {
		x, y := left+j*hmCell+hmCell/2, top-6
		fmt.Fprintf(&b, `<text class="col" x="%d" y="%d" transform="rotate(-45 %d %d)"><title>`, x, y, x, y)
		esc(&b, c)
		b.WriteString("</title>")
		esc(&b, clip(c))
		b.WriteString("</text>\n")
	}
	// Rows: label then cells.
	for i, r := range h.Rows {
		y := top + i*hmCellH
		fmt.Fprintf(&b, `<text class="row" x="%d" y="%d" text-anchor="end" dominant-baseline="middle"><title>`, left-8, y+hmCellH/2)
		esc(&b, r)
		b.WriteString("</title>")
		esc(&b, clip(r))
		b.WriteString("</text>\n")
		for j, c := range h.Cols {
			v := math.NaN()
			if i < len(h.Values) && j < len(h.Values[i]) {
				v = h.Values[i][j]
			}
			fill, ink := "#dddddd", "#000000"
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				rgb := h.colour(v, lo, hi)
				fill, ink = hex(rgb), contrast(rgb)
			}
			x := left + j*hmCell
			fmt.Fprintf(&b, `<g class="cell"><title>`)
			esc(&b, fmt.Sprintf("%s | %s = %s", c, r, num(v)))
			fmt.Fprintf(&b, `</title><rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ffffff"/>`, x, y, hmCell, hmCellH, fill)
			fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="middle" dominant-baseline="middle" fill="%s">%s</text></g>`+"\n",
				x+hmCell/2, y+hmCellH/2, ink, num(v))
		}
	}
	// Colour scale: a vertical gradient bar, max at the top.
	stops := seqStops
	if h.Diverging {
		stops = divStops
	}
	b.WriteString(`<defs><linearGradient id="heatmap-scale" x1="0" y1="1" x2="0" y2="0">`)
	for k, s := range stops {
		fmt.Fprintf(&b, `<stop offset="%s" stop-color="%s"/>`, strconv.FormatFloat(float64(k)/float64(len(stops)-1), 'f', 2, 64), hex(s))
	}
	b.WriteString("</linearGradient></defs>\n")
	fmt.Fprintf(&b, `<g class="legend"><rect x="%d" y="%d" width="%d" height="%d" fill="url(#heatmap-scale)" stroke="#888"/>`, legendX, top, hmLegendW, hmLegendH)
	for k := 0; k <= 4; k++ {
		v := lo + (hi-lo)*float64(k)/4
		y := top + hmLegendH - k*hmLegendH/4
		fmt.Fprintf(&b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/><text x="%d" y="%d" dominant-baseline="middle">%s</text>`,
			legendX+hmLegendW, y, legendX+hmLegendW+4, y, legendX+hmLegendW+7, y, num(v))
	}
	b.WriteString("</g>\n</svg>\n")
	return b.Bytes()
}

// scale returns the value range the colours span: [0, max] for
// probabilities (at least [0, 1/n] so a uniform matrix is not saturated),
// [−m, m] with m = max|v| for diverging matrices.
func (h heatmap) scale() (lo, hi float64) {
	m := 0.0
	for _, row := range h.Values {
		for _, v := range row {
			if math.IsNaN(v) || math.IsInf(v, 0) {
				continue
			}
			if h.Diverging {
				v = math.Abs(v)
			}
			m = max(m, v)
		}
	}
	if h.Diverging {
		if m == 0 {
			m = 1
		}
		return -m, m
	}
	if n := max(h.Kinds, len(h.Cols)); n > 0 {
		m = max(m, 1/float64(n))
	}
	if m == 0 {
		m = 1
	}
	return 0, m
}

func (h heatmap) colour(v, lo, hi float64) [3]float64 {
	stops := seqStops
	if h.Diverging {
		stops = divStops
	}
	t := (v - lo) / (hi - lo)
	t = min(max(t, 0), 1)
	pos := t * float64(len(stops)-1)
	k := min(int(pos), len(stops)-2)
	f := pos - float64(k)
	var c [3]float64
	for i := range c {
		c[i] = stops[k][i] + (stops[k+1][i]-stops[k][i])*f
	}
	return c
}

func hex(c [3]float64) string {
	return fmt.Sprintf("#%02x%02x%02x", uint8(math.Round(c[0])), uint8(math.Round(c[1])), uint8(math.Round(c[2])))
}

// contrast picks black or white text for a background (WCAG relative luminance).
func contrast(c [3]float64) string {
	lin := func(v float64) float64 {
		v /= 255
		if v <= 0.03928 {
			return v / 12.92
		}
		return math.Pow((v+0.055)/1.055, 2.4)
	}
	l := 0.2126*lin(c[0]) + 0.7152*lin(c[1]) + 0.0722*lin(c[2])
	if l > 0.35 {
		return "#000000"
	}
	return "#ffffff"
}

// num prints a cell value compactly: three significant decimals.
func num(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.IsInf(v, 1):
		return "∞"
	case math.IsInf(v, -1):
		return "−∞"
	case math.Abs(v) >= 100:
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}

func clip(s string) string {
	if utf8.RuneCountInString(s) <= hmMaxLabel {
		return s
	}
	r := []rune(s)
	return string(r[:hmMaxLabel-1]) + "…"
}

// esc writes s as XML character data. Invalid UTF-8 and control characters
// are replaced by U+FFFD, so the document always parses.
func esc(b *bytes.Buffer, s string) {
	_ = xml.EscapeText(b, []byte(s))
}
