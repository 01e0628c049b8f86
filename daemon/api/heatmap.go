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
	"strings"
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
		Rows: sub.Rows, Cols: sub.Cols, Values: sub.Pi, Kinds: sub.Kinds, Symbol: "π",
		Pairs: sub.PairObservations, RowObs: sub.RowObservations,
		Subtitle: fmt.Sprintf("cell: π(queued | running), the chance of choosing the queued kind while the running kind runs; each row sums to 1 over all %d kinds; n: observations of the pair; a grey row is the prior: no observation yet", sub.Kinds),
	}
	if m == "h" {
		hm.Title, hm.Values, hm.Diverging, hm.Symbol = "H(queued | running): learned preference scores"+note, sub.H, true, "H"
		hm.Subtitle = "cell: H(queued | running), the learned preference score; π is the softmax of its row; n: observations of the pair; a grey row is the prior: no observation yet"
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
// column j, Values[i][j] the cell, Pairs[i][j] its observations.
type heatmap struct {
	Title     string
	Subtitle  string // what a cell is
	Symbol    string // the cell's name in its tooltip: "π", "H"
	RowAxis   string // what rows are, e.g. "running kind"
	ColAxis   string // what columns are, e.g. "queued kind"
	Rows      []string
	Cols      []string
	Values    [][]float64
	Diverging bool // centre the scale on zero (H); else the fixed 0..1 of a probability (π)
	// Kinds is how many kinds the learner knows (the rows' softmax spans
	// them all).
	Kinds int
	// Pairs[i][j] counts the observations of cell (i, j); RowObs[i] those
	// of row i: a row without any is still the prior, drawn grey. nil:
	// not known (no counts shown, no row grey).
	Pairs  [][]int64
	RowObs []int64
}

// Heatmap layout, in SVG user units (px).
const (
	hmCell     = 56
	hmCellH    = 36
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

// priorFill is the colour of a row still at the prior (no observation):
// grey, so that a uniform prior is not mistaken for a learned preference.
const priorFill = "#d4d4d4"

// render returns the heatmap as a standalone SVG document.
func (h heatmap) render() []byte {
	var b bytes.Buffer
	labelW := 0
	for _, s := range h.Rows {
		labelW = max(labelW, utf8.RuneCountInString(clip(s)))
	}
	colLabelH := 0
	for _, s := range h.Cols {
		colLabelH = max(colLabelH, utf8.RuneCountInString(clip(s)))
	}
	sub := strings.Split(h.Subtitle, "; ") // one line each
	subW := 0
	for _, l := range sub {
		subW = max(subW, utf8.RuneCountInString(l)*6)
	}
	head := hmPad + 30 + 13*len(sub) // title and subtitle
	left := hmPad + 18 + labelW*hmCharW + 8
	// Column labels are rotated by −45°: their height is about len·w/√2.
	top := head + int(float64(colLabelH*hmCharW)/math.Sqrt2) + 16
	gridW, gridH := len(h.Cols)*hmCell, len(h.Rows)*hmCellH
	legendX := left + gridW + 24
	width := max(legendX+hmLegendW+190, 2*hmPad+subW)
	height := top + max(gridH, hmLegendH+70) + 40

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
	for k, l := range sub {
		fmt.Fprintf(&b, `<text x="%d" y="%d" font-size="10" fill="#555" class="subtitle">`, hmPad, hmPad+28+13*k)
		esc(&b, l)
		b.WriteString("</text>\n")
	}
	// Axis names.
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-style="italic" fill="#555" class="axis">`, left, head+6)
	esc(&b, h.ColAxis+" →")
	b.WriteString("</text>\n")
	fmt.Fprintf(&b, `<text x="%d" y="%d" font-style="italic" fill="#555" text-anchor="middle" class="axis" transform="rotate(-90 %d %d)">`,
		hmPad+10, top+gridH/2, hmPad+10, top+gridH/2)
	esc(&b, "← "+h.RowAxis) // rotated: the arrow points down the rows
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
	h.renderRows(&b, left, top)
	h.renderLegend(&b, legendX, top)
	b.WriteString("</svg>\n")
	return b.Bytes()
}

// renderRows draws each row's label and cells from (left, top).
func (h heatmap) renderRows(b *bytes.Buffer, left, top int) {
	lo, hi := h.scale()
	for i, r := range h.Rows {
		y := top + i*hmCellH
		prior := i < len(h.RowObs) && h.RowObs[i] == 0
		class := "row"
		if prior {
			class = "row prior"
		}
		fmt.Fprintf(b, `<text class="%s" x="%d" y="%d" text-anchor="end" dominant-baseline="middle"><title>`, class, left-8, y+hmCellH/2)
		esc(b, r)
		if prior {
			esc(b, " (prior: no observation yet)")
		} else if i < len(h.RowObs) {
			esc(b, fmt.Sprintf(" (%d observations)", h.RowObs[i]))
		}
		b.WriteString("</title>")
		esc(b, clip(r))
		b.WriteString("</text>\n")
		for j, c := range h.Cols {
			h.renderCell(b, i, j, r, c, left+j*hmCell, y, prior, lo, hi)
		}
	}
}

// renderCell draws cell (i, j) of row r and column c at (x, y): its value
// and, when known, its observation count n.
func (h heatmap) renderCell(b *bytes.Buffer, i, j int, r, c string, x, y int, prior bool, lo, hi float64) {
	v := math.NaN()
	if i < len(h.Values) && j < len(h.Values[i]) {
		v = h.Values[i][j]
	}
	n := int64(-1)
	if i < len(h.Pairs) && j < len(h.Pairs[i]) {
		n = h.Pairs[i][j]
	}
	fill, ink := "#dddddd", "#000000"
	switch {
	case prior:
		fill = priorFill
	case !math.IsNaN(v) && !math.IsInf(v, 0):
		rgb := h.colour(v, lo, hi)
		fill, ink = hex(rgb), contrast(rgb)
	}
	title := fmt.Sprintf("%s(%s | %s) = %s", cmp.Or(h.Symbol, "value"), c, r, num(v))
	switch {
	case prior:
		title += fmt.Sprintf("; prior: no observation with %s running", r)
	case n >= 0:
		title += fmt.Sprintf("; %d observations of the pair", n)
	}
	class := "cell"
	if prior {
		class = "cell prior"
	}
	fmt.Fprintf(b, `<g class="%s" data-n="%d"><title>`, class, n)
	esc(b, title)
	fmt.Fprintf(b, `</title><rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#ffffff"/>`, x, y, hmCell, hmCellH, fill)
	fmt.Fprintf(b, `<text x="%d" y="%d" text-anchor="middle" dominant-baseline="middle" fill="%s">%s</text>`,
		x+hmCell/2, y+12, ink, num(v))
	if n >= 0 {
		fmt.Fprintf(b, `<text class="n" x="%d" y="%d" text-anchor="middle" dominant-baseline="middle" font-size="9" fill="%s">n=%d</text>`,
			x+hmCell/2, y+27, ink, n)
	}
	b.WriteString("</g>\n")
}

// renderLegend draws the colour scale at (x, top): a vertical gradient
// bar, its maximum at the top, and below it the prior's grey.
func (h heatmap) renderLegend(b *bytes.Buffer, x, top int) {
	lo, hi := h.scale()
	stops := seqStops
	if h.Diverging {
		stops = divStops
	}
	b.WriteString(`<defs><linearGradient id="heatmap-scale" x1="0" y1="1" x2="0" y2="0">`)
	for k, s := range stops {
		fmt.Fprintf(b, `<stop offset="%s" stop-color="%s"/>`, strconv.FormatFloat(float64(k)/float64(len(stops)-1), 'f', 2, 64), hex(s))
	}
	b.WriteString("</linearGradient></defs>\n")
	fmt.Fprintf(b, `<g class="legend"><text x="%d" y="%d" font-weight="bold">`, x, top-8)
	esc(b, cmp.Or(h.Symbol, "value"))
	b.WriteString("</text>")
	fmt.Fprintf(b, `<rect x="%d" y="%d" width="%d" height="%d" fill="url(#heatmap-scale)" stroke="#888"/>`, x, top, hmLegendW, hmLegendH)
	for k := 0; k <= 4; k++ {
		v := lo + (hi-lo)*float64(k)/4
		y := top + hmLegendH - k*hmLegendH/4
		fmt.Fprintf(b, `<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="#444"/><text x="%d" y="%d" dominant-baseline="middle">%s</text>`,
			x+hmLegendW, y, x+hmLegendW+4, y, x+hmLegendW+7, y, num(v))
	}
	if h.RowObs != nil {
		y := top + hmLegendH + 20
		fmt.Fprintf(b, `<g class="prior-key"><rect x="%d" y="%d" width="%d" height="%d" fill="%s" stroke="#888"/><text x="%d" y="%d" dominant-baseline="middle">grey: prior, no observation</text></g>`,
			x, y, hmLegendW, hmLegendW, priorFill, x+hmLegendW+6, y+hmLegendW/2)
	}
	b.WriteString("</g>\n")
}

// scale returns the value range the colours span: the fixed [0, 1] of a
// probability (a colour means the same on every page and every day), or
// [−m, m] with m = max|v| for diverging matrices.
func (h heatmap) scale() (lo, hi float64) {
	if !h.Diverging {
		return 0, 1
	}
	m := 0.0
	for _, row := range h.Values {
		for _, v := range row {
			if !math.IsNaN(v) && !math.IsInf(v, 0) {
				m = max(m, math.Abs(v))
			}
		}
	}
	if m == 0 {
		m = 1
	}
	return -m, m
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
