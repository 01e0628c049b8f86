package queue

import (
	"bytes"
	"encoding/binary"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// Get returns the job with id, or an error wrapping ErrNotFound, or, for a
// job whose record was damaged, a *QuarantinedError (wrapping
// errQuarantined).
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
	return s.scanPending(limit, nil)
}

// PendingHeads returns, in FIFO order, the first perGroup pending jobs of
// each group (by user, or by YARN queue when byQueue), looking at no more than scan pending
// jobs from the FIFO head (scan <= 0: all). It is what a fair decision
// reads: a group whose jobs sit behind another's backlog is still seen.
// The scan bound caps its cost (a job read per pending job scanned); a
// group whose first job lies beyond it is not seen until the queue ahead
// shrinks.
func (s *Store) PendingHeads(perGroup int, byQueue bool, scan int) ([]Job, error) {
	seen := map[string]int{}
	return s.scanPending(scan, func(user, queue string) bool {
		g := user
		if byQueue {
			g = queue
		}
		if perGroup > 0 && seen[g] >= perGroup {
			return false
		}
		seen[g]++
		return true
	})
}

// scanPending reads the FIFO from its head, at most scan jobs (scan <= 0:
// all), and returns those keep accepts by user and queue (nil keep: all).
func (s *Store) scanPending(scan int, keep func(user, queue string) bool) ([]Job, error) {
	var out []Job
	err := s.read(func(tx *bolt.Tx) error {
		out = out[:0]
		c := tx.Bucket(bucketPending).Cursor()
		n := 0
		for k, v := c.First(); k != nil && (scan <= 0 || n < scan); k, v = c.Next() {
			n++
			j, err := getJob(tx, string(v))
			if err != nil {
				return fmt.Errorf("%w: pending index names %s: %w", ErrCorrupt, v, err)
			}
			if keep == nil || keep(j.User, j.Queue) {
				out = append(out, j)
			}
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

// Scan reads the jobs in state st from a cursor, in the order the API
// lists them: pending jobs in FIFO order from the one after sequence
// number from (0: the head), jobs in any other state newest first from
// the one before from (0: the newest). It calls fn on each until fn
// returns false or max jobs were read (max <= 0: no bound), and returns
// the sequence number of the last job read (the cursor to resume from)
// and whether the state's jobs ran out. One read transaction; it reads
// only the jobs it passes to fn.
func (s *Store) Scan(st State, from uint64, max int, fn func(Job) bool) (last uint64, end bool, err error) {
	if !st.Valid() {
		return 0, false, fieldErr("state", "unknown state %q (want one of %s)", st, stateNames())
	}
	err = s.read(func(tx *bolt.Tx) error {
		last, end = from, false
		n := 0
		visit := func(seq uint64, id []byte) (bool, error) {
			j, err := getJob(tx, string(id))
			if err != nil {
				return false, fmt.Errorf("%w: %s index names %s: %w", ErrCorrupt, st, id, err)
			}
			last, n = seq, n+1
			return fn(j) && (max <= 0 || n < max), nil
		}
		if st == StatePending {
			c := tx.Bucket(bucketPending).Cursor()
			for k, v := c.Seek(u64(from + 1)); ; k, v = c.Next() {
				if k == nil {
					end = true
					return nil
				}
				if more, err := visit(binary.BigEndian.Uint64(k), v); err != nil || !more {
					return err
				}
			}
		}
		prefix := append([]byte(st), 0)
		c := tx.Bucket(bucketStates).Cursor()
		var k, v []byte
		if from == 0 {
			if k, _ = c.Seek(append([]byte(st), 1)); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		} else {
			if k, _ = c.Seek(stateKey(st, from)); k == nil {
				k, v = c.Last()
			} else {
				k, v = c.Prev()
			}
		}
		for ; ; k, v = c.Prev() {
			if k == nil || !bytes.HasPrefix(k, prefix) || len(k) != len(prefix)+8 {
				end = true
				return nil
			}
			if more, err := visit(binary.BigEndian.Uint64(k[len(prefix):]), v); err != nil || !more {
				return err
			}
		}
	})
	return last, end, err
}
