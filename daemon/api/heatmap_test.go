package api

import (
	"encoding/xml"
	"fmt"
	"strconv"
	"strings"
	"testing"
)

// svgCell is one <g class="cell"> of the heatmap.
type svgCell struct {
	Class string `xml:"class,attr"`
	N     string `xml:"data-n,attr"`
	Title string `xml:"title"`
	Rect  struct {
		Fill string `xml:"fill,attr"`
	} `xml:"rect"`
	Text []string `xml:"text"`
}

// heatmapCells decodes the cells of a heatmap SVG, in document order
// (row by row).
func heatmapCells(t *testing.T, b []byte) []svgCell {
	t.Helper()
	var doc struct {
		G []svgCell `xml:"g"`
	}
	if err := xml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("heatmap does not parse: %v", err)
	}
	var cells []svgCell
	for _, g := range doc.G {
		if strings.HasPrefix(g.Class, "cell") {
			cells = append(cells, g)
		}
	}
	return cells
}

// TestHeatmapCountsAndPrior: each cell shows π and its observation count
// n; a row never observed is the prior, grey, with a key saying so; the
// colour scale of π is the fixed 0..1, so a uniform row is not bright.
func TestHeatmapCountsAndPrior(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	h.learner.Add("fresh") // a row (and column) still at the prior
	kinds := append(append([]string(nil), testKinds...), "fresh")
	r := h.do("GET", "/v1/preferences/heatmap.svg", readerTok, "")
	if r.Code != 200 {
		t.Fatalf("heatmap: %d %s", r.Code, r.Body)
	}
	cells := heatmapCells(t, r.Body)
	if len(cells) != len(kinds)*len(kinds) {
		t.Fatalf("%d cells, want %d", len(cells), len(kinds)*len(kinds))
	}
	snap := h.learner.Snapshot()
	idx := map[string]int{}
	for i, k := range snap.Kinds {
		idx[k] = i
	}
	lo, hi := heatmap{}.scale()
	for i, running := range kinds {
		prior := h.learner.RowObservations(running) == 0
		if prior != (running == "fresh") {
			t.Fatalf("row %s: prior %v; the test's learner is not what it expects", running, prior)
		}
		for j, queued := range kinds {
			c := cells[i*len(kinds)+j]
			n := snap.PairObservations[idx[running]][idx[queued]]
			pi := h.learner.Prob(queued, running)
			wantFill := hex(heatmap{}.colour(pi, lo, hi))
			if prior {
				wantFill = priorFill
			}
			if c.N != strconv.FormatInt(n, 10) || len(c.Text) != 2 || c.Text[0] != num(pi) || c.Text[1] != fmt.Sprintf("n=%d", n) {
				t.Errorf("cell (%s, %s): n %q, texts %q; want π %s and n=%d", running, queued, c.N, c.Text, num(pi), n)
			}
			if c.Rect.Fill != wantFill || strings.Contains(c.Class, "prior") != prior {
				t.Errorf("cell (%s, %s): fill %s class %q, want %s (prior %v)", running, queued, c.Rect.Fill, c.Class, wantFill, prior)
			}
			if !strings.Contains(c.Title, "π("+queued+" | "+running+")") {
				t.Errorf("cell (%s, %s) title %q does not name π(queued | running)", running, queued, c.Title)
			}
		}
	}
	text, _ := parseSVG(t, r.Body)
	for _, want := range []string{"grey: prior, no observation", "queued kind →", "← running kind", "each row sums to 1 over all 5 kinds", "1.000", "0.000"} {
		if !strings.Contains(text, want) {
			t.Errorf("heatmap lacks %q", want)
		}
	}
}

// TestHeatmapScaleIsFixed: π's colours span [0, 1] whatever the values,
// so that a uniform prior (every cell 1/K) is dark, not the brightest
// colour; H's scale stays centred on zero.
func TestHeatmapScaleIsFixed(t *testing.T) {
	uniform := heatmap{Cols: []string{"a", "b", "c", "d"}, Values: [][]float64{{.25, .25, .25, .25}}}
	lo, hi := uniform.scale()
	if lo != 0 || hi != 1 {
		t.Fatalf("π scale of a uniform row = [%v, %v], want [0, 1]", lo, hi)
	}
	if got, top := hex(uniform.colour(.25, lo, hi)), hex(seqStops[len(seqStops)-1]); got == top {
		t.Errorf("a uniform 0.25 is painted the top colour %s", top)
	}
	d := heatmap{Diverging: true, Values: [][]float64{{-0.5, 3}}}
	if lo, hi := d.scale(); lo != -3 || hi != 3 {
		t.Errorf("H scale = [%v, %v], want [-3, 3]", lo, hi)
	}
}
