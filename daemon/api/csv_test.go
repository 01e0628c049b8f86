package api

import (
	"encoding/csv"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/profile"
)

func TestCSVText(t *testing.T) {
	for in, want := range map[string]string{
		`=HYPERLINK("http://evil.example/","x")`: `'=HYPERLINK("http://evil.example/","x")`,
		"+1+1":                                   "'+1+1",
		"-2+3":                                   "'-2+3",
		"@SUM(A1)":                               "'@SUM(A1)",
		"\t=1":                                   "'\t=1",
		"\r=1":                                   "'\r=1",
		"cpu":                                    "cpu",
		"a=b":                                    "a=b",
		"":                                       "",
	} {
		if got := csvText(in); got != want {
			t.Errorf("csvText(%q) = %q, want %q", in, got, want)
		}
	}
}

// formulaKinds are kinds a store written by hand, or before the import
// checked kinds, may hold: each starts as a spreadsheet formula would.
var formulaKinds = []string{`=HYPERLINK("http://evil.example/","x")`, "+1+1", "-2+3", "@SUM(A1)", "\t=1", "\r=1"}

// TestCSVExportsEscapeFormulas: every CSV the API writes (the three
// matrices of /v1/preferences, /v1/profiles) starts no cell as a formula:
// a kind that would is prefixed with a single quote; numbers, negative
// ones included, are as they were.
func TestCSVExportsEscapeFormulas(t *testing.T) {
	m := profile.New(profile.Config{})
	var obs []profile.Observation
	for i, k := range append([]string{"cpu"}, formulaKinds...) {
		obs = append(obs, profile.Observation{Node: "n" + strconv.Itoa(i), Usage: profile.Vector{0.5, 0.01, 0.1, 0.1, 0.1, 0.1},
			Containers: []profile.KindCount{{Kind: k, Containers: 1}}})
	}
	m.Observe(obs)
	h := newHarness(t, withProfiles(m, testLimits))
	for _, k := range formulaKinds {
		h.learner.Update(k, "cpu", 0.9)
		h.learner.Update("cpu", k, -0.5) // negative preferences: numbers starting with -
	}
	for _, path := range []string{"/v1/preferences?format=csv", "/v1/preferences?format=csv&matrix=h",
		"/v1/preferences?format=csv&matrix=n", "/v1/profiles?format=csv"} {
		t.Run(path, func(t *testing.T) {
			r := h.do(http.MethodGet, path, readerTok, "")
			if r.Code != http.StatusOK {
				t.Fatalf("%d %s", r.Code, r.Body)
			}
			recs, err := csv.NewReader(strings.NewReader(string(r.Body))).ReadAll()
			if err != nil {
				t.Fatal(err)
			}
			var names []string
			negative := false
			for _, rec := range recs {
				for _, cell := range rec {
					if _, err := strconv.ParseFloat(cell, 64); err == nil {
						negative = negative || strings.HasPrefix(cell, "-")
						continue
					}
					if cell != "" && strings.ContainsRune("=+-@\t\r", rune(cell[0])) {
						t.Errorf("cell %q starts as a formula", cell)
					}
					if strings.HasPrefix(cell, "'") {
						names = append(names, cell)
					}
				}
			}
			var want []string
			for _, k := range formulaKinds {
				want = append(want, "'"+k)
			}
			if strings.Contains(path, "preferences") {
				want = append(want, want...) // the header row and the row labels
				if !negative && strings.Contains(path, "matrix=h") {
					t.Error("no negative number in H: the numbers were escaped, or the test set-up is wrong")
				}
			}
			if diff := cmp.Diff(slices.Sorted(slices.Values(want)), slices.Sorted(slices.Values(names))); diff != "" {
				t.Errorf("escaped cells (-want +got):\n%s", diff)
			}
		})
	}
}
