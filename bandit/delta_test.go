package bandit_test

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
)

// rowStore keeps what Changes returned as a store in the row layout would:
// the last header and the rows by index.
type rowStore struct {
	header bandit.Delta
	rows   map[int]bandit.Row
	saved  bool
}

func (s *rowStore) apply(d bandit.Delta) {
	if d.Full || s.rows == nil {
		s.rows = map[int]bandit.Row{}
	}
	for _, r := range d.Rows {
		s.rows[r.Index] = r
	}
	d.Rows = nil
	s.header, s.saved = d, true
}

// load reads the store back as a Full delta's snapshot.
func (s *rowStore) load(tb testing.TB) bandit.Snapshot {
	tb.Helper()
	d := s.header
	d.Full = true
	for _, i := range slices.Sorted(func(yield func(int) bool) {
		for i := range s.rows {
			if !yield(i) {
				return
			}
		}
	}) {
		d.Rows = append(d.Rows, s.rows[i])
	}
	snap, err := d.Snapshot()
	if err != nil {
		tb.Fatalf("reading the rows back: %v", err)
	}
	return snap
}

// TestChangesReadBackExactly drives learners with every kind of change —
// adds, updates (rejected ones too), AddSimilar, Restore, Reset — and
// saves to a row store after each batch, sometimes failing the save
// (Unsaved): what the store reads back is always the learner's state, bit
// for bit, and a learner restored from it (RestoreSaved) records no
// change.
func TestChangesReadBackExactly(t *testing.T) {
	for _, cfg := range []bandit.Config{{}, {SelfPrior: 2, Clip: 1.5, Baseline: bandit.RowMean}, {StepSize: 0.5, Baseline: bandit.Recency}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			rng, _ := seedRNG(t)
			l := newLearner(t, cfg)
			var st rowStore
			kinds := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
			for step := range 400 {
				k := func() string { return kinds[rng.IntN(len(kinds))] }
				switch op := rng.IntN(40); {
				case op < 3:
					l.Add(k())
				case op == 3:
					l.AddSimilar(fmt.Sprintf("sim%d", step), map[string]float64{k(): 1, k(): 2})
				case op == 4 && step%50 == 0:
					l.Reset()
				case op == 5:
					src := learned(t, cfg)
					if err := l.Restore(src.Snapshot()); err != nil {
						t.Fatal(err)
					}
				case op == 6:
					l.Update(k(), k(), math.NaN())
				default:
					l.Update(k(), k(), math.E+50*rng.Float64())
				}
				if rng.IntN(4) > 0 {
					continue
				}
				d, ok := l.Changes()
				if !ok {
					continue
				}
				if rng.IntN(5) == 0 { // the save failed
					l.Unsaved(d)
					continue
				}
				st.apply(d)
				if diff := cmp.Diff(l.Snapshot(), st.load(t)); diff != "" {
					t.Fatalf("step %d: the rows read back (-learner +store):\n%s", step, diff)
				}
				if _, ok := l.Changes(); ok {
					t.Fatalf("step %d: Changes right after Changes reports a change", step)
				}
			}
			if d, ok := l.Changes(); ok {
				st.apply(d)
			}
			r := bandit.New(cfg)
			if err := r.RestoreSaved(st.load(t)); err != nil {
				t.Fatal(err)
			}
			if d, ok := r.Changes(); ok {
				t.Errorf("RestoreSaved of what the store holds records changes: %+v", d)
			}
			if diff := cmp.Diff(l.Snapshot(), r.Snapshot()); diff != "" {
				t.Errorf("restored learner (-learner +restored):\n%s", diff)
			}
		})
	}
}

// TestChangesRows: an update changes only its running kind's row; an added
// kind only the header; a never-observed, initial row is left out of a
// Full delta; rows written before a kind was added are short.
func TestChangesRows(t *testing.T) {
	l := newLearner(t, bandit.Config{SelfPrior: 1}, "a", "b", "c")
	d, ok := l.Changes()
	if !ok || !d.Full || len(d.Rows) != 0 || !slices.Equal(d.Kinds, []string{"a", "b", "c"}) {
		t.Fatalf("a new learner's first Changes: %+v, %v; want Full with no row (all initial)", d, ok)
	}
	l.Update("b", "a", 10)
	l.Update("c", "a", 12)
	l.Add("d")
	d, _ = l.Changes()
	if d.Full || len(d.Rows) != 1 || d.Rows[0].Index != 0 || len(d.Rows[0].H) != 4 || d.Rows[0].Observations != 2 || len(d.Kinds) != 4 {
		t.Fatalf("after two updates of row a and a new kind: %+v, want row a alone, 4 kinds", d)
	}
	l.Add("e")
	d, ok = l.Changes()
	if !ok || len(d.Rows) != 0 || len(d.Kinds) != 5 {
		t.Errorf("after an Add: %+v, %v; want the header alone", d, ok)
	}
	l.Update("x", "y", math.Inf(1))
	if d, ok = l.Changes(); !ok || d.Rejected != 1 || len(d.Rows) != 0 {
		t.Errorf("after a rejected update: %+v, %v; want the header with the count", d, ok)
	}
	if _, ok := l.Changes(); ok {
		t.Error("Changes with nothing changed reports a change")
	}
	// Reading back a store holding row a as written before d and e came.
	back := bandit.Delta{Full: true, Version: bandit.SnapshotVersion, Config: l.Config(), Kinds: l.Kinds(), Baseline: l.Snapshot().Baseline, Observations: 2, Rejected: 1,
		Rows: []bandit.Row{{Index: 0, H: l.Snapshot().H[0][:3], Pairs: []int64{0, 1, 1}, Baseline: l.Snapshot().RowBaseline[0], Observations: 2}}}
	s, err := back.Snapshot()
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(l.Snapshot(), s); diff != "" {
		t.Errorf("short row and initial rows read back (-learner +read):\n%s", diff)
	}
}

// TestRestoreSavedChangedInitialRows: a learner whose initial rows differ
// from the stored ones (another SelfPrior), or that clips the stored
// values, counts everything as changed, so the next save rewrites every
// row.
func TestRestoreSavedChangedInitialRows(t *testing.T) {
	src := learned(t, bandit.Config{StepSize: 2})
	for name, cfg := range map[string]bandit.Config{"self prior": {SelfPrior: 3}, "clip": {Clip: 0.5}} {
		l := newLearner(t, cfg)
		if err := l.RestoreSaved(src.Snapshot()); err != nil {
			t.Fatal(err)
		}
		if d, ok := l.Changes(); !ok || !d.Full {
			t.Errorf("%s: Changes after RestoreSaved = %v, full %v; want a Full delta", name, ok, d.Full)
		}
	}
}

// TestDeltaSnapshotRejects: rows that cannot be read back are errors
// naming the row's kind.
func TestDeltaSnapshotRejects(t *testing.T) {
	good := func() bandit.Delta {
		return bandit.Delta{Full: true, Version: bandit.SnapshotVersion, Kinds: []string{"a", "b"}, Observations: 1,
			Rows: []bandit.Row{{Index: 1, H: []float64{0.5, -0.5}, Pairs: []int64{1, 0}, Observations: 1}}}
	}
	if _, err := good().Snapshot(); err != nil {
		t.Fatalf("the good delta: %v", err)
	}
	for _, tc := range []struct {
		name, field string
		mutate      func(d *bandit.Delta)
	}{
		{"index", "rows[0]", func(d *bandit.Delta) { d.Rows[0].Index = 2 }},
		{"negative index", "rows[0]", func(d *bandit.Delta) { d.Rows[0].Index = -1 }},
		{"repeated", `rows[1] (kind "b")`, func(d *bandit.Delta) { d.Rows = append(d.Rows, d.Rows[0]) }},
		{"too long", `rows[1] (kind "b")`, func(d *bandit.Delta) { d.Rows[0].H, d.Rows[0].Pairs = []float64{0, 0, 0}, []int64{1, 0, 0} }},
		{"lengths differ", `rows[1] (kind "b")`, func(d *bandit.Delta) { d.Rows[0].Pairs = []int64{1} }},
		{"NaN", `rows[1] (kind "b").h[1]`, func(d *bandit.Delta) { d.Rows[0].H[1] = math.NaN() }},
		{"negative count", `rows[1] (kind "b").pairs[1]`, func(d *bandit.Delta) { d.Rows[0].Pairs[1] = -1 }},
		{"count sum", `rows[1] (kind "b")`, func(d *bandit.Delta) { d.Rows[0].Observations = 5 }},
		{"baseline", `rows[1] (kind "b").baseline`, func(d *bandit.Delta) { d.Rows[0].Baseline = math.Inf(-1) }},
		{"config", "config", func(d *bandit.Delta) { d.Config.StepSize = -1 }},
	} {
		d := good()
		tc.mutate(&d)
		_, err := d.Snapshot()
		var fe *bandit.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, bandit.ErrInvalidSnapshot) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a field error on %s", tc.name, err, tc.field)
		}
	}
}
