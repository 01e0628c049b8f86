package queue

import (
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"time"

	bolt "go.etcd.io/bbolt"
)

// bucketQuarantine holds damaged records, keyed "jobs/<id>" or
// "kinds/<kind>", as quarantined JSON. It is created by the first
// quarantine, so a schema-1 file without it is valid and older builds
// ignore it.
var bucketQuarantine = []byte("quarantine")

// QuarantinedRecord is a stored record that did not decode or broke an
// invariant, as it was moved out of its bucket.
type QuarantinedRecord struct {
	Bucket string    `json:"bucket"` // "jobs" or "kinds"
	Key    string    `json:"key"`    // the job id, or the kind
	Reason string    `json:"reason"` // what was wrong with it
	Raw    []byte    `json:"raw"`    // its bytes as found (base64 in JSON)
	At     time.Time `json:"at"`     // when it was quarantined
	// State and Seq are where the job's index entries placed it, when it
	// had any (the record itself cannot be trusted).
	State State  `json:"state,omitempty"`
	Seq   uint64 `json:"seq,omitempty"`
}

func quarantineKey(bucket, key string) []byte { return []byte(bucket + "/" + key) }

// recordError is a record that is damaged: read paths return it from
// inside their transaction, and the store quarantines the record and
// retries. It wraps ErrCorrupt.
type recordError struct {
	bucket, key string
	raw         []byte // copied out of the transaction
	reason      string
}

func (e *recordError) Error() string {
	return fmt.Sprintf("%v: record %s/%s: %s", ErrCorrupt, e.bucket, e.key, e.reason)
}

func (e *recordError) Unwrap() error { return ErrCorrupt }

func damaged(bucket []byte, key, raw []byte, format string, args ...any) *recordError {
	return &recordError{bucket: string(bucket), key: string(key), raw: cloneBytes(raw), reason: fmt.Sprintf(format, args...)}
}

// decodeJob decodes the job stored under key and checks what every stored
// job holds: its own id, a known state, a sequence number and a kind.
// Submit-time validation (Job.Validate) is not rechecked: its bounds may
// change between versions, and a job that passed them once stays valid.
func decodeJob(key, v []byte) (Job, error) {
	var j Job
	if err := json.Unmarshal(v, &j); err != nil {
		return Job{}, damaged(bucketJobs, key, v, "does not decode: %v", err)
	}
	switch {
	case j.ID != string(key):
		return Job{}, damaged(bucketJobs, key, v, "holds job id %q", j.ID)
	case !j.State.Valid():
		return Job{}, damaged(bucketJobs, key, v, "state %q is not a state", j.State)
	case j.Seq == 0:
		return Job{}, damaged(bucketJobs, key, v, "sequence number 0")
	case j.Kind == "":
		return Job{}, damaged(bucketJobs, key, v, "no kind")
	}
	return j, nil
}

// decodeHistory decodes the run history stored under kind.
func decodeHistory(kind, v []byte) (KindHistory, error) {
	var h KindHistory
	if err := json.Unmarshal(v, &h); err != nil {
		return KindHistory{}, damaged(bucketKinds, kind, v, "does not decode: %v", err)
	}
	if h.Kind != string(kind) || h.Runs < 0 {
		return KindHistory{}, damaged(bucketKinds, kind, v, "holds kind %q with %d runs", h.Kind, h.Runs)
	}
	return h, nil
}

// validate re-checks a record of bucket.
func validate(bucket string, key, v []byte) *recordError {
	var err error
	switch bucket {
	case string(bucketJobs):
		_, err = decodeJob(key, v)
	case string(bucketKinds):
		_, err = decodeHistory(key, v)
	}
	var re *recordError
	errors.As(err, &re)
	return re
}

// quarantinedJob returns the quarantine entry of job id as an error, or nil.
func quarantinedJob(tx *bolt.Tx, id string) error {
	b := tx.Bucket(bucketQuarantine)
	if b == nil {
		return nil
	}
	v := b.Get(quarantineKey(string(bucketJobs), id))
	if v == nil {
		return nil
	}
	var q QuarantinedRecord
	_ = json.Unmarshal(v, &q) // a damaged entry still says the job is quarantined
	return &QuarantinedError{ID: id, Reason: q.Reason, At: q.At}
}

// quarantineTx moves the record re names to the quarantine bucket, if it is
// still there and still damaged, with its index entries (a job) removed,
// and logs it once at ERROR when tx commits. It returns nil when there was
// nothing to move.
func quarantineTx(tx *bolt.Tx, re *recordError, now time.Time, log *slog.Logger) (*QuarantinedRecord, error) {
	b := tx.Bucket([]byte(re.bucket))
	if b == nil {
		return nil, nil
	}
	v := b.Get([]byte(re.key))
	if v == nil {
		return nil, nil // quarantined meanwhile
	}
	still := validate(re.bucket, []byte(re.key), v)
	if still == nil {
		return nil, nil // rewritten meanwhile
	}
	q := &QuarantinedRecord{Bucket: re.bucket, Key: re.key, Reason: still.reason, Raw: cloneBytes(v), At: now}
	if re.bucket == string(bucketJobs) {
		var err error
		if q.State, q.Seq, err = unindex(tx, re.key); err != nil {
			return nil, err
		}
	}
	if err := putQuarantined(tx, q); err != nil {
		return nil, err
	}
	if err := b.Delete([]byte(re.key)); err != nil {
		return nil, err
	}
	path := tx.DB().Path()
	tx.OnCommit(func() { logQuarantined(log, path, q) })
	return q, nil
}

func putQuarantined(tx *bolt.Tx, q *QuarantinedRecord) error {
	qb, err := tx.CreateBucketIfNotExists(bucketQuarantine)
	if err != nil {
		return fmt.Errorf("queue: create bucket %s: %w", bucketQuarantine, err)
	}
	v, err := json.Marshal(q)
	if err != nil {
		return err
	}
	return qb.Put(quarantineKey(q.Bucket, q.Key), v)
}

func logQuarantined(log *slog.Logger, path string, q *QuarantinedRecord) {
	if q.Bucket == string(bucketKinds) {
		log.Error("queue: damaged kind history quarantined; the kind's runtime history starts over",
			"file", path, "kind", q.Key, "reason", q.Reason, "bytes", len(q.Raw))
		return
	}
	log.Error("queue: damaged job record quarantined; the job will not run (colocd store check lists it)",
		"file", path, "job", q.Key, "state", q.State, "seq", q.Seq, "reason", q.Reason, "bytes", len(q.Raw))
}

// unindex deletes every index entry that names job id (one O(n) pass over
// the state and FIFO indexes: the record cannot be trusted to say where
// they are) and returns the state and seq of its state entry.
func unindex(tx *bolt.Tx, id string) (State, uint64, error) {
	var (
		st        State
		seq       uint64
		stateKeys [][]byte
		pendKeys  [][]byte
	)
	c := tx.Bucket(bucketStates).Cursor()
	for k, v := c.First(); k != nil; k, v = c.Next() {
		if string(v) == id && len(k) > 9 {
			stateKeys = append(stateKeys, cloneBytes(k))
		}
	}
	pc := tx.Bucket(bucketPending).Cursor()
	for k, v := pc.First(); k != nil; k, v = pc.Next() {
		if string(v) == id && len(k) == 8 {
			pendKeys = append(pendKeys, cloneBytes(k))
		}
	}
	for _, k := range stateKeys {
		st, seq = State(k[:len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:])
		if err := tx.Bucket(bucketStates).Delete(k); err != nil {
			return "", 0, err
		}
		if err := addCount(tx, st, -1); err != nil {
			return "", 0, err
		}
	}
	for _, k := range pendKeys {
		if err := tx.Bucket(bucketPending).Delete(k); err != nil {
			return "", 0, err
		}
		if err := addBlock(tx, binary.BigEndian.Uint64(k), -1); err != nil {
			return "", 0, err
		}
	}
	return st, seq, nil
}

// maxRepairs bounds the records one read quarantines before it gives up
// and returns the damage as an error.
const maxRepairs = 64

// read runs fn in a read transaction; when fn meets a damaged record it
// quarantines the record and runs fn again. fn must start from scratch on
// every run.
func (s *Store) read(fn func(tx *bolt.Tx) error) error {
	for i := 0; ; i++ {
		err := s.view(fn)
		var re *recordError
		switch {
		case !errors.As(err, &re):
			return err
		case i == maxRepairs:
			return fmt.Errorf("queue: %s: gave up after quarantining %d damaged records in one read (run colocd store check): %w", s.Path(), maxRepairs, err)
		}
		if err := s.update(func(tx *bolt.Tx) error {
			_, err := quarantineTx(tx, re, s.stamp(), s.log)
			return err
		}); err != nil {
			return fmt.Errorf("queue: quarantine %s/%s: %w", re.bucket, re.key, err)
		}
	}
}

// Quarantined lists the quarantined records, jobs first, each bucket in key
// order. A quarantine entry that is itself damaged is listed with its raw
// bytes and a reason saying so.
func (s *Store) Quarantined() ([]QuarantinedRecord, error) {
	var out []QuarantinedRecord
	err := s.view(func(tx *bolt.Tx) error {
		out = listQuarantined(tx)
		return nil
	})
	return out, err
}

func listQuarantined(tx *bolt.Tx) []QuarantinedRecord {
	b := tx.Bucket(bucketQuarantine)
	if b == nil {
		return nil
	}
	var out []QuarantinedRecord
	_ = b.ForEach(func(k, v []byte) error {
		var q QuarantinedRecord
		if err := json.Unmarshal(v, &q); err != nil {
			q = QuarantinedRecord{Key: string(k), Reason: fmt.Sprintf("the quarantine entry itself does not decode: %v", err), Raw: cloneBytes(v)}
		}
		out = append(out, q)
		return nil
	})
	return out
}

// indexEntry is where a job sits in the indexes.
type indexEntry struct {
	id    string
	state State
	seq   uint64
}

// scanResult is what the record scan found.
type scanResult struct {
	damaged []*QuarantinedRecord // records to quarantine (At unset), with State and Seq from the index
	live    []indexEntry         // every intact job, in id order
	byState map[State]int
	kinds   int
	// diffs are the index entries that disagree with the records, besides
	// those naming damaged jobs (at most maxProblems; ndiffs counts all).
	diffs   []string
	ndiffs  int
	rebuild bool // the indexes must be rebuilt from the records
}

func (r *scanResult) diff(format string, args ...any) {
	r.ndiffs++
	r.rebuild = true
	if len(r.diffs) < maxProblems {
		r.diffs = append(r.diffs, fmt.Sprintf(format, args...))
	}
}

// scanRecords decodes every job and kind history and checks the state and
// FIFO indexes, the counters and the block counts against the jobs: the
// records are the truth, the rest is derived from them.
func scanRecords(tx *bolt.Tx) *scanResult {
	r := &scanResult{byState: map[State]int{}}
	bad := map[string]*QuarantinedRecord{} // the damaged jobs, by id
	r.scanJobs(tx, bad)
	wantStates, wantPending, wantBlocks := r.wantIndexes()
	r.checkStates(tx, wantStates, bad)
	r.checkFIFO(tx, wantPending, bad)
	r.checkCounters(tx, wantBlocks)
	_ = tx.Bucket(bucketKinds).ForEach(func(k, v []byte) error {
		var re *recordError
		if _, err := decodeHistory(k, v); errors.As(err, &re) {
			r.addBad(bad, re)
		} else {
			r.kinds++
		}
		return nil
	})
	return r
}

// addBad records a damaged record for quarantine, and a damaged job in bad
// too.
func (r *scanResult) addBad(bad map[string]*QuarantinedRecord, re *recordError) {
	q := &QuarantinedRecord{Bucket: re.bucket, Key: re.key, Reason: re.reason, Raw: re.raw}
	r.damaged = append(r.damaged, q)
	if re.bucket == string(bucketJobs) {
		bad[re.key] = q
	}
}

// scanJobs decodes every job into r.live, or into r.damaged and bad when
// it does not decode. Of two jobs claiming one seq it keeps the one the
// state index names at its seq (the first, when the index names neither or
// both) and quarantines the other.
func (r *scanResult) scanJobs(tx *bolt.Tx, bad map[string]*QuarantinedRecord) {
	// Jobs: decode each; two jobs claiming one seq are resolved below.
	owner := map[uint64]int{} // seq → index in r.live
	var clash []int
	_ = tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
		j, err := decodeJob(k, v)
		var re *recordError
		if errors.As(err, &re) {
			r.addBad(bad, re)
			return nil
		}
		if _, dup := owner[j.Seq]; dup {
			clash = append(clash, len(r.live))
		} else {
			owner[j.Seq] = len(r.live)
		}
		r.live = append(r.live, indexEntry{id: j.ID, state: j.State, seq: j.Seq})
		return nil
	})
	// A seq clash keeps the job the state index names at its seq.
	states := tx.Bucket(bucketStates)
	for _, i := range clash {
		e, first := r.live[i], r.live[owner[r.live[i].seq]]
		loser := e
		if string(states.Get(stateKey(e.state, e.seq))) == e.id && string(states.Get(stateKey(first.state, first.seq))) != first.id {
			loser, r.live[owner[e.seq]] = first, e
		}
		raw := tx.Bucket(bucketJobs).Get([]byte(loser.id))
		r.addBad(bad, damaged(bucketJobs, []byte(loser.id), raw, "sequence number %d is also job %s's", loser.seq, r.live[owner[e.seq]].id))
		r.live[i].id = "" // dropped below
	}
	if len(clash) > 0 {
		kept := r.live[:0]
		for _, e := range r.live {
			if e.id != "" && bad[e.id] == nil {
				kept = append(kept, e)
			}
		}
		r.live = kept
	}
}

// wantIndexes counts the live jobs per state into r.byState and returns the
// indexes they call for: state index key → id, FIFO seq → id, and block →
// pending jobs in it.
func (r *scanResult) wantIndexes() (states map[string]string, pending map[uint64]string, blocks map[uint64]uint64) {
	states = make(map[string]string, len(r.live))
	pending = map[uint64]string{}
	blocks = map[uint64]uint64{}
	for _, e := range r.live {
		r.byState[e.state]++
		states[string(stateKey(e.state, e.seq))] = e.id
		if e.state == StatePending {
			pending[e.seq] = e.id
			blocks[e.seq>>blockBits]++
		}
	}
	return states, pending, blocks
}

// checkStates compares the state index with want (deleting the entries it
// finds): an entry naming a damaged job gives that job's State and Seq and
// calls for a rebuild; any other difference is a diff.
func (r *scanResult) checkStates(tx *bolt.Tx, want map[string]string, bad map[string]*QuarantinedRecord) {
	_ = tx.Bucket(bucketStates).ForEach(func(k, v []byte) error {
		if id, ok := want[string(k)]; ok && id == string(v) {
			delete(want, string(k))
			return nil
		}
		if q := bad[string(v)]; q != nil && len(k) > 9 {
			q.State, q.Seq = State(k[:len(k)-9]), binary.BigEndian.Uint64(k[len(k)-8:])
			r.rebuild = true
			return nil
		}
		r.diff("state index entry %q names job %q, which is not in that state at that seq", k, v)
		return nil
	})
	for k, id := range want {
		r.diff("state index has no entry for job %s (%q)", id, k)
	}
}

// checkFIFO compares the FIFO index with want (deleting the entries it
// finds): an entry naming a damaged job calls for a rebuild; any other
// difference is a diff.
func (r *scanResult) checkFIFO(tx *bolt.Tx, want map[uint64]string, bad map[string]*QuarantinedRecord) {
	_ = tx.Bucket(bucketPending).ForEach(func(k, v []byte) error {
		if len(k) == 8 {
			if seq := binary.BigEndian.Uint64(k); want[seq] == string(v) {
				delete(want, seq)
				return nil
			}
		}
		if bad[string(v)] != nil {
			r.rebuild = true
			return nil
		}
		r.diff("FIFO entry %x names job %q, which is not pending at that seq", k, v)
		return nil
	})
	for seq, id := range want {
		r.diff("FIFO has no entry for pending job %s (seq %d)", id, seq)
	}
}

// checkCounters compares the per-state counters with r.byState and the
// block counts with wantBlocks (deleting the blocks it finds), unless a
// rebuild is already called for, which rewrites them anyway.
func (r *scanResult) checkCounters(tx *bolt.Tx, wantBlocks map[uint64]uint64) {
	counts := tx.Bucket(bucketCounts)
	for _, st := range States {
		var n uint64
		if v := counts.Get([]byte(st)); len(v) == 8 {
			n = binary.BigEndian.Uint64(v)
		}
		if n != uint64(r.byState[st]) && !r.rebuild {
			r.diff("count of %s jobs is %d, the records hold %d", st, n, r.byState[st])
		}
	}
	_ = tx.Bucket(bucketBlocks).ForEach(func(k, v []byte) error {
		if len(k) != 8 || len(v) != 8 || wantBlocks[binary.BigEndian.Uint64(k)] != binary.BigEndian.Uint64(v) {
			if !r.rebuild {
				r.diff("pending block %x counts %x", k, v)
			}
			return nil
		}
		delete(wantBlocks, binary.BigEndian.Uint64(k))
		return nil
	})
	if len(wantBlocks) > 0 && !r.rebuild {
		r.diff("%d pending blocks are not counted", len(wantBlocks))
	}
}

// repair is Open's record scan: it quarantines the damaged records and,
// when the indexes disagree with the records, rebuilds them from the
// records, in one transaction. Nothing is written when all is well.
func repair(db *bolt.DB, log *slog.Logger, now func() time.Time) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: bbolt panicked during the record scan: %v", ErrCorrupt, db.Path(), r)
		}
	}()
	var r *scanResult
	if err := db.View(func(tx *bolt.Tx) error { r = scanRecords(tx); return nil }); err != nil {
		return err
	}
	if len(r.damaged) == 0 && !r.rebuild {
		return nil
	}
	at := now().Round(0).UTC()
	return db.Update(func(tx *bolt.Tx) error {
		for _, q := range r.damaged {
			q.At = at
			if err := putQuarantined(tx, q); err != nil {
				return err
			}
			if err := tx.Bucket([]byte(q.Bucket)).Delete([]byte(q.Key)); err != nil {
				return err
			}
		}
		if r.rebuild {
			if err := rebuildIndexes(tx, r.live); err != nil {
				return err
			}
		}
		tx.OnCommit(func() {
			for _, q := range r.damaged {
				logQuarantined(log, db.Path(), q)
			}
			if r.ndiffs > 0 {
				log.Error("queue: the indexes disagreed with the job records; rebuilt them from the records",
					"file", db.Path(), "differences", r.ndiffs, "first", r.diffs[0])
			}
		})
		return nil
	})
}

// rebuildIndexes replaces the state and FIFO indexes, the counters and the
// block counts with those of the live jobs.
func rebuildIndexes(tx *bolt.Tx, live []indexEntry) error {
	for _, name := range [][]byte{bucketStates, bucketPending, bucketCounts, bucketBlocks} {
		if err := tx.DeleteBucket(name); err != nil {
			return fmt.Errorf("queue: rebuild %s: %w", name, err)
		}
		if _, err := tx.CreateBucket(name); err != nil {
			return fmt.Errorf("queue: rebuild %s: %w", name, err)
		}
	}
	sorted := append([]indexEntry(nil), live...)
	sort.Slice(sorted, func(a, b int) bool { return sorted[a].seq < sorted[b].seq })
	for i := range sorted {
		j := Job{ID: sorted[i].id, Seq: sorted[i].seq, State: sorted[i].state}
		if err := index(tx, &j, ""); err != nil {
			return fmt.Errorf("queue: rebuild indexes: %w", err)
		}
	}
	return nil
}
