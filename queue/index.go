package queue

import (
	"encoding/binary"
	"encoding/json"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

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
