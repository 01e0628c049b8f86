package engine

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// TestFairnessSurvivesRestart: the deficits an admission pass leaves are
// stored with it, and an engine opened on the same store starts from them.
func TestFairnessSurvivesRestart(t *testing.T) {
	fair := func(c *pipeline.Config) {
		c.Fairness.Enabled = true
		c.Fairness.GroupBy = pipeline.GroupByUser
	}
	h := newHarness(t, harnessOpts{nodes: 2, pipeline: fair})
	for _, u := range []string{"ana", "bob", "ana", "bob", "cy"} {
		j := queue.Job{Kind: "cpu", User: u, Queue: "default"}
		if err := h.e.Prepare(&j); err != nil {
			t.Fatal(err)
		}
		if _, _, err := h.store.Submit(h.ctx, j); err != nil {
			t.Fatal(err)
		}
	}
	if rep := h.admit(); len(rep.Admitted) == 0 {
		t.Fatalf("nothing admitted: %+v", rep)
	}
	before, ok := h.e.pipeline.FairnessState()
	if !ok || len(before.Deficits) == 0 {
		t.Fatalf("no deficits after an admission pass: %+v", before)
	}
	opts := h.opts
	e2, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	after, _ := e2.pipeline.FairnessState()
	if diff := cmp.Diff(before, after); diff != "" {
		t.Errorf("fairness state after a restart (-before +after):\n%s", diff)
	}

	t.Run("a state that does not decode is an error", func(t *testing.T) {
		if err := h.store.SaveFairness([]byte(`{"deficits": 3}`)); err != nil {
			t.Fatal(err)
		}
		_, err := New(opts)
		if err == nil || !strings.Contains(err.Error(), "fairness state") {
			t.Fatalf("New over a corrupt fairness state: %v", err)
		}
	})
}
