package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	bolt "go.etcd.io/bbolt"
)

// The learned state — the pair preferences and the profile model — is
// stored in rows, so that a learning tick writes what it changed and not
// the whole of a K×K matrix: one bucket per model (a Section), nested in
// bucketPrefs, holding
//
//	"header"          JSON learnedHeader: layout format, row names, the model's own header
//	"dense"           a vector written whole on every save (the profile model's demands)
//	index (uint32 BE) one row, encoded by appendLearnedRow
//
// A save is one transaction: the header, the dense vector and the rows it
// writes commit together or not at all. The models decide what a row
// holds; the store only knows rows of float64s and int64s.

// Section names one learned model's state in the store.
type Section string

// The sections: the pair preferences (bandit) and the profile model.
const (
	SectionPreferences Section = "preferences"
	SectionProfiles    Section = "profiles"
)

// learnedFormat is the version of the row layout (learnedHeader.Format
// and the first byte of every row) this build writes and reads.
const learnedFormat = 1

// maxLearnedLen bounds a row's or the dense vector's length when one is
// read back, so that a damaged length cannot make a huge allocation: a
// million kinds, far beyond what K×K preferences can hold in memory.
const maxLearnedLen = 1 << 20

var (
	keyHeader = []byte("header")
	keyDense  = []byte("dense")
)

// bucket is the section's bucket name in bucketPrefs, and legacy the key
// of its single-key snapshot (the layout before rows), also in
// bucketPrefs.
func (s Section) bucket() []byte { return []byte("learned_" + string(s)) }

func (s Section) legacy() []byte {
	if s == SectionProfiles {
		return keyProfiles
	}
	return keyPrefs
}

func (s Section) valid() error {
	if s != SectionPreferences && s != SectionProfiles {
		return fieldErr("section", "%q is not %q or %q", s, SectionPreferences, SectionProfiles)
	}
	return nil
}

// Learned is one model's state as the store keeps it.
type Learned struct {
	// Names names the rows: row i holds Names[i]'s values (a kind). Errors
	// and Check name a row by it.
	Names []string
	// Meta is the model's own header as JSON: its version, configuration
	// and scalars.
	Meta json.RawMessage
	// Dense is a vector stored whole (nil: none).
	Dense []float64
	// Rows are the rows to write (SaveLearned) or every row stored
	// (LoadLearned), by increasing Index. Each Index is below len(Names).
	Rows []LearnedRow
}

// LearnedRow is one row: what its numbers mean is the model's business.
type LearnedRow struct {
	Index  int
	Floats []float64
	Ints   []int64
}

// learnedHeader is the "header" key.
type learnedHeader struct {
	Format int             `json:"format"`
	Names  []string        `json:"names"`
	Meta   json.RawMessage `json:"meta"`
}

// LearnedError is a learned-state key that cannot be read back: the
// section, the key ("header", "dense", or a row's index) and, for a row,
// the name the header gives it. It wraps ErrCorrupt.
type LearnedError struct {
	Section Section
	Key     string
	Name    string // the row's name; "" for the header, the dense vector, or a row the header does not name
	Reason  string
}

func (e *LearnedError) Error() string {
	where := e.Key
	if e.Name != "" {
		where = fmt.Sprintf("row %s (%q)", e.Key, e.Name)
	}
	return fmt.Sprintf("%v: learned %s: %s: %s", ErrCorrupt, e.Section, where, e.Reason)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *LearnedError) Unwrap() error { return ErrCorrupt }

// LearnedSave is one model's part of a SaveLearned: its state and
// whether it replaces every row stored before.
type LearnedSave struct {
	Section Section
	State   Learned
	// Full drops every row stored before first (a row not in State.Rows is
	// then absent); otherwise the rows not in State.Rows stay as they were.
	Full bool
}

// SaveLearned writes every save — each section's header, dense vector and
// rows — as one command: all of them commit, or none.
func (s *Store) SaveLearned(saves ...LearnedSave) error {
	for _, sv := range saves {
		if err := sv.check(); err != nil {
			return err
		}
	}
	_, err := s.commitOne(cmdSaveLearned{Saves: saves})
	return err
}

// MigrateLearned replaces section's single-key snapshot of the layout
// before rows (legacy, the bytes LoadPreferences or LoadProfiles returned)
// with st, all of it, as one command: the rows are written and the old
// key deleted together, so a crash leaves one layout or the other. If the
// old key no longer holds legacy, nothing is written and it says so.
func (s *Store) MigrateLearned(section Section, st Learned, legacy []byte) error {
	if err := (LearnedSave{Section: section, State: st}).check(); err != nil {
		return err
	}
	_, err := s.commitOne(cmdMigrateLearned{Section: section, State: st, Legacy: legacy})
	return err
}

// check is what a save must satisfy before it is proposed: a known
// section and rows that its names index.
func (sv LearnedSave) check() error {
	if err := sv.Section.valid(); err != nil {
		return err
	}
	for n, r := range sv.State.Rows {
		if r.Index < 0 || r.Index >= len(sv.State.Names) || r.Index > math.MaxUint32 {
			return fieldErr(fmt.Sprintf("rows[%d]", n), "index %d is not below the %d names", r.Index, len(sv.State.Names))
		}
	}
	return nil
}

func applySaveLearned(tx *bolt.Tx, c cmdSaveLearned) (Result, error) {
	enc := make([]encodedLearned, len(c.Saves))
	for n, sv := range c.Saves {
		if err := sv.Section.valid(); err != nil {
			return Result{Err: err}, nil
		}
		var err error
		if enc[n], err = encodeLearned(sv.State); err != nil {
			return Result{Err: err}, nil
		}
	}
	for n, sv := range c.Saves {
		if err := putLearned(tx.Bucket(bucketPrefs), sv.Section, enc[n], sv.Full); err != nil {
			return Result{}, err
		}
	}
	return Result{}, nil
}

func applyMigrateLearned(tx *bolt.Tx, c cmdMigrateLearned) (Result, error) {
	if err := c.Section.valid(); err != nil {
		return Result{Err: err}, nil
	}
	enc, err := encodeLearned(c.State)
	if err != nil {
		return Result{Err: err}, nil
	}
	b := tx.Bucket(bucketPrefs)
	if !bytes.Equal(b.Get(c.Section.legacy()), c.Legacy) {
		return Result{Err: fmt.Errorf("queue: migrate learned %s: the stored snapshot changed since it was read", c.Section)}, nil
	}
	if err := putLearned(b, c.Section, enc, true); err != nil {
		return Result{}, err
	}
	return Result{}, b.Delete(c.Section.legacy())
}

// encodedLearned is a Learned encoded for bbolt.
type encodedLearned struct {
	header []byte
	dense  []byte // nil: none
	keys   [][]byte
	rows   [][]byte
}

func encodeLearned(st Learned) (encodedLearned, error) {
	var enc encodedLearned
	h, err := json.Marshal(learnedHeader{Format: learnedFormat, Names: st.Names, Meta: st.Meta})
	if err != nil {
		return enc, fmt.Errorf("queue: encode learned header: %w", err)
	}
	enc.header = h
	if st.Dense != nil {
		enc.dense = appendFloats([]byte{learnedFormat}, st.Dense)
	}
	enc.keys = make([][]byte, len(st.Rows))
	enc.rows = make([][]byte, len(st.Rows))
	for n, r := range st.Rows {
		if r.Index < 0 || r.Index >= len(st.Names) || r.Index > math.MaxUint32 {
			return enc, fieldErr(fmt.Sprintf("rows[%d]", n), "index %d is not below the %d names", r.Index, len(st.Names))
		}
		enc.keys[n] = binary.BigEndian.AppendUint32(nil, uint32(r.Index))
		enc.rows[n] = appendLearnedRow(make([]byte, 0, 16+9*len(r.Floats)+2*len(r.Ints)), r)
	}
	return enc, nil
}

func putLearned(parent *bolt.Bucket, section Section, enc encodedLearned, full bool) error {
	name := section.bucket()
	if full && parent.Bucket(name) != nil {
		if err := parent.DeleteBucket(name); err != nil {
			return fmt.Errorf("queue: drop learned %s: %w", section, err)
		}
	}
	b, err := parent.CreateBucketIfNotExists(name)
	if err != nil {
		return fmt.Errorf("queue: create learned %s: %w", section, err)
	}
	if err := b.Put(keyHeader, enc.header); err != nil {
		return err
	}
	if enc.dense != nil {
		if err := b.Put(keyDense, enc.dense); err != nil {
			return err
		}
	} else if err := b.Delete(keyDense); err != nil {
		return err
	}
	for n, k := range enc.keys {
		if err := b.Put(k, enc.rows[n]); err != nil {
			return err
		}
	}
	return nil
}

// LoadLearned reads section back: false when it holds nothing (a store
// written before the row layout may still hold the old single key). A key
// that does not decode is a *LearnedError naming it.
func (s *Store) LoadLearned(section Section) (Learned, bool, error) {
	if err := section.valid(); err != nil {
		return Learned{}, false, err
	}
	var (
		st Learned
		ok bool
	)
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketPrefs).Bucket(section.bucket())
		if b == nil {
			return nil
		}
		ok = true
		var err error
		st, err = readLearned(section, b)
		return err
	})
	if err != nil {
		return Learned{}, false, err
	}
	return st, ok, nil
}

// readLearned decodes a section's bucket (copying everything out of it);
// the error is the first key that does not decode.
func readLearned(section Section, b *bolt.Bucket) (Learned, error) {
	var first error
	st := walkLearned(section, b, func(e *LearnedError) bool {
		first = e
		return false
	})
	return st, first
}

// walkLearned decodes a section's bucket, telling bad every key that does
// not decode until it returns false. Rows are checked against the header's
// names only when the header decodes.
func walkLearned(section Section, b *bolt.Bucket, bad func(*LearnedError) bool) Learned {
	var st Learned
	report := func(key, name, format string, args ...any) bool {
		return bad(&LearnedError{Section: section, Key: key, Name: name, Reason: fmt.Sprintf(format, args...)})
	}
	header := true
	var h learnedHeader
	switch hb := b.Get(keyHeader); {
	case hb == nil:
		header = false
		if !report("header", "", "missing") {
			return st
		}
	case json.Unmarshal(hb, &h) != nil || h.Format != learnedFormat:
		header = false
		err := json.Unmarshal(hb, &h)
		if err == nil {
			err = fmt.Errorf("format %d, this build reads format %d", h.Format, learnedFormat)
		}
		if !report("header", "", "%v", err) {
			return st
		}
	}
	st.Names, st.Meta = h.Names, h.Meta
	if v := b.Get(keyDense); v != nil {
		d, err := decodeDense(v)
		if err != nil && !report("dense", "", "%v", err) {
			return st
		}
		st.Dense = d
	}
	c := b.Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if bytes.Equal(k, keyHeader) || bytes.Equal(k, keyDense) {
			continue
		}
		if len(k) != 4 || v == nil {
			if !report(fmt.Sprintf("%q", k), "", "is neither a row (a 4-byte index) nor header or dense") {
				return st
			}
			continue
		}
		i := int(binary.BigEndian.Uint32(k))
		name := ""
		if header && i >= len(h.Names) {
			if !report(fmt.Sprint(i), "", "index beyond the header's %d names", len(h.Names)) {
				return st
			}
			continue
		} else if header {
			name = h.Names[i]
		}
		r, err := decodeLearnedRow(v)
		if err != nil {
			if !report(fmt.Sprint(i), name, "%v", err) {
				return st
			}
			continue
		}
		r.Index = i
		st.Rows = append(st.Rows, r)
	}
	return st
}

// A row is a format byte (learnedFormat), then its floats, then its ints,
// each as a uvarint length and groups until that length is reached. A
// group is a uvarint h: h = n<<1 is a run of n copies of one value, h =
// n<<1|1 n values one after the other (n ≥ 1). A float is its IEEE 754
// bits, 8 bytes little-endian; an int a zigzag varint. Runs make the rows
// of the preferences small where they are: a kind's column holds the same
// value in every row that never saw it run since it was added, and the
// pair counts are mostly zero.
func appendLearnedRow(b []byte, r LearnedRow) []byte {
	b = append(b, learnedFormat)
	b = appendFloats(b, r.Floats)
	return appendInts(b, r.Ints)
}

func appendFloats(b []byte, v []float64) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for i := 0; i < len(v); {
		n := runOf(len(v)-i, func(k int) bool { return math.Float64bits(v[i+k]) == math.Float64bits(v[i]) })
		if n >= 2 {
			b = binary.AppendUvarint(b, uint64(n)<<1)
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v[i]))
			i += n
			continue
		}
		n = literalOf(len(v)-i, func(k int) bool { return math.Float64bits(v[i+k]) == math.Float64bits(v[i+k+1]) })
		b = binary.AppendUvarint(b, uint64(n)<<1|1)
		for _, x := range v[i : i+n] {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(x))
		}
		i += n
	}
	return b
}

func appendInts(b []byte, v []int64) []byte {
	b = binary.AppendUvarint(b, uint64(len(v)))
	for i := 0; i < len(v); {
		n := runOf(len(v)-i, func(k int) bool { return v[i+k] == v[i] })
		if n >= 2 {
			b = binary.AppendUvarint(b, uint64(n)<<1)
			b = binary.AppendVarint(b, v[i])
			i += n
			continue
		}
		n = literalOf(len(v)-i, func(k int) bool { return v[i+k] == v[i+k+1] })
		b = binary.AppendUvarint(b, uint64(n)<<1|1)
		for _, x := range v[i : i+n] {
			b = binary.AppendVarint(b, x)
		}
		i += n
	}
	return b
}

// runOf is the length of the run at the start of left values: 1 plus how
// many of the next ones same(k) says equal the first.
func runOf(left int, same func(k int) bool) int {
	n := 1
	for n < left && same(n) {
		n++
	}
	return n
}

// literalOf is how many values a literal group takes: up to where a run
// of two starts (same(k): value k equals value k+1), at least one.
func literalOf(left int, same func(k int) bool) int {
	n := 1
	for n < left && (n+1 >= left || !same(n)) {
		n++
	}
	return n
}

// decodeLearnedRow decodes appendLearnedRow's bytes, every one of them.
func decodeLearnedRow(b []byte) (LearnedRow, error) {
	var r LearnedRow
	if len(b) == 0 || b[0] != learnedFormat {
		return r, fmt.Errorf("row format byte %v, want %d", b[:min(len(b), 1)], learnedFormat)
	}
	d := decoder{b: b, off: 1}
	r.Floats = d.floats()
	r.Ints = d.ints()
	return r, d.done()
}

func decodeDense(b []byte) ([]float64, error) {
	if len(b) == 0 || b[0] != learnedFormat {
		return nil, fmt.Errorf("format byte %v, want %d", b[:min(len(b), 1)], learnedFormat)
	}
	d := decoder{b: b, off: 1}
	v := d.floats()
	return v, d.done()
}

// decoder reads a row; the first error sticks, and every read after it
// returns zeros.
type decoder struct {
	b   []byte
	off int
	err error
}

var errTruncated = errors.New("ends in the middle of a value")

func (d *decoder) fail(format string, args ...any) {
	if d.err == nil {
		d.err = fmt.Errorf("at byte %d: "+format, append([]any{d.off}, args...)...)
	}
}

func (d *decoder) uvarint() uint64 { return readVarint(d, binary.Uvarint) }

func (d *decoder) varint() int64 { return readVarint(d, binary.Varint) }

// readVarint reads one varint with read (binary.Uvarint or Varint).
func readVarint[T int64 | uint64](d *decoder, read func([]byte) (T, int)) T {
	if d.err != nil {
		return 0
	}
	v, n := read(d.b[d.off:])
	if n <= 0 {
		d.fail("%v", errTruncated)
		return 0
	}
	d.off += n
	return v
}

func (d *decoder) float() float64 {
	if d.err != nil {
		return 0
	}
	if len(d.b)-d.off < 8 {
		d.fail("%v", errTruncated)
		return 0
	}
	v := math.Float64frombits(binary.LittleEndian.Uint64(d.b[d.off:]))
	d.off += 8
	return v
}

// length reads a vector's length and checks it against maxLearnedLen.
func (d *decoder) length() int {
	n := d.uvarint()
	if n > maxLearnedLen {
		d.fail("length %d over the limit %d", n, maxLearnedLen)
		return 0
	}
	return int(n)
}

// group reads a group header for a vector with left values to go: its
// count and whether it is a run.
func (d *decoder) group(left int) (int, bool) {
	h := d.uvarint()
	n := h >> 1
	if d.err == nil && (n == 0 || n > uint64(left)) {
		d.fail("a group of %d values where %d are left", n, left)
		return 0, false
	}
	return int(n), h&1 == 0
}

func (d *decoder) floats() []float64 {
	n := d.length()
	v := make([]float64, 0, min(n, len(d.b)))
	for d.err == nil && len(v) < n {
		k, run := d.group(n - len(v))
		if run {
			x := d.float()
			for range k {
				v = append(v, x)
			}
			continue
		}
		for range k {
			v = append(v, d.float())
		}
	}
	return v
}

func (d *decoder) ints() []int64 {
	n := d.length()
	v := make([]int64, 0, min(n, 8*len(d.b)))
	for d.err == nil && len(v) < n {
		k, run := d.group(n - len(v))
		if run {
			x := d.varint()
			for range k {
				v = append(v, x)
			}
			continue
		}
		for range k {
			v = append(v, d.varint())
		}
	}
	return v
}

func (d *decoder) done() error {
	if d.err == nil && d.off != len(d.b) {
		d.fail("%d bytes after the end", len(d.b)-d.off)
	}
	return d.err
}
