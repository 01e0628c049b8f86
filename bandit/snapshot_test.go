package bandit_test

import (
	"math"
	"testing"

	"github.com/colocd/colocd/bandit"
)

// TestSnapshotPi: Pi is Prob for every pair, each row sums to 1, and it
// stays finite for preferences far apart.
func TestSnapshotPi(t *testing.T) {
	l := bandit.New(bandit.Config{StepSize: 0.5, SelfPrior: 1})
	l.Update("a", "b", 30)
	l.Update("c", "b", 2)
	l.Update("b", "a", 900)
	s := l.Snapshot()
	pi := s.Pi()
	for i, given := range s.Kinds {
		sum := 0.0
		for j, a := range s.Kinds {
			if p := l.Prob(a, given); math.Abs(pi[i][j]-p) > 1e-12 {
				t.Errorf("Pi[%s][%s] = %v, Prob = %v", given, a, pi[i][j], p)
			}
			sum += pi[i][j]
		}
		if math.Abs(sum-1) > 1e-12 {
			t.Errorf("row %s sums to %v", given, sum)
		}
	}
	s.H = [][]float64{{1e300, -1e300}, {0, 0}}
	if p := s.Pi(); p[0][0] != 1 || p[0][1] != 0 || p[1][0] != 0.5 {
		t.Errorf("Pi of extreme rows = %v, want [[1 0] [0.5 0.5]]", p)
	}
}
