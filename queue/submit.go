package queue

import (
	"context"

	"fmt"
	"sync"
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
// arrive during a commit form the next group. Up to Options.CommitsInFlight
// groups commit at once (one by default: a group forms while the one
// before commits); the writer prepares them in order, so ids and times
// are minted in the order the groups formed.
func (s *Store) writer() {
	defer close(s.writerDone)
	inflight := make(chan struct{}, s.inFlight)
	var wg sync.WaitGroup
	defer wg.Wait()
	for {
		inflight <- struct{}{} // a slot before the group forms
		op, ok := <-s.ops
		if !ok {
			return
		}
		batch := s.gather(op)
		wg.Add(1)
		commit := s.commit(batch)
		go func() {
			defer func() { <-inflight; wg.Done() }()
			commit()
		}()
	}
}

// gather is the group that op starts: whatever else is queued, up to
// maxBatch, and with Options.GroupWait what arrives within that wait.
func (s *Store) gather(op *submitOp) []*submitOp {
	batch := []*submitOp{op}
	var linger <-chan time.Time
	if s.groupWait > 0 {
		t := time.NewTimer(s.groupWait)
		defer t.Stop()
		linger = t.C
	}
	for len(batch) < s.maxBatch {
		select {
		case op, ok := <-s.ops:
			if !ok {
				return batch
			}
			batch = append(batch, op)
			continue
		default:
		}
		if linger == nil {
			return batch
		}
		select {
		case op, ok := <-s.ops:
			if !ok {
				return batch
			}
			batch = append(batch, op)
		case <-linger:
			return batch
		}
	}
	return batch
}

// commit stores a group of submissions as one CmdSubmit: one entry of
// the log, one transaction, one fsync. The writer is the proposer: it
// stamps the group's time, answers what it can from the file (a key used
// before; below the space reserve, every new job is refused) and mints an
// id for each new job, in the writer's goroutine; the function it returns
// commits the rest. If that commit fails, each job is committed alone, so
// one bad job cannot fail its neighbours.
func (s *Store) commit(batch []*submitOp) func() {
	take := batch[:0]
	for _, op := range batch {
		if op.state.CompareAndSwap(opQueued, opTaken) {
			take = append(take, op)
		}
	}
	var (
		at      time.Time
		propose []*submitOp
	)
	if len(take) > 0 {
		at = s.stamp()
		propose = s.prepare(take, at, s.CheckSpace()) // one statfs per commit
	}
	return func() {
		defer func() {
			for _, op := range take {
				close(op.done)
			}
		}()
		if len(propose) == 0 {
			return
		}
		err := s.submitGroup(at, propose)
		if err != nil && len(propose) > 1 {
			for _, op := range propose {
				op.err = s.submitGroup(at, []*submitOp{op})
			}
			return
		}
		for _, op := range propose {
			if op.err == nil {
				op.err = err
			}
		}
	}
}

// prepare answers the ops it can without writing — a retry of a key the
// user used before gets the first job; a deadline not after at, or any
// new job while space says the disk is below the reserve, is refused —
// and mints an id for each of the others, which it returns in order.
// Called only from the writer goroutine (s.entropy).
func (s *Store) prepare(ops []*submitOp, at time.Time, space error) []*submitOp {
	firsts := s.lookupKeys(ops)
	var out []*submitOp
	for i, op := range ops {
		switch j := op.job; {
		case firsts[i] != nil:
			op.res, op.created = *firsts[i], false
		case space != nil:
			op.err = space
		case j.Deadline != nil && !j.Deadline.After(at):
			// Checked after the key lookup: a retry of an accepted job
			// whose deadline has passed since must still get that job back.
			op.err = fieldErr("deadline", "%s is not in the future", j.Deadline.Format(time.RFC3339))
		default:
			id, err := ulid.New(ulid.Timestamp(at), s.entropy)
			if err != nil {
				op.err = fmt.Errorf("queue: new job id: %w", err)
				continue
			}
			op.job.ID = id.String()
			out = append(out, op)
		}
	}
	return out
}

// lookupKeys returns, for each op whose idempotency key its user used
// before, the job that holds it (nil for the others). A key that cannot
// be read is left to Apply, which says what is wrong.
func (s *Store) lookupKeys(ops []*submitOp) []*Job {
	firsts := make([]*Job, len(ops))
	keyed := false
	for _, op := range ops {
		keyed = keyed || op.job.IdempotencyKey != ""
	}
	if !keyed {
		return firsts
	}
	_ = s.view(func(tx *bolt.Tx) error {
		for i, op := range ops {
			if op.job.IdempotencyKey == "" {
				continue
			}
			if j, ok, err := keyHolder(tx, op.job); ok && err == nil {
				firsts[i] = &j
			}
		}
		return nil
	})
	return firsts
}

// submitGroup commits ops as one CmdSubmit and hands each its outcome.
func (s *Store) submitGroup(at time.Time, ops []*submitOp) error {
	cmd := CmdSubmit{At: at, Jobs: make([]Job, len(ops))}
	for i, op := range ops {
		cmd.Jobs[i] = op.job
	}
	res, err := s.commits.Commit(context.Background(), []Command{cmd})
	if err != nil {
		return err
	}
	if len(res) != 1 || len(res[0].Submitted) != len(ops) {
		return fmt.Errorf("queue: the log answered %d results for one submission of %d jobs", len(res), len(ops))
	}
	for i, op := range ops {
		sub := res[0].Submitted[i]
		op.res, op.created, op.err = sub.Job, sub.Created, sub.Err
	}
	return nil
}
