package bandit

import "slices"

// SubMatrix is part of a Learner's state, read at one instant: the rows of
// some running kinds (Rows) restricted to the columns of some started
// kinds (Cols), with the counters of those rows. H[i][j] = H(Cols[j] |
// Rows[i]) and Pi[i][j] = π(Cols[j] | Rows[i]), the softmax of the whole
// row — over every kind, so a row restricted to some columns sums to at
// most 1.
type SubMatrix struct {
	Rows, Cols       []string
	H, Pi            [][]float64
	PairObservations [][]int64
	RowBaseline      []float64
	RowObservations  []int64
	// The learner's scalars and how many kinds it knows.
	Kinds        int
	Baseline     float64
	Observations int64
	Rejected     int64
}

// Sub reads the rows of the kinds in rows restricted to the columns of the
// kinds in cols, each in the order given; kinds the learner does not know
// are left out. O(R·K + R·C) for R rows and C columns of K kinds.
func (l *Learner) Sub(rows, cols []string) SubMatrix {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return subMatrix(l.kinds, l.index, l.h, l.pairObs, l.rowBase, l.rowObs, rows, cols,
		SubMatrix{Kinds: len(l.kinds), Baseline: l.base, Observations: l.obs, Rejected: l.reject})
}

// Sub is Learner.Sub of the learner the snapshot is of.
func (s Snapshot) Sub(rows, cols []string) SubMatrix {
	index := make(map[string]int, len(s.Kinds))
	for i, k := range s.Kinds {
		index[k] = i
	}
	return subMatrix(s.Kinds, index, s.H, s.PairObservations, s.RowBaseline, s.RowObservations, rows, cols,
		SubMatrix{Kinds: len(s.Kinds), Baseline: s.Baseline, Observations: s.Observations, Rejected: s.Rejected})
}

func subMatrix(kinds []string, index map[string]int, h [][]float64, pairs [][]int64, rowBase []float64, rowObs []int64, rows, cols []string, out SubMatrix) SubMatrix {
	ri, ci := known(index, rows), known(index, cols)
	out.Rows, out.Cols = make([]string, len(ri)), make([]string, len(ci))
	for n, i := range ri {
		out.Rows[n] = kinds[i]
	}
	for n, j := range ci {
		out.Cols[n] = kinds[j]
	}
	out.H, out.Pi, out.PairObservations = make([][]float64, len(ri)), make([][]float64, len(ri)), make([][]int64, len(ri))
	out.RowBaseline, out.RowObservations = make([]float64, len(ri)), make([]int64, len(ri))
	pi := make([]float64, len(kinds))
	for n, i := range ri {
		softmax(h[i], pi)
		out.H[n], out.Pi[n], out.PairObservations[n] = make([]float64, len(ci)), make([]float64, len(ci)), make([]int64, len(ci))
		for m, j := range ci {
			out.H[n][m], out.Pi[n][m], out.PairObservations[n][m] = h[i][j], pi[j], pairs[i][j]
		}
		out.RowBaseline[n], out.RowObservations[n] = rowBase[i], rowObs[i]
	}
	return out
}

// known is the indices of the names index knows, in order.
func known(index map[string]int, names []string) []int {
	out := make([]int, 0, len(names))
	for _, k := range names {
		if i, ok := index[k]; ok {
			out = append(out, i)
		}
	}
	return out
}

// KindObservations returns every kind, in order, and the observations
// each took part in: as the running kind (its row) or as the kind started
// (its column). O(K²).
func (l *Learner) KindObservations() ([]string, []int64) {
	l.mu.RLock()
	defer l.mu.RUnlock()
	return slices.Clone(l.kinds), kindObservations(l.rowObs, l.pairObs)
}

// KindObservations is Learner.KindObservations of the learner the
// snapshot is of.
func (s Snapshot) KindObservations() ([]string, []int64) {
	return slices.Clone(s.Kinds), kindObservations(s.RowObservations, s.PairObservations)
}

func kindObservations(rowObs []int64, pairs [][]int64) []int64 {
	n := slices.Clone(rowObs)
	for _, row := range pairs {
		for j, c := range row {
			n[j] += c
		}
	}
	return n
}
