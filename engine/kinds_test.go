package engine

import (
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/internal/simcluster"
)

// plainCluster is the simulator without its JobPreparer: like YARN, it
// accepts any kind, so only validation rejects a junk job.
type plainCluster struct{ Cluster }

// TestRejectedJobsDoNotGrowLearner: jobs rejected by validation, however
// many kinds they name, leave the learner's kinds alone; a stored job adds
// its kind; a new kind beyond api.max_kinds is 422; known kinds still go.
func TestRejectedJobsDoNotGrowLearner(t *testing.T) {
	h := newHarness(t, harnessOpts{cluster: func(sc *simcluster.Cluster) Cluster { return plainCluster{sc} }})
	srv := apiOver(t, h, api.Deps{MaxKinds: 5})
	before := h.learner.Kinds()
	for i := range 300 {
		if code, body := post(t, srv, fmt.Sprintf(`{"kind":"junk-%d"}`, i)); code != http.StatusBadRequest {
			t.Fatalf("junk job %d: %d %s, want 400 (no resources)", i, code, body)
		}
	}
	if got := h.learner.Kinds(); !slices.Equal(got, before) {
		t.Fatalf("after 300 rejected jobs the learner knows %d kinds, want the %d it knew (first new: %v)",
			len(got), len(before), got[min(len(got), len(before)):min(len(got), len(before)+3)])
	}
	res := `"resources":{"containers":1,"memory_mb":1024,"vcores":1}`
	for _, k := range []string{"k4", "k5"} {
		if code, body := post(t, srv, `{"kind":"`+k+`",`+res+`}`); code != http.StatusCreated {
			t.Fatalf("new kind %s: %d %s", k, code, body)
		}
	}
	if got, want := h.learner.Kinds(), append(slices.Clone(before), "k4", "k5"); !slices.Equal(got, want) {
		t.Fatalf("learner kinds %v, want %v", got, want)
	}
	if code, body := post(t, srv, `{"kind":"k6",`+res+`}`); code != http.StatusUnprocessableEntity || !strings.Contains(body, "api.max_kinds (5)") {
		t.Errorf("a 6th kind: %d %s, want 422 naming api.max_kinds (5)", code, body)
	}
	if code, body := post(t, srv, `{"kind":"cpu",`+res+`}`); code != http.StatusCreated {
		t.Errorf("a known kind at the limit: %d %s", code, body)
	}
	h.admit()
	if got := len(h.learner.Kinds()); got != 5 {
		t.Errorf("after admitting the learner knows %d kinds, want 5", got)
	}
}
