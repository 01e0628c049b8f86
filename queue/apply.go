package queue

import (
	"encoding/binary"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// keyApplied is the meta key holding the index of the last entry applied
// (uint64 BE), written in the transaction that applies it.
var keyApplied = []byte("applied")

// errGap: Apply was given an entry beyond the next index (the entries
// between were never applied); the error is a *gapError.
var errGap = errors.New("queue: log entry out of order")

// gapError is an entry whose index does not follow the applied index.
type gapError struct {
	Applied, Index uint64
}

func (e *gapError) Error() string {
	return fmt.Sprintf("queue: log entry %d cannot be applied after entry %d: the entries between are missing", e.Index, e.Applied)
}

// Unwrap makes errors.Is(err, errGap) true.
func (e *gapError) Unwrap() error { return errGap }

// Apply applies entries in order, all in one transaction (one fsync), and
// records the last one's index as applied in it: the store is the log's
// state machine. An entry at or below the applied index was applied
// before and is skipped (its results are nil); Index 0 means the next
// index (the embedded log); an entry beyond the next index is a
// *gapError and nothing is applied. A command that is refused (Result.Err)
// changes nothing and the others go on; a storage failure fails the whole
// Apply and leaves the store as it was.
func (s *Store) Apply(entries ...Entry) ([][]Result, error) {
	out := make([][]Result, len(entries))
	err := s.update(func(tx *bolt.Tx) error {
		applied := appliedIndex(tx)
		for n, e := range entries {
			idx := e.Index
			if idx == 0 {
				idx = applied + 1
			}
			if idx <= applied {
				continue
			}
			if idx != applied+1 {
				return &gapError{Applied: applied, Index: idx}
			}
			res := make([]Result, len(e.Commands))
			for i, c := range e.Commands {
				r, err := s.apply(tx, e.Epoch, c)
				if err != nil {
					return err
				}
				res[i] = r
			}
			out[n], applied = res, idx
		}
		return tx.Bucket(bucketMeta).Put(keyApplied, u64(applied))
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// Applied is the index of the last log entry applied to the store (0: none).
func (s *Store) Applied() (uint64, error) {
	var n uint64
	err := s.view(func(tx *bolt.Tx) error {
		n = appliedIndex(tx)
		return nil
	})
	return n, err
}

func appliedIndex(tx *bolt.Tx) uint64 {
	if v := tx.Bucket(bucketMeta).Get(keyApplied); len(v) == 8 {
		return binary.BigEndian.Uint64(v)
	}
	return 0
}

// apply applies one command inside tx. The error is a storage failure;
// a refusal is the result's Err.
func (s *Store) apply(tx *bolt.Tx, epoch uint64, c Command) (Result, error) {
	switch c := c.(type) {
	case CmdSubmit:
		return s.applySubmit(tx, c)
	case cmdAdmit:
		return s.applyAdmit(tx, c, epoch)
	case cmdRequeue:
		return s.applyRequeue(tx, c)
	case cmdStart:
		return s.applyStart(tx, c)
	case cmdFinish:
		return s.applyFinish(tx, c)
	case cmdCancel:
		return s.applyCancel(tx, c)
	case cmdPark:
		return s.applyPark(tx, c)
	case cmdResolve:
		return s.applyResolve(tx, c)
	case cmdCompact:
		return s.applyCompact(tx, c)
	case cmdSaveLearned:
		return applySaveLearned(tx, c)
	case cmdMigrateLearned:
		return applyMigrateLearned(tx, c)
	case cmdQuarantineLearned:
		return s.applyQuarantineLearned(tx, c)
	case cmdSaveFairness:
		return Result{}, putSnapshotKey(tx, keyFairness, c.State)
	case cmdSaveLegacy:
		if err := c.Section.valid(); err != nil {
			return Result{Err: err}, nil
		}
		return Result{}, putSnapshotKey(tx, c.Section.legacy(), c.Snapshot)
	case nil:
		return Result{Err: fieldErr("command", "nil")}, nil
	}
	return Result{Err: fieldErr("command", "unknown type %T", c)}, nil
}

// putSnapshotKey writes one key of bucketPrefs; empty v deletes it.
func putSnapshotKey(tx *bolt.Tx, k, v []byte) error {
	if len(v) == 0 {
		return tx.Bucket(bucketPrefs).Delete(k)
	}
	return tx.Bucket(bucketPrefs).Put(k, cloneBytes(v))
}
