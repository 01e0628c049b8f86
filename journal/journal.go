package journal

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/pipeline"
)

// Journal file names inside the journal directory.
const (
	DecisionsFile = "decisions.jsonl"
	goodnessFile  = "goodness.jsonl"
)

// maxJournalLine bounds one JSONL line read back at open; a longer line is
// skipped as corrupt instead of being buffered whole.
const maxJournalLine = 8 << 20

// DecisionRecord is one admission decision as the API explains it: the
// pipeline's decision plus what the daemon did with it.
type DecisionRecord struct {
	pipeline.Decision
	// Shadow is set when the daemon ran in shadow mode: Chosen is what
	// colocd would have admitted, FIFOChoice what it did admit.
	Shadow     bool   `json:"shadow"`
	FIFOChoice string `json:"fifo_choice,omitempty"`
	// AppID is the cluster application the admitted job became.
	AppID string `json:"app_id,omitempty"`
}

// GoodnessRecord is one goodness observation of a learning tick: node Node
// ran kinds Chosen (admitted later) and Given (running before) over
// [From, To), with mean usage Usage and goodness G.
type GoodnessRecord struct {
	At, From, To  time.Time
	Node          string
	Chosen, Given string
	G             float64
	Usage         goodness.Usage
}

// goodnessWire is GoodnessRecord's JSON shape (snake_case, usage included).
type goodnessWire struct {
	At     time.Time `json:"at"`
	From   time.Time `json:"from"`
	To     time.Time `json:"to"`
	Node   string    `json:"node"`
	Chosen string    `json:"chosen"`
	Given  string    `json:"given"`
	G      float64   `json:"g"`
	Usage  usageWire `json:"usage"`
}

type usageWire struct {
	CPU    float64 `json:"cpu"`
	IOWait float64 `json:"iowait"`
	// IOPressure and CPUPressure are omitted when 0 (no pressure
	// readings); Pressure when false (not read).
	IOPressure  float64 `json:"io_pressure,omitempty"`
	CPUPressure float64 `json:"cpu_pressure,omitempty"`
	Pressure    bool    `json:"pressure,omitempty"`
	DiskRead    float64 `json:"disk_read"`
	DiskWrite   float64 `json:"disk_write"`
	NetRecv     float64 `json:"net_recv"`
	NetSent     float64 `json:"net_sent"`
}

// MarshalJSON encodes the record with snake_case names.
func (r GoodnessRecord) MarshalJSON() ([]byte, error) {
	u := r.Usage
	return json.Marshal(goodnessWire{
		At: r.At, From: r.From, To: r.To, Node: r.Node, Chosen: r.Chosen, Given: r.Given, G: r.G,
		Usage: usageWire{CPU: u.CPU, IOWait: u.IOWait, IOPressure: u.IOPressure, CPUPressure: u.CPUPressure, Pressure: u.Pressure,
			DiskRead: u.DiskRead, DiskWrite: u.DiskWrite, NetRecv: u.NetRecv, NetSent: u.NetSent},
	})
}

// UnmarshalJSON decodes what MarshalJSON wrote.
func (r *GoodnessRecord) UnmarshalJSON(b []byte) error {
	var w goodnessWire
	if err := json.Unmarshal(b, &w); err != nil {
		return err
	}
	u := w.Usage
	*r = GoodnessRecord{
		At: w.At, From: w.From, To: w.To, Node: w.Node, Chosen: w.Chosen, Given: w.Given, G: w.G,
		Usage: goodness.Usage{CPU: u.CPU, IOWait: u.IOWait, IOPressure: u.IOPressure, CPUPressure: u.CPUPressure, Pressure: u.Pressure,
			DiskRead: u.DiskRead, DiskWrite: u.DiskWrite, NetRecv: u.NetRecv, NetSent: u.NetSent},
	}
	return nil
}

// Journal keeps the most recent decisions and goodness observations in
// bounded in-memory rings, appended as JSON lines to decisions.jsonl and
// goodness.jsonl in its directory. A ring grows with the records it keeps,
// up to its cap, so its memory is what it holds, not what it may hold. At
// open it reloads the last records of each file, skipping (and counting)
// lines that do not parse, such as a line torn by a crash. A file is
// compacted (rewritten with just the ring, atomically) when it grows past
// 2 × cap + 16 records, which bounds it on disk. Appends are not
// fsync'd one by one: the journal explains decisions, the store is the
// record of truth. Safe for concurrent use.
type Journal struct {
	mu      sync.Mutex
	closed  bool
	dec     *jsonLog[DecisionRecord]
	good    *jsonLog[GoodnessRecord]
	corrupt int
}

// Open opens (creating if needed) the journal in dir, keeping up to
// maxDecisions decisions and maxGoodness goodness records. Nothing is
// allocated for records not yet kept; the daemon's config bounds the caps
// (journal.max_decisions, journal.max_goodness).
func Open(dir string, maxDecisions, maxGoodness int) (*Journal, error) {
	switch {
	case dir == "":
		return nil, fmt.Errorf("%w: journal dir is empty", errConfig)
	case maxDecisions < 1:
		return nil, fmt.Errorf("%w: journal maxDecisions is %d, want at least 1", errConfig, maxDecisions)
	case maxGoodness < 1:
		return nil, fmt.Errorf("%w: journal maxGoodness is %d, want at least 1", errConfig, maxGoodness)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("%w: creating dir: %w", errIO, err)
	}
	dec, err := openJSONLog[DecisionRecord](filepath.Join(dir, DecisionsFile), maxDecisions)
	if err != nil {
		return nil, err
	}
	good, err := openJSONLog[GoodnessRecord](filepath.Join(dir, goodnessFile), maxGoodness)
	if err != nil {
		_ = dec.close()
		return nil, err
	}
	return &Journal{dec: dec, good: good, corrupt: dec.corrupt + good.corrupt}, nil
}

// Corrupt returns how many lines were skipped at open because they did
// not parse (both files together).
func (j *Journal) Corrupt() int {
	j.mu.Lock()
	defer j.mu.Unlock()
	return j.corrupt
}

// AddDecision records a decision.
func (j *Journal) AddDecision(r DecisionRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errClosed
	}
	return j.dec.append(r)
}

// Decisions returns up to limit of the most recent decisions, newest
// first; limit <= 0 returns all that are kept.
func (j *Journal) Decisions(limit int) []DecisionRecord {
	j.mu.Lock()
	defer j.mu.Unlock()
	n := j.dec.len()
	if limit <= 0 || limit > n {
		limit = n
	}
	out := make([]DecisionRecord, 0, limit)
	for i := n - 1; i >= 0 && len(out) < limit; i-- {
		out = append(out, j.dec.at(i))
	}
	return out
}

// SetMemoryOnly stops (on) or resumes writing new records to the files:
// while stopped, records are kept in memory only (listed as usual, lost
// at a restart) and nothing is compacted. The daemon stops the writes
// while its data directory is below the store's space reserve, which is
// kept for the jobs already accepted.
func (j *Journal) SetMemoryOnly(on bool) {
	j.mu.Lock()
	defer j.mu.Unlock()
	j.dec.memOnly, j.good.memOnly = on, on
}

// AddGoodness records a goodness observation.
func (j *Journal) AddGoodness(r GoodnessRecord) error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return errClosed
	}
	return j.good.append(r)
}

// Goodness returns the kept observations with from <= At < to, oldest
// first. A zero from or to leaves that end open.
func (j *Journal) Goodness(from, to time.Time) []GoodnessRecord {
	var out []GoodnessRecord
	j.EachGoodness(from, to, func(r GoodnessRecord) { out = append(out, r) })
	return out
}

// EachGoodness calls fn on every goodness record with from <= At < to
// (a zero bound is open), oldest first, in place: nothing is copied but
// the record passed. fn must not call the Journal.
func (j *Journal) EachGoodness(from, to time.Time, fn func(GoodnessRecord)) {
	j.mu.Lock()
	defer j.mu.Unlock()
	for i := range j.good.len() {
		r := j.good.at(i)
		if (!from.IsZero() && r.At.Before(from)) || (!to.IsZero() && !r.At.Before(to)) {
			continue
		}
		fn(r)
	}
}

// Close flushes both files to disk and closes them. Later calls are no-ops.
func (j *Journal) Close() error {
	j.mu.Lock()
	defer j.mu.Unlock()
	if j.closed {
		return nil
	}
	j.closed = true
	return errors.Join(j.dec.close(), j.good.close())
}

// jsonLog is one bounded ring of T backed by an append-only JSONL file.
// The ring grows as records arrive, up to max slots, so a large cap costs
// memory only once that many records have been kept.
type jsonLog[T any] struct {
	path    string
	f       *os.File
	max     int  // the ring's cap, in records
	ring    []T  // oldest first from start: ring[(start+i)%len(ring)]
	start   int  // 0 until len(ring) == max
	lines   int  // records in the file
	corrupt int  // lines skipped at open
	memOnly bool // Journal.SetMemoryOnly: records are kept in the ring only
}

func openJSONLog[T any](path string, capacity int) (*jsonLog[T], error) {
	l := &jsonLog[T]{path: path, max: capacity}
	needCompact := false
	if f, err := os.Open(path); err == nil {
		torn, err := l.load(f)
		_ = f.Close()
		if err != nil {
			return nil, fmt.Errorf("%w: reading %s: %w", errIO, path, err)
		}
		needCompact = torn || l.corrupt > 0 || l.lines > l.bound()
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("%w: opening %s: %w", errIO, path, err)
	}
	if needCompact {
		// Rewrite the file clean so a torn or corrupt line is reported
		// once and later appends start on a fresh line.
		if err := l.compact(); err != nil {
			return nil, err
		}
		return l, nil
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o640)
	if err != nil {
		return nil, fmt.Errorf("%w: opening %s: %w", errIO, path, err)
	}
	l.f = f
	return l, nil
}

// bound is the file length (in records) that triggers compaction.
func (l *jsonLog[T]) bound() int { return 2*l.max + 16 }

// load reads every line of f into the ring (keeping the last ones). It
// reports whether the file ended without a newline (a torn last write).
func (l *jsonLog[T]) load(f *os.File) (torn bool, err error) {
	br := bufio.NewReaderSize(f, 64<<10)
	var line []byte
	tooLong := false
	for {
		chunk, isPrefix, err := br.ReadLine()
		if err == io.EOF {
			break
		}
		if err != nil {
			return false, err
		}
		if !tooLong {
			line = append(line, chunk...)
			if len(line) > maxJournalLine {
				tooLong, line = true, line[:0]
			}
		}
		if isPrefix {
			continue
		}
		switch {
		case tooLong:
			l.corrupt++
		case len(bytes.TrimSpace(line)) == 0:
		default:
			var v T
			if json.Unmarshal(line, &v) != nil {
				l.corrupt++
			} else {
				l.push(v)
				l.lines++
			}
		}
		line, tooLong = line[:0], false
	}
	// bufio.ReadLine hides whether the last line had its newline.
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		var b [1]byte
		if _, err := f.ReadAt(b[:], st.Size()-1); err == nil && b[0] != '\n' {
			torn = true
		}
	}
	return torn, nil
}

// minRing is the ring's first allocation, in records.
const minRing = 64

// push keeps v as the newest record. Below max records the ring grows by
// doubling (never past max); at max, v replaces the oldest.
func (l *jsonLog[T]) push(v T) {
	if len(l.ring) < l.max {
		if len(l.ring) == cap(l.ring) {
			grown := make([]T, len(l.ring), min(max(2*cap(l.ring), minRing), l.max))
			copy(grown, l.ring)
			l.ring = grown
		}
		l.ring = append(l.ring, v)
		return
	}
	l.ring[l.start] = v
	l.start = (l.start + 1) % len(l.ring)
}

// len is the number of records kept.
func (l *jsonLog[T]) len() int { return len(l.ring) }

// at is the i-th record kept, oldest first.
func (l *jsonLog[T]) at(i int) T { return l.ring[(l.start+i)%len(l.ring)] }

func (l *jsonLog[T]) append(v T) error {
	b, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("%w: encoding record: %w", errIO, err)
	}
	l.push(v)
	if l.memOnly {
		return nil
	}
	if l.f == nil {
		// A failed compaction left no file open; retry it now.
		return l.compact()
	}
	if n, err := l.f.Write(append(b, '\n')); err != nil {
		if n > 0 {
			// Cut the torn record (a full disk), so that the next append
			// starts a line of its own instead of spoiling it too.
			if st, serr := l.f.Stat(); serr == nil {
				_ = l.f.Truncate(st.Size() - int64(n))
			}
		}
		return fmt.Errorf("%w: appending to %s: %w", errIO, l.path, err)
	}
	l.lines++
	if l.lines > l.bound() {
		return l.compact()
	}
	return nil
}

// compact atomically replaces the file with the ring's records: write a
// temporary file, fsync it, rename it over the old one, fsync the dir.
func (l *jsonLog[T]) compact() error {
	if l.f != nil {
		_ = l.f.Close()
		l.f = nil
	}
	tmp := l.path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o640)
	if err != nil {
		return fmt.Errorf("%w: compacting %s: %w", errIO, l.path, err)
	}
	w := bufio.NewWriter(f)
	for i := range l.len() {
		b, err := json.Marshal(l.at(i))
		if err != nil {
			_ = f.Close()
			return fmt.Errorf("%w: compacting %s: %w", errIO, l.path, err)
		}
		_, _ = w.Write(b)
		_ = w.WriteByte('\n')
	}
	err = errors.Join(w.Flush(), f.Sync(), f.Close())
	if err == nil {
		err = os.Rename(tmp, l.path)
	}
	if err != nil {
		return fmt.Errorf("%w: compacting %s: %w", errIO, l.path, err)
	}
	if d, err := os.Open(filepath.Dir(l.path)); err == nil {
		_ = d.Sync()
		_ = d.Close()
	}
	f, err = os.OpenFile(l.path, os.O_WRONLY|os.O_APPEND, 0o640)
	if err != nil {
		return fmt.Errorf("%w: reopening %s: %w", errIO, l.path, err)
	}
	l.f, l.lines = f, l.len()
	return nil
}

func (l *jsonLog[T]) close() error {
	if l.f == nil {
		return nil
	}
	err := errors.Join(l.f.Sync(), l.f.Close())
	l.f = nil
	if err != nil {
		return fmt.Errorf("%w: closing %s: %w", errIO, l.path, err)
	}
	return nil
}
