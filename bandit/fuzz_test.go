package bandit_test

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"math"
	"testing"

	"github.com/colocd/colocd/bandit"
)

// FuzzUpdate drives a learner with an arbitrary sequence of operations and
// arbitrary float64 goodness values (NaN, ±Inf, subnormals, ±MaxFloat64).
// Nothing panics, every accepted or rejected update is counted, and the
// invariants (finite H within ±Clip, rows of π summing to 1, a snapshot that
// restores) hold at the end.
func FuzzUpdate(f *testing.F) {
	f.Add([]byte{0, 1, 0, 1, 2, 0x40, 0x24, 0, 0, 0, 0, 0, 0})
	f.Add([]byte{5, 1, 3, 4, 0x7f, 0xf0, 0, 0, 0, 0, 0, 0, 1, 4, 4, 0x7f, 0xef, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{2, 2, 1, 2, 3, 3, 1, 0, 1, 0xc0, 0x49, 0, 0, 0, 0, 0, 0, 4, 5})
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) == 0 {
			return
		}
		cfg := bandit.Config{
			StepSize: []float64{0, 0.05, 1, 100}[data[0]&3],
			Baseline: bandit.BaselineMode(data[0] >> 2 & 3 % 3),
			Clip:     []float64{0, 0, 5, 1e-3}[data[0]>>4&3],
		}
		l := newLearner(t, cfg)
		kinds := []string{"a", "b", "c", "d", "e", ""}
		var updates int64
		out := make([]float64, 3)
		for i := 1; i < len(data); {
			op, arg := data[i]%6, data[i]/6
			i++
			k1, k2 := kinds[arg%6], kinds[arg/6%6]
			switch op {
			case 0:
				l.Add(k1)
			case 1:
				if i+8 > len(data) {
					return
				}
				g := math.Float64frombits(binary.BigEndian.Uint64(data[i:]))
				i += 8
				l.Update(k1, k2, g)
				updates++
			case 2:
				l.AddSimilar(k1, map[string]float64{k2: float64(arg), "a": 1})
			case 3:
				l.Mix([]string{k1, k2, "zz"}, []string{k2, "a"}, []float64{float64(arg), 1}, out)
				sum := 0.0
				for _, v := range out {
					if math.IsNaN(v) || v < 0 {
						t.Fatalf("Mix out = %v", out)
					}
					sum += v
				}
				if math.Abs(sum-1) > 1e-9 {
					t.Fatalf("Mix out sums to %v", sum)
				}
			case 4:
				s := l.Snapshot()
				r := bandit.New(s.Config)
				if err := r.Restore(s); err != nil {
					t.Fatalf("own snapshot does not restore: %v", err)
				}
			case 5:
				if p := l.Prob(k1, k2); !(p >= 0 && p <= 1) {
					t.Fatalf("Prob(%q|%q) = %v", k1, k2, p)
				}
			}
		}
		s := l.Snapshot()
		if s.Observations+s.Rejected != updates {
			t.Fatalf("observations %d + rejected %d != %d updates", s.Observations, s.Rejected, updates)
		}
	})
}

// FuzzRestore feeds arbitrary JSON to Restore: it never panics; a refusal is
// a *FieldError wrapping ErrInvalidSnapshot and leaves the learner as it was;
// an accepted snapshot yields a usable learner.
func FuzzRestore(f *testing.F) {
	good, _ := json.Marshal(learned(f, bandit.Config{}).Snapshot())
	f.Add(good)
	f.Add([]byte(`{"version":1}`))
	f.Add([]byte(`{"version":1,"kinds":["a","a"],"h":[[0,0],[0,0]]}`))
	f.Add([]byte(`{"version":1,"kinds":["a"],"h":[[1e308]],"row_baseline":[0],"row_observations":[1],"pair_observations":[[1]],"observations":1}`))
	f.Add([]byte(`{"version":1,"config":{"baseline":"recency","clip":2},"kinds":["a","b"],"h":[[0,1],[2]],"row_baseline":[0,0]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		var s bandit.Snapshot
		if json.Unmarshal(data, &s) != nil {
			return
		}
		l := bandit.New(bandit.Config{Clip: 50})
		l.Update("x", "y", 10)
		before := l.Snapshot()
		if err := l.Restore(s); err != nil {
			var fe *bandit.FieldError
			if !errors.Is(err, bandit.ErrInvalidSnapshot) || !errors.As(err, &fe) || fe.Field == "" {
				t.Fatalf("Restore error %v: want a *FieldError wrapping ErrInvalidSnapshot", err)
			}
			if after := l.Snapshot(); after.Observations != before.Observations || len(after.Kinds) != len(before.Kinds) {
				t.Fatalf("a refused Restore changed the learner")
			}
			return
		}
		kinds := l.Kinds()
		if len(kinds) > 0 {
			out := make([]float64, len(kinds))
			l.Mix(kinds, kinds[:1], nil, out)
			for _, v := range out {
				if math.IsNaN(v) || math.IsInf(v, 0) {
					t.Fatalf("Mix after Restore = %v", out)
				}
			}
			l.Update(kinds[0], kinds[len(kinds)-1], 20)
		}
		checkInvariants(t, l)
	})
}
