package bandit_test

import (
	"math"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
)

// TestSub: a part of the matrices is the learner's values, in the order
// asked, unknown kinds left out; π is the whole row's softmax; the
// snapshot's Sub is the learner's.
func TestSub(t *testing.T) {
	l := learned(t, bandit.Config{})
	l.Add("idle")
	s := l.Snapshot()
	m := l.Sub([]string{"cc", "nosuch", "tpch-q10"}, []string{"kmeans", "cc", "nosuch"})
	if !slices.Equal(m.Rows, []string{"cc", "tpch-q10"}) || !slices.Equal(m.Cols, []string{"kmeans", "cc"}) || m.Kinds != len(s.Kinds) ||
		m.Observations != s.Observations || m.Rejected != s.Rejected || m.Baseline != s.Baseline {
		t.Fatalf("rows %v cols %v kinds %d counters %d %d %v", m.Rows, m.Cols, m.Kinds, m.Observations, m.Rejected, m.Baseline)
	}
	for i, given := range m.Rows {
		if m.RowObservations[i] != l.RowObservations(given) {
			t.Errorf("row observations of %s: %d, want %d", given, m.RowObservations[i], l.RowObservations(given))
		}
		for j, a := range m.Cols {
			if m.H[i][j] != l.Pref(a, given) || math.Abs(m.Pi[i][j]-l.Prob(a, given)) > 1e-15 {
				t.Errorf("[%s][%s]: H %v π %v, want %v %v", given, a, m.H[i][j], m.Pi[i][j], l.Pref(a, given), l.Prob(a, given))
			}
		}
	}
	if diff := cmp.Diff(m, s.Sub([]string{"cc", "nosuch", "tpch-q10"}, []string{"kmeans", "cc", "nosuch"})); diff != "" {
		t.Errorf("the snapshot's Sub (-learner +snapshot):\n%s", diff)
	}
	all := l.Sub(s.Kinds, s.Kinds)
	for i, row := range all.Pi {
		sum := 0.0
		for _, p := range row {
			sum += p
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %s of every column sums to %v", all.Rows[i], sum)
		}
	}
	kinds, obs := l.KindObservations()
	if !slices.Equal(kinds, s.Kinds) || obs[slices.Index(kinds, "idle")] != 0 {
		t.Fatalf("KindObservations: %v %v", kinds, obs)
	}
	var total int64
	for _, n := range obs {
		total += n
	}
	if total != 2*s.Observations {
		t.Errorf("each observation counts for its running and its started kind: %d in all, want %d", total, 2*s.Observations)
	}
	if k2, o2 := s.KindObservations(); !slices.Equal(k2, kinds) || !slices.Equal(o2, obs) {
		t.Errorf("the snapshot's KindObservations differ: %v %v", k2, o2)
	}
}
