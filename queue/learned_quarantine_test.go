package queue_test

import (
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// TestQuarantineLearned: a quarantined section's keys (and its single-key
// snapshot of the layout before rows) move to the quarantine bucket with
// their bytes and the reason, the section reads as empty, the other
// section is untouched, the file checks clean and lists them, a second
// quarantine keeps the first's entries, and an empty section writes
// nothing.
func TestQuarantineLearned(t *testing.T) {
	path := filepath.Join(t.TempDir(), "colocd.db")
	clk := queuetest.NewClock(time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC))
	s, err := queue.Open(path, queue.Options{NoSync: true, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	prefs := queue.Learned{Names: []string{"a", "b"}, Meta: json.RawMessage(`{"observations":9223372036854775807}`),
		Rows: []queue.LearnedRow{learnedRow(0, 1, 2), learnedRow(1, 3)}}
	prof := queue.Learned{Names: []string{"x"}, Meta: json.RawMessage(`{}`), Dense: []float64{0.5}}
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: prefs, Full: true},
		queue.LearnedSave{Section: queue.SectionProfiles, State: prof, Full: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.SavePreferences([]byte(`{"legacy":true}`)); err != nil {
		t.Fatal(err)
	}
	const reason = "restore preferences: observations is too large"
	if err := s.QuarantineLearned(queue.SectionPreferences, reason); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := s.LoadLearned(queue.SectionPreferences); ok || err != nil {
		t.Errorf("LoadLearned(preferences) after quarantine: %v, %v; want nothing", ok, err)
	}
	if b, err := s.LoadPreferences(); b != nil || err != nil {
		t.Errorf("LoadPreferences after quarantine: %q, %v; want nothing", b, err)
	}
	if got, ok, err := s.LoadLearned(queue.SectionProfiles); !ok || err != nil || !cmp.Equal(prof, got) {
		t.Errorf("profiles after quarantining the preferences: %+v, %v, %v; want them as saved", got, ok, err)
	}
	q, err := s.Quarantined()
	if err != nil {
		t.Fatal(err)
	}
	at := clk.Now()
	suffix := "@" + at.Format(time.RFC3339Nano)
	type entry struct{ Bucket, Key, Reason string }
	var got []entry
	for _, e := range q {
		if !e.At.Equal(at) || len(e.Raw) == 0 {
			t.Errorf("entry %s/%s: at %v, %d bytes; want %v and its bytes", e.Bucket, e.Key, e.At, len(e.Raw), at)
		}
		got = append(got, entry{e.Bucket, e.Key, e.Reason})
	}
	want := []entry{ // in the quarantine bucket's key order
		{"prefs/learned_preferences", "0" + suffix, reason},
		{"prefs/learned_preferences", "1" + suffix, reason},
		{"prefs/learned_preferences", "header" + suffix, reason},
		{"prefs", "snapshot" + suffix, reason},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("quarantined (-want +got):\n%s", diff)
	}
	for _, e := range q {
		if e.Key == "header"+suffix {
			var h struct{ Names []string }
			if err := json.Unmarshal(e.Raw, &h); err != nil || !cmp.Equal(prefs.Names, h.Names) {
				t.Errorf("the quarantined header %q: want the saved one", e.Raw)
			}
		}
	}

	// Nothing to move: nothing written.
	clk.Advance(time.Minute)
	if err := s.QuarantineLearned(queue.SectionPreferences, "again"); err != nil {
		t.Fatal(err)
	}
	// A second state quarantined later keeps the first's entries.
	if err := s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, State: prefs, Full: true}); err != nil {
		t.Fatal(err)
	}
	if err := s.QuarantineLearned(queue.SectionPreferences, "second"); err != nil {
		t.Fatal(err)
	}
	if q2, err := s.Quarantined(); err != nil || len(q2) != len(q)+3 {
		t.Errorf("after a second quarantine: %d entries, %v; want %d", len(q2), err, len(q)+3)
	}
	if err := s.QuarantineLearned("nonsense", "x"); err == nil {
		t.Error("QuarantineLearned of an unknown section: no error")
	}
	s.Close()
	rep, err := queue.Check(path, queue.CheckOptions{})
	if err != nil || !rep.Clean() || len(rep.Quarantined) != len(q)+3 {
		t.Errorf("Check after quarantines: %v, %s; want clean, listing %d entries", err, rep.Summary(), len(q)+3)
	}
}
