package profile_test

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/profile"
)

// rowStore keeps what Changes returned as a store in the row layout would.
type rowStore struct {
	header profile.Delta
	rows   map[int]profile.Row
}

func (s *rowStore) apply(d profile.Delta) {
	if d.Full || s.rows == nil {
		s.rows = map[int]profile.Row{}
	}
	for _, r := range d.Rows {
		s.rows[r.Index] = r
	}
	d.Rows = nil
	s.header = d
}

func (s *rowStore) load(tb testing.TB) profile.Snapshot {
	tb.Helper()
	d := s.header
	d.Full = true
	idx := make([]int, 0, len(s.rows))
	for i := range s.rows {
		idx = append(idx, i)
	}
	slices.Sort(idx)
	for _, i := range idx {
		d.Rows = append(d.Rows, s.rows[i])
	}
	snap, err := d.Snapshot()
	if err != nil {
		tb.Fatalf("reading the rows back: %v", err)
	}
	return snap
}

// TestChangesReadBackExactly: ticks over a growing set of kinds (with
// forgetting fast enough to rescale the equations, and a Restore), saved
// after each tick unless the save fails: the store reads back the model's
// snapshot exactly, and a model restored from it records no change.
func TestChangesReadBackExactly(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	for _, cfg := range []profile.Config{{}, {HalfLife: 0.01}} {
		t.Run(fmt.Sprintf("%+v", cfg), func(t *testing.T) {
			m := profile.New(cfg)
			var st rowStore
			for tick := range 60 {
				var obs []profile.Observation
				for n := range 20 {
					a := fmt.Sprintf("k%d", rng.IntN(3+tick/2))
					b := fmt.Sprintf("k%d", rng.IntN(3+tick/2))
					o := profile.Observation{Node: fmt.Sprint(n), Containers: []profile.KindCount{kc(a, 1+float64(rng.IntN(3))), kc(b, 1)}}
					for r := range profile.NumResources {
						o.Usage[r] = 0.3 * rng.Float64()
					}
					obs = append(obs, o)
				}
				obs = append(obs, profile.Observation{Node: "idle", Usage: profile.Vector{0.01}})
				m.Observe(obs)
				if tick == 30 {
					if err := m.Restore(m.Snapshot()); err != nil {
						t.Fatal(err)
					}
				}
				d, ok := m.Changes()
				if !ok {
					t.Fatalf("tick %d: no change reported", tick)
				}
				if tick%7 == 3 {
					m.Unsaved(d)
					continue
				}
				st.apply(d)
				if diff := cmp.Diff(m.Snapshot(), st.load(t)); diff != "" {
					t.Fatalf("tick %d: read back (-model +store):\n%s", tick, diff)
				}
			}
			r := profile.New(cfg)
			if err := r.RestoreSaved(st.load(t)); err != nil {
				t.Fatal(err)
			}
			if _, ok := r.Changes(); ok {
				t.Error("RestoreSaved records changes")
			}
		})
	}
}

// TestChangesOnlyObservedRows: a tick changes the rows of the kinds it
// observed, and nothing else but the header and the demands.
func TestChangesOnlyObservedRows(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	m := profile.New(profile.Config{})
	m.Observe([]profile.Observation{node(rng, 0, kc("cpu", 2), kc("disk", 1)), node(rng, 0, kc("net", 3))})
	if d, ok := m.Changes(); !ok || !d.Full || len(d.Rows) != 3 || len(d.Demand) != 3 {
		t.Fatalf("first Changes: full %v, %d rows, %d demands; want Full, 3 and 3", d.Full, len(d.Rows), len(d.Demand))
	}
	m.Observe([]profile.Observation{node(rng, 0, kc("disk", 1), kc("net", 2))})
	d, _ := m.Changes()
	if d.Full || len(d.Rows) != 2 || d.Rows[0].Index != 1 || d.Rows[1].Index != 2 || len(d.Demand) != 3 {
		t.Fatalf("after observing disk and net: %+v; want their rows alone and every demand", d)
	}
	if off := d.Rows[0].Off; len(off) != 1 || off[0].I != 1 || off[0].J != 2 {
		t.Errorf("disk's row holds the entries %+v, want the (disk, net) pair", off)
	}
}

// TestDeltaSnapshotRejects: rows that cannot be read back are errors
// naming the row's kind.
func TestDeltaSnapshotRejects(t *testing.T) {
	good := func() profile.Delta {
		return profile.Delta{Full: true, Kinds: []string{"a", "b"}, Demand: make([]profile.Vector, 2),
			Rows: []profile.Row{{Index: 0, Diag: 1, Off: []profile.OffEntry{{I: 0, J: 1, V: 0.5}}}, {Index: 1, Diag: 1}}}
	}
	if _, err := good().Snapshot(); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, field string
		mutate      func(d *profile.Delta)
	}{
		{"demands", "demand", func(d *profile.Delta) { d.Demand = d.Demand[:1] }},
		{"index", "rows[1]", func(d *profile.Delta) { d.Rows[1].Index = 5 }},
		{"order", `rows[0] (kind "a")`, func(d *profile.Delta) { d.Rows[1].Index = 0 }},
		{"entry below", `rows[0] (kind "a").off[0]`, func(d *profile.Delta) { d.Rows[0].Off[0].J = 0 }},
		{"entry beyond", `rows[0] (kind "a").off[0]`, func(d *profile.Delta) { d.Rows[0].Off[0].J = 2 }},
		{"entry row", `rows[0] (kind "a").off[0]`, func(d *profile.Delta) { d.Rows[0].Off[0].I = 1 }},
	} {
		d := good()
		tc.mutate(&d)
		_, err := d.Snapshot()
		var fe *profile.FieldError
		if !errors.As(err, &fe) || !errors.Is(err, profile.ErrInvalidSnapshot) || fe.Field != tc.field {
			t.Errorf("%s: %v, want a field error on %s", tc.name, err, tc.field)
		}
	}
}
