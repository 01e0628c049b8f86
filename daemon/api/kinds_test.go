package api

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/colocd/colocd/bandit"
)

// TestMaxKinds: a job of a new kind beyond Deps.MaxKinds is 422 naming the
// limit; known kinds still go through; rejected jobs add no kind; a stored
// job adds its kind.
func TestMaxKinds(t *testing.T) {
	h := newHarness(t, func(c *harnessCfg) { c.MaxKinds = 3 })
	h.learner.Add("kmeans")
	for i := range 50 { // junk: each fails validation
		h.submit(submitterTok, fmt.Sprintf(`{"kind":"junk-%d","resources":{"containers":0}}`, i), http.StatusBadRequest)
	}
	if got := h.learner.Kinds(); !slices.Equal(got, []string{"kmeans"}) {
		t.Fatalf("after rejected jobs the learner knows %v, want [kmeans]", got)
	}
	h.submit(submitterTok, jobBody("a"), http.StatusCreated)
	h.submit(submitterTok, jobBody("b"), http.StatusCreated)
	if got := h.learner.Kinds(); !slices.Equal(got, []string{"kmeans", "a", "b"}) {
		t.Fatalf("the learner knows %v, want [kmeans a b]", got)
	}
	r := h.do("POST", "/v1/jobs", submitterTok, jobBody("c"))
	if e := r.errBody(t); r.Code != http.StatusUnprocessableEntity || e.Field != "kind" || !strings.Contains(e.Error, "api.max_kinds (3)") {
		t.Errorf("a 4th kind: got %d %+v, want 422 naming api.max_kinds (3)", r.Code, e)
	}
	for _, k := range []string{"kmeans", "a", "b"} {
		h.submit(submitterTok, jobBody(k), http.StatusCreated)
	}
	if got := len(h.learner.Kinds()); got != 3 {
		t.Errorf("the learner knows %d kinds, want 3", got)
	}
	// After a reset the learner knows nothing: new kinds fit again.
	if r := h.do("DELETE", "/v1/preferences", adminTok, ""); r.Code != 200 {
		t.Fatalf("reset: %d %s", r.Code, r.Body)
	}
	h.submit(submitterTok, jobBody("c"), http.StatusCreated)
	if got := h.learner.Kinds(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("after a reset and a job of c the learner knows %v, want [c]", got)
	}
	// A preference snapshot cannot bring in more kinds either.
	big := bandit.New(bandit.Config{})
	for _, k := range []string{"w", "x", "y", "z"} {
		big.Add(k)
	}
	body, err := json.Marshal(big.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	r = h.do("PUT", "/v1/preferences", adminTok, string(body))
	if e := r.errBody(t); r.Code != http.StatusUnprocessableEntity || e.Field != "kinds" || !strings.Contains(e.Error, "api.max_kinds (3)") {
		t.Errorf("PUT a 4-kind snapshot: got %d %+v, want 422 naming api.max_kinds (3)", r.Code, e)
	}
	if got := h.learner.Kinds(); !slices.Equal(got, []string{"c"}) {
		t.Errorf("after the refused import the learner knows %v, want [c]", got)
	}
}

// TestMaxKindsConcurrent: new kinds submitted at once never push the
// learner past the limit.
func TestMaxKindsConcurrent(t *testing.T) {
	h := newHarness(t, func(c *harnessCfg) { c.MaxKinds = 5 })
	var wg sync.WaitGroup
	codes := make([]int, 40)
	for i := range codes {
		wg.Go(func() {
			codes[i] = h.do("POST", "/v1/jobs", submitterTok, jobBody(fmt.Sprintf("k%d", i))).Code
		})
	}
	wg.Wait()
	created := 0
	for _, c := range codes {
		switch c {
		case http.StatusCreated:
			created++
		case http.StatusUnprocessableEntity:
		default:
			t.Errorf("unexpected %d", c)
		}
	}
	if created != 5 || len(h.learner.Kinds()) != 5 {
		t.Errorf("%d jobs created, learner knows %d kinds; want 5 and 5", created, len(h.learner.Kinds()))
	}
}
