package engine

import (
	"bytes"
	"encoding/json"

	"github.com/colocd/colocd/pipeline"
)

// restoreFairness loads the fairness stage's stored state (deficits,
// long-term shares, service-curve accounting) into the pipeline, so that a
// restart resets nobody's debt. A state the pipeline cannot use (fairness
// off, the curve window changed) is logged, not an error; one that does
// not decode is.
func (e *Engine) restoreFairness() error {
	var s pipeline.FairnessState
	ok, err := loadJSON(e.store.LoadFairness, "fairness state", &s)
	if err != nil || !ok {
		return err
	}
	e.fairSaved, _ = json.Marshal(s)
	if dropped := e.pipeline.RestoreFairness(s); dropped != "" {
		e.log.Warn("fairness state not restored in full", "why", dropped)
		return nil
	}
	e.log.Info("fairness state restored", "groups", len(s.Deficits), "curves", s.Curves != nil)
	return nil
}

// persistFairness stores the fairness stage's state at the end of an
// admission pass that decided when its decisions changed it (one write per
// pass, none when nothing changed; a pass that took no decision reads
// nothing). A failed write is logged and reported to
// readiness (StoreWrite); the admissions stand, and the next pass writes
// the state again. A crash within a pass loses at most that pass's
// charges, never the debts stored before it.
func (e *Engine) persistFairness() {
	if !e.fairDirty {
		return
	}
	s, ok := e.pipeline.FairnessState()
	if !ok {
		e.fairDirty = false
		return
	}
	b, err := json.Marshal(s)
	if err == nil && bytes.Equal(b, e.fairSaved) {
		e.fairDirty = false
		return
	}
	if err == nil {
		err = e.store.SaveFairness(b)
	}
	e.StoreWrite("fairness", err)
	if err != nil {
		e.log.Warn("fairness state not saved", "err", err)
		return
	}
	e.fairDirty = false
	e.fairSaved = b
}

// Queues is the fairness stage's view of the queues as of the last
// decision (GET /v1/queues).
func (e *Engine) Queues() pipeline.QueuesReport {
	return e.pipeline.Queues()
}
