package profile

import (
	"fmt"
	"slices"
)

// Delta is what changed in a Model since its last Changes, in the row
// layout the daemon stores: a header (kinds, scalars, configuration), the
// demands of every kind (Observe's solve moves them all) and the rows of
// the normal equations that changed. Row i holds kind i's diagonal,
// right-hand side and ticks, and the off-diagonal entries (i, j) with
// j > i: a tick changes the rows of the kinds it observed — and the pairs
// it observed are between two of those. The equations are stored scaled
// (Scale), so forgetting does not touch them. A Full delta read back from
// the store becomes a Snapshot with Delta.Snapshot.
type Delta struct {
	// Full: the state may have changed everywhere (a new model, Restore,
	// a rescale of the equations): Rows holds every row that is not zero,
	// and a store drops the rows it holds that are not in Rows. Otherwise
	// Rows holds the rows that changed since the last Changes.
	Full bool
	// The header: as in Snapshot.
	Version      int
	Config       Config
	Kinds        []string
	Scale        float64
	Baseline     Vector
	Idle         float64
	Sigma2       Vector
	TotalTicks   int64
	Observations int64
	// Demand[i] is kind i's fitted demand, for every kind.
	Demand []Vector
	Rows   []Row // by increasing Index
}

// Row is kind Index's row of the normal equations (see Snapshot).
type Row struct {
	Index int
	Diag  float64
	B     Vector
	Ticks int64
	// Off are the off-diagonal entries (Index, J) with J > Index, by
	// increasing J (their I is Index).
	Off []OffEntry
}

// changes is what changed since the last Changes: everything (full), or
// the header (any) and the rows in dirty (model indices, ≥ 1).
type changes struct {
	full  bool
	any   bool
	dirty map[int]bool
}

func (c *changes) everything() { c.full, c.any = true, true; clear(c.dirty) }

func (c *changes) row(i int) {
	c.any = true
	if c.full {
		return
	}
	if c.dirty == nil {
		c.dirty = map[int]bool{}
	}
	c.dirty[i] = true
}

// Changes returns what changed since the last Changes (for a new model:
// everything) and forgets it; false when nothing did. The caller stores
// it; if that fails, it hands it back with Unsaved. O(K + R·d) for R rows
// changed of d neighbours each; O(K + P) when Full.
func (m *Model) Changes() (Delta, bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	c := &m.changes
	if !c.any {
		return Delta{}, false
	}
	d := Delta{
		Full: c.full, Version: SnapshotVersion, Config: m.cfg, Kinds: slices.Clone(m.kinds),
		Scale: m.scale, Baseline: m.base, Idle: m.idle, Sigma2: m.sigma2, TotalTicks: m.ticks[0],
		Observations: m.obs, Demand: slices.Clone(m.theta[1:]),
	}
	if c.full {
		for i := 1; i < len(m.diag); i++ {
			if r := m.rowLocked(i); r.Diag != 0 || r.B != (Vector{}) || r.Ticks != 0 || len(r.Off) > 0 {
				d.Rows = append(d.Rows, r)
			}
		}
	} else {
		d.Rows = make([]Row, 0, len(c.dirty))
		for i := range c.dirty {
			d.Rows = append(d.Rows, m.rowLocked(i))
		}
		slices.SortFunc(d.Rows, func(a, b Row) int { return a.Index - b.Index })
	}
	c.full, c.any = false, false
	clear(c.dirty)
	return d, true
}

// Unsaved hands back a delta Changes returned whose save failed: its rows
// count as changed again (all of them, for a Full one).
func (m *Model) Unsaved(d Delta) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if d.Full {
		m.changes.everything()
		return
	}
	m.changes.any = true
	for _, r := range d.Rows {
		if r.Index+1 < len(m.diag) {
			m.changes.row(r.Index + 1)
		}
	}
}

// rowLocked is model index i's row (Row.Index is i − 1).
func (m *Model) rowLocked(i int) Row {
	r := Row{Index: i - 1, Diag: m.diag[i], B: m.b[i], Ticks: m.ticks[i]}
	a := &m.adj[i]
	for n, j := range a.nb {
		if int(j) > i {
			r.Off = append(r.Off, OffEntry{I: i - 1, J: int(j) - 1, V: a.val[n]})
		}
	}
	slices.SortFunc(r.Off, func(a, b OffEntry) int { return a.J - b.J })
	return r
}

// Snapshot turns a Full delta read back from a store into the snapshot it
// stands for (rows missing are zero). It checks what only the row layout
// can get wrong — the rows' indices, their entries' columns, the number of
// demands —, naming the row and its kind in a *FieldError
// ("rows[3] (kind \"etl\")"); Restore checks the rest.
func (d Delta) Snapshot() (Snapshot, error) {
	k := len(d.Kinds)
	s := Snapshot{
		Version: d.Version, Config: d.Config, Kinds: d.Kinds, Scale: d.Scale,
		Diag: make([]float64, k), B: make([]Vector, k), Ticks: make([]int64, k), Demand: d.Demand,
		Baseline: d.Baseline, Idle: d.Idle, Sigma2: d.Sigma2, TotalTicks: d.TotalTicks, Observations: d.Observations,
	}
	if len(d.Demand) != k {
		return s, snapErr("demand", "has %d entries for %d kinds", len(d.Demand), k)
	}
	for n, r := range d.Rows {
		if r.Index < 0 || r.Index >= k {
			return s, snapErr(fmt.Sprintf("rows[%d]", n), "has index %d, want 0 <= index < %d (one per kind)", r.Index, k)
		}
		field := fmt.Sprintf("rows[%d] (kind %q)", r.Index, d.Kinds[r.Index])
		if n > 0 && d.Rows[n-1].Index >= r.Index {
			return s, snapErr(field, "is repeated or out of order")
		}
		for e, o := range r.Off {
			if o.I != r.Index || o.J <= r.Index || o.J >= k || e > 0 && r.Off[e-1].J >= o.J {
				return s, snapErr(fmt.Sprintf("%s.off[%d]", field, e), "(%d, %d): want i = %d < j < %d, j increasing", o.I, o.J, r.Index, k)
			}
		}
		s.Diag[r.Index], s.B[r.Index], s.Ticks[r.Index] = r.Diag, r.B, r.Ticks
		s.Off = append(s.Off, r.Off...)
	}
	return s, nil
}

// RestoreSaved is Restore for a snapshot read back from the store that the
// model's Changes are saved to (Delta.Snapshot of what it holds): the
// model then records no change, so the next Changes holds only what
// happens after.
func (m *Model) RestoreSaved(s Snapshot) error {
	if err := m.Restore(s); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.changes = changes{}
	return nil
}
