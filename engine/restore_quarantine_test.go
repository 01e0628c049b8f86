package engine

import (
	"encoding/json"
	"errors"
	"math"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/queue"
)

// poisonPreferences stores preferences no learner restores: counters past
// the int64 maximum's reach, as an overflow left them before MaxCount.
func poisonPreferences(t *testing.T, s *queue.Store) {
	t.Helper()
	meta, err := json.Marshal(prefsMeta{Version: 1, Observations: math.MinInt64})
	if err != nil {
		t.Fatal(err)
	}
	st := queue.Learned{Names: []string{"cpu", "disk"}, Meta: meta, Rows: []queue.LearnedRow{
		{Index: 0, Floats: []float64{0.4, 0, 0.5}, Ints: []int64{math.MinInt64, 0, math.MinInt64}},
	}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: st, Full: true}); err != nil {
		t.Fatal(err)
	}
}

// TestRestoreOrQuarantine: a stored state that does not restore — refused
// by the model, or not decoding — is quarantined and the model starts
// fresh; the other section is restored; the next start finds nothing to
// restore and nothing to quarantine; a failing store is an error, not a
// quarantine.
func TestRestoreOrQuarantine(t *testing.T) {
	for _, tc := range []struct {
		name   string
		poison func(t *testing.T, s *queue.Store)
		is     error
	}{
		{"refused by the learner", poisonPreferences, bandit.ErrInvalidSnapshot},
		{"legacy snapshot not JSON", func(t *testing.T, s *queue.Store) {
			if err := s.SavePreferences([]byte("{not json")); err != nil {
				t.Fatal(err)
			}
		}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), "colocd.db")
			s, err := queue.Open(path, queue.Options{NoSync: true})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			// Good profiles beside the bad preferences.
			h := newHarness(t, harnessOpts{})
			h.learner.Update("cpu", "disk", 0.5)
			d, _ := h.e.profiles.Changes()
			pst, err := profilesLearned(d)
			if err != nil {
				t.Fatal(err)
			}
			if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionProfiles, State: pst, Full: true}); err != nil {
				t.Fatal(err)
			}
			tc.poison(t, s)

			l := bandit.New(bandit.Config{})
			restored, q, err := RestoreOrQuarantine(s, func() (bool, error) { return RestoreLearner(s, l, bandit.Config{}) })
			if err != nil || restored || q == nil || q.Section != queue.SectionPreferences || (tc.is != nil && !errors.Is(q, tc.is)) {
				t.Fatalf("RestoreOrQuarantine: %v, %v, %v; want the preferences quarantined (%v)", restored, q, err, tc.is)
			}
			if diff := cmp.Diff(bandit.New(bandit.Config{}).Snapshot(), l.Snapshot()); diff != "" {
				t.Errorf("the learner after a quarantine is not fresh (-want +got):\n%s", diff)
			}
			qs, err := s.Quarantined()
			if err != nil || len(qs) == 0 || !strings.Contains(qs[0].Reason, "restore preferences") {
				t.Errorf("Quarantined: %+v, %v; want the preferences' keys with the restore's error", qs, err)
			}
			m := h.e.profiles
			if ok, q, err := RestoreOrQuarantine(s, func() (bool, error) { return RestoreProfiles(s, m) }); !ok || q != nil || err != nil {
				t.Errorf("the profiles beside them: %v, %v, %v; want them restored", ok, q, err)
			}
			// The next start: nothing stored, nothing quarantined.
			n := len(qs)
			if ok, q, err := RestoreOrQuarantine(s, func() (bool, error) { return RestoreLearner(s, l, bandit.Config{}) }); ok || q != nil || err != nil {
				t.Errorf("the next start: %v, %v, %v; want nothing restored and nothing quarantined", ok, q, err)
			}
			if qs, _ := s.Quarantined(); len(qs) != n {
				t.Errorf("the next start quarantined again: %d entries, want %d", len(qs), n)
			}
		})
	}
	t.Run("a failing store", func(t *testing.T) {
		s, err := queue.Open(filepath.Join(t.TempDir(), "colocd.db"), queue.Options{NoSync: true})
		if err != nil {
			t.Fatal(err)
		}
		poisonPreferences(t, s)
		s.Close()
		ok, q, err := RestoreOrQuarantine(s, func() (bool, error) { return RestoreLearner(s, bandit.New(bandit.Config{}), bandit.Config{}) })
		if ok || q != nil || !errors.Is(err, queue.ErrClosed) {
			t.Errorf("with a closed store: %v, %v, %v; want ErrClosed and no quarantine", ok, q, err)
		}
	})
}
