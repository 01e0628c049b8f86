package queue

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/oklog/ulid/v2"
	bolt "go.etcd.io/bbolt"
)

// submitOp is one Submit call waiting for the group commit.
type submitOp struct {
	job   Job
	state atomic.Int32 // opQueued → opTaken (by the writer) or opAbandoned (by a cancelled caller)
	done  chan struct{}

	// Set by the writer before done is closed.
	res     Job
	created bool
	err     error
}

const (
	opQueued int32 = iota
	opTaken
	opAbandoned
)

// Submit validates j and stores it as a new pending job at the tail of the
// FIFO. The store assigns ID (a ULID), Seq, CreatedAt and State; it ignores
// whatever the caller put in the store-owned fields. When j carries an
// IdempotencyKey that the same user already used, nothing is written and the
// first job comes back with created == false, even under concurrent retries
// and even if its deadline has passed since. A new job's deadline must be in
// the future (a *FieldError on "deadline" otherwise). With less free space
// than Options.Reserve a new job is refused with a *SpaceError
// (ErrLowSpace), a retry of an accepted key still gets its job. The job is
// fsync'd (unless Options.NoSync) before Submit returns.
//
// Concurrent calls are group-committed: a single writer takes every
// submission queued while the previous commit was running and commits them in
// one transaction, so N submitters share one fsync instead of paying N.
//
// If ctx ends before the writer takes the job, nothing is written and
// ctx.Err() is returned; once taken, Submit waits for the commit (bounded by
// one transaction) and reports its outcome.
func (s *Store) Submit(ctx context.Context, j Job) (Job, bool, error) {
	if err := j.Validate(); err != nil {
		return Job{}, false, err
	}
	in := Job{ // only the submitter's fields; the store owns the rest
		Kind: j.Kind, User: j.User, Queue: j.Queue, Priority: j.Priority,
		Resources: j.Resources, Submit: j.Submit, Deadline: j.Deadline,
		Labels: j.Labels, IdempotencyKey: j.IdempotencyKey,
	}
	in = in.clone()
	in.Submit = compactJSON(in.Submit) // stored as encoding/json writes it back
	if in.Deadline != nil {
		d := in.Deadline.Round(0).UTC()
		in.Deadline = &d
	}
	if err := ctx.Err(); err != nil {
		return Job{}, false, err
	}
	op := &submitOp{job: in, done: make(chan struct{})}

	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return Job{}, false, ErrClosed
	}
	select {
	case s.ops <- op:
		s.mu.RUnlock()
	case <-ctx.Done():
		s.mu.RUnlock()
		return Job{}, false, ctx.Err()
	}

	select {
	case <-op.done:
	case <-ctx.Done():
		if op.state.CompareAndSwap(opQueued, opAbandoned) {
			return Job{}, false, ctx.Err()
		}
		<-op.done // the writer has it: wait for the commit
	}
	if op.err != nil {
		return Job{}, false, op.err
	}
	return op.res, op.created, nil
}

// writer is the group-commit loop: it blocks for one submission, takes
// whatever else is already queued (up to maxBatch) and commits them together.
// There is no timer: a lone submitter commits at once, and submitters that
// arrive during a commit form the next group.
func (s *Store) writer() {
	defer close(s.writerDone)
	batch := make([]*submitOp, 0, s.maxBatch)
	for op := range s.ops {
		batch = append(batch[:0], op)
	drain:
		for len(batch) < s.maxBatch {
			select {
			case op, ok := <-s.ops:
				if !ok {
					break drain
				}
				batch = append(batch, op)
			default:
				break drain
			}
		}
		s.commit(batch)
	}
}

// commit stores a group of submissions in one transaction. If that
// transaction fails, each submission is retried alone so one bad job cannot
// fail its neighbours.
func (s *Store) commit(batch []*submitOp) {
	take := batch[:0]
	for _, op := range batch {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			take = append(take, op)
		}
	}
	if len(take) == 0 {
		return
	}
	space := s.CheckSpace() // once per commit: one statfs
	err := s.db.Update(func(tx *bolt.Tx) error {
		for _, op := range take {
			var err error
			op.res, op.created, err = s.insert(tx, op.job, space)
			if errors.Is(err, ErrInvalid) || errors.Is(err, ErrLowSpace) {
				op.err = err // rejected before writing anything: the others go on
				continue
			}
			if err != nil {
				return err
			}
		}
		return nil
	})
	switch {
	case err != nil && len(take) > 1:
		for _, op := range take {
			op.err = s.db.Update(func(tx *bolt.Tx) (err error) {
				op.res, op.created, err = s.insert(tx, op.job, space)
				return err
			})
		}
	case err != nil:
		take[0].err = err
	}
	for _, op := range take {
		close(op.done)
	}
}

// insert writes one new job, or returns the job that already holds its
// idempotency key; space is CheckSpace's answer, which refuses a new job
// (not a retry). Called only from the writer goroutine (s.entropy is not
// safe for concurrent use).
func (s *Store) insert(tx *bolt.Tx, j Job, space error) (Job, bool, error) {
	idem := tx.Bucket(bucketIdem)
	var ikey []byte
	if j.IdempotencyKey != "" {
		ikey = idemKey(j.User, j.IdempotencyKey)
		if id := idem.Get(ikey); id != nil {
			first, err := getJob(tx, string(id))
			if err != nil {
				return Job{}, false, fmt.Errorf("queue: idempotency key %q: %w", j.IdempotencyKey, err)
			}
			return first, false, nil
		}
	}
	if space != nil {
		return Job{}, false, space
	}
	now := s.stamp()
	// Checked after the key lookup: a retry of an accepted job whose
	// deadline has passed since must still get that job back.
	if j.Deadline != nil && !j.Deadline.After(now) {
		return Job{}, false, fieldErr("deadline", "%s is not in the future", j.Deadline.Format(time.RFC3339))
	}
	jobs := tx.Bucket(bucketJobs)
	seq, err := jobs.NextSequence()
	if err != nil {
		return Job{}, false, fmt.Errorf("queue: next sequence: %w", err)
	}
	id, err := ulid.New(ulid.Timestamp(now), s.entropy)
	if err != nil {
		return Job{}, false, fmt.Errorf("queue: new job id: %w", err)
	}
	j.ID, j.Seq, j.CreatedAt, j.State = id.String(), seq, now, StatePending
	if jobs.Get([]byte(j.ID)) != nil {
		return Job{}, false, fmt.Errorf("queue: job id %s already used (entropy source repeating?)", j.ID)
	}
	if err := putJob(tx, &j); err != nil {
		return Job{}, false, err
	}
	if err := index(tx, &j, ""); err != nil {
		return Job{}, false, err
	}
	if ikey != nil {
		if err := idem.Put(ikey, []byte(j.ID)); err != nil {
			return Job{}, false, err
		}
	}
	return j.clone(), true, nil
}
