package bandit

import (
	"fmt"
	"math"
	"slices"
)

// Delta is what changed in a Learner since its last Changes, in the row
// layout the daemon stores: the header (kinds, scalars, configuration:
// O(K), written whole every time) and the rows of H that changed, each
// with its counters. It is also what the store reads back (a Full delta),
// turned into a Snapshot by Delta.Snapshot.
//
// Row i changes when an update has Kinds[i] running (Eqs. 2–3 move every
// entry of that row) — and only then, besides the whole-state changes
// that make a delta Full. Adding a kind appends 0 to every row: a row
// shorter than Kinds has zeros in the columns of the kinds added since it
// was last written. A row never observed and equal to its initial value
// (zeros, and −SelfPrior on its diagonal under Config) is left out of a
// Full delta.
type Delta struct {
	// Full: the state may have changed everywhere (a new learner,
	// Restore, Reset, AddSimilar): Rows holds every row that is not
	// initial, and a store drops the rows it holds that are not in Rows.
	// Otherwise Rows holds the rows that changed since the last Changes.
	Full bool
	// The header: as in Snapshot.
	Version      int
	Config       Config
	Kinds        []string
	Baseline     float64
	Observations int64
	Rejected     int64
	Rows         []Row // by increasing Index
}

// Row is row Index of H, H(·|Kinds[Index]), and its counters (see
// Snapshot). H and Pairs have the same length, at most len(Kinds).
type Row struct {
	Index        int
	H            []float64
	Pairs        []int64 // PairObservations[Index]
	Baseline     float64 // RowBaseline[Index]
	Observations int64   // RowObservations[Index]
}

// changes is what changed since the last Changes: everything (full), or
// the header (any) and the rows marked in dirty, listed in order of
// marking in list.
type changes struct {
	full  bool
	any   bool
	dirty []bool
	list  []int
}

func (c *changes) everything() { c.full, c.any, c.list = true, true, c.list[:0]; clear(c.dirty) }

func (c *changes) row(i int) {
	c.any = true
	if c.full {
		return
	}
	if i >= len(c.dirty) {
		c.dirty = append(c.dirty, make([]bool, i+1-len(c.dirty))...)
	}
	if !c.dirty[i] {
		c.dirty[i] = true
		c.list = append(c.list, i)
	}
}

// Changes returns what changed since the last Changes (for a new learner:
// everything) and forgets it; false when nothing did. The caller stores
// it; if that fails, it hands it back with Unsaved. O(K + R·K) for R rows
// changed; O(K²) when Full.
func (l *Learner) Changes() (Delta, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	c := &l.changes
	if !c.any {
		return Delta{}, false
	}
	d := Delta{
		Full: c.full, Version: snapshotVersion, Config: l.cfg, Kinds: slices.Clone(l.kinds),
		Baseline: l.base, Observations: l.obs, Rejected: l.reject,
	}
	if c.full {
		diag := initialDiagonal(l.cfg)
		for i := range l.kinds {
			if !l.initialLocked(i, diag) {
				d.Rows = append(d.Rows, l.rowLocked(i))
			}
		}
	} else {
		slices.Sort(c.list)
		d.Rows = make([]Row, 0, len(c.list))
		for _, i := range c.list {
			d.Rows = append(d.Rows, l.rowLocked(i))
			c.dirty[i] = false
		}
	}
	c.full, c.any, c.list = false, false, c.list[:0]
	return d, true
}

// Unsaved hands back a delta Changes returned whose save failed: its rows
// count as changed again (all of them, for a Full one), so the next
// Changes holds them too.
func (l *Learner) Unsaved(d Delta) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if d.Full {
		l.changes.everything()
		return
	}
	l.changes.any = true
	for _, r := range d.Rows {
		if r.Index < len(l.kinds) {
			l.changes.row(r.Index)
		}
	}
}

func (l *Learner) rowLocked(i int) Row {
	return Row{Index: i, H: slices.Clone(l.h[i]), Pairs: slices.Clone(l.pairObs[i]), Baseline: l.rowBase[i], Observations: l.rowObs[i]}
}

// initialLocked reports whether row i is as Add made it and never
// observed: zeros, diag on its diagonal.
func (l *Learner) initialLocked(i int, diag float64) bool {
	if l.rowObs[i] != 0 || l.rowBase[i] != 0 {
		return false
	}
	for j, v := range l.h[i] {
		want := 0.0
		if j == i {
			want = diag
		}
		if v != want || l.pairObs[i][j] != 0 {
			return false
		}
	}
	return true
}

// initialDiagonal is H(a|a) of a kind Add makes under cfg (defaults filled
// in): −SelfPrior, at most Clip below zero.
func initialDiagonal(cfg Config) float64 {
	p := cfg.SelfPrior
	if c := cfg.Clip; c > 0 && p > c {
		p = c
	}
	if p > 0 {
		return -p
	}
	return 0
}

// Snapshot turns a Full delta read back from a store into the snapshot it
// stands for: rows missing are initial under d.Config, short rows are
// padded with zeros (the snapshot shares the storage of full-length
// rows). It checks what only the row layout can get wrong —
// every row's index, length and numbers —, naming the row and its kind in
// a *FieldError ("rows[3] (kind \"etl\")"); Restore checks the rest.
func (d Delta) Snapshot() (Snapshot, error) {
	k := len(d.Kinds)
	s := Snapshot{
		Version: d.Version, Config: d.Config, Kinds: d.Kinds, Baseline: d.Baseline,
		Observations: d.Observations, Rejected: d.Rejected,
		H: make([][]float64, k), PairObservations: make([][]int64, k),
		RowBaseline: make([]float64, k), RowObservations: make([]int64, k),
	}
	if err := d.Config.Validate(); err != nil {
		return s, snapErr("config", "%v", err)
	}
	for n, r := range d.Rows {
		if err := d.checkRow(n, r); err != nil {
			return s, err
		}
		s.H[r.Index], s.PairObservations[r.Index] = r.H, r.Pairs
		if len(r.H) < k {
			s.H[r.Index] = append(make([]float64, 0, k), r.H...)[:k]
			s.PairObservations[r.Index] = append(make([]int64, 0, k), r.Pairs...)[:k]
		}
		s.RowBaseline[r.Index], s.RowObservations[r.Index] = r.Baseline, r.Observations
	}
	diag := initialDiagonal(d.Config.withDefaults())
	for i := range k {
		if s.H[i] == nil {
			s.H[i] = make([]float64, k)
			s.H[i][i] = diag
			s.PairObservations[i] = make([]int64, k)
		}
	}
	return s, nil
}

// checkRow checks rows[n] of a delta being read back.
func (d Delta) checkRow(n int, r Row) error {
	k := len(d.Kinds)
	field := fmt.Sprintf("rows[%d]", n)
	if r.Index < 0 || r.Index >= k {
		return snapErr(field, "has index %d, want 0 <= index < %d (one per kind)", r.Index, k)
	}
	field = fmt.Sprintf("rows[%d] (kind %q)", r.Index, d.Kinds[r.Index])
	if n > 0 && d.Rows[n-1].Index >= r.Index {
		return snapErr(field, "is repeated or out of order")
	}
	if len(r.H) > k || len(r.Pairs) != len(r.H) {
		return snapErr(field, "has %d preferences and %d pair counts, want equal lengths of at most %d (one per kind)", len(r.H), len(r.Pairs), k)
	}
	var sum int64
	for j, v := range r.H {
		if !finite(v) {
			return snapErr(fmt.Sprintf("%s.h[%d]", field, j), "is %v, want a finite number", v)
		}
		c := r.Pairs[j]
		if c < 0 || c > math.MaxInt64-sum {
			return snapErr(fmt.Sprintf("%s.pairs[%d]", field, j), "is %d, want >= 0 and a total that fits in int64", c)
		}
		sum += c
	}
	if sum != r.Observations {
		return snapErr(field, "has %d observations, but its pair counts sum to %d", r.Observations, sum)
	}
	if !finite(r.Baseline) {
		return snapErr(field+".baseline", "is %v, want a finite number", r.Baseline)
	}
	return nil
}

// RestoreSaved is Restore for a snapshot read back from the store that the
// learner's Changes are saved to (Delta.Snapshot of what it holds): the
// learner then records no change — the next Changes holds only what
// happens after — unless the restored state differs from the stored one
// (the learner clips tighter than the snapshot's values) or the learner's
// initial rows differ from the snapshot's (another SelfPrior or Clip: the
// rows the store left out would read back wrong), when everything counts
// as changed, as after Restore.
func (l *Learner) RestoreSaved(s Snapshot) error {
	if err := l.Restore(s); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if initialDiagonal(s.Config.withDefaults()) != initialDiagonal(l.cfg) || !l.equalLocked(s) {
		return nil
	}
	l.changes = changes{}
	return nil
}

// equalLocked reports whether H holds s.H exactly (Restore may have
// clipped it).
func (l *Learner) equalLocked(s Snapshot) bool {
	if l.cfg.Clip == 0 {
		return true
	}
	for i, row := range l.h {
		if !slices.Equal(row, s.H[i]) {
			return false
		}
	}
	return true
}
