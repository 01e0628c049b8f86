package queue

import (
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"runtime/debug"
	"sync"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
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
	// Elapsed reads a monotonic clock — the time since an arbitrary
	// origin, never stepped — that times a run from Start to Finish, so a
	// wall-clock step during the run does not enter the kind's runtime
	// history. Nil: runs are timed by the stored times of Now (right for
	// a virtual clock).
	Elapsed func() time.Duration
	// Entropy feeds the random part of job ids. Nil: crypto/rand.
	Entropy io.Reader
	// Logger receives warnings (a negative runtime, an accepted meta
	// fallback) and errors (a quarantined record, rebuilt indexes). Nil:
	// discard.
	Logger *slog.Logger
	// MaxBatch caps how many submissions share one commit. Zero: 256.
	MaxBatch int
	// CommitsInFlight is how many groups of submissions may be committing
	// at once. Zero: one, which a local disk wants (its commits are
	// serial anyway); a replicated log pipelines its appends (package ha).
	CommitsInFlight int
	// GroupWait is how long a group of submissions waits for more once
	// its first has come. Zero: no wait (a lone submitter commits at
	// once), right for a local disk; a replicated log, whose every append
	// is a quorum round, gathers larger groups with a wait of about a
	// millisecond.
	GroupWait time.Duration
	// SkipCheck skips the checks at Open that read the whole file: the page
	// walk, bbolt's tx.Check and the record scan (together 0.6–1.1 s at
	// 100,000 jobs, mostly decoding the records; docs/reliability.md). Open still
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
	// Reserve is the free space, in bytes, kept on the file system holding
	// the store for the jobs already accepted: below it Submit refuses new
	// jobs with a *SpaceError (space.go). Zero: no reserve.
	Reserve uint64
	// FreeSpace reports the bytes free on the store's file system. Nil:
	// statfs of the file's directory (the space an unprivileged writer
	// may use; outside Linux, macOS and FreeBSD nothing, and no reserve).
	FreeSpace func() (uint64, error)
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
	inFlight   int
	groupWait  time.Duration
	ops        chan *submitOp
	writerDone chan struct{}

	mu     sync.RWMutex // held for reading by every operation, for writing by Close
	closed bool

	fallback *MetaError // the damaged meta page Open accepted, or nil

	reserve   uint64                 // Options.Reserve
	freeSpace func() (uint64, error) // nil: not known

	commits Log                  // orders, makes durable and applies every command (SetLog)
	running starts               // when this process saw each running job start
	elapsed func() time.Duration // Options.Elapsed
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
	keyFairness = []byte("fairness") // the fairness stage's state, in bucketPrefs
	magicValue  = []byte("colocd-queue")
	boltMagic   = uint32(0xED0CDAED)
	boltPageSzs = []int{4096, 8192, 16384, 32768, 65536}
)

// schemaVersion is the on-disk layout this build writes.
const schemaVersion = 1

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
	return schema{version: schemaVersion, migrations: map[uint64]func(*bolt.Tx) error{}}
}

// Open opens (creating if needed) the queue file at path, runs pending
// schema migrations and, unless Options.SkipCheck, checks the whole file
// (the page walk, bbolt's tx.Check and the record scan, which quarantines
// damaged records and rebuilds indexes that disagree with the records).
// A file that is not bbolt, or bbolt written by another program, gives
// errForeign; an existing file that is empty or shorter than it should be
// gives a *truncatedError; a damaged meta page a *MetaError (unless
// Options.AcceptMetaFallback and the other page is valid); other damage to
// the bbolt file ErrCorrupt; a newer schema errSchema; a lock held past
// Options.Timeout errLocked. Open never panics on a damaged file and never
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
		reserve:    opts.Reserve,
		freeSpace:  opts.FreeSpace,
		elapsed:    opts.Elapsed,
	}
	if s.freeSpace == nil {
		s.freeSpace = dirFreeSpace(path)
	}
	if s.maxBatch <= 0 {
		s.maxBatch = 256
	}
	s.inFlight = max(opts.CommitsInFlight, 1)
	s.groupWait = opts.GroupWait
	ent := opts.Entropy
	if ent == nil {
		ent = rand.Reader
	}
	s.entropy = ulid.Monotonic(ent, 0)
	s.commits = localLog{s}
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
