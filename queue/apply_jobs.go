package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	bolt "go.etcd.io/bbolt"
)

// The jobs' commands, applied inside the log's transaction. Each reads
// only the store and its command: no clock, no entropy.

func (s *Store) applySubmit(tx *bolt.Tx, c CmdSubmit) (Result, error) {
	res := Result{Submitted: make([]submitted, len(c.Jobs))}
	for i, j := range c.Jobs {
		sub, err := s.insert(tx, j, c.At)
		if err != nil {
			return Result{}, err
		}
		res.Submitted[i] = sub
	}
	return res, nil
}

// keyHolder returns the job that holds j's idempotency key for j's user,
// if any.
func keyHolder(tx *bolt.Tx, j Job) (Job, bool, error) {
	id := tx.Bucket(bucketIdem).Get(idemKey(j.User, j.IdempotencyKey))
	if id == nil {
		return Job{}, false, nil
	}
	first, err := getJob(tx, string(id))
	if err != nil {
		return Job{}, true, fmt.Errorf("queue: idempotency key %q: %w", j.IdempotencyKey, err)
	}
	return first, true, nil
}

// insert writes one new job with the id its proposer minted, or answers
// with the job that already holds its idempotency key. A refusal is the
// outcome's Err; the error is a storage failure.
func (s *Store) insert(tx *bolt.Tx, j Job, at time.Time) (submitted, error) {
	refuse := func(err error) (submitted, error) { return submitted{Err: err}, nil }
	if err := j.Validate(); err != nil {
		return refuse(err)
	}
	if j.IdempotencyKey != "" {
		first, ok, err := keyHolder(tx, j)
		switch {
		case err != nil:
			return refuse(err)
		case ok:
			return submitted{Job: first}, nil
		}
	}
	// Checked after the key lookup: a retry of an accepted job whose
	// deadline has passed since must still get that job back.
	if j.Deadline != nil && !j.Deadline.After(at) {
		return refuse(fieldErr("deadline", "%s is not in the future", j.Deadline.Format(time.RFC3339)))
	}
	jobs := tx.Bucket(bucketJobs)
	if v := jobs.Get([]byte(j.ID)); v != nil || j.ID == "" {
		return s.reproposed(tx, j, at)
	}
	seq, err := jobs.NextSequence()
	if err != nil {
		return submitted{}, fmt.Errorf("queue: next sequence: %w", err)
	}
	j.Seq, j.CreatedAt, j.State = seq, at, StatePending
	if err := putJob(tx, &j); err != nil {
		return submitted{}, err
	}
	if err := index(tx, &j, ""); err != nil {
		return submitted{}, err
	}
	if j.IdempotencyKey != "" {
		if err := tx.Bucket(bucketIdem).Put(idemKey(j.User, j.IdempotencyKey), []byte(j.ID)); err != nil {
			return submitted{}, err
		}
	}
	return submitted{Job: j.clone(), Created: true}, nil
}

// reproposed answers a job whose id is taken: the same submission
// applied before (a proposer that could not tell whether its commit
// went through and proposed it again) gets its job back as created;
// anything else is refused.
func (s *Store) reproposed(tx *bolt.Tx, j Job, at time.Time) (submitted, error) {
	if j.ID == "" {
		return submitted{Err: fieldErr("id", "a submitted job needs the id its proposer minted")}, nil
	}
	old, err := getJob(tx, j.ID)
	if err == nil && old.CreatedAt.Equal(at) && old.User == j.User && old.Kind == j.Kind && old.IdempotencyKey == j.IdempotencyKey {
		return submitted{Job: old, Created: true}, nil
	}
	return submitted{Err: fmt.Errorf("queue: job id %s already used (entropy source repeating?)", j.ID)}, nil
}

// move runs one state transition of job id to state to: it checks the
// state machine, lets mut adjust the job, then rewrites the job and its
// index entries. A damaged record is quarantined instead (at at) and the
// move is refused with a *QuarantinedError.
func (s *Store) move(tx *bolt.Tx, id string, to State, at time.Time, mut func(tx *bolt.Tx, j *Job) error) (Result, error) {
	j, err := getJob(tx, id)
	var re *recordError
	if errors.As(err, &re) {
		if _, err := quarantineTx(tx, re, at, s.log); err != nil {
			return Result{}, err
		}
		return Result{Err: &QuarantinedError{ID: id, Reason: re.reason, At: at}}, nil
	}
	if err != nil {
		return Result{Err: err}, nil
	}
	from := j.State
	if !canTransition(from, to) {
		return Result{Err: &transitionError{ID: id, From: from, To: to}}, nil
	}
	j.State = to
	if mut != nil {
		if err := mut(tx, &j); err != nil {
			var fe *FieldError
			if errors.As(err, &fe) {
				return Result{Err: err}, nil
			}
			return Result{}, err
		}
	}
	if err := putJob(tx, &j); err != nil {
		return Result{}, err
	}
	if err := index(tx, &j, from); err != nil {
		return Result{}, err
	}
	return Result{Job: j}, nil
}

// notBefore is at, or floor when at is before it: a time the store
// writes after another never reads back as earlier (a wall clock stepped
// back between the two).
func notBefore(at time.Time, floor *time.Time) time.Time {
	if floor != nil && at.Before(*floor) {
		return *floor
	}
	return at
}

func (s *Store) applyAdmit(tx *bolt.Tx, c cmdAdmit, epoch uint64) (Result, error) {
	if err := checkDecision(c.Decision); err != nil {
		return Result{Err: err}, nil
	}
	return s.move(tx, c.ID, StateAdmitted, c.At, func(tx *bolt.Tx, j *Job) error {
		at := notBefore(c.At, &j.CreatedAt)
		j.AppID, j.AdmitEpoch = c.AppID, epoch
		j.AdmittedAt = &at
		j.Decision = compactJSON(c.Decision)
		return countPassed(tx, c.ID, c.Passed, c.Blocked)
	})
}

// countPassed adds one skip to every job in passed and one block to every
// job in blocked that is still pending (ids that are unknown, not pending
// or chosen itself are ignored: a job cancelled meanwhile is no error).
func countPassed(tx *bolt.Tx, chosen string, passed, blocked []string) error {
	seen := map[string]bool{chosen: true}
	for i, ids := range [][]string{passed, blocked} {
		for _, pid := range ids {
			if seen[pid] {
				continue
			}
			seen[pid] = true
			p, err := getJob(tx, pid)
			if err != nil || p.State != StatePending {
				continue
			}
			if i == 0 {
				p.Skips++
			} else {
				p.Blocked++
			}
			if err := putJob(tx, &p); err != nil {
				return err
			}
		}
	}
	return nil
}

func (s *Store) applyRequeue(tx *bolt.Tx, c cmdRequeue) (Result, error) {
	return s.move(tx, c.ID, StatePending, c.At, func(_ *bolt.Tx, j *Job) error {
		j.AppID, j.AdmitEpoch, j.AdmittedAt, j.Decision = "", 0, nil, nil
		j.Requeues++
		j.Diagnostics = truncate(c.Reason, maxDiagnosticsBytes)
		return nil
	})
}

func (s *Store) applyStart(tx *bolt.Tx, c cmdStart) (Result, error) {
	return s.move(tx, c.ID, StateRunning, c.At, func(_ *bolt.Tx, j *Job) error {
		at := notBefore(c.At, j.AdmittedAt)
		j.RunningAt = &at
		return nil
	})
}

func (s *Store) applyFinish(tx *bolt.Tx, c cmdFinish) (Result, error) {
	switch c.Final {
	case StateSucceeded, StateFailed, StateKilled:
	default:
		return Result{Err: fieldErr("final", "%q is not succeeded, failed or killed", c.Final)}, nil
	}
	return s.move(tx, c.ID, c.Final, c.At, func(tx *bolt.Tx, j *Job) error {
		start := j.RunningAt
		if start == nil {
			start = j.AdmittedAt
		}
		at := notBefore(c.At, start)
		j.FinishedAt = &at
		j.Diagnostics = truncate(c.Diagnostics, maxDiagnosticsBytes)
		if c.Final != StateSucceeded || start == nil {
			return nil
		}
		rt := c.At.Sub(*start)
		if c.Measured {
			rt = c.Runtime
		}
		if rt < 0 {
			s.log.Warn("queue: negative runtime not added to history", "job", j.ID, "kind", j.Kind, "runtime", rt)
			return nil
		}
		return s.addHistory(tx, j.Kind, rt, c.At)
	})
}

// addHistory folds one runtime into kind's history. A damaged history is
// quarantined and the kind starts over, so a job can still finish.
func (s *Store) addHistory(tx *bolt.Tx, kind string, rt time.Duration, at time.Time) error {
	b := tx.Bucket(bucketKinds)
	h := KindHistory{Kind: kind}
	if v := b.Get([]byte(kind)); v != nil {
		old, err := decodeHistory([]byte(kind), v)
		var re *recordError
		switch {
		case errors.As(err, &re):
			if _, err := quarantineTx(tx, re, at, s.log); err != nil {
				return err
			}
		case err != nil:
			return err
		default:
			h = old
		}
	}
	h.add(rt)
	v, err := json.Marshal(h)
	if err != nil {
		return err
	}
	return b.Put([]byte(kind), v)
}

func (s *Store) applyCancel(tx *bolt.Tx, c cmdCancel) (Result, error) {
	return s.move(tx, c.ID, StateCancelled, c.At, func(_ *bolt.Tx, j *Job) error {
		at := notBefore(c.At, &j.CreatedAt)
		j.FinishedAt = &at
		return nil
	})
}

func (s *Store) applyPark(tx *bolt.Tx, c cmdPark) (Result, error) {
	return s.move(tx, c.ID, StateParked, c.At, func(_ *bolt.Tx, j *Job) error {
		j.Diagnostics = truncate(c.Reason, maxDiagnosticsBytes)
		return nil
	})
}

func (s *Store) applyResolve(tx *bolt.Tx, c cmdResolve) (Result, error) {
	switch c.To {
	case StatePending, StateSucceeded, StateFailed, StateKilled:
	default:
		return Result{Err: fieldErr("state", "%q is not pending, succeeded, failed or killed", c.To)}, nil
	}
	j, err := getJob(tx, c.ID)
	if err != nil {
		return Result{Err: err}, nil
	}
	if j.State != StateParked {
		return Result{Err: &transitionError{ID: c.ID, From: j.State, To: c.To}}, nil
	}
	j.State = c.To
	j.Diagnostics = truncate(c.Reason, maxDiagnosticsBytes)
	if c.To == StatePending {
		j.AppID, j.AdmitEpoch, j.AdmittedAt, j.RunningAt, j.Decision = "", 0, nil, nil, nil
		j.Requeues++
	} else {
		at := notBefore(c.At, &j.CreatedAt)
		j.FinishedAt = &at
	}
	if err := putJob(tx, &j); err != nil {
		return Result{}, err
	}
	if err := index(tx, &j, StateParked); err != nil {
		return Result{}, err
	}
	return Result{Job: j}, nil
}

// compactChunk bounds the deletions of one cmdCompact, so a large
// clean-up never holds the write lock for long.
const compactChunk = 1000

// applyCompact scans c.State's index from c.From and deletes up to
// compactChunk jobs that finished before c.Before, with their index and
// idempotency entries; damaged records met on the way are quarantined,
// not deleted (ops decide).
func (s *Store) applyCompact(tx *bolt.Tx, c cmdCompact) (Result, error) {
	if !c.State.Terminal() {
		return Result{Err: fieldErr("state", "%q is not a terminal state", c.State)}, nil
	}
	prefix := append([]byte(c.State), 0)
	from := c.From
	if !bytes.HasPrefix(from, prefix) {
		from = prefix
	}
	var (
		res     Result
		doomed  []Job
		damaged []*recordError
	)
	cur := tx.Bucket(bucketStates).Cursor()
	for k, v := cur.Seek(from); k != nil && bytes.HasPrefix(k, prefix); k, v = cur.Next() {
		if len(doomed)+len(damaged) == compactChunk {
			res.Next = cloneBytes(k)
			break
		}
		j, err := getJob(tx, string(v))
		var re *recordError
		if errors.As(err, &re) {
			damaged = append(damaged, re)
			continue
		}
		if err != nil {
			return Result{}, err
		}
		if j.FinishedAt != nil && j.FinishedAt.Before(c.Before) {
			doomed = append(doomed, j)
		}
	}
	for _, re := range damaged {
		if _, err := quarantineTx(tx, re, c.At, s.log); err != nil {
			return Result{}, err
		}
	}
	for i := range doomed {
		if err := deleteJob(tx, &doomed[i]); err != nil {
			return Result{}, err
		}
	}
	res.Compacted = len(doomed)
	return res, nil
}

// deleteJob removes j with its index and idempotency entries.
func deleteJob(tx *bolt.Tx, j *Job) error {
	from := j.State
	j.State = ""
	if err := index(tx, j, from); err != nil {
		return err
	}
	if err := tx.Bucket(bucketJobs).Delete([]byte(j.ID)); err != nil {
		return err
	}
	if j.IdempotencyKey == "" {
		return nil
	}
	k := idemKey(j.User, j.IdempotencyKey)
	if bytes.Equal(tx.Bucket(bucketIdem).Get(k), []byte(j.ID)) {
		return tx.Bucket(bucketIdem).Delete(k)
	}
	return nil
}
