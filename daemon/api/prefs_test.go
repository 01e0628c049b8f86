package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/bandit"
)

var testKinds = []string{"kmeans", "terasort", "wordcount", "pagerank"}

func TestPreferencesRoundTrip(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	orig := h.learner.Snapshot()

	// Export.
	r := h.do("GET", "/v1/preferences?format=snapshot", readerTok, "")
	if r.Code != 200 {
		t.Fatalf("export: %d %s", r.Code, r.Body)
	}
	exported := r.Body
	var snap bandit.Snapshot
	r.decode(t, &snap)
	if diff := cmp.Diff(orig, snap); diff != "" {
		t.Fatalf("export differs from the learner (-want +got):\n%s", diff)
	}
	// Reset: empty, persisted.
	r = h.do("DELETE", "/v1/preferences", adminTok, "")
	if r.Code != 200 {
		t.Fatalf("reset: %d %s", r.Code, r.Body)
	}
	var v apiclient.Preferences
	r.decode(t, &v)
	if len(v.Kinds) != 0 || v.Observations != 0 {
		t.Errorf("after reset: %d kinds, %d observations", len(v.Kinds), v.Observations)
	}
	if got := h.savedSnapshot(); len(got.Kinds) != 0 {
		t.Errorf("persisted after reset: %d kinds", len(got.Kinds))
	}
	// Import what was exported.
	r = h.do("PUT", "/v1/preferences", adminTok, string(exported))
	if r.Code != 200 {
		t.Fatalf("import: %d %s", r.Code, r.Body)
	}
	if diff := cmp.Diff(orig, h.learner.Snapshot()); diff != "" {
		t.Errorf("learner after import (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(orig, h.savedSnapshot()); diff != "" {
		t.Errorf("persisted after import (-want +got):\n%s", diff)
	}
	// The JSON view: π rows are distributions, matching the learner.
	h.do("GET", "/v1/preferences", readerTok, "").decode(t, &v)
	if diff := cmp.Diff(orig.Kinds, v.Kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	for i, given := range v.Kinds {
		sum := 0.0
		for j, a := range v.Kinds {
			sum += v.Pi[i][j]
			if want := h.learner.Prob(a, given); math.Abs(v.Pi[i][j]-want) > 1e-12 {
				t.Errorf("pi[%s][%s] = %v, learner says %v", given, a, v.Pi[i][j], want)
			}
		}
		if math.Abs(sum-1) > 1e-9 {
			t.Errorf("row %s sums to %v", given, sum)
		}
	}
	if v.Observations != orig.Observations || v.Observations == 0 {
		t.Errorf("observations = %d, want %d", v.Observations, orig.Observations)
	}
}

func (h *harness) savedSnapshot() bandit.Snapshot {
	h.t.Helper()
	b, err := h.store.LoadPreferences()
	if err != nil || b == nil {
		h.t.Fatalf("LoadPreferences: %q, %v", b, err)
	}
	var s bandit.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		h.t.Fatalf("persisted preferences: %v", err)
	}
	return s
}

func TestPreferencesImportRejectsBadSnapshots(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	before := h.learner.Snapshot()
	good, _ := json.Marshal(before)
	for _, tc := range []struct {
		name, body, field string
	}{
		{"ragged h", strings.Replace(string(good), `"h":[[`, `"h":[[1,`, 1), "h[0]"},
		{"unknown field", `{"version":1,"bogus":true}`, "bogus"},
		{"wrong type", `{"version":"one"}`, "version"},
		{"bad version", `{"version":99}`, "version"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("PUT", "/v1/preferences", adminTok, tc.body)
			if r.Code != 400 {
				t.Fatalf("got %d, want 400: %s", r.Code, r.Body)
			}
			if e := r.errBody(t); e.Field != tc.field {
				t.Errorf("field = %q, want %q (%s)", e.Field, tc.field, e.Error)
			}
		})
	}
	if diff := cmp.Diff(before, h.learner.Snapshot()); diff != "" {
		t.Errorf("a refused import changed the learner (-want +got):\n%s", diff)
	}
}

func TestPreferencesCSV(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	for _, matrix := range []string{"pi", "h"} {
		t.Run(matrix, func(t *testing.T) {
			r := h.do("GET", "/v1/preferences?format=csv&matrix="+matrix, readerTok, "")
			if r.Code != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
				t.Fatalf("got %d %q", r.Code, r.Header.Get("Content-Type"))
			}
			recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append([]string{"given"}, testKinds...), recs[0]); diff != "" {
				t.Errorf("header (-want +got):\n%s", diff)
			}
			if len(recs) != len(testKinds)+1 {
				t.Fatalf("%d rows, want %d", len(recs), len(testKinds)+1)
			}
			for i, rec := range recs[1:] {
				given := testKinds[i]
				if rec[0] != given {
					t.Errorf("row %d label %q, want %q", i, rec[0], given)
				}
				for j, cell := range rec[1:] {
					v, err := strconv.ParseFloat(cell, 64)
					if err != nil {
						t.Fatalf("cell %q: %v", cell, err)
					}
					want := h.learner.Prob(testKinds[j], given)
					if matrix == "h" {
						want = h.learner.Pref(testKinds[j], given)
					}
					if math.Abs(v-want) > 1e-12 {
						t.Errorf("%s[%s][%s] = %v, want %v", matrix, given, testKinds[j], v, want)
					}
				}
			}
		})
	}
	if r := h.do("GET", "/v1/preferences?format=xls", readerTok, ""); r.Code != 400 || r.errBody(t).Field != "format" {
		t.Errorf("bad format: %d %s", r.Code, r.Body)
	}
}

func TestHeatmapSVG(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	// A kind name that needs escaping (the learner takes any string).
	h.learner.Add(`x<y&"z"`)
	for _, q := range []string{"", "?matrix=h"} {
		r := h.do("GET", "/v1/preferences/heatmap.svg"+q, readerTok, "")
		if r.Code != 200 || r.Header.Get("Content-Type") != "image/svg+xml" {
			t.Fatalf("got %d %q", r.Code, r.Header.Get("Content-Type"))
		}
		text, root := parseSVG(t, r.Body)
		if root != "svg" {
			t.Errorf("root element %q", root)
		}
		for _, k := range append(testKinds, `x<y&"z"`) {
			if !strings.Contains(text, k) {
				t.Errorf("heatmap%s lacks kind %q", q, k)
			}
		}
		// Values are printed: the diagonal of π for kmeans at least.
		if q == "" {
			want := num(h.learner.Prob("kmeans", "kmeans"))
			if !strings.Contains(text, want) {
				t.Errorf("heatmap lacks the value %s", want)
			}
		}
	}
	// Empty learner: still a valid SVG.
	h.learner.Reset()
	text, _ := parseSVG(t, h.do("GET", "/v1/preferences/heatmap.svg", readerTok, "").Body)
	if !strings.Contains(text, "no kinds learned yet") {
		t.Errorf("empty heatmap says %q", text)
	}
}

// parseSVG checks b is well-formed XML and returns its character data and
// root element name.
func parseSVG(t testing.TB, b []byte) (text, root string) {
	t.Helper()
	dec := xml.NewDecoder(bytes.NewReader(b))
	var sb strings.Builder
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("SVG does not parse: %v\n%s", err, b)
		}
		switch tok := tok.(type) {
		case xml.StartElement:
			if root == "" {
				root = tok.Name.Local
			}
		case xml.CharData:
			sb.Write(tok)
			sb.WriteByte('\n')
		}
	}
	return sb.String(), root
}

func TestHeatmapColours(t *testing.T) {
	hm := heatmap{Cols: []string{"a", "b"}, Values: [][]float64{{0, 1}}}
	lo, hi := hm.scale()
	if lo != 0 || hi != 1 {
		t.Errorf("scale = [%v, %v], want [0, 1]", lo, hi)
	}
	if got := hex(hm.colour(0, lo, hi)); got != hex(seqStops[0]) {
		t.Errorf("colour(min) = %s, want %s", got, hex(seqStops[0]))
	}
	if got := hex(hm.colour(1, lo, hi)); got != hex(seqStops[len(seqStops)-1]) {
		t.Errorf("colour(max) = %s", got)
	}
	d := heatmap{Diverging: true, Values: [][]float64{{-2, 0.5}}}
	if lo, hi := d.scale(); lo != -2 || hi != 2 {
		t.Errorf("diverging scale = [%v, %v], want [-2, 2]", lo, hi)
	}
	if contrast(seqStops[0]) != "#ffffff" || contrast(seqStops[len(seqStops)-1]) != "#000000" {
		t.Error("text on dark cells must be white, on light cells black")
	}
}
