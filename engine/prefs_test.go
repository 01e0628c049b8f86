package engine

import (
	"errors"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
)

// persisted is the preferences snapshot the store holds, read back into a
// learner with the engine's configuration.
func (h *harness) persisted() bandit.Snapshot {
	h.tb.Helper()
	l := bandit.New(h.learner.Config())
	ok, err := RestoreLearner(h.store, l, h.learner.Config())
	if err != nil || !ok {
		h.tb.Fatalf("RestoreLearner: %v, %v", ok, err)
	}
	return l.Snapshot()
}

// TestImportAndResetPersist: an import replaces and persists the
// preferences (the engine's learning parameters kept), a reset forgets
// them and persists that, an invalid snapshot changes nothing.
func TestImportAndResetPersist(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	src := bandit.New(bandit.Config{StepSize: 0.5})
	src.Update("cpu", "disk", 0.9)
	src.Update("disk", "cpu", 0.2)
	if err := h.e.ImportPreferences(src.Snapshot()); err != nil {
		t.Fatal(err)
	}
	got := h.learner.Snapshot()
	if got.Config.StepSize != 0.1 {
		t.Errorf("step size after import %v, want the engine's 0.1", got.Config.StepSize)
	}
	if want := src.Snapshot(); !slices.Equal(got.Kinds, want.Kinds) || got.Observations != 2 || got.H[1][0] != want.H[1][0] {
		t.Errorf("learner after import: kinds %v, %d observations, H %v; want %v, 2, %v", got.Kinds, got.Observations, got.H, want.Kinds, want.H)
	}
	if diff := cmp.Diff(got, h.persisted()); diff != "" {
		t.Errorf("persisted differs from the learner (-learner +stored):\n%s", diff)
	}

	bad := src.Snapshot()
	bad.Kinds[1] = bad.Kinds[0]
	var fe *bandit.FieldError
	if err := h.e.ImportPreferences(bad); !errors.As(err, &fe) || !errors.Is(err, bandit.ErrInvalidSnapshot) || fe.Field != "kinds[1]" {
		t.Errorf("importing a snapshot with a repeated kind: %v, want a field error on kinds[1]", err)
	}
	if diff := cmp.Diff(got, h.learner.Snapshot()); diff != "" {
		t.Errorf("a refused import changed the learner (-before +after):\n%s", diff)
	}

	if err := h.e.ResetPreferences(); err != nil {
		t.Fatal(err)
	}
	if s := h.learner.Snapshot(); len(s.Kinds) != 0 || s.Observations != 0 {
		t.Errorf("after reset: kinds %v, %d observations", s.Kinds, s.Observations)
	}
	if s := h.persisted(); len(s.Kinds) != 0 {
		t.Errorf("persisted after reset: kinds %v", s.Kinds)
	}
}

// TestImportRollsBackWhenTheStoreFails: an import or reset that cannot be
// persisted leaves the learner as it was and is reported to readiness.
func TestImportRollsBackWhenTheStoreFails(t *testing.T) {
	h := newHarness(t, harnessOpts{})
	h.learner.Update("cpu", "disk", 0.7)
	before := h.learner.Snapshot()
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	if err := h.e.ImportPreferences(bandit.New(bandit.Config{}).Snapshot()); err == nil {
		t.Fatal("import with a closed store: nil error")
	}
	if err := h.e.ResetPreferences(); err == nil {
		t.Fatal("reset with a closed store: nil error")
	}
	if diff := cmp.Diff(before, h.learner.Snapshot()); diff != "" {
		t.Errorf("learner changed by failed writes (-before +after):\n%s", diff)
	}
	h.e.health.mu.Lock()
	op, f, _ := h.e.health.state.lastWriteFail()
	werr := f.err
	h.e.health.mu.Unlock()
	if op != "preferences" || werr == nil {
		t.Errorf("the last store write readiness saw: %q %v, want the failed preferences save", op, werr)
	}
}

// TestImportDuringLearningIsWhole: imports racing learning ticks never
// leave the store holding something other than the learner's state once
// both stop (the tick and the import are serialised; the tick persists
// whole snapshots).
func TestImportDuringLearningIsWhole(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2})
	h.submit("cpu", "disk", "net", "cpu")
	h.admit()
	from := h.s.Now()
	imp := bandit.New(bandit.Config{})
	imp.Update("x", "y", 0.5)
	var wg sync.WaitGroup
	wg.Go(func() {
		for range 20 {
			if err := h.e.ImportPreferences(imp.Snapshot()); err != nil {
				t.Error(err)
				return
			}
		}
	})
	updates := 0
	for range 20 {
		to := h.advance(30 * time.Second)
		h.sync()
		rep, err := h.e.Learn(h.ctx, from, to)
		if err != nil {
			t.Fatal(err)
		}
		updates += rep.Updates + rep.Profile.Observations
		from = to
	}
	wg.Wait()
	if updates == 0 {
		t.Fatal("the learning ticks learned nothing: the race was not exercised")
	}
	if diff := cmp.Diff(h.learner.Snapshot(), h.persisted()); diff != "" {
		t.Errorf("persisted differs from the learner (-learner +stored):\n%s", diff)
	}
}

// TestReconcileKnowsStoredKinds: after a restart, the kinds of stored
// unfinished jobs are known to the learner even if the persisted
// preferences predate them; finished jobs' kinds are not added.
func TestReconcileKnowsStoredKinds(t *testing.T) {
	h := newHarness(t, harnessOpts{noRecon: true})
	if err := h.e.ResetPreferences(); err != nil {
		t.Fatal(err)
	}
	ids := h.submit("disk", "cpu")
	h.learner.Reset() // as a restart with preferences persisted before these jobs
	if _, err := h.store.Cancel(ids[1]); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Reconcile(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := h.learner.Kinds(); !slices.Equal(got, []string{"disk"}) {
		t.Errorf("after Reconcile the learner knows %v, want [disk] (cpu's only job was cancelled)", got)
	}
}

// TestLearnSaveFailureReachesReadiness: a learning tick whose save fails
// (a full disk) is reported to readiness, as the API's writes are.
func TestLearnSaveFailureReachesReadiness(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2})
	h.submit("cpu", "disk", "net", "cpu")
	h.admit()
	from := h.s.Now()
	to := h.advance(2 * time.Minute)
	h.sync()
	if err := h.store.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := h.e.Learn(h.ctx, from, to); err == nil {
		t.Fatal("Learn with a closed store: nil error")
	}
	h.e.health.mu.Lock()
	op, f, _ := h.e.health.state.lastWriteFail()
	werr := f.err
	h.e.health.mu.Unlock()
	if (op != "preferences" && op != "profiles") || werr == nil {
		t.Errorf("the last store write readiness saw: %q %v, want the failed save of the learned state", op, werr)
	}
}
