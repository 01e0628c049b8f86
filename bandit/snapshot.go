package bandit

import (
	"errors"
	"fmt"
	"slices"
)

// snapshotVersion is the Snapshot.Version this package writes and reads.
const snapshotVersion = 1

// MaxCount bounds every counter of a learner's state: Observations,
// Rejected, each row's and each pair's. It is 2^53, the largest count a
// float64 holds exactly (the mean baselines divide by the counts), and far
// enough below math.MaxInt64 that no sum of counters within it, nor an
// increment, overflows. At a million updates a second it takes 285 years to
// reach. Update stops counting there (the counters saturate; the
// preferences still learn) and Restore refuses a snapshot beyond it, so no
// counter a learner holds, saves or restores can overflow.
const MaxCount = 1 << 53

// Snapshot is the whole state of a Learner as plain data. It round-trips
// through encoding/json exactly (float64 values included). Every slice is
// indexed like Kinds: H[i][j] = H(Kinds[j] | Kinds[i]), i.e. row i is the
// running kind.
type Snapshot struct {
	Version int `json:"version"`
	// Config is the configuration the state was learned with, for the
	// record; Restore does not apply it (see Restore).
	Config Config      `json:"config"`
	Kinds  []string    `json:"kinds"`
	H      [][]float64 `json:"h"`
	// Baseline is the global baseline: the mean of every accepted goodness
	// value (GlobalMean, RowMean) or the recency-weighted average (Recency).
	Baseline float64 `json:"baseline"`
	// RowBaseline[i] is the mean goodness observed with Kinds[i] running
	// (kept in every mode, used by RowMean).
	RowBaseline []float64 `json:"row_baseline"`
	// Observations counts accepted updates; RowObservations[i] those with
	// Kinds[i] running; PairObservations[i][j] those that started Kinds[j]
	// beside Kinds[i]. Rows of PairObservations sum to RowObservations,
	// which sums to Observations.
	Observations     int64     `json:"observations"`
	RowObservations  []int64   `json:"row_observations"`
	PairObservations [][]int64 `json:"pair_observations"`
	// Rejected counts updates that were not applied (non-finite goodness,
	// empty kind, or a result that would not be finite).
	Rejected int64 `json:"rejected"`
}

// Pi returns π, the row-wise softmax of H: Pi()[i][j] = π(Kinds[j] |
// Kinds[i]). Each row is finite and sums to 1. O(K²).
func (s Snapshot) Pi() [][]float64 {
	out := make([][]float64, len(s.H))
	for i, row := range s.H {
		out[i] = make([]float64, len(row))
		softmax(row, out[i])
	}
	return out
}

// Snapshot returns a deep copy of the learner's state. O(K²).
func (l *Learner) Snapshot() Snapshot {
	l.mu.RLock()
	defer l.mu.RUnlock()
	s := Snapshot{
		Version:          snapshotVersion,
		Config:           l.cfg,
		Kinds:            slices.Clone(l.kinds),
		H:                make([][]float64, len(l.h)),
		Baseline:         l.base,
		RowBaseline:      slices.Clone(l.rowBase),
		Observations:     l.obs,
		RowObservations:  slices.Clone(l.rowObs),
		PairObservations: make([][]int64, len(l.pairObs)),
		Rejected:         l.reject,
	}
	for i := range l.h {
		s.H[i] = slices.Clone(l.h[i])
		s.PairObservations[i] = slices.Clone(l.pairObs[i])
	}
	return s
}

// Restore replaces the learner's state (kinds, preferences, baselines,
// counters) with a deep copy of s, after checking it: a supported version,
// a valid s.Config, unique non-empty kinds, H and PairObservations square
// K×K, RowBaseline and RowObservations of length K, every number finite
// (and every row of H spanning less than the float64 range),
// every counter in [0, MaxCount] and the counters consistent. On error the
// learner is unchanged and the error is a *FieldError naming the field,
// wrapping ErrInvalidSnapshot.
//
// The learner keeps its own Config (so a restart with a new step size uses
// it); if the learner clips, restored preferences are clamped to
// [−Clip, Clip]. To recreate the exact learner, New(s.Config) then Restore.
func (l *Learner) Restore(s Snapshot) error {
	if err := s.validate(); err != nil {
		return err
	}
	k := len(s.Kinds)
	index := make(map[string]int, k)
	for i, name := range s.Kinds {
		index[name] = i
	}
	h := make([][]float64, k)
	pair := make([][]int64, k)
	for i := range k {
		h[i] = slices.Clone(s.H[i])
		pair[i] = slices.Clone(s.PairObservations[i])
	}

	l.mu.Lock()
	defer l.mu.Unlock()
	if c := l.cfg.Clip; c > 0 {
		for _, row := range h {
			for j, v := range row {
				row[j] = min(max(v, -c), c)
			}
		}
	}
	l.kinds = slices.Clone(s.Kinds)
	l.index = index
	l.h = h
	l.base = s.Baseline
	l.rowBase = slices.Clone(s.RowBaseline)
	l.obs = s.Observations
	l.rowObs = slices.Clone(s.RowObservations)
	l.pairObs = pair
	l.reject = s.Rejected
	if k == 0 { // keep Snapshot's slices non-nil, so JSON shows []
		l.kinds, l.h, l.rowBase, l.rowObs, l.pairObs = []string{}, [][]float64{}, []float64{}, []int64{}, [][]int64{}
	}
	l.changes.everything()
	return nil
}

func (s *Snapshot) validate() error {
	if s.Version != snapshotVersion {
		return snapErr("version", "is %d, this build reads version %d", s.Version, snapshotVersion)
	}
	if err := s.Config.Validate(); err != nil {
		var fe *FieldError
		if errors.As(err, &fe) {
			return snapErr("config."+fe.Field, "%s", fe.Reason)
		}
		return snapErr("config", "%v", err)
	}
	if err := s.validateKinds(); err != nil {
		return err
	}
	if err := s.validatePreferences(); err != nil {
		return err
	}
	return s.validateCounts()
}

// validateKinds: the kind names, each once.
func (s *Snapshot) validateKinds() error {
	seen := make(map[string]int, len(s.Kinds))
	for i, name := range s.Kinds {
		if name == "" {
			return snapErr(fmt.Sprintf("kinds[%d]", i), "is empty")
		}
		if j, dup := seen[name]; dup {
			return snapErr(fmt.Sprintf("kinds[%d]", i), "%q repeats kinds[%d]", name, j)
		}
		seen[name] = i
	}
	return nil
}

// validatePreferences: H and the baselines, finite and one per kind.
func (s *Snapshot) validatePreferences() error {
	k := len(s.Kinds)
	if len(s.H) != k {
		return snapErr("h", "has %d rows, want %d (one per kind)", len(s.H), k)
	}
	for i, row := range s.H {
		if len(row) != k {
			return snapErr(fmt.Sprintf("h[%d]", i), "has %d entries, want %d (one per kind)", len(row), k)
		}
		for j, v := range row {
			if !finite(v) {
				return snapErr(fmt.Sprintf("h[%d][%d]", i, j), "is %v, want a finite number", v)
			}
		}
		if k > 0 {
			if lo, hi := slices.Min(row), slices.Max(row); !finite(hi - lo) {
				return snapErr(fmt.Sprintf("h[%d]", i), "spans %v .. %v, wider than the float64 range (the softmax needs max − min finite)", lo, hi)
			}
		}
	}
	if !finite(s.Baseline) {
		return snapErr("baseline", "is %v, want a finite number", s.Baseline)
	}
	if len(s.RowBaseline) != k {
		return snapErr("row_baseline", "has %d entries, want %d (one per kind)", len(s.RowBaseline), k)
	}
	for i, v := range s.RowBaseline {
		if !finite(v) {
			return snapErr(fmt.Sprintf("row_baseline[%d]", i), "is %v, want a finite number", v)
		}
	}
	return nil
}

// validateCounts: the observation counters, consistent with each other
// and summing within MaxCount, so that no update overflows them.
func (s *Snapshot) validateCounts() error {
	k := len(s.Kinds)
	if s.Observations < 0 || s.Observations > MaxCount {
		return snapErr("observations", "is %d, want 0 .. %d (bandit.MaxCount)", s.Observations, MaxCount)
	}
	if s.Rejected < 0 || s.Rejected > MaxCount {
		return snapErr("rejected", "is %d, want 0 .. %d (bandit.MaxCount)", s.Rejected, MaxCount)
	}
	if len(s.RowObservations) != k {
		return snapErr("row_observations", "has %d entries, want %d (one per kind)", len(s.RowObservations), k)
	}
	if len(s.PairObservations) != k {
		return snapErr("pair_observations", "has %d rows, want %d (one per kind)", len(s.PairObservations), k)
	}
	var total int64
	for i, row := range s.PairObservations {
		if len(row) != k {
			return snapErr(fmt.Sprintf("pair_observations[%d]", i), "has %d entries, want %d (one per kind)", len(row), k)
		}
		// Every partial sum stays within MaxCount: nothing overflows.
		var sum int64
		for j, c := range row {
			if c < 0 || c > MaxCount-sum {
				return snapErr(fmt.Sprintf("pair_observations[%d][%d]", i, j), "is %d, want >= 0 and the row's counts summing to at most %d (bandit.MaxCount)", c, MaxCount)
			}
			sum += c
		}
		if r := s.RowObservations[i]; r != sum {
			return snapErr(fmt.Sprintf("row_observations[%d]", i), "is %d, but pair_observations[%d] sums to %d", r, i, sum)
		}
		if sum > MaxCount-total {
			return snapErr(fmt.Sprintf("row_observations[%d]", i), "makes the total of the rows exceed %d (bandit.MaxCount)", MaxCount)
		}
		total += sum
	}
	if total != s.Observations {
		return snapErr("observations", "is %d, but row_observations sum to %d", s.Observations, total)
	}
	return nil
}
