package queue

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"

	bolt "go.etcd.io/bbolt"
)

// OpenSchema opens path as if this build's schema were version with the
// given migrations (the migration hook under test).
func OpenSchema(path string, opts Options, version uint64, migrations map[uint64]func(*bolt.Tx) error) (*Store, error) {
	return open(path, opts, schema{version: version, migrations: migrations})
}

// DB exposes the bbolt handle to tests.
func (s *Store) DB() *bolt.DB { return s.db }

// CheckInvariants verifies that the indexes and counters agree with the jobs.
func (s *Store) CheckInvariants() error {
	return s.view(func(tx *bolt.Tx) error {
		counts := map[State]int{}
		pending := map[string]bool{}
		seqs := map[uint64]string{}
		err := tx.Bucket(bucketJobs).ForEach(func(k, v []byte) error {
			var j Job
			if err := json.Unmarshal(v, &j); err != nil {
				return fmt.Errorf("job %s: %v", k, err)
			}
			if j.ID != string(k) {
				return fmt.Errorf("job key %s holds id %s", k, j.ID)
			}
			if !j.State.Valid() {
				return fmt.Errorf("job %s: state %q", k, j.State)
			}
			if other, dup := seqs[j.Seq]; dup {
				return fmt.Errorf("jobs %s and %s share seq %d", other, j.ID, j.Seq)
			}
			seqs[j.Seq] = j.ID
			counts[j.State]++
			if got := tx.Bucket(bucketStates).Get(stateKey(j.State, j.Seq)); string(got) != j.ID {
				return fmt.Errorf("job %s: state index %s/%d holds %q", j.ID, j.State, j.Seq, got)
			}
			inPending := string(tx.Bucket(bucketPending).Get(u64(j.Seq))) == j.ID
			if inPending != (j.State == StatePending) {
				return fmt.Errorf("job %s (%s): in pending index = %v", j.ID, j.State, inPending)
			}
			if j.State == StatePending {
				pending[j.ID] = true
			}
			if j.IdempotencyKey != "" {
				if got := tx.Bucket(bucketIdem).Get(idemKey(j.User, j.IdempotencyKey)); got == nil {
					return fmt.Errorf("job %s: idempotency key %q not indexed", j.ID, j.IdempotencyKey)
				}
			}
			return nil
		})
		if err != nil {
			return err
		}
		if n := tx.Bucket(bucketPending).Stats().KeyN; n != len(pending) {
			return fmt.Errorf("pending index has %d keys, %d pending jobs", n, len(pending))
		}
		blocks := map[uint64]int{}
		tx.Bucket(bucketPending).ForEach(func(k, _ []byte) error {
			blocks[binary.BigEndian.Uint64(k)>>blockBits]++
			return nil
		})
		stored := map[uint64]int{}
		tx.Bucket(bucketBlocks).ForEach(func(k, v []byte) error {
			stored[binary.BigEndian.Uint64(k)] = int(binary.BigEndian.Uint64(v))
			return nil
		})
		if fmt.Sprint(blocks) != fmt.Sprint(stored) {
			return fmt.Errorf("pending block counts %v, want %v", stored, blocks)
		}
		total := 0
		for _, n := range counts {
			total += n
		}
		if n := tx.Bucket(bucketStates).Stats().KeyN; n != total {
			return fmt.Errorf("state index has %d keys, %d jobs", n, total)
		}
		for _, st := range States {
			var n int
			if v := tx.Bucket(bucketCounts).Get([]byte(st)); len(v) == 8 {
				n = int(binary.BigEndian.Uint64(v))
			}
			if n != counts[st] {
				return fmt.Errorf("count of %s is %d, %d jobs", st, n, counts[st])
			}
		}
		return tx.Bucket(bucketIdem).ForEach(func(k, v []byte) error {
			j, err := getJob(tx, string(v))
			if errors.Is(err, errQuarantined) {
				return nil // the key keeps naming its quarantined job
			}
			if err != nil {
				return fmt.Errorf("idempotency key %q: %v", k, err)
			}
			if !bytes.Equal(idemKey(j.User, j.IdempotencyKey), k) {
				return fmt.Errorf("idempotency key %q names job %s with key %q", k, j.ID, j.IdempotencyKey)
			}
			return nil
		})
	})
}

// Content lists the store's logical content as Digest reads it, one line
// per key ("path key value" quoted), for a diff.
func (s *Store) Content() ([]string, error) {
	var out []string
	err := s.view(func(tx *bolt.Tx) error {
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bucketQuarantine) {
				return nil
			}
			return walkContent(nil, name, b, func(path, k, v []byte) {
				out = append(out, fmt.Sprintf("%q %q %q", path, k, v))
			})
		})
	})
	return out, err
}

// The external tests' names for unexported constants.
const (
	HistoryAlpha  = historyAlpha
	MaxLabels     = maxLabels
	SchemaVersion = schemaVersion
)

// The external tests' names for unexported variables and functions.
var (
	CanTransition  = canTransition
	ErrEntry       = errEntry
	ErrForeign     = errForeign
	ErrLocked      = errLocked
	ErrQuarantined = errQuarantined
	ErrSchema      = errSchema
)

// The external tests' names for unexported types.
type (
	CmdAdmit        = cmdAdmit
	CmdCancel       = cmdCancel
	CmdCompact      = cmdCompact
	CmdFinish       = cmdFinish
	CmdResolve      = cmdResolve
	CmdSaveLearned  = cmdSaveLearned
	CmdStart        = cmdStart
	GapError        = gapError
	TransitionError = transitionError
	TruncatedError  = truncatedError
)

// SetSalvageBatch sets how many bytes Salvage writes per transaction, and
// returns a function restoring it.
func SetSalvageBatch(n int) (restore func()) {
	old := salvageBatch
	salvageBatch = n
	return func() { salvageBatch = old }
}
