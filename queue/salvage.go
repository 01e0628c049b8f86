package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"runtime/debug"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// SalvageOptions configure Salvage. The zero value waits 1 s for the
// lock and stamps quarantined records with the wall clock.
type SalvageOptions struct {
	// Timeout bounds the wait for the shared lock on the damaged file, as
	// CheckOptions.Timeout.
	Timeout time.Duration
	// Now stamps the records the new file's first open quarantines.
	Now func() time.Time
	// Log receives what that open logs (quarantined records, rebuilt
	// indexes); nil discards it.
	Log *slog.Logger
}

// LostJob is a job the salvaged indexes name whose record was on a page
// the walk could not read. State and Seq are where the state index (or
// the FIFO) placed it; both are empty when only its idempotency key
// names it.
type LostJob struct {
	ID    string `json:"id"`
	State State  `json:"state,omitempty"`
	Seq   uint64 `json:"seq,omitempty"`
}

// lostReason is a lost job's quarantine reason.
const lostReason = "its record was on a page of the store file that could not be read; `colocd store salvage` lost it"

// SalvageReport is what Salvage read, wrote and could not read.
type SalvageReport struct {
	From string `json:"from"`
	To   string `json:"to"`
	// Meta is the meta page (0 or 1) the walk started from, and Txid its
	// transaction.
	Meta int    `json:"meta"`
	Txid uint64 `json:"txid"`
	// Keys counts the keys copied per top-level bucket (a nested bucket's
	// under its top-level bucket).
	Keys map[string]int `json:"keys"`
	// Unread is what the page walk could not read (the pages and the
	// subtrees under them that were skipped), as Check words it.
	Unread []string `json:"unread"`
	// Lost are the jobs the indexes name without a record: each is
	// quarantined in the new file (a request for it, or a retry of its
	// idempotency key, gets 410 naming the salvage). Recreated the
	// buckets and meta keys that were lost and written afresh; Idem the
	// idempotency keys restored from the job records.
	Lost      []LostJob `json:"lost"`
	Recreated []string  `json:"recreated"`
	Idem      int       `json:"idempotency_keys_restored"`
	// Check is the new file's check after its first open (which
	// quarantines damaged records and rebuilds the indexes).
	Check Report `json:"check"`
}

// Complete reports whether everything the damaged file's pages held was
// read: nothing unread and no job lost.
func (r *SalvageReport) Complete() bool { return len(r.Unread) == 0 && len(r.Lost) == 0 }

// Salvage copies what can still be read of the store file from into a new
// store file to, for a file Open refuses (damage to a page, a bucket or a
// key rather than to a record): it walks from's pages as Check does, from
// the meta page Open would use, reading every intact leaf page of every
// bucket and skipping the pages (and the subtrees under them) that the
// walk finds broken; writes every key, value and bucket sequence it read
// into to with bbolt; writes afresh the buckets and meta keys that were
// lost (a file of schema 1 lacks nothing else); restores the idempotency
// keys of the jobs it recovered; then opens to once, which quarantines
// the records that do not decode and rebuilds the indexes from the job
// records, and checks it. from is opened read-only with a shared lock, so
// a running colocd (which holds it exclusively) makes Salvage fail once
// Timeout has passed; to must not exist, and is created with from's
// permissions and, where this process may give it, from's owner and
// group.
//
// The error is for what stops Salvage (from missing, locked, not a bbolt
// file, neither meta page valid; to existing or unwritable); what it
// could not read is in the report. The new file is removed when Salvage
// fails after creating it.
//
// A replica's store (package ha; its meta names the cluster it follows)
// is refused: the replica re-joins from the leader's snapshot once its
// file is moved aside, and a salvaged copy would no longer match the log
// it records having applied.
func Salvage(from, to string, opts SalvageOptions) (rep SalvageReport, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	rep = SalvageReport{From: from, To: to, Keys: map[string]int{}}
	if a, b := filepath.Clean(from), filepath.Clean(to); a == b {
		return rep, fmt.Errorf("queue: salvage %s: the new file is the damaged one", from)
	}
	if _, err := os.Lstat(to); err == nil {
		return rep, fmt.Errorf("queue: salvage into %s: %w (salvage writes a new file)", to, os.ErrExist)
	} else if !errors.Is(err, os.ErrNotExist) {
		return rep, fmt.Errorf("queue: salvage into %s: %w", to, err)
	}
	if err := sniff(from); err != nil {
		return rep, err
	}
	f, err := os.Open(from)
	if err != nil {
		return rep, fmt.Errorf("queue: salvage %s: %w", from, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return rep, fmt.Errorf("queue: salvage %s: %w", from, err)
	}
	if fi.IsDir() {
		return rep, fmt.Errorf("%w: %s is a directory", errForeign, from)
	}
	if err := lockFile(f, false, lockTimeout(opts.Timeout)); err != nil {
		if errors.Is(err, errLockTimeout) {
			return rep, fmt.Errorf("%w: %s (waited %v): a process (a running colocd?) holds it for writing: stop colocd first (systemctl stop colocd)", errLocked, from, lockTimeout(opts.Timeout))
		}
		return rep, fmt.Errorf("queue: lock %s: %w", from, err)
	}
	defer unlockFile(f)
	in, err := inspect(f)
	if err != nil {
		return rep, err
	}
	var note string
	if in.use < 0 {
		// Neither meta page is valid: walk from the one whose root,
		// freelist and page count still fit the file (the walk checks
		// every page it reads), the newer if both do.
		for i, m := range in.meta {
			if plausibleMeta(m, &in) && (in.use < 0 || m.Txid > in.meta[in.use].Txid) {
				in.use = i
			}
		}
		if in.use < 0 {
			return rep, fmt.Errorf("%w: %s: neither bbolt meta page is valid or usable (%s; %s): nothing to start a walk from",
				ErrCorrupt, from, in.meta[0].Damage, in.meta[1].Damage)
		}
		note = fmt.Sprintf("meta page %d: %s; walked from its root anyway (neither meta page is valid)", in.use, in.meta[in.use].Damage)
	} else if me := in.metaError(from); me != nil {
		note = fmt.Sprintf("meta page %d: %s; walked from meta page %d (txid %d): if the damaged page held the newer transaction (%d), what it wrote is lost",
			me.Page, in.meta[me.Page].Damage, in.use, me.ValidTxid, me.LostTxid)
	}
	rep.Meta, rep.Txid = in.use, in.meta[in.use].Txid

	db, err := bolt.Open(to, fi.Mode().Perm(), &bolt.Options{Timeout: time.Second, FreelistType: bolt.FreelistMapType, NoSync: true})
	if err != nil {
		return rep, fmt.Errorf("queue: salvage into %s: %w", to, err)
	}
	created := true
	defer func() {
		if created {
			db.Close()
		}
		if err != nil {
			os.Remove(to)
		}
	}()
	now := opts.Now
	if now == nil {
		now = time.Now
	}
	at := now().Round(0).UTC()
	if err := salvageWalk(db, f, &in, &rep, at); err != nil {
		return rep, fmt.Errorf("queue: salvage into %s: %w", to, err)
	}
	if note != "" {
		rep.Unread = append([]string{note}, rep.Unread...)
	}
	if err := db.Sync(); err != nil {
		return rep, fmt.Errorf("queue: salvage into %s: sync: %w", to, err)
	}
	created = false
	if err := db.Close(); err != nil {
		return rep, fmt.Errorf("queue: salvage into %s: %w", to, err)
	}
	if err := sameOwner(to, fi); err != nil {
		return rep, fmt.Errorf("queue: salvage into %s: give it %s's owner: %w", to, from, err)
	}
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := Open(to, Options{Now: opts.Now, Logger: log})
	if err != nil {
		return rep, fmt.Errorf("queue: open the salvaged %s: %w", to, err)
	}
	if err := s.Close(); err != nil {
		return rep, fmt.Errorf("queue: close the salvaged %s: %w", to, err)
	}
	if rep.Check, err = Check(to, CheckOptions{}); err != nil {
		return rep, fmt.Errorf("queue: check the salvaged %s: %w", to, err)
	}
	return rep, nil
}

// salvageBatch is how many bytes of keys and values salvageWalk gathers
// before it writes them in one transaction: the memory a salvage holds is
// about this much, whatever the file's size.
var salvageBatch = 8 << 20 // a variable for the tests

// salvageOp is one write the walk asks for: a key and value into the
// bucket at path, or (bucket) the bucket at path with its sequence.
type salvageOp struct {
	path   [][]byte
	k, v   []byte
	bucket bool
	seq    uint64
}

// salvageWalk copies what the page walk of f reads into db, a batch of
// about salvageBatch bytes per transaction, then fills in what a store
// needs and the walk lost (salvageFill).
func salvageWalk(db *bolt.DB, f io.ReaderAt, in *inspection, rep *SalvageReport, at time.Time) error {
	var skipped []string // what was read but cannot be written (a key too long, a name both a key and a bucket)
	skip := func(format string, args ...any) {
		if len(skipped) < maxProblems {
			skipped = append(skipped, fmt.Sprintf(format, args...))
		}
	}
	var (
		batch []salvageOp
		size  int
		werr  error // a transaction that failed: the disk's, not the data's
	)
	flush := func() {
		if werr != nil || len(batch) == 0 {
			batch, size = batch[:0], 0
			return
		}
		werr = db.Update(func(tx *bolt.Tx) error {
			for _, op := range batch {
				salvageApply(tx, op, rep, skip)
			}
			return nil
		})
		batch, size = batch[:0], 0
	}
	add := func(op salvageOp) {
		batch = append(batch, op)
		if size += len(op.k) + len(op.v) + 64; size >= salvageBatch {
			flush()
		}
	}
	clonePath := func(path [][]byte) [][]byte {
		out := make([][]byte, len(path))
		for i, p := range path {
			out[i] = bytes.Clone(p)
		}
		return out
	}
	w := &walker{
		leaf: func(path [][]byte, k, v []byte) {
			if len(path) == 0 {
				skip("root: %q is a key, not a bucket (its bucket flag lost?): what it held is not read", k)
				return
			}
			add(salvageOp{path: clonePath(path), k: bytes.Clone(k), v: bytes.Clone(v)})
		},
		bucket: func(path [][]byte, v []byte) bool {
			if !nestable(path) {
				// A store's buckets nest only under prefs: this is a key
				// whose bucket flag was set by damage; its value is the
				// record.
				skip("bucket %q: a key marked as a bucket, copied as a key", path)
				add(salvageOp{path: clonePath(path[:len(path)-1]), k: bytes.Clone(path[len(path)-1]), v: bytes.Clone(v)})
				return false
			}
			add(salvageOp{path: clonePath(path), bucket: true, seq: native.Uint64(v[8:])})
			return true
		},
	}
	unread := w.walk(f, in)
	flush()
	if werr != nil {
		return werr
	}
	rep.Unread = append(unread, skipped...)
	return db.Update(func(tx *bolt.Tx) error {
		if meta := tx.Bucket(bucketMeta); meta != nil && meta.Get(keyCluster) != nil {
			return fmt.Errorf("the file is a replica's store (it follows cluster %q): a replica is not salvaged; "+
				"move the file aside and start the replica, which re-joins from the leader's snapshot and the log", meta.Get(keyCluster))
		}
		return salvageFill(tx, rep, at)
	})
}

// salvageApply writes op into tx; what cannot be written is skipped.
func salvageApply(tx *bolt.Tx, op salvageOp, rep *SalvageReport, skip func(string, ...any)) {
	b, err := tx.CreateBucketIfNotExists(op.path[0])
	for _, name := range op.path[1:] {
		if err != nil {
			break
		}
		b, err = b.CreateBucketIfNotExists(name)
	}
	if err != nil {
		skip("bucket %q: cannot be written: %v", op.path, err)
		return
	}
	if op.bucket {
		if op.seq > b.Sequence() {
			if err := b.SetSequence(op.seq); err != nil {
				skip("bucket %q: sequence: %v", op.path, err)
			}
		}
		return
	}
	if err := b.Put(op.k, op.v); err != nil {
		skip("bucket %q, key %q: cannot be written: %v", op.path, op.k, err)
		return
	}
	rep.Keys[string(op.path[0])]++
}

// plausibleMeta reports whether a damaged meta page's root, freelist and
// page count fit the file, so that a walk can start from it.
func plausibleMeta(m metaPage, in *inspection) bool {
	ps := uint64(in.pageSize)
	return int64(m.PageSize) == in.pageSize && m.HighWater >= 3 && m.HighWater <= uint64(in.size)/ps &&
		m.Root >= 2 && m.Root < m.HighWater && (m.Freelist == noFreelist || m.Freelist >= 2 && m.Freelist < m.HighWater)
}

// nestable reports whether the store's layout has a bucket at path: every
// top-level bucket, and the learned models' under prefs.
func nestable(path [][]byte) bool {
	return len(path) == 1 || len(path) == 2 && bytes.Equal(path[0], bucketPrefs)
}

// salvageFill writes afresh the buckets and meta keys the walk lost, the
// jobs bucket's sequence when it fell behind its records, and the
// idempotency keys of the recovered jobs; and quarantines (at at) the
// jobs the indexes name without a record, listing them as lost.
func salvageFill(tx *bolt.Tx, rep *SalvageReport, at time.Time) error {
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			if _, err := tx.CreateBucket(name); err != nil {
				return err
			}
			rep.Recreated = append(rep.Recreated, "bucket "+string(name))
		}
	}
	meta := tx.Bucket(bucketMeta)
	if !bytes.Equal(meta.Get(keyMagic), magicValue) {
		if err := meta.Put(keyMagic, magicValue); err != nil {
			return err
		}
		rep.Recreated = append(rep.Recreated, "meta/magic")
	}
	if v := meta.Get(keySchema); len(v) != 8 {
		if err := meta.Put(keySchema, u64(schemaVersion)); err != nil {
			return err
		}
		rep.Recreated = append(rep.Recreated, "meta/schema")
	}
	jobs, idem := tx.Bucket(bucketJobs), tx.Bucket(bucketIdem)
	var maxSeq uint64
	err := jobs.ForEach(func(k, v []byte) error {
		var j Job
		if v == nil || json.Unmarshal(v, &j) != nil || j.ID != string(k) {
			return nil // Open quarantines it
		}
		maxSeq = max(maxSeq, j.Seq)
		if j.IdempotencyKey == "" {
			return nil
		}
		ik := idemKey(j.User, j.IdempotencyKey)
		if idem.Get(ik) != nil {
			return nil
		}
		rep.Idem++
		return idem.Put(ik, []byte(j.ID))
	})
	if err != nil {
		return err
	}
	// The indexes' entries: what they name without a record is lost.
	named := map[string]LostJob{}
	states := tx.Bucket(bucketStates)
	if err := states.ForEach(func(k, v []byte) error {
		st, seq, ok := bytes.Cut(k, []byte{0})
		if ok && len(seq) == 8 {
			n := binary.BigEndian.Uint64(seq)
			maxSeq = max(maxSeq, n)
			named[string(v)] = LostJob{ID: string(v), State: State(string(st)), Seq: n}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
		if len(k) == 8 {
			n := binary.BigEndian.Uint64(k)
			maxSeq = max(maxSeq, n)
			if _, ok := named[string(v)]; !ok {
				named[string(v)] = LostJob{ID: string(v), State: StatePending, Seq: n}
			}
		}
		return nil
	}); err != nil {
		return err
	}
	if err := idem.ForEach(func(_, v []byte) error {
		if _, ok := named[string(v)]; !ok {
			named[string(v)] = LostJob{ID: string(v)}
		}
		return nil
	}); err != nil {
		return err
	}
	for id, l := range named {
		if jobs.Get([]byte(id)) == nil && quarantinedJob(tx, id) == nil {
			rep.Lost = append(rep.Lost, l)
		}
	}
	sort.Slice(rep.Lost, func(a, b int) bool {
		if x, y := rep.Lost[a], rep.Lost[b]; x.Seq != y.Seq {
			return x.Seq < y.Seq
		}
		return rep.Lost[a].ID < rep.Lost[b].ID
	})
	for _, l := range rep.Lost {
		q := &QuarantinedRecord{Bucket: string(bucketJobs), Key: l.ID, Reason: lostReason, At: at, State: l.State, Seq: l.Seq}
		if err := putQuarantined(tx, q); err != nil {
			return err
		}
	}
	if maxSeq > jobs.Sequence() {
		return jobs.SetSequence(maxSeq)
	}
	return nil
}
