package engine

import (
	"fmt"
	"strings"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/queue"
)

// The engine is the only writer of the learner's state: the learning tick
// updates it, and these methods are how the API adds a kind, imports and
// resets it (api.Controller). Import and reset take the pass lock, so a
// learning tick cannot persist a mix of the old and the new preferences.

// AddKind makes kind known to the learner: a job of it was just stored.
// It does not persist (the kinds of stored jobs are added again at
// Reconcile) and does not wait for a pass in flight.
func (e *Engine) AddKind(kind string) { e.learner.Add(kind) }

// ImportPreferences replaces the learned preferences with s and persists
// them. The configured learning parameters win over the ones in s. An
// invalid snapshot is a *bandit.FieldError wrapping
// bandit.ErrInvalidSnapshot and changes nothing; if persisting fails the
// learner is put back as it was.
//
// An import is held to what the learner's own state can hold: counters
// within bandit.MaxCount (Restore), and kinds that jobs can have (the kind
// rule of queue.Job) or that the placement read makes (other tenants',
// under learning.foreign.prefix, only when this engine reads placement
// with foreign kinds; otherwise the prefix is reserved).
func (e *Engine) ImportPreferences(s bandit.Snapshot) error {
	if err := e.checkImportKinds(s.Kinds); err != nil {
		return err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	before := e.learner.Snapshot()
	if err := e.learner.Restore(s); err != nil {
		return err
	}
	return e.persistOrRollback("import preferences", before)
}

// checkImportKinds refuses the first kind of an import that no job and no
// placement read of this engine could have made.
func (e *Engine) checkImportKinds(kinds []string) error {
	foreign := e.placer != nil && e.placer.cfg.ForeignKinds
	for i, k := range kinds {
		field := fmt.Sprintf("kinds[%d]", i)
		switch {
		case !kindRE.MatchString(k):
			// %.64q: the refusal does not echo a kilobyte of it back.
			return &bandit.FieldError{Field: field, Reason: fmt.Sprintf("%.64q is not a kind: a kind matches %s", k, kindRE), Err: bandit.ErrInvalidSnapshot}
		case strings.HasPrefix(k, e.foreignPrefix) && !foreign:
			return &bandit.FieldError{Field: field, Reason: fmt.Sprintf("%q starts with %q, reserved for other tenants' applications (learning.foreign.prefix), which this colocd does not read", k, e.foreignPrefix), Err: bandit.ErrInvalidSnapshot}
		}
	}
	return nil
}

// ResetPreferences forgets every learned preference and kind, and persists
// that; if persisting fails the learner is put back as it was. A kind
// becomes known again when a job of it is stored or learned from.
func (e *Engine) ResetPreferences() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	before := e.learner.Snapshot()
	e.learner.Reset()
	return e.persistOrRollback("reset preferences", before)
}

// persistOrRollback persists the learner; on failure it restores before.
func (e *Engine) persistOrRollback(op string, before bandit.Snapshot) error {
	err := e.persistPreferences()
	if err == nil {
		return nil
	}
	if rerr := e.learner.Restore(before); rerr != nil {
		e.log.Error("restoring preferences after a failed save", "op", op, "err", rerr)
	}
	return fmt.Errorf("%s: %w", op, err)
}

// knowStoredKinds adds the kinds of every unfinished job in the store to
// the learner (the preferences persisted last may predate them): admitted
// and running jobs first, then pending ones, each oldest first.
func (e *Engine) knowStoredKinds() error {
	seen := map[string]bool{}
	for _, st := range []queue.State{queue.StateAdmitted, queue.StateRunning, queue.StatePending} {
		jobs, err := e.store.List(st, 0)
		if err != nil {
			return fmt.Errorf("list %s jobs: %w", st, err)
		}
		for _, j := range jobs {
			if !seen[j.Kind] {
				seen[j.Kind] = true
				e.learner.Add(j.Kind)
			}
		}
	}
	return nil
}
