package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"time"

	bolt "go.etcd.io/bbolt"
)

// move runs one state transition of job id to state to, in one
// transaction: it checks the state machine, lets mut adjust the job, then
// rewrites the job and its index entries. A damaged record is quarantined
// instead (committed) and the move fails with a *QuarantinedError.
func (s *Store) move(id string, to State, mut func(tx *bolt.Tx, j *Job, now time.Time) error) (Job, error) {
	var (
		out  Job
		qerr *QuarantinedError
	)
	err := s.update(func(tx *bolt.Tx) error {
		j, err := getJob(tx, id)
		var re *recordError
		if errors.As(err, &re) {
			now := s.stamp()
			if _, err := quarantineTx(tx, re, now, s.log); err != nil {
				return err
			}
			qerr = &QuarantinedError{ID: id, Reason: re.reason, At: now}
			return nil
		}
		if err != nil {
			return err
		}
		from := j.State
		if !CanTransition(from, to) {
			return &TransitionError{ID: id, From: from, To: to}
		}
		j.State = to
		if mut != nil {
			if err := mut(tx, &j, s.stamp()); err != nil {
				return err
			}
		}
		if err := putJob(tx, &j); err != nil {
			return err
		}
		if err := index(tx, &j, from); err != nil {
			return err
		}
		out = j
		return nil
	})
	switch {
	case err != nil:
		return Job{}, err
	case qerr != nil:
		return Job{}, qerr
	}
	return out, nil
}

// Admit moves a pending job to admitted, stores the RM application id and
// the decision record, adds one skip to every job in passed (the
// decision's Passed list) and one block to every job in blocked (its
// Blocked list) that is still pending — all in one transaction. Ids that
// are unknown, not pending, or id itself are ignored: a job cancelled
// meanwhile is not an error. Record first, then act: call Admit before
// submitting to the cluster, and Requeue if that fails.
func (s *Store) Admit(id, appID string, decision json.RawMessage, passed, blocked []string) (Job, error) {
	if len(decision) > MaxDecisionBytes {
		return Job{}, fieldErr("decision", "%d bytes, above %d", len(decision), MaxDecisionBytes)
	}
	if len(decision) > 0 && !json.Valid(decision) {
		return Job{}, fieldErr("decision", "not valid JSON")
	}
	return s.move(id, StateAdmitted, func(tx *bolt.Tx, j *Job, now time.Time) error {
		j.AppID = appID
		j.AdmittedAt = &now
		j.Decision = compactJSON(decision)
		seen := map[string]bool{id: true}
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
	})
}

func compactJSON(b json.RawMessage) json.RawMessage {
	if len(b) == 0 {
		return nil
	}
	var buf bytes.Buffer
	if json.Compact(&buf, b) != nil {
		return cloneBytes(b)
	}
	return buf.Bytes()
}

// Requeue rolls an admitted job back to pending (the submit to the cluster
// failed): it keeps its original place in the FIFO, clears AppID, AdmittedAt
// and Decision, counts the requeue and records reason in Diagnostics.
func (s *Store) Requeue(id, reason string) (Job, error) {
	return s.move(id, StatePending, func(_ *bolt.Tx, j *Job, _ time.Time) error {
		j.AppID, j.AdmittedAt, j.Decision = "", nil, nil
		j.Requeues++
		j.Diagnostics = truncate(reason, MaxDiagnosticsBytes)
		return nil
	})
}

// Start marks an admitted job running (the cluster reports it started).
func (s *Store) Start(id string) (Job, error) {
	return s.move(id, StateRunning, func(_ *bolt.Tx, j *Job, now time.Time) error {
		j.RunningAt = &now
		return nil
	})
}

// Finish moves an admitted or running job to final (succeeded, failed or
// killed) with diagnostics diag (truncated to 16 KiB). A success adds the
// run to its kind's history: runtime = now − RunningAt (or AdmittedAt when
// it was never seen running).
func (s *Store) Finish(id string, final State, diag string) (Job, error) {
	switch final {
	case StateSucceeded, StateFailed, StateKilled:
	default:
		return Job{}, fieldErr("final", "%q is not succeeded, failed or killed", final)
	}
	return s.move(id, final, func(tx *bolt.Tx, j *Job, now time.Time) error {
		j.FinishedAt = &now
		j.Diagnostics = truncate(diag, MaxDiagnosticsBytes)
		if final != StateSucceeded {
			return nil
		}
		start := j.RunningAt
		if start == nil {
			start = j.AdmittedAt
		}
		if start == nil {
			return nil
		}
		rt := now.Sub(*start)
		if rt < 0 {
			s.log.Warn("queue: negative runtime not added to history (clock went back)", "job", j.ID, "kind", j.Kind, "runtime", rt)
			return nil
		}
		return s.addHistory(tx, j.Kind, rt, now)
	})
}

// addHistory folds one runtime into kind's history. A damaged history is
// quarantined and the kind starts over, so a job can still finish.
func (s *Store) addHistory(tx *bolt.Tx, kind string, rt time.Duration, now time.Time) error {
	b := tx.Bucket(bucketKinds)
	h := KindHistory{Kind: kind}
	if v := b.Get([]byte(kind)); v != nil {
		old, err := decodeHistory([]byte(kind), v)
		var re *recordError
		switch {
		case errors.As(err, &re):
			if _, err := quarantineTx(tx, re, now, s.log); err != nil {
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

// Cancel moves a pending job to cancelled. Any other state gives a
// *TransitionError (a job on the cluster must be killed there, then
// finished as killed).
func (s *Store) Cancel(id string) (Job, error) {
	return s.move(id, StateCancelled, func(_ *bolt.Tx, j *Job, now time.Time) error {
		j.FinishedAt = &now
		return nil
	})
}

// compactChunk bounds the deletions of one Compact transaction, so a large
// clean-up never holds the write lock for long.
const compactChunk = 1000

// Compact deletes terminal jobs that finished before before, with their
// index and idempotency entries, and returns how many it deleted. It works
// in transactions of at most 1000 deletions; a crash midway leaves a
// consistent file with some of them done. After compaction a retry with the
// same idempotency key creates a new job.
func (s *Store) Compact(before time.Time) (int, error) {
	total := 0
	for _, st := range States {
		if !st.Terminal() {
			continue
		}
		prefix := append([]byte(st), 0)
		resume := prefix
		for {
			n, next, err := s.compactStep(prefix, resume, before)
			total += n
			if err != nil {
				return total, err
			}
			if next == nil {
				break
			}
			resume = next
		}
	}
	return total, nil
}

// compactStep scans state-index keys from resume (within prefix) and deletes
// up to compactChunk old jobs. next is where to go on, nil when done.
func (s *Store) compactStep(prefix, resume []byte, before time.Time) (n int, next []byte, err error) {
	err = s.update(func(tx *bolt.Tx) error {
		next = nil
		var (
			doomed  []Job
			damaged []*recordError
		)
		c := tx.Bucket(bucketStates).Cursor()
		for k, v := c.Seek(resume); k != nil && bytes.HasPrefix(k, prefix); k, v = c.Next() {
			if len(doomed)+len(damaged) == compactChunk {
				next = cloneBytes(k)
				break
			}
			j, err := getJob(tx, string(v))
			var re *recordError
			if errors.As(err, &re) {
				damaged = append(damaged, re) // quarantined below, not deleted: ops decide
				continue
			}
			if err != nil {
				return err
			}
			if j.FinishedAt != nil && j.FinishedAt.Before(before) {
				doomed = append(doomed, j)
			}
		}
		for _, re := range damaged {
			if _, err := quarantineTx(tx, re, s.stamp(), s.log); err != nil {
				return err
			}
		}
		for i := range doomed {
			j := &doomed[i]
			from := j.State
			j.State = ""
			if err := index(tx, j, from); err != nil {
				return err
			}
			if err := tx.Bucket(bucketJobs).Delete([]byte(j.ID)); err != nil {
				return err
			}
			if j.IdempotencyKey != "" {
				k := idemKey(j.User, j.IdempotencyKey)
				if bytes.Equal(tx.Bucket(bucketIdem).Get(k), []byte(j.ID)) {
					if err := tx.Bucket(bucketIdem).Delete(k); err != nil {
						return err
					}
				}
			}
		}
		n = len(doomed)
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	return n, next, nil
}

// truncate cuts s to at most max bytes on a rune boundary, marking the cut.
func truncate(s string, max int) string {
	if len(s) <= max {
		return s
	}
	const mark = "…(truncated)"
	cut := max - len(mark)
	for cut > 0 && cut < len(s) && s[cut]&0xC0 == 0x80 {
		cut--
	}
	return s[:cut] + mark
}
