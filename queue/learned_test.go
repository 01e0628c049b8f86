package queue_test

import (
	"encoding/json"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

func learnedRow(i int, f ...float64) queue.LearnedRow {
	return queue.LearnedRow{Index: i, Floats: f, Ints: []int64{int64(i)}}
}

// TestLearnedSaveLoad: a full save replaces every row, an incremental one
// only the rows it holds; the header and the dense vector are replaced
// every time; both sections are independent and survive a reopen.
func TestLearnedSaveLoad(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colocd.db")
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadLearned(queue.SectionPreferences); ok || err != nil {
		t.Fatalf("LoadLearned of a new store: %v, %v; want nothing", ok, err)
	}
	full := queue.Learned{Names: []string{"a", "b", "c"}, Meta: json.RawMessage(`{"n":1}`),
		Rows: []queue.LearnedRow{learnedRow(0, 1, 2), learnedRow(2, 3)}}
	prof := queue.Learned{Names: []string{"x"}, Meta: json.RawMessage(`{}`), Dense: []float64{0.5, 0.25}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: full, Full: true},
		queue.LearnedSave{Section: queue.SectionProfiles, State: prof, Full: true}); err != nil {
		t.Fatal(err)
	}
	inc := queue.Learned{Names: []string{"a", "b", "c", "d"}, Meta: json.RawMessage(`{"n":2}`), Rows: []queue.LearnedRow{learnedRow(1, 9), learnedRow(2, 4, 4)}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: inc}); err != nil {
		t.Fatal(err)
	}
	want := queue.Learned{Names: inc.Names, Meta: inc.Meta, Rows: []queue.LearnedRow{learnedRow(0, 1, 2), learnedRow(1, 9), learnedRow(2, 4, 4)}}
	check := func(s *queue.Store, sec queue.Section, want queue.Learned) {
		t.Helper()
		got, ok, err := s.LoadLearned(sec)
		if err != nil || !ok {
			t.Fatalf("LoadLearned(%s): %v, %v", sec, ok, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", sec, diff)
		}
	}
	check(s, queue.SectionPreferences, want)
	check(s, queue.SectionProfiles, prof)
	s.Close()
	s, err = queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	check(s, queue.SectionPreferences, want)
	again := queue.Learned{Names: []string{"z"}, Meta: json.RawMessage(`{"n":3}`), Rows: []queue.LearnedRow{learnedRow(0, 7)}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: again, Full: true}); err != nil {
		t.Fatal(err)
	}
	check(s, queue.SectionPreferences, again)
	check(s, queue.SectionProfiles, prof)

	var fe *queue.FieldError
	bad := queue.Learned{Names: []string{"a"}, Rows: []queue.LearnedRow{learnedRow(1)}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: bad}); !errors.As(err, &fe) || fe.Field != "rows[0]" {
		t.Errorf("saving a row beyond the names: %v, want a field error on rows[0]", err)
	}
	if err := s.SaveLearned(queue.LearnedSave{Section: "fairness", State: again}); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("saving an unknown section: %v, want ErrInvalid", err)
	}
	check(s, queue.SectionPreferences, again)
}

// TestMigrateLearned: the single key of the layout before rows is replaced
// by the rows in one transaction; a key changed since it was read is left
// alone.
func TestMigrateLearned(t *testing.T) {
	s, _ := queuetest.OpenStore(t, queue.Options{})
	old := []byte(`{"version":1}`)
	if err := s.SavePreferences(old); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: queue.Learned{Names: []string{"stale"}, Rows: []queue.LearnedRow{learnedRow(0, 1)}}, Full: true}); err != nil {
		t.Fatal(err)
	}
	st := queue.Learned{Names: []string{"a", "b"}, Meta: json.RawMessage(`{}`), Rows: []queue.LearnedRow{learnedRow(1, 5)}}
	if err := s.MigrateLearned(queue.SectionPreferences, st, []byte(`{"version":0}`)); err == nil {
		t.Error("migrating bytes that are not the stored ones: nil error")
	}
	if b, _ := s.LoadPreferences(); string(b) != string(old) {
		t.Errorf("after a refused migration the old key holds %q", b)
	}
	if err := s.MigrateLearned(queue.SectionPreferences, st, old); err != nil {
		t.Fatal(err)
	}
	if b, err := s.LoadPreferences(); b != nil || err != nil {
		t.Errorf("after migrating, the old key holds %q (%v)", b, err)
	}
	got, ok, err := s.LoadLearned(queue.SectionPreferences)
	if err != nil || !ok {
		t.Fatal(ok, err)
	}
	if diff := cmp.Diff(st, got); diff != "" {
		t.Errorf("migrated rows (-want +got):\n%s", diff)
	}
}

// putLearnedRaw writes raw bytes at key in a section's bucket.
func putLearnedRaw(tb testing.TB, s *queue.Store, sec queue.Section, key, v []byte) {
	tb.Helper()
	err := s.DB().Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("prefs")).Bucket([]byte("learned_"+string(sec))).Put(key, v)
	})
	if err != nil {
		tb.Fatal(err)
	}
}

// TestLearnedDamage: a key of the learned state that does not decode is a
// *LearnedError wrapping ErrCorrupt that names the row's kind, from
// LoadLearned and from Check (which lists every one); nothing panics.
func TestLearnedDamage(t *testing.T) {
	for name, tc := range map[string]struct {
		key, value []byte
		where      string // the LearnedError's Key
		kind       string // the kind it names
	}{
		"row truncated":   {key: []byte{0, 0, 0, 1}, value: []byte{1, 3, 1, 0, 0}, where: "1", kind: "beta"},
		"row format":      {key: []byte{0, 0, 0, 0}, value: []byte{7}, where: "0", kind: "alpha"},
		"row trailing":    {key: []byte{0, 0, 0, 0}, value: []byte{1, 0, 0, 0}, where: "0", kind: "alpha"},
		"row beyond":      {key: []byte{0, 0, 0, 9}, value: []byte{1, 0, 0}, where: "9"},
		"odd key":         {key: []byte("xyz"), value: []byte{1, 0, 0}, where: `"xyz"`},
		"header not json": {key: []byte("header"), value: []byte("{"), where: "header"},
		"header format":   {key: []byte("header"), value: []byte(`{"format":2,"names":["alpha","beta"]}`), where: "header"},
		"dense":           {key: []byte("dense"), value: []byte{1, 5}, where: "dense"},
	} {
		t.Run(name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "colocd.db")
			s, err := queue.Open(path, queue.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			st := queue.Learned{Names: []string{"alpha", "beta"}, Meta: json.RawMessage(`{}`), Rows: []queue.LearnedRow{learnedRow(0, 1), learnedRow(1, 2)}}
			if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: st, Full: true}); err != nil {
				t.Fatal(err)
			}
			putLearnedRaw(t, s, queue.SectionPreferences, tc.key, tc.value)
			_, _, err = s.LoadLearned(queue.SectionPreferences)
			var le *queue.LearnedError
			if !errors.As(err, &le) || !errors.Is(err, queue.ErrCorrupt) || le.Key != tc.where || le.Name != tc.kind || le.Section != queue.SectionPreferences {
				t.Fatalf("LoadLearned: %v (%+v), want a LearnedError at %s naming %q", err, le, tc.where, tc.kind)
			}
			if tc.kind != "" && !strings.Contains(err.Error(), `"`+tc.kind+`"`) {
				t.Errorf("the error %q does not name the kind", err)
			}
			s.Close()
			rep, err := queue.Check(path, queue.CheckOptions{})
			if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Kind != "learned" ||
				rep.Problems[0].Where != "prefs/learned_preferences/"+tc.where || !strings.Contains(rep.Problems[0].What, tc.kind) {
				t.Errorf("Check: %v, %+v; want one learned problem at prefs/learned_preferences/%s naming %q", err, rep.Problems, tc.where, tc.kind)
			}
		})
	}
}

// TestCheckLearned: a clean learned state and a legacy snapshot pass
// Check; a legacy snapshot that is not JSON is a problem.
func TestCheckLearned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colocd.db")
	s, err := queue.Open(path, queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	st := queue.Learned{Names: []string{"alpha"}, Meta: json.RawMessage(`{}`), Dense: []float64{1, 2}, Rows: []queue.LearnedRow{learnedRow(0, 1)}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionProfiles, State: st, Full: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePreferences([]byte(`{"version":1}`)); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if rep, err := queue.Check(path, queue.CheckOptions{}); err != nil || !rep.Clean() {
		t.Fatalf("Check: %v, %s", err, rep.Summary())
	}
	putRaw(t, path, "prefs", []byte("snapshot"), []byte("{not json"))
	rep, err := queue.Check(path, queue.CheckOptions{})
	if err != nil || len(rep.Problems) != 1 || rep.Problems[0].Where != "prefs/snapshot" {
		t.Errorf("Check: %v, %+v; want one problem at prefs/snapshot", err, rep.Problems)
	}
}
