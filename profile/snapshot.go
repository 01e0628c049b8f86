package profile

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// SnapshotVersion is the Snapshot.Version this package writes and reads.
const SnapshotVersion = 1

// Snapshot is the whole state of a Model as plain data; it round-trips
// through encoding/json. Per-kind slices are indexed like Kinds. The
// normal equations are stored as they are kept, scaled by Scale.
type Snapshot struct {
	Version int      `json:"version"`
	Config  Config   `json:"config"`
	Kinds   []string `json:"kinds"`
	// Diag[i] and B[i] are kind i's diagonal and right-hand side; Off lists
	// the off-diagonal entries once each, as (i, j, value) with i < j.
	Diag  []float64  `json:"diag"`
	B     []Vector   `json:"b"`
	Off   []OffEntry `json:"off,omitempty"`
	Scale float64    `json:"scale"`
	// Demand[i] is kind i's fitted demand; Ticks[i] the ticks it was seen.
	Demand []Vector `json:"demand"`
	Ticks  []int64  `json:"ticks"`
	// Baseline and Idle: the idle nodes' mean usage and its weight.
	Baseline     Vector  `json:"baseline"`
	Idle         float64 `json:"idle"`
	Sigma2       Vector  `json:"sigma2"`
	TotalTicks   int64   `json:"total_ticks"`
	Observations int64   `json:"observations"`
}

// OffEntry is one off-diagonal entry of the normal equations.
type OffEntry struct {
	I, J int     `json:"-"`
	V    float64 `json:"-"`
}

// MarshalJSON writes [i, j, v].
func (e OffEntry) MarshalJSON() ([]byte, error) {
	return fmt.Appendf(nil, "[%d,%d,%s]", e.I, e.J, strconv.FormatFloat(e.V, 'g', -1, 64)), nil
}

// UnmarshalJSON reads [i, j, v].
func (e *OffEntry) UnmarshalJSON(b []byte) error {
	var raw [3]float64
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	if raw[0] != math.Trunc(raw[0]) || raw[1] != math.Trunc(raw[1]) || raw[0] < 0 || raw[1] < 0 || raw[0] > 1<<30 || raw[1] > 1<<30 {
		return fmt.Errorf("profile: off-diagonal entry indices %v, %v are not small non-negative integers", raw[0], raw[1])
	}
	e.I, e.J, e.V = int(raw[0]), int(raw[1]), raw[2]
	return nil
}

// Snapshot returns a deep copy of the model's state. O(K + P).
func (m *Model) Snapshot() Snapshot {
	m.mu.RLock()
	defer m.mu.RUnlock()
	k := len(m.kinds)
	s := Snapshot{
		Version: SnapshotVersion, Config: m.cfg, Kinds: slices.Clone(m.kinds),
		Diag: slices.Clone(m.diag[1:]), B: slices.Clone(m.b[1:]), Scale: m.scale,
		Demand: slices.Clone(m.theta[1:]), Ticks: slices.Clone(m.ticks[1:]),
		Baseline: m.base, Idle: m.idle, Sigma2: m.sigma2, TotalTicks: m.ticks[0], Observations: m.obs,
	}
	for i := 1; i <= k; i++ {
		r := &m.adj[i]
		for n, j := range r.nb {
			if int(j) > i {
				s.Off = append(s.Off, OffEntry{I: i - 1, J: int(j) - 1, V: r.val[n]})
			}
		}
	}
	slices.SortFunc(s.Off, func(a, b OffEntry) int {
		if a.I != b.I {
			return a.I - b.I
		}
		return a.J - b.J
	})
	return s
}

func snapErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...), Err: ErrInvalidSnapshot}
}

func (s Snapshot) validate() error {
	if s.Version != SnapshotVersion {
		return snapErr("version", "%d, want %d", s.Version, SnapshotVersion)
	}
	if err := s.Config.Validate(); err != nil {
		return snapErr("config", "%v", err)
	}
	k := len(s.Kinds)
	seen := make(map[string]bool, k)
	for i, name := range s.Kinds {
		if name == "" || seen[name] {
			return snapErr(fmt.Sprintf("kinds[%d]", i), "%q is empty or repeated", name)
		}
		seen[name] = true
	}
	for _, l := range []struct {
		name string
		n    int
	}{{"diag", len(s.Diag)}, {"b", len(s.B)}, {"demand", len(s.Demand)}, {"ticks", len(s.Ticks)}} {
		if l.n != k {
			return snapErr(l.name, "has %d entries for %d kinds", l.n, k)
		}
	}
	fin := func(v float64) bool { return !math.IsNaN(v) && !math.IsInf(v, 0) }
	if !fin(s.Scale) || s.Scale <= 0 || s.Scale > 1 {
		return snapErr("scale", "%v outside (0, 1]", s.Scale)
	}
	for i := range k {
		if !fin(s.Diag[i]) || s.Diag[i] < 0 {
			return snapErr(fmt.Sprintf("diag[%d]", i), "%v is not a finite number >= 0", s.Diag[i])
		}
		if s.Ticks[i] < 0 {
			return snapErr(fmt.Sprintf("ticks[%d]", i), "%d is negative", s.Ticks[i])
		}
		for r := range NumResources {
			if !fin(s.B[i][r]) {
				return snapErr(fmt.Sprintf("b[%d][%d]", i, r), "%v is not finite", s.B[i][r])
			}
			if !fin(s.Demand[i][r]) || s.Demand[i][r] < 0 {
				return snapErr(fmt.Sprintf("demand[%d][%d]", i, r), "%v is not a finite number >= 0", s.Demand[i][r])
			}
		}
	}
	for n, e := range s.Off {
		if e.I < 0 || e.J <= e.I || e.J >= k || !fin(e.V) {
			return snapErr(fmt.Sprintf("off[%d]", n), "(%d, %d, %v): want 0 <= i < j < %d and a finite value", e.I, e.J, e.V, k)
		}
		if n > 0 && (s.Off[n-1].I > e.I || s.Off[n-1].I == e.I && s.Off[n-1].J >= e.J) {
			return snapErr(fmt.Sprintf("off[%d]", n), "(%d, %d) is repeated or out of order", e.I, e.J)
		}
	}
	for r := range NumResources {
		if !fin(s.Baseline[r]) || s.Baseline[r] < 0 {
			return snapErr(fmt.Sprintf("baseline[%d]", r), "%v is not a finite number >= 0", s.Baseline[r])
		}
		if !fin(s.Sigma2[r]) || s.Sigma2[r] <= 0 {
			return snapErr(fmt.Sprintf("sigma2[%d]", r), "%v is not a finite number > 0", s.Sigma2[r])
		}
	}
	if !fin(s.Idle) || s.Idle < 0 {
		return snapErr("idle", "%v is not a finite number >= 0", s.Idle)
	}
	if s.TotalTicks < 0 || s.Observations < 0 {
		return snapErr("observations", "counters must be >= 0")
	}
	return nil
}

// Restore replaces the model's state with a deep copy of s after checking
// it; on error the model is unchanged and the error is a *FieldError
// wrapping ErrInvalidSnapshot. The model keeps its own Config.
func (m *Model) Restore(s Snapshot) error {
	if err := s.validate(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	k := len(s.Kinds)
	m.kinds = slices.Clone(s.Kinds)
	m.index = make(map[string]int, k)
	for i, name := range m.kinds {
		m.index[name] = i + 1
	}
	m.diag = append([]float64{0}, s.Diag...)
	m.b = append([]Vector{{}}, s.B...)
	m.theta = append([]Vector{{}}, s.Demand...)
	m.ticks = append([]int64{s.TotalTicks}, s.Ticks...)
	m.adj = make([]row, k+1)
	for _, e := range s.Off {
		m.adj[e.I+1].add(int32(e.J+1), e.V)
		m.adj[e.J+1].add(int32(e.I+1), e.V)
	}
	m.scale, m.base, m.idle, m.sigma2, m.obs = s.Scale, s.Baseline, s.Idle, s.Sigma2, s.Observations
	m.dropCov()
	m.changes.everything()
	return nil
}
