package queue

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// sameBits compares float64s by their bits (NaN payloads, −0).
var sameBits = cmp.Comparer(func(a, b float64) bool { return math.Float64bits(a) == math.Float64bits(b) })

// randomRow draws a row with runs, literals and awkward values.
func randomRow(rng *rand.Rand) LearnedRow {
	specials := []float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), math.MaxFloat64, math.SmallestNonzeroFloat64, -3.25}
	n := rng.IntN(300)
	r := LearnedRow{Floats: make([]float64, 0, n), Ints: make([]int64, 0, n)}
	for len(r.Floats) < n {
		v := rng.NormFloat64()
		if rng.IntN(4) == 0 {
			v = specials[rng.IntN(len(specials))]
		}
		for range 1 + rng.IntN(3)*rng.IntN(20) {
			r.Floats = append(r.Floats, v)
		}
	}
	for len(r.Ints) < n {
		v := []int64{0, 0, 0, 1, -1, math.MaxInt64, math.MinInt64, rng.Int64()}[rng.IntN(8)]
		for range 1 + rng.IntN(2)*rng.IntN(30) {
			r.Ints = append(r.Ints, v)
		}
	}
	return r
}

// TestLearnedRowRoundTrip: every row decodes to what was encoded, bit for
// bit, and runs make repetitive rows small.
func TestLearnedRowRoundTrip(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 1))
	rows := []LearnedRow{{}, {Floats: []float64{1}, Ints: []int64{1}}, {Floats: []float64{1, 2}, Ints: []int64{7, 7}}}
	for range 500 {
		rows = append(rows, randomRow(rng))
	}
	for i, r := range rows {
		b := appendLearnedRow(nil, r)
		got, err := decodeLearnedRow(b)
		if err != nil {
			t.Fatalf("row %d: %v", i, err)
		}
		if len(r.Floats) == 0 {
			r.Floats = []float64{}
		}
		if len(r.Ints) == 0 {
			r.Ints = []int64{}
		}
		if diff := cmp.Diff(r, got, sameBits); diff != "" {
			t.Fatalf("row %d (-encoded +decoded):\n%s", i, diff)
		}
	}
	flat := LearnedRow{Floats: make([]float64, 1000), Ints: make([]int64, 1000)}
	flat.Floats[500] = -1
	flat.Ints[3] = 4
	if n := len(appendLearnedRow(nil, flat)); n > 48 {
		t.Errorf("a row of 1,000 zeros but one takes %d bytes", n)
	}
	dense := LearnedRow{Floats: make([]float64, 1000)}
	for i := range dense.Floats {
		dense.Floats[i] = float64(i)
	}
	if n := len(appendLearnedRow(nil, dense)); n > 8*1000+8 {
		t.Errorf("a row of 1,000 distinct floats takes %d bytes, want at most 8 per value and a few more", n)
	}
}

// TestLearnedRowDecodeErrors: damaged rows are errors, never panics.
func TestLearnedRowDecodeErrors(t *testing.T) {
	good := appendLearnedRow(nil, LearnedRow{Floats: []float64{1, 2, 2, 2}, Ints: []int64{0, 0, 5}})
	huge := append([]byte{learnedFormat}, binary.AppendUvarint(nil, maxLearnedLen+1)...)
	for name, b := range map[string][]byte{
		"empty":            {},
		"format":           append([]byte{9}, good[1:]...),
		"truncated":        good[:len(good)-1],
		"truncated float":  good[:6],
		"trailing":         append(append([]byte{}, good...), 0),
		"zero group":       {learnedFormat, 2, 0},
		"group too long":   {learnedFormat, 1, 4 << 1, 0, 0, 0, 0, 0, 0, 0, 0},
		"length too large": huge,
		"bad uvarint":      {learnedFormat, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff},
	} {
		if _, err := decodeLearnedRow(b); err == nil {
			t.Errorf("%s: decoded %x without an error", name, b)
		}
	}
}

// FuzzDecodeLearnedRow: the decoder never panics, and what it accepts
// encodes back to bytes that decode to the same row.
func FuzzDecodeLearnedRow(f *testing.F) {
	f.Add(appendLearnedRow(nil, LearnedRow{Floats: []float64{1, 2, 2, 2}, Ints: []int64{0, 0, 5}}))
	f.Add(appendLearnedRow(nil, LearnedRow{}))
	f.Add([]byte{learnedFormat, 3, 6, 1, 2, 3, 4, 5, 6, 7, 8, 0})
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := decodeLearnedRow(b)
		if err != nil {
			return
		}
		again, err := decodeLearnedRow(appendLearnedRow(nil, r))
		if err != nil {
			t.Fatalf("re-encoded row does not decode: %v", err)
		}
		if diff := cmp.Diff(r, again, sameBits); diff != "" {
			t.Fatalf("(-first +again):\n%s", diff)
		}
	})
}
