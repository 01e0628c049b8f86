package engine

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// The learned state is persisted in the store's row layout (queue.Learned):
// each save writes what changed since the last one (the learner's and the
// model's Changes), in one transaction. This file translates between the
// models' deltas and the store's rows:
//
//	preferences  names = kinds; meta = prefsMeta (JSON);
//	             row i: floats [row baseline, H(·|kind i)...],
//	                    ints   [row observations, pair observations...]
//	profiles     names = kinds; meta = profilesMeta (JSON);
//	             dense: every kind's demand, 6 floats each;
//	             row i: floats [diag, b (6), value of each off-diagonal entry...],
//	                    ints   [ticks, column j of each entry (j > i)...]

// prefsMeta is the preferences' header (bandit.Delta without kinds and
// rows).
type prefsMeta struct {
	Version      int           `json:"version"`
	Config       bandit.Config `json:"config"`
	Baseline     float64       `json:"baseline"`
	Observations int64         `json:"observations"`
	Rejected     int64         `json:"rejected"`
}

// profilesMeta is the profile model's header (profile.Delta without kinds,
// demands and rows).
type profilesMeta struct {
	Version      int            `json:"version"`
	Config       profile.Config `json:"config"`
	Scale        float64        `json:"scale"`
	Baseline     profile.Vector `json:"baseline"`
	Idle         float64        `json:"idle"`
	Sigma2       profile.Vector `json:"sigma2"`
	TotalTicks   int64          `json:"total_ticks"`
	Observations int64          `json:"observations"`
}

// persistLearned saves what changed in the pair preferences (with prefs)
// and in the profile model (with profiles), in one transaction, and tells
// readiness how the write went (StoreWrite, as "preferences" when they
// were part of it, else "profiles"), whoever asked for the save. What a
// failed save held is handed back to the models, so the next save writes
// it.
func (e *Engine) persistLearned(prefs, profiles bool) error {
	var (
		pd       bandit.Delta
		md       profile.Delta
		pok, mok bool
	)
	op := "profiles"
	if prefs {
		op = "preferences"
		pd, pok = e.learner.Changes()
	}
	if profiles {
		md, mok = e.profiles.Changes()
	}
	if !pok && !mok {
		return nil
	}
	err := e.saveLearned(pd, pok, md, mok)
	if err != nil {
		if pok {
			e.learner.Unsaved(pd)
		}
		if mok {
			e.profiles.Unsaved(md)
		}
		err = fmt.Errorf("save %s: %w", op, err)
	}
	e.StoreWrite(op, err)
	return err
}

// saveLearned writes the deltas marked ok in one transaction.
func (e *Engine) saveLearned(pd bandit.Delta, pok bool, md profile.Delta, mok bool) error {
	var saves []queue.LearnedSave
	if pok {
		st, err := prefsLearned(pd)
		if err != nil {
			return err
		}
		saves = append(saves, queue.LearnedSave{Section: queue.SectionPreferences, State: st, Full: pd.Full})
	}
	if mok {
		st, err := profilesLearned(md)
		if err != nil {
			return err
		}
		saves = append(saves, queue.LearnedSave{Section: queue.SectionProfiles, State: st, Full: md.Full})
	}
	return e.store.SaveLearned(saves...)
}

// persistPreferences saves what changed in the pair preferences.
func (e *Engine) persistPreferences() error { return e.persistLearned(true, false) }

// RestoreLearner loads the persisted preferences into l, if any. A store
// in the single-key layout of colocd before the row layout is migrated:
// the snapshot is restored, written in rows and the old key deleted, in
// one transaction. (Where both are found, the single key wins: only an
// older colocd writes it, after this one last ran.) The configured
// learning parameters (l's) win over the ones stored with them. A stored
// row that does not decode or does not fit is an error naming its kind.
func RestoreLearner(store *queue.Store, l *bandit.Learner, cfg bandit.Config) (bool, error) {
	return restoreLearned(store, learnedSection[bandit.Snapshot, bandit.Delta]{
		what: "preferences", section: queue.SectionPreferences, legacy: store.LoadPreferences,
		fromLegacy: func(s *bandit.Snapshot) { s.Config = cfg },
		toRows:     prefsLearned, fromRows: prefsSnapshot,
	}, l)
}

// RestoreProfiles loads the persisted profile model into m, if any,
// migrating a store in the single-key layout as RestoreLearner does. The
// configured parameters win over the ones stored with it.
func RestoreProfiles(store *queue.Store, m *profile.Model) (bool, error) {
	return restoreLearned(store, learnedSection[profile.Snapshot, profile.Delta]{
		what: "profiles", section: queue.SectionProfiles, legacy: store.LoadProfiles,
		toRows: profilesLearned, fromRows: profilesSnapshot,
	}, m)
}

// learnedModel is what restoreLearned needs of the learner and of the
// profile model: S is its snapshot, D its delta.
type learnedModel[S, D any] interface {
	Restore(S) error
	RestoreSaved(S) error
	Changes() (D, bool)
	Unsaved(D)
}

// learnedSection says how one model is stored: its name in errors, its
// section of rows, the loader of its single-key layout (and what to set in
// a snapshot read from it), and the translations to and from rows.
type learnedSection[S, D any] struct {
	what       string
	section    queue.Section
	legacy     func() ([]byte, error)
	fromLegacy func(*S) // nil: nothing
	toRows     func(D) (queue.Learned, error)
	fromRows   func(queue.Learned) (S, error)
}

// LearnedStateError is a section of the stored learned state that cannot
// be restored: it does not decode (Err wraps queue.ErrCorrupt, or is a JSON
// error of the layout before rows) or its model refuses it (Err wraps
// bandit.ErrInvalidSnapshot or profile.ErrInvalidSnapshot). The model is
// unchanged. RestoreOrQuarantine quarantines such a section.
type LearnedStateError struct {
	Section queue.Section
	Err     error
}

func (e *LearnedStateError) Error() string { return fmt.Sprintf("restore %s: %v", e.Section, e.Err) }

// Unwrap returns what was wrong.
func (e *LearnedStateError) Unwrap() error { return e.Err }

// RestoreOrQuarantine runs restore (RestoreLearner or RestoreProfiles) so
// that a bad stored state does not keep the daemon from starting: when
// restore fails with a *LearnedStateError, the section is quarantined in
// the store (queue.Store.QuarantineLearned, which logs it at ERROR; Store.Quarantined
// and `colocd store check` list it) and its model, which restore left
// unchanged, starts fresh. quarantined is then that error, for the caller
// to count. Any other failure — the store's, or the quarantine's — is err,
// and the daemon must not start on it.
func RestoreOrQuarantine(store *queue.Store, restore func() (bool, error)) (restored bool, quarantined *LearnedStateError, err error) {
	restored, err = restore()
	var lse *LearnedStateError
	if !errors.As(err, &lse) {
		return restored, nil, err
	}
	if qerr := store.QuarantineLearned(lse.Section, lse.Error()); qerr != nil {
		return false, nil, fmt.Errorf("%w (quarantining it: %w)", err, qerr)
	}
	return false, lse, nil
}

// restoreLearned restores m from the store: from the single-key layout,
// migrated to rows, when that is there, else from the rows. A stored state
// that does not decode or that m refuses is a *LearnedStateError.
func restoreLearned[S, D any](store *queue.Store, sec learnedSection[S, D], m learnedModel[S, D]) (bool, error) {
	bad := func(err error) error { return &LearnedStateError{Section: sec.section, Err: err} }
	legacy, err := sec.legacy()
	if err != nil {
		return false, fmt.Errorf("load %s: %w", sec.what, err)
	}
	if legacy != nil {
		var s S
		if err := json.Unmarshal(legacy, &s); err != nil {
			return false, bad(fmt.Errorf("decode the stored snapshot: %w", err))
		}
		if sec.fromLegacy != nil {
			sec.fromLegacy(&s)
		}
		if err := m.Restore(s); err != nil {
			return false, bad(err)
		}
		d, _ := m.Changes()
		st, err := sec.toRows(d)
		if err == nil {
			err = store.MigrateLearned(sec.section, st, legacy)
		}
		if err != nil {
			m.Unsaved(d)
			return false, fmt.Errorf("migrate stored %s to rows: %w", sec.what, err)
		}
		return true, nil
	}
	st, ok, err := store.LoadLearned(sec.section)
	var le *queue.LearnedError
	switch {
	case errors.As(err, &le):
		return false, bad(err)
	case err != nil || !ok:
		return false, err
	}
	s, err := sec.fromRows(st)
	if err == nil {
		err = m.RestoreSaved(s)
	}
	if err != nil {
		return false, bad(err)
	}
	return true, nil
}

// prefsLearned lays a learner's delta out in rows.
func prefsLearned(d bandit.Delta) (queue.Learned, error) {
	meta, err := json.Marshal(prefsMeta{Version: d.Version, Config: d.Config, Baseline: d.Baseline, Observations: d.Observations, Rejected: d.Rejected})
	if err != nil {
		return queue.Learned{}, fmt.Errorf("encode preferences header: %w", err)
	}
	st := queue.Learned{Names: d.Kinds, Meta: meta, Rows: make([]queue.LearnedRow, len(d.Rows))}
	for n, r := range d.Rows {
		f := make([]float64, 0, len(r.H)+1)
		i := make([]int64, 0, len(r.Pairs)+1)
		st.Rows[n] = queue.LearnedRow{Index: r.Index, Floats: append(append(f, r.Baseline), r.H...), Ints: append(append(i, r.Observations), r.Pairs...)}
	}
	return st, nil
}

// prefsSnapshot reads the preferences back from their rows.
func prefsSnapshot(st queue.Learned) (bandit.Snapshot, error) {
	var meta prefsMeta
	if err := json.Unmarshal(st.Meta, &meta); err != nil {
		return bandit.Snapshot{}, &bandit.FieldError{Field: "header", Reason: err.Error(), Err: bandit.ErrInvalidSnapshot}
	}
	d := bandit.Delta{
		Full: true, Version: meta.Version, Config: meta.Config, Kinds: st.Names,
		Baseline: meta.Baseline, Observations: meta.Observations, Rejected: meta.Rejected,
		Rows: make([]bandit.Row, len(st.Rows)),
	}
	for n, r := range st.Rows {
		if len(r.Floats) == 0 || len(r.Floats) != len(r.Ints) {
			return bandit.Snapshot{}, &bandit.FieldError{
				Field:  fmt.Sprintf("rows[%d] (kind %q)", r.Index, st.Names[r.Index]),
				Reason: fmt.Sprintf("holds %d floats and %d integers, want as many of each, at least one", len(r.Floats), len(r.Ints)),
				Err:    bandit.ErrInvalidSnapshot,
			}
		}
		d.Rows[n] = bandit.Row{Index: r.Index, Baseline: r.Floats[0], H: r.Floats[1:], Observations: r.Ints[0], Pairs: r.Ints[1:]}
	}
	return d.Snapshot()
}

// profilesLearned lays a profile model's delta out in rows.
func profilesLearned(d profile.Delta) (queue.Learned, error) {
	meta, err := json.Marshal(profilesMeta{
		Version: d.Version, Config: d.Config, Scale: d.Scale, Baseline: d.Baseline, Idle: d.Idle,
		Sigma2: d.Sigma2, TotalTicks: d.TotalTicks, Observations: d.Observations,
	})
	if err != nil {
		return queue.Learned{}, fmt.Errorf("encode profiles header: %w", err)
	}
	st := queue.Learned{Names: d.Kinds, Meta: meta, Dense: make([]float64, 0, len(d.Demand)*int(profile.NumResources)), Rows: make([]queue.LearnedRow, len(d.Rows))}
	for _, v := range d.Demand {
		st.Dense = append(st.Dense, v[:]...)
	}
	for n, r := range d.Rows {
		f := make([]float64, 0, 1+int(profile.NumResources)+len(r.Off))
		f = append(append(f, r.Diag), r.B[:]...)
		i := make([]int64, 0, 1+len(r.Off))
		i = append(i, r.Ticks)
		for _, o := range r.Off {
			f, i = append(f, o.V), append(i, int64(o.J))
		}
		st.Rows[n] = queue.LearnedRow{Index: r.Index, Floats: f, Ints: i}
	}
	return st, nil
}

// profilesSnapshot reads the profile model back from its rows.
func profilesSnapshot(st queue.Learned) (profile.Snapshot, error) {
	bad := func(field, format string, args ...any) error {
		return &profile.FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: profile.ErrInvalidSnapshot}
	}
	var meta profilesMeta
	if err := json.Unmarshal(st.Meta, &meta); err != nil {
		return profile.Snapshot{}, bad("header", "%v", err)
	}
	const nr = int(profile.NumResources)
	if len(st.Dense) != nr*len(st.Names) {
		return profile.Snapshot{}, bad("demand", "holds %d numbers for %d kinds, want %d per kind", len(st.Dense), len(st.Names), nr)
	}
	d := profile.Delta{
		Full: true, Version: meta.Version, Config: meta.Config, Kinds: st.Names, Scale: meta.Scale,
		Baseline: meta.Baseline, Idle: meta.Idle, Sigma2: meta.Sigma2, TotalTicks: meta.TotalTicks,
		Observations: meta.Observations, Demand: make([]profile.Vector, len(st.Names)), Rows: make([]profile.Row, len(st.Rows)),
	}
	for k := range d.Demand {
		d.Demand[k] = profile.Vector(st.Dense[k*nr : (k+1)*nr])
	}
	for n, r := range st.Rows {
		off := len(r.Ints) - 1
		if off < 0 || len(r.Floats) != 1+nr+off {
			return profile.Snapshot{}, bad(fmt.Sprintf("rows[%d] (kind %q)", r.Index, st.Names[r.Index]),
				"holds %d floats and %d integers, want 1+%d+n and 1+n", len(r.Floats), len(r.Ints), nr)
		}
		row := profile.Row{Index: r.Index, Diag: r.Floats[0], B: profile.Vector(r.Floats[1 : 1+nr]), Ticks: r.Ints[0], Off: make([]profile.OffEntry, off)}
		for e := range off {
			j := r.Ints[1+e]
			if j < 0 || j > 1<<30 {
				return profile.Snapshot{}, bad(fmt.Sprintf("rows[%d] (kind %q).off[%d]", r.Index, st.Names[r.Index], e), "column %d out of range", j)
			}
			row.Off[e] = profile.OffEntry{I: r.Index, J: int(j), V: r.Floats[1+nr+e]}
		}
		d.Rows[n] = row
	}
	return d.Snapshot()
}

// loadJSON decodes what load returns into v; false when nothing is stored.
func loadJSON(load func() ([]byte, error), what string, v any) (bool, error) {
	b, err := load()
	if err != nil {
		return false, fmt.Errorf("load %s: %w", what, err)
	}
	if b == nil {
		return false, nil
	}
	if err := json.Unmarshal(b, v); err != nil {
		return false, fmt.Errorf("decode stored %s: %w", what, err)
	}
	return true, nil
}
