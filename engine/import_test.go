package engine

import (
	"bytes"
	"encoding/json"
	"io"
	"math"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon/api"
)

// putPrefs imports body with PUT /v1/preferences as the admin.
func putPrefs(t *testing.T, url string, body []byte) (int, string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPut, url+"/v1/preferences", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer test-admin-token")
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

// twoKinds is a valid snapshot of kinds a and b: a ran beside b n times.
func twoKinds(a, b string, n int64) bandit.Snapshot {
	return bandit.Snapshot{Version: 1, Kinds: []string{a, b},
		H: [][]float64{{0, 0.5}, {0, 0}}, RowBaseline: []float64{0.4, 0},
		Observations: n, RowObservations: []int64{n, 0}, PairObservations: [][]int64{{0, n}, {0, 0}}}
}

// TestImportRefusesWhatTheLearnerCannotHold: PUT /v1/preferences (through
// the API, over the real engine) refuses counters beyond bandit.MaxCount
// and kinds no job could have — upper case, markup, a spreadsheet
// formula, 5,000 characters, the reserved foreign prefix — with a 400
// naming the field, and changes nothing, in the learner or the store.
func TestImportRefusesWhatTheLearnerCannotHold(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	srv := apiOver(t, h, api.Deps{})
	h.learner.Update("cpu", "disk", 0.7)
	if err := h.e.persistPreferences(); err != nil {
		t.Fatal(err)
	}
	before, stored := h.learner.Snapshot(), h.persisted()
	for _, tc := range []struct {
		name  string
		snap  bandit.Snapshot
		field string
	}{
		{"counters at the int64 maximum", twoKinds("cpu", "disk", math.MaxInt64), "observations"},
		{"counters over MaxCount", twoKinds("cpu", "disk", bandit.MaxCount+1), "observations"},
		{"a pair count at the int64 maximum", func() bandit.Snapshot {
			s := twoKinds("cpu", "disk", 1)
			s.PairObservations[1][0], s.RowObservations[1] = math.MaxInt64, math.MaxInt64
			return s
		}(), "pair_observations[1][0]"},
		{"rejected at the int64 maximum", func() bandit.Snapshot { s := twoKinds("cpu", "disk", 1); s.Rejected = math.MaxInt64; return s }(), "rejected"},
		{"upper case", twoKinds("cpu", "FOO", 1), "kinds[1]"},
		{"markup", twoKinds("<img src=x onerror=alert(1)>", "cpu", 1), "kinds[0]"},
		{"formula", twoKinds("cpu", `=HYPERLINK("http://evil.example/","x")`, 1), "kinds[1]"},
		{"5000 characters", twoKinds("cpu", strings.Repeat("a", 5000), 1), "kinds[1]"},
		{"reserved foreign prefix", twoKinds("cpu", DefaultForeignPrefix+"spark.etl", 1), "kinds[1]"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body, err := json.Marshal(tc.snap)
			if err != nil {
				t.Fatal(err)
			}
			code, resp := putPrefs(t, srv.URL, body)
			var e struct{ Field string }
			_ = json.Unmarshal([]byte(resp), &e)
			if code != http.StatusBadRequest || e.Field != tc.field {
				t.Errorf("PUT: %d %.300s; want 400 on %s", code, resp, tc.field)
			}
			if len(resp) > 1000 {
				t.Errorf("the refusal is %d bytes: it echoes the input", len(resp))
			}
			if diff := cmp.Diff(before, h.learner.Snapshot()); diff != "" {
				t.Errorf("a refused import changed the learner (-before +after):\n%s", diff)
			}
			if diff := cmp.Diff(stored, h.persisted()); diff != "" {
				t.Errorf("a refused import changed the store (-before +after):\n%s", diff)
			}
		})
	}
}

// TestImportAtMaxCountLearnsAndRestores: the largest counters an import
// may hold are accepted; learning on from there saturates them, and what
// is persisted restores (the overflow that stopped the next start cannot
// happen).
func TestImportAtMaxCountLearnsAndRestores(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 1})
	if err := h.e.ImportPreferences(twoKinds("cpu", "disk", bandit.MaxCount)); err != nil {
		t.Fatal(err)
	}
	h.submit("cpu", "disk")
	h.admit()
	from := h.sync().At
	updates := 0
	for range 3 {
		to := h.advance(time.Minute)
		h.sync()
		rep, err := h.e.Learn(h.ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		updates += rep.Updates
		from = to
	}
	if updates == 0 {
		t.Fatal("no update: the saturation was not exercised")
	}
	got := h.persisted() // RestoreLearner: fails the test if it does not restore
	if got.Observations != bandit.MaxCount {
		t.Errorf("observations %d after learning past the bound, want %d", got.Observations, int64(bandit.MaxCount))
	}
}

// TestImportForeignKindsWhenThePlacerMakesThem: with a placement read that
// names other tenants' applications, their kinds are the learner's own, so
// an export of it imports again.
func TestImportForeignKindsWhenThePlacerMakesThem(t *testing.T) {
	p, err := NewPlacer(&fakePlacement{}, testPlacementConfig(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, harnessOpts{placer: p})
	if err := h.e.ImportPreferences(twoKinds("cpu", DefaultForeignPrefix+"spark.etl", 1)); err != nil {
		t.Errorf("importing a foreign kind with a placer that makes them: %v", err)
	}
	if err := h.e.ImportPreferences(twoKinds("cpu", DefaultForeignPrefix+"Spark", 1)); err == nil {
		t.Error("importing a foreign kind against the kind rule: no error")
	}
}
