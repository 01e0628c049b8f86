package queue

import (
	"bytes"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime/debug"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// Options configure Open. The zero value is safe: durable writes, a 1 s lock
// timeout, the wall clock and crypto/rand.
type Options struct {
	// Timeout bounds the wait for the file lock (another colocd holding the
	// file). Zero means 1 s; negative means wait forever.
	Timeout time.Duration
	// NoSync skips fsync on commit. Only for tests and benchmarks: a crash
	// may lose acknowledged jobs.
	NoSync bool
	// Now is the clock for every timestamp the store writes. Nil: time.Now.
	Now func() time.Time
	// Entropy feeds the random part of job ids. Nil: crypto/rand.
	Entropy io.Reader
	// Logger receives warnings (a negative runtime, an accepted meta
	// fallback) and errors (a quarantined record, rebuilt indexes). Nil:
	// discard.
	Logger *slog.Logger
	// MaxBatch caps how many submissions share one commit. Zero: 256.
	MaxBatch int
	// SkipCheck skips the checks at Open that read the whole file: the page
	// walk, bbolt's tx.Check and the record scan (together 0.6–1.1 s at
	// 100,000 jobs, mostly decoding the records; README.md). Open still
	// checks the file's size and both meta pages. Without the page walk a
	// damaged page reaches bbolt, which follows page pointers through its
	// memory map unchecked: colocd turns bbolt's panics into ErrCorrupt
	// where it calls bbolt, but a bad pointer can also crash the process.
	// Without the record scan a damaged record is quarantined when a read
	// first meets it. For tests, benchmarks, and a file `colocd store check`
	// has just passed.
	SkipCheck bool
	// AcceptMetaFallback opens a file whose newer bbolt meta page may be
	// damaged (one meta page invalid, the other valid), accepting that
	// bbolt rolls back to the valid page and loses the transaction after it
	// (MetaError.LostTxid). Open logs that at WARN, rewrites the damaged page
	// with an empty commit so the rollback is final and the next Open finds
	// a clean file, and keeps the error for Store.MetaFallback. Without it
	// Open refuses such a file with a *MetaError. Two damaged meta pages
	// are refused either way.
	AcceptMetaFallback bool
}

// Store is the durable job queue: one bbolt file. All methods are safe for
// concurrent use. Every state change is one transaction; submissions from
// concurrent callers are group-committed (one fsync for many).
type Store struct {
	db      *bolt.DB
	now     func() time.Time
	entropy *ulid.MonotonicEntropy // used only by the writer goroutine
	log     *slog.Logger

	maxBatch   int
	ops        chan *submitOp
	writerDone chan struct{}

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool

	fallback *MetaError // the damaged meta page Open accepted, or nil
}

// Bucket and key names. See doc.go for the layout.
var (
	bucketMeta    = []byte("meta")
	bucketJobs    = []byte("jobs")    // id → Job JSON
	bucketPending = []byte("pending") // seq (8 bytes BE) → id: the FIFO
	bucketStates  = []byte("states")  // state 0x00 seq → id
	bucketIdem    = []byte("idem")    // user 0x00 key → id
	bucketKinds   = []byte("kinds")   // kind → KindHistory JSON
	bucketPrefs   = []byte("prefs")   // "snapshot" → bandit snapshot bytes
	bucketCounts  = []byte("counts")  // state → count (8 bytes BE)
	bucketBlocks  = []byte("blocks")  // seq>>blockBits (8 bytes BE) → pending jobs in that block

	allBuckets = [][]byte{bucketMeta, bucketJobs, bucketPending, bucketStates, bucketIdem, bucketKinds, bucketPrefs, bucketCounts, bucketBlocks}

	keyMagic    = []byte("magic")
	keySchema   = []byte("schema")
	keyPrefs    = []byte("snapshot")
	keyProfiles = []byte("profiles") // the profile model's snapshot, in bucketPrefs
	magicValue  = []byte("colocd-queue")
	boltMagic   = uint32(0xED0CDAED)
	boltPageSzs = []int{4096, 8192, 16384, 32768, 65536}
)

// SchemaVersion is the on-disk layout this build writes.
const SchemaVersion = 1

// blockBits sizes the blocks of sequence numbers whose pending jobs are
// counted, so that Position skips whole blocks: 4096 seqs per block.
const blockBits = 12

// schema is the version and the migration table Open works with; tests swap
// it to exercise the migration hook.
type schema struct {
	version uint64
	// migrations[v] upgrades a file from version v to v+1. All needed steps
	// run in one transaction, with the new version written at its end.
	migrations map[uint64]func(tx *bolt.Tx) error
}

// currentSchema: version 1 is the first layout, so there is nothing to
// migrate from yet. A later layout adds migrations[1] here.
func currentSchema() schema {
	return schema{version: SchemaVersion, migrations: map[uint64]func(*bolt.Tx) error{}}
}

// Open opens (creating if needed) the queue file at path, runs pending
// schema migrations and, unless Options.SkipCheck, checks the whole file
// (the page walk, bbolt's tx.Check and the record scan, which quarantines
// damaged records and rebuilds indexes that disagree with the records).
// A file that is not bbolt, or bbolt written by another program, gives
// ErrForeign; an existing file that is empty or shorter than it should be
// gives a *TruncatedError; a damaged meta page a *MetaError (unless
// Options.AcceptMetaFallback and the other page is valid); other damage to
// the bbolt file ErrCorrupt; a newer schema ErrSchema; a lock held past
// Options.Timeout ErrLocked. Open never panics on a damaged file and never
// modifies a file it refuses.
func Open(path string, opts Options) (*Store, error) {
	return open(path, opts, currentSchema())
}

func open(path string, opts Options, sch schema) (s *Store, err error) {
	// bbolt reads the file through a memory map: turn a fault on a
	// damaged or shrunken file into a panic that the stages below recover.
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	if err := sniff(path); err != nil {
		return nil, err
	}
	log := opts.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	o := &opener{path: path, timeout: lockTimeout(opts.Timeout), accept: opts.AcceptMetaFallback, walk: !opts.SkipCheck}
	db, err := safeOpen(path, o, &bolt.Options{Timeout: o.timeout, NoSync: opts.NoSync, FreelistType: bolt.FreelistMapType})
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			db.Close()
		}
	}()
	if err := initialise(db, sch); err != nil {
		return nil, err
	}
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	if !opts.SkipCheck {
		if err := check(db); err != nil {
			return nil, err
		}
		if err := repair(db, log, now); err != nil {
			return nil, err
		}
	}
	if me := o.fallback; me != nil {
		// Make the rollback final: this commit writes the damaged page.
		if err := db.Update(func(*bolt.Tx) error { return nil }); err != nil {
			return nil, fmt.Errorf("queue: %s: rewrite damaged meta page %d: %w", path, me.Page, err)
		}
		log.Warn("queue: a bbolt meta page is damaged; opened at the valid one, which loses transaction lost_txid if the damaged page was the newer (the damaged page is rewritten)",
			"file", path, "damaged_page", me.Page, "damage", me.Meta[me.Page].Damage,
			"opened_txid", me.ValidTxid, "lost_txid", me.LostTxid)
	}
	s = &Store{
		db:         db,
		now:        now,
		log:        log,
		maxBatch:   opts.MaxBatch,
		writerDone: make(chan struct{}),
		fallback:   o.fallback,
	}
	if s.maxBatch <= 0 {
		s.maxBatch = 256
	}
	ent := opts.Entropy
	if ent == nil {
		ent = rand.Reader
	}
	s.entropy = ulid.Monotonic(ent, 0)
	s.ops = make(chan *submitOp, s.maxBatch)
	go s.writer()
	return s, nil
}

// lockTimeout turns Options.Timeout into bbolt's: 0 → 1 s, negative → 0
// (wait forever).
func lockTimeout(t time.Duration) time.Duration {
	switch {
	case t == 0:
		return time.Second
	case t < 0:
		return 0
	}
	return t
}

// MetaFallback is the damaged meta page Open accepted under
// Options.AcceptMetaFallback (naming the lost transaction), or nil when
// both meta pages were valid.
func (s *Store) MetaFallback() *MetaError { return s.fallback }

// sniff looks for bbolt's meta-page magic before bbolt reads the file, so a
// foreign file is reported as such instead of as corrupt. An empty file is
// left to the opener, which refuses it unless this Open created it.
func sniff(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("queue: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("queue: stat %s: %w", path, err)
	}
	if st.Size() == 0 {
		return nil
	}
	if st.IsDir() {
		return fmt.Errorf("%w: %s is a directory", ErrForeign, path)
	}
	var buf [4]byte
	// The meta page header is 16 bytes (id, flags, count, overflow); the
	// magic follows. Page 0 holds the first meta, page 1 the second.
	for _, off := range append([]int{0}, boltPageSzs...) {
		if _, err := f.ReadAt(buf[:], int64(off)+16); err != nil {
			continue
		}
		if binary.LittleEndian.Uint32(buf[:]) == boltMagic || binary.BigEndian.Uint32(buf[:]) == boltMagic {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not a bbolt database (no meta page magic)", ErrForeign, path)
}

// safeOpen calls bolt.Open with o as its OpenFile hook, turning bbolt's
// errors and panics into ours. The hook's own errors (lock, short file,
// meta pages, page walk) come back as they are. When bbolt panics it has
// already locked the file; we unlock and close it, so the process can retry
// or open another copy.
func safeOpen(path string, o *opener, bo *bolt.Options) (db *bolt.DB, err error) {
	var hookErr error
	bo.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := o.open(name, flag, perm)
		hookErr = err
		return f, err
	}
	bo.ReadOnly = o.readOnly
	defer func() {
		if r := recover(); r != nil {
			if o.file != nil { // the memory map bbolt made stays: a small leak
				unlockFile(o.file)
				o.file.Close()
			}
			db, err = nil, fmt.Errorf("%w: %s: bbolt panicked on open: %v", ErrCorrupt, path, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, bo)
	switch {
	case err == nil:
		return db, nil
	case hookErr != nil:
		return nil, hookErr
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, o.lockedError()
	case errors.Is(err, os.ErrPermission), errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("queue: open %s: %w", path, err)
	default:
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
}

// initialise classifies the file (fresh, ours, foreign, newer), creates the
// layout on a fresh file and runs migrations on an older one. Panics inside
// bbolt (corrupt pages) become ErrCorrupt.
func initialise(db *bolt.DB, sch schema) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: bbolt panicked reading the file: %v", ErrCorrupt, db.Path(), r)
		}
	}()
	var (
		fresh   bool
		version uint64
	)
	err = db.View(func(tx *bolt.Tx) error {
		empty := true
		if err := tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil }); err != nil {
			return err
		}
		if empty {
			fresh = true
			return nil
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil || !bytes.Equal(meta.Get(keyMagic), magicValue) {
			return fmt.Errorf("%w: %s is a bbolt database of another program", ErrForeign, db.Path())
		}
		v := meta.Get(keySchema)
		if len(v) != 8 {
			return fmt.Errorf("%w: %s: schema version key missing or malformed", ErrCorrupt, db.Path())
		}
		version = binary.BigEndian.Uint64(v)
		if version > sch.version {
			return fmt.Errorf("%w: %s has schema %d, this build knows up to %d (newer colocd?)", ErrSchema, db.Path(), version, sch.version)
		}
		if version == sch.version {
			// Touch every bucket's root so a broken page shows now.
			for _, name := range allBuckets {
				b := tx.Bucket(name)
				if b == nil {
					return fmt.Errorf("%w: %s: bucket %q missing", ErrCorrupt, db.Path(), name)
				}
				b.Cursor().First()
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	switch {
	case fresh:
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("queue: create bucket %s: %w", name, err)
				}
			}
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(keyMagic, magicValue); err != nil {
				return err
			}
			return meta.Put(keySchema, u64(sch.version))
		})
	case version < sch.version:
		return db.Update(func(tx *bolt.Tx) error {
			for v := version; v < sch.version; v++ {
				m, ok := sch.migrations[v]
				if !ok {
					return fmt.Errorf("%w: %s: no migration from schema %d to %d", ErrSchema, db.Path(), v, v+1)
				}
				if err := m(tx); err != nil {
					return fmt.Errorf("%w: %s: migration %d → %d: %w", ErrSchema, db.Path(), v, v+1, err)
				}
			}
			for _, name := range allBuckets {
				if tx.Bucket(name) == nil {
					return fmt.Errorf("%w: %s: bucket %q missing after migration", ErrSchema, db.Path(), name)
				}
			}
			return tx.Bucket(bucketMeta).Put(keySchema, u64(sch.version))
		})
	}
	return nil
}

// check runs bbolt's consistency check.
func check(db *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: bbolt panicked during check: %v", ErrCorrupt, db.Path(), r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			errs = append(errs, e)
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, db.Path(), errors.Join(errs...))
		}
		return nil
	})
}

// Close stops accepting work, waits for queued submissions to commit and
// closes the file. Later calls return ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	close(s.ops)
	s.mu.Unlock()
	<-s.writerDone
	return s.db.Close()
}

// Path is the file the store uses.
func (s *Store) Path() string { return s.db.Path() }

// view and update run fn in a read or write transaction, unless closed.
func (s *Store) view(fn func(tx *bolt.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.db.View(fn)
}

func (s *Store) update(fn func(tx *bolt.Tx) error) error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return s.db.Update(fn)
}

// stamp is the store's clock, without the monotonic reading and in UTC, so
// a time reads back equal to what was written.
func (s *Store) stamp() time.Time { return s.now().Round(0).UTC() }

func u64(v uint64) []byte {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	return b[:]
}

func stateKey(st State, seq uint64) []byte {
	k := make([]byte, 0, len(st)+9)
	k = append(k, st...)
	k = append(k, 0)
	return binary.BigEndian.AppendUint64(k, seq)
}

func idemKey(user, key string) []byte {
	k := make([]byte, 0, len(user)+1+len(key))
	k = append(k, user...)
	k = append(k, 0)
	return append(k, key...)
}

// getJob reads and decodes a job inside tx (decoding copies out of the
// page). A damaged record gives a *recordError (wrapping ErrCorrupt), a
// quarantined job a *QuarantinedError, an unknown one ErrNotFound.
func getJob(tx *bolt.Tx, id string) (Job, error) {
	v := tx.Bucket(bucketJobs).Get([]byte(id))
	if v == nil {
		if err := quarantinedJob(tx, id); err != nil {
			return Job{}, err
		}
		return Job{}, fmt.Errorf("%w: %q", ErrNotFound, id)
	}
	return decodeJob([]byte(id), v)
}

func putJob(tx *bolt.Tx, j *Job) error {
	b, err := json.Marshal(j)
	if err != nil {
		return fmt.Errorf("queue: encode job %s: %w", j.ID, err)
	}
	return tx.Bucket(bucketJobs).Put([]byte(j.ID), b)
}

// addCount adjusts the per-state counter by d.
func addCount(tx *bolt.Tx, st State, d int64) error {
	b := tx.Bucket(bucketCounts)
	var n int64
	if v := b.Get([]byte(st)); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	n += d
	if n < 0 {
		n = 0
	}
	return b.Put([]byte(st), u64(uint64(n)))
}

// addBlock adjusts the pending count of seq's block by d, deleting empty
// blocks.
func addBlock(tx *bolt.Tx, seq uint64, d int64) error {
	b := tx.Bucket(bucketBlocks)
	k := u64(seq >> blockBits)
	var n int64
	if v := b.Get(k); len(v) == 8 {
		n = int64(binary.BigEndian.Uint64(v))
	}
	if n += d; n <= 0 {
		return b.Delete(k)
	}
	return b.Put(k, u64(uint64(n)))
}

// index moves j's index entries from state from to j.State (from == ""
// for a new job, j.State == "" for a deleted one).
func index(tx *bolt.Tx, j *Job, from State) error {
	seq := u64(j.Seq)
	states := tx.Bucket(bucketStates)
	if from != "" {
		if err := states.Delete(stateKey(from, j.Seq)); err != nil {
			return err
		}
		if err := addCount(tx, from, -1); err != nil {
			return err
		}
		if from == StatePending {
			if err := tx.Bucket(bucketPending).Delete(seq); err != nil {
				return err
			}
			if err := addBlock(tx, j.Seq, -1); err != nil {
				return err
			}
		}
	}
	if j.State != "" {
		if err := states.Put(stateKey(j.State, j.Seq), []byte(j.ID)); err != nil {
			return err
		}
		if err := addCount(tx, j.State, 1); err != nil {
			return err
		}
		if j.State == StatePending {
			if err := tx.Bucket(bucketPending).Put(seq, []byte(j.ID)); err != nil {
				return err
			}
			if err := addBlock(tx, j.Seq, 1); err != nil {
				return err
			}
		}
	}
	return nil
}

// Get returns the job with id, or an error wrapping ErrNotFound, or, for a
// job whose record was damaged, a *QuarantinedError (wrapping
// ErrQuarantined).
func (s *Store) Get(id string) (Job, error) {
	var j Job
	err := s.read(func(tx *bolt.Tx) (err error) {
		j, err = getJob(tx, id)
		return err
	})
	return j, err
}

// Pending returns the first limit pending jobs in FIFO (submission) order;
// limit <= 0 means all. Cost: O(log n + limit) page reads. A damaged
// record met on the way is quarantined and skipped.
func (s *Store) Pending(limit int) ([]Job, error) {
	var out []Job
	err := s.read(func(tx *bolt.Tx) error {
		out = out[:0]
		c := tx.Bucket(bucketPending).Cursor()
		for k, v := c.First(); k != nil && (limit <= 0 || len(out) < limit); k, v = c.Next() {
			j, err := getJob(tx, string(v))
			if err != nil {
				return fmt.Errorf("%w: pending index names %s: %w", ErrCorrupt, v, err)
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// Position returns the 0-based place of a pending job in the FIFO (0 = next
// in line). Pending jobs are counted per block of 4096 sequence numbers, so
// it adds up the blocks before the job's and walks at most one block:
// O(n/4096 + 4096) keys. A job that is not pending gives an error wrapping
// ErrNotPending.
func (s *Store) Position(id string) (int, error) {
	pos := -1
	err := s.read(func(tx *bolt.Tx) error {
		j, err := getJob(tx, id)
		if err != nil {
			return err
		}
		if j.State != StatePending {
			return fmt.Errorf("%w: job %s is %s", ErrNotPending, id, j.State)
		}
		block := j.Seq >> blockBits
		n := 0
		bc := tx.Bucket(bucketBlocks).Cursor()
		for k, v := bc.First(); k != nil && binary.BigEndian.Uint64(k) < block; k, v = bc.Next() {
			n += int(binary.BigEndian.Uint64(v))
		}
		want := u64(j.Seq)
		c := tx.Bucket(bucketPending).Cursor()
		for k, _ := c.Seek(u64(block << blockBits)); k != nil; k, _ = c.Next() {
			if bytes.Equal(k, want) {
				pos = n
				return nil
			}
			n++
		}
		return fmt.Errorf("%w: pending job %s missing from the FIFO index", ErrCorrupt, id)
	})
	return pos, err
}

// List returns jobs in state st, oldest first (submission order), at most
// limit of them (limit <= 0: all). st == "" lists every job, in id
// (creation) order. A damaged record met on the way is quarantined and
// skipped.
func (s *Store) List(st State, limit int) ([]Job, error) {
	return s.list(st, limit, false)
}

// Recent is List newest first: the last limit jobs in state st (every job
// when st == ""), most recently submitted first. It reads only the jobs it
// returns.
func (s *Store) Recent(st State, limit int) ([]Job, error) {
	return s.list(st, limit, true)
}

func (s *Store) list(st State, limit int, newest bool) ([]Job, error) {
	if st != "" && !st.Valid() {
		return nil, fieldErr("state", "unknown state %q (want one of %s)", st, stateNames())
	}
	var out []Job
	err := s.read(func(tx *bolt.Tx) error {
		out = out[:0]
		more := func() bool { return limit <= 0 || len(out) < limit }
		if st == "" {
			c := tx.Bucket(bucketJobs).Cursor()
			first, next := c.First, c.Next
			if newest {
				first, next = c.Last, c.Prev
			}
			for k, v := first(); k != nil && more(); k, v = next() {
				j, err := decodeJob(k, v)
				if err != nil {
					return err
				}
				out = append(out, j)
			}
			return nil
		}
		prefix := append([]byte(st), 0)
		c := tx.Bucket(bucketStates).Cursor()
		var k, v []byte
		next := c.Next
		if newest {
			// The last key of the prefix: seek past it, step back.
			end := append([]byte(st), 1)
			if k, _ = c.Seek(end); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
			next = c.Prev
		} else {
			k, v = c.Seek(prefix)
		}
		for ; k != nil && bytes.HasPrefix(k, prefix) && more(); k, v = next() {
			j, err := getJob(tx, string(v))
			if err != nil {
				return fmt.Errorf("%w: state index names %s: %w", ErrCorrupt, v, err)
			}
			out = append(out, j)
		}
		return nil
	})
	return out, err
}

// Counts returns the number of jobs in each state (every state present,
// zero included). O(1): counters are kept in the same transactions that
// move jobs.
func (s *Store) Counts() (map[State]int, error) {
	out := make(map[State]int, len(States))
	err := s.view(func(tx *bolt.Tx) error {
		b := tx.Bucket(bucketCounts)
		for _, st := range States {
			if v := b.Get([]byte(st)); len(v) == 8 {
				out[st] = int(binary.BigEndian.Uint64(v))
			} else {
				out[st] = 0
			}
		}
		return nil
	})
	return out, err
}

// Submitted is how many jobs were ever stored: the FIFO sequence's last
// value, which compaction does not lower. 0 means the store never held a
// job (a new file).
func (s *Store) Submitted() (uint64, error) {
	var n uint64
	err := s.view(func(tx *bolt.Tx) error {
		n = tx.Bucket(bucketJobs).Sequence()
		return nil
	})
	return n, err
}

// History returns the run history of kind (zero KindHistory with Kind set
// when it never succeeded).
func (s *Store) History(kind string) (KindHistory, error) {
	var h KindHistory
	err := s.read(func(tx *bolt.Tx) (err error) {
		h = KindHistory{Kind: kind}
		if v := tx.Bucket(bucketKinds).Get([]byte(kind)); v != nil {
			h, err = decodeHistory([]byte(kind), v)
		}
		return err
	})
	return h, err
}

// Histories returns every kind's history, keyed by kind. A damaged history
// is quarantined (the kind starts over).
func (s *Store) Histories() (map[string]KindHistory, error) {
	var out map[string]KindHistory
	err := s.read(func(tx *bolt.Tx) error {
		out = map[string]KindHistory{}
		return tx.Bucket(bucketKinds).ForEach(func(k, v []byte) error {
			h, err := decodeHistory(k, v)
			if err != nil {
				return err
			}
			out[string(k)] = h
			return nil
		})
	})
	return out, err
}

// SavePreferences stores the learner's snapshot bytes (replacing the last
// ones). Nil or empty b deletes them.
func (s *Store) SavePreferences(b []byte) error {
	return s.update(func(tx *bolt.Tx) error {
		if len(b) == 0 {
			return tx.Bucket(bucketPrefs).Delete(keyPrefs)
		}
		return tx.Bucket(bucketPrefs).Put(keyPrefs, cloneBytes(b))
	})
}

// SaveProfiles stores the profile model's snapshot bytes (replacing the
// last ones; nil deletes them), beside the preferences.
func (s *Store) SaveProfiles(b []byte) error {
	return s.update(func(tx *bolt.Tx) error {
		if len(b) == 0 {
			return tx.Bucket(bucketPrefs).Delete(keyProfiles)
		}
		return tx.Bucket(bucketPrefs).Put(keyProfiles, cloneBytes(b))
	})
}

// LoadProfiles returns the stored profile snapshot bytes, or nil, nil when
// none were saved.
func (s *Store) LoadProfiles() ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(keyProfiles))
		return nil
	})
	return out, err
}

// LoadPreferences returns the stored snapshot bytes, or nil, nil when none
// were saved.
func (s *Store) LoadPreferences() ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(keyPrefs))
		return nil
	})
	return out, err
}
