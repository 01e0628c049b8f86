package api

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"encoding/xml"
	"errors"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
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
	var v v1.Preferences
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
	snap := h.learner.Snapshot()
	pairObs := func(queued, running string) float64 {
		return float64(snap.PairObservations[slices.Index(snap.Kinds, running)][slices.Index(snap.Kinds, queued)])
	}
	for _, matrix := range []string{"pi", "h", "n"} {
		t.Run(matrix, func(t *testing.T) {
			r := h.do("GET", "/v1/preferences?format=csv&matrix="+matrix, readerTok, "")
			if r.Code != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), "text/csv") {
				t.Fatalf("got %d %q", r.Code, r.Header.Get("Content-Type"))
			}
			recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(append([]string{`running kind \ queued kind`}, testKinds...), recs[0]); diff != "" {
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
					switch matrix {
					case "h":
						want = h.learner.Pref(testKinds[j], given)
					case "n":
						want = pairObs(testKinds[j], given)
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

// TestPreferencesKindsAndPages: ?kinds= restricts rows and columns (in the
// order given), ?limit= and ?offset= page the rows, with the total; the
// values are the learner's, π over every kind.
func TestPreferencesKindsAndPages(t *testing.T) {
	h := newHarness(t)
	learn(h.learner, testKinds)
	get := func(q string) (v1.Preferences, response) {
		t.Helper()
		r := h.do("GET", "/v1/preferences"+q, readerTok, "")
		if r.Code != 200 {
			t.Fatalf("GET %s: %d %s", q, r.Code, r.Body)
		}
		var v v1.Preferences
		r.decode(t, &v)
		return v, r
	}
	check := func(q string, v v1.Preferences, cols, rows []string, total, offset int) {
		t.Helper()
		if !slices.Equal(v.Kinds, cols) || !slices.Equal(v.Rows, rows) || v.Total != total || v.Offset != offset || v.KindsKnown != len(testKinds) {
			t.Fatalf("%s: kinds %v rows %v total %d offset %d known %d; want %v, %v, %d, %d, %d", q, v.Kinds, v.Rows, v.Total, v.Offset, v.KindsKnown, cols, rows, total, offset, len(testKinds))
		}
		if len(v.H) != len(rows) || len(v.Pi) != len(rows) || len(v.PairObservations) != len(rows) || len(v.RowObservations) != len(rows) {
			t.Fatalf("%s: %d, %d, %d, %d rows of h, pi, pair and row observations, want %d", q, len(v.H), len(v.Pi), len(v.PairObservations), len(v.RowObservations), len(rows))
		}
		for i, given := range rows {
			if v.RowObservations[i] != h.learner.RowObservations(given) {
				t.Errorf("%s: row_observations[%s] = %d, want %d", q, given, v.RowObservations[i], h.learner.RowObservations(given))
			}
			for j, a := range cols {
				if v.Pi[i][j] != h.learner.Prob(a, given) || v.H[i][j] != h.learner.Pref(a, given) {
					t.Errorf("%s: [%s][%s] = π %v, H %v; learner %v, %v", q, given, a, v.Pi[i][j], v.H[i][j], h.learner.Prob(a, given), h.learner.Pref(a, given))
				}
			}
		}
	}
	v, r := get("")
	check("", v, testKinds, testKinds, 4, 0)
	if r.Header.Get("X-Total-Count") != "4" {
		t.Errorf("X-Total-Count = %q, want 4", r.Header.Get("X-Total-Count"))
	}
	sel := []string{"wordcount", "kmeans"}
	v, _ = get("?kinds=wordcount,kmeans")
	check("kinds", v, sel, sel, 2, 0)
	v, _ = get("?limit=2&offset=1")
	check("page", v, testKinds, testKinds[1:3], 4, 1)
	v, _ = get("?kinds=wordcount,kmeans,pagerank&offset=2&limit=5")
	check("page of kinds", v, []string{"wordcount", "kmeans", "pagerank"}, []string{"pagerank"}, 3, 2)
	v, _ = get("?limit=0")
	check("no rows", v, testKinds, []string{}, 4, 0)
	v, _ = get("?offset=9")
	check("past the end", v, testKinds, []string{}, 4, 9)

	r = h.do("GET", "/v1/preferences?format=csv&matrix=h&kinds=pagerank,kmeans&limit=1", readerTok, "")
	recs, err := csv.NewReader(bytes.NewReader(r.Body)).ReadAll()
	if r.Code != 200 || err != nil || len(recs) != 2 || !slices.Equal(recs[0], []string{`running kind \ queued kind`, "pagerank", "kmeans"}) || recs[1][0] != "pagerank" ||
		recs[1][2] != strconv.FormatFloat(h.learner.Pref("kmeans", "pagerank"), 'g', -1, 64) || r.Header.Get("X-Total-Count") != "2" {
		t.Errorf("CSV page: %d %v %q (total %q)", r.Code, err, recs, r.Header.Get("X-Total-Count"))
	}
	for q, field := range map[string]string{
		"?kinds=kmeans,nosuch": "kinds", "?limit=-1": "limit", "?limit=x": "limit", "?limit=10001": "limit",
		"?offset=-2": "offset", "?format=csv&kinds=nosuch": "kinds",
	} {
		if r := h.do("GET", "/v1/preferences"+q, readerTok, ""); r.Code != 400 || r.errBody(t).Field != field {
			t.Errorf("GET %s: %d %s, want a 400 on %s", q, r.Code, r.Body, field)
		}
	}
}

// TestPreferencesSizeLimit: above maxMatrixCells, the whole matrix is
// refused with a way to narrow it; a page within the limit is served; PUT
// and DELETE reply with no rows.
func TestPreferencesSizeLimit(t *testing.T) {
	h := newHarness(t)
	const k = 317 // 317² > maxMatrixCells
	kinds := make([]string, k)
	for i := range kinds {
		kinds[i] = "k" + strconv.Itoa(i)
		h.learner.Add(kinds[i])
	}
	r := h.do("GET", "/v1/preferences", readerTok, "")
	if e := r.errBody(t); r.Code != 400 || e.Field != "limit" || !strings.Contains(e.Error, "at most 315 rows of 317 columns") {
		t.Errorf("whole matrix of %d kinds: %d %+v", k, r.Code, e)
	}
	if r := h.do("GET", "/v1/preferences?limit=316", readerTok, ""); r.Code != 400 || r.errBody(t).Field != "limit" {
		t.Errorf("316 rows of %d: %d %s", k, r.Code, r.Body)
	}
	var v v1.Preferences
	if r := h.do("GET", "/v1/preferences?limit=315&offset=2", readerTok, ""); r.Code != 200 {
		t.Fatalf("315 rows: %d %s", r.Code, r.Body)
	} else if r.decode(t, &v); len(v.Rows) != 315 || v.Rows[0] != "k2" || v.Total != k {
		t.Errorf("315 rows from 2: %d rows from %s of %d", len(v.Rows), v.Rows[0], v.Total)
	}
	if r := h.do("GET", "/v1/preferences?kinds=k3,k1", readerTok, ""); r.Code != 200 {
		t.Errorf("two kinds of %d: %d %s", k, r.Code, r.Body)
	}
	if r := h.do("GET", "/v1/preferences?format=snapshot", readerTok, ""); r.Code != 200 {
		t.Errorf("the snapshot is always whole: %d", r.Code)
	}
	exported := h.do("GET", "/v1/preferences?format=snapshot", readerTok, "").Body
	r = h.do("PUT", "/v1/preferences", adminTok, string(exported))
	if r.Code != 200 {
		t.Fatalf("import: %d %s", r.Code, r.Body)
	}
	r.decode(t, &v)
	if len(v.Kinds) != k || len(v.Rows) != 0 || len(v.H) != 0 || v.Total != k {
		t.Errorf("import reply: %d kinds, %d rows, total %d; want %d kinds and no row", len(v.Kinds), len(v.Rows), v.Total, k)
	}
}

// TestHeatmapKinds: ?kinds= draws those kinds; without it, more kinds
// than ?top= (50) are cut to the most observed, and the title says so.
func TestHeatmapKinds(t *testing.T) {
	h := newHarness(t)
	for i := range 60 {
		h.learner.Add("k" + strconv.Itoa(i))
	}
	learn(h.learner, []string{"k7", "k42", "k59"}) // the most observed
	svg := func(q string) string {
		t.Helper()
		r := h.do("GET", "/v1/preferences/heatmap.svg"+q, readerTok, "")
		if r.Code != 200 {
			t.Fatalf("heatmap%s: %d %s", q, r.Code, r.Body)
		}
		text, _ := parseSVG(t, r.Body)
		return text
	}
	rows := func(text string) int { return strings.Count(text, " = ") } // a cell's title is "col | row = value"
	if text := svg("?kinds=k3,k42"); rows(text) != 4 || !strings.Contains(text, "k42 | k3") || strings.Contains(text, "k7") {
		t.Errorf("?kinds=k3,k42 draws %d cells:\n%s", rows(text), text)
	}
	text := svg("")
	if rows(text) != 50*50 || !strings.Contains(text, "the 50 most observed of 60 kinds") {
		t.Errorf("default: %d cells; title %q", rows(text), strings.SplitN(text, "\n", 2)[0])
	}
	if text := svg("?top=3&matrix=h"); rows(text) != 9 || !strings.Contains(text, "k59 | k7") || !strings.Contains(text, "the 3 most observed of 60") {
		t.Errorf("?top=3 draws %d cells:\n%s", rows(text), text)
	}
	if text := svg("?top=100"); rows(text) != 60*60 || strings.Contains(text, "most observed") {
		t.Errorf("?top=100 of 60 kinds draws %d cells", rows(text))
	}
	for q, field := range map[string]string{"?top=0": "top", "?top=101": "top", "?kinds=nosuch": "kinds", "?kinds=" + manyKinds(maxHeatmapKinds+1): "kinds"} {
		if r := h.do("GET", "/v1/preferences/heatmap.svg"+q, readerTok, ""); r.Code != 400 || r.errBody(t).Field != field {
			t.Errorf("heatmap%.40s: %d %s, want a 400 on %s", q, r.Code, r.Body, field)
		}
	}
}
