package engine

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// TestLearnPersistsWhatChanged: after learning ticks, the preferences and
// the profile model read back from the store are the engine's, exactly;
// and a tick rewrites only the rows of the kinds it updated.
func TestLearnPersistsWhatChanged(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 4, credit: CreditSymmetric})
	h.submit("cpu", "disk", "net", "cpu", "disk", "net")
	h.admit()
	from := h.s.Now()
	for range 6 {
		to := h.advance(time.Minute)
		h.sync()
		if _, err := h.e.Learn(h.ctx, from, to); err != nil {
			t.Fatal(err)
		}
		from = to
	}
	if diff := cmp.Diff(h.learner.Snapshot(), h.persisted()); diff != "" {
		t.Errorf("persisted preferences (-learner +stored):\n%s", diff)
	}
	m := profile.New(h.opts.Profile)
	if ok, err := RestoreProfiles(h.store, m); err != nil || !ok {
		t.Fatalf("RestoreProfiles: %v, %v", ok, err)
	}
	if diff := cmp.Diff(h.e.profiles.Snapshot(), m.Snapshot()); diff != "" {
		t.Errorf("persisted profiles (-model +stored):\n%s", diff)
	}
	// One more update of cpu's row: the next save holds that row alone.
	h.learner.Update("net", "cpu", 20)
	d, ok := h.learner.Changes()
	if !ok || d.Full || len(d.Rows) != 1 || h.learner.Kinds()[d.Rows[0].Index] != "cpu" {
		t.Errorf("after one update of cpu's row: %+v, want that row alone", d)
	}
}

// legacyStore writes a store as colocd wrote it before the row layout: the
// learner's and the model's whole snapshots as JSON under one key each.
func legacyStore(t *testing.T, l *bandit.Learner, m *profile.Model) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "colocd.db")
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for _, w := range []struct {
		save func([]byte) error
		v    any
	}{{s.SavePreferences, l.Snapshot()}, {s.SaveProfiles, m.Snapshot()}} {
		b, err := json.Marshal(w.v)
		if err != nil {
			t.Fatal(err)
		}
		if err := w.save(b); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

// TestRestoreMigratesSingleKeyStore: a store written in the single-key
// layout restores as it was and is migrated to rows (the old keys gone);
// the next start reads the rows and gets the same state.
func TestRestoreMigratesSingleKeyStore(t *testing.T) {
	w := newScaleWorld(30, 200, 5)
	src := scaleEngine(t, w, &memUsage{}, false)
	warmScale(src, w, 10, 40, 60, 60)
	cfg := src.learner.Config()
	path := legacyStore(t, src.learner, src.profiles)
	for start := range 2 {
		s, err := queue.Open(path, queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		l, m := bandit.New(cfg), profile.New(profile.Config{})
		if ok, err := RestoreLearner(s, l, cfg); err != nil || !ok {
			t.Fatalf("start %d: RestoreLearner: %v, %v", start, ok, err)
		}
		if ok, err := RestoreProfiles(s, m); err != nil || !ok {
			t.Fatalf("start %d: RestoreProfiles: %v, %v", start, ok, err)
		}
		if diff := cmp.Diff(src.learner.Snapshot(), l.Snapshot()); diff != "" {
			t.Errorf("start %d: preferences (-written +restored):\n%s", start, diff)
		}
		if diff := cmp.Diff(src.profiles.Snapshot(), m.Snapshot()); diff != "" {
			t.Errorf("start %d: profiles (-written +restored):\n%s", start, diff)
		}
		if _, ok := l.Changes(); ok {
			t.Errorf("start %d: the restored learner records changes: the store already holds them", start)
		}
		if _, ok := m.Changes(); ok {
			t.Errorf("start %d: the restored model records changes", start)
		}
		for what, load := range map[string]func() ([]byte, error){"preferences": s.LoadPreferences, "profiles": s.LoadProfiles} {
			if b, err := load(); b != nil || err != nil {
				t.Errorf("start %d: the single %s key is still there (%d bytes, %v)", start, what, len(b), err)
			}
		}
		s.Close()
		if rep, err := queue.Check(path, queue.CheckOptions{}); err != nil || !rep.Clean() {
			t.Errorf("start %d: Check: %v, %s", start, err, rep.Summary())
		}
	}
}

// TestRestoreDamagedRowNamesKind: a stored row that does not decode, or
// decodes to numbers a learner cannot hold, fails the restore with an
// error naming the row's kind; nothing panics.
func TestRestoreDamagedRowNamesKind(t *testing.T) {
	l := bandit.New(bandit.Config{})
	l.Update("etl", "ml", 10)
	l.Update("ml", "etl", 20)
	d, _ := l.Changes()
	st, err := prefsLearned(d)
	if err != nil {
		t.Fatal(err)
	}
	nan := st
	nan.Rows = append([]queue.LearnedRow(nil), st.Rows...)
	nan.Rows[1].Floats = []float64{1, 0, math.Inf(-1)}
	for name, tc := range map[string]struct {
		st     queue.Learned
		damage []byte // written over the row of "ml" (index 1), if set
		want   string
		is     error
	}{
		"garbage bytes":      {st: st, damage: []byte{1, 0xff}, want: `"ml"`, is: queue.ErrCorrupt},
		"wrong lengths":      {st: st, damage: []byte{1, 1, 3, 0, 0, 0, 0, 0, 0, 0, 0, 2, 4, 0}, want: `rows[1] (kind "ml")`, is: bandit.ErrInvalidSnapshot},
		"not a finite value": {st: nan, want: `rows[1] (kind "ml").h[1]`, is: bandit.ErrInvalidSnapshot},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "colocd.db")
			s, err := queue.Open(path, queue.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: tc.st, Full: true}); err != nil {
				t.Fatal(err)
			}
			s.Close()
			if tc.damage != nil {
				db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: time.Second})
				if err != nil {
					t.Fatal(err)
				}
				err = db.Update(func(tx *bolt.Tx) error {
					return tx.Bucket([]byte("prefs")).Bucket([]byte("learned_preferences")).Put(binary.BigEndian.AppendUint32(nil, 1), tc.damage)
				})
				db.Close()
				if err != nil {
					t.Fatal(err)
				}
			}
			if s, err = queue.Open(path, queue.Options{NoSync: true}); err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ok, err := RestoreLearner(s, bandit.New(bandit.Config{}), bandit.Config{})
			if ok || !errors.Is(err, tc.is) || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("RestoreLearner: %v, %v; want an error wrapping %v naming %s", ok, err, tc.is, tc.want)
			}
		})
	}
}

// TestProfilesRowsRejected: profile rows that do not fit the layout are
// errors naming the kind (or the demands), never a panic.
func TestProfilesRowsRejected(t *testing.T) {
	good := func() queue.Learned {
		return queue.Learned{Names: []string{"a", "b"}, Meta: json.RawMessage(`{"version":1,"scale":1,"sigma2":[1,1,1,1,1,1]}`),
			Dense: make([]float64, 12),
			Rows: []queue.LearnedRow{
				{Index: 0, Floats: []float64{2, 0, 0, 0, 0, 0, 0, 0.5}, Ints: []int64{1, 1}},
				{Index: 1, Floats: []float64{2, 0, 0, 0, 0, 0, 0}, Ints: []int64{1}},
			}}
	}
	if _, err := profilesSnapshot(good()); err != nil {
		t.Fatalf("the good rows: %v", err)
	}
	for name, tc := range map[string]struct {
		mutate func(st *queue.Learned)
		want   string
	}{
		"demands":       {func(st *queue.Learned) { st.Dense = st.Dense[:11] }, "demand"},
		"header":        {func(st *queue.Learned) { st.Meta = json.RawMessage(`[`) }, "header"},
		"lengths":       {func(st *queue.Learned) { st.Rows[1].Ints = []int64{1, 0} }, `rows[1] (kind "b")`},
		"no ints":       {func(st *queue.Learned) { st.Rows[1].Ints = nil }, `rows[1] (kind "b")`},
		"column":        {func(st *queue.Learned) { st.Rows[0].Ints[1] = -3 }, `rows[0] (kind "a").off[0]`},
		"column beyond": {func(st *queue.Learned) { st.Rows[0].Ints[1] = 2 }, `rows[0] (kind "a").off[0]`},
	} {
		st := good()
		tc.mutate(&st)
		_, err := profilesSnapshot(st)
		var fe *profile.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, profile.ErrInvalidSnapshot) || fe.Field != tc.want {
			t.Errorf("%s: %v, want a field error on %s", name, err, tc.want)
		}
	}
}
