package queue

import (
	"bytes"
	"encoding/json"
	"sync"
	"time"
)

// The proposers of the jobs' commands: each stamps the time, builds its
// command and commits it through the store's Log (command.go). A refused
// command comes back as the error.

// checkDecision validates an admission's decision record.
func checkDecision(decision json.RawMessage) error {
	if len(decision) > maxDecisionBytes {
		return fieldErr("decision", "%d bytes, above %d", len(decision), maxDecisionBytes)
	}
	if len(decision) > 0 && !json.Valid(decision) {
		return fieldErr("decision", "not valid JSON")
	}
	return nil
}

// jobResult turns a command's outcome into a method's answer.
func jobResult(r Result, err error) (Job, error) {
	if err != nil {
		return Job{}, err
	}
	return r.Job, nil
}

// Admit moves a pending job to admitted, stores the RM application id and
// the decision record, adds one skip to every job in passed (the
// decision's Passed list) and one block to every job in blocked (its
// Blocked list) that is still pending — all in one transaction. Ids that
// are unknown, not pending, or id itself are ignored: a job cancelled
// meanwhile is not an error. Record first, then act: call Admit before
// submitting to the cluster, and Requeue if that fails.
func (s *Store) Admit(id, appID string, decision json.RawMessage, passed, blocked []string) (Job, error) {
	if err := checkDecision(decision); err != nil {
		return Job{}, err
	}
	return jobResult(s.commitOne(cmdAdmit{At: s.stamp(), ID: id, AppID: appID, Decision: decision, Passed: passed, Blocked: blocked}))
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
	s.running.forget(id)
	return jobResult(s.commitOne(cmdRequeue{At: s.stamp(), ID: id, Reason: reason}))
}

// Start marks an admitted job running (the cluster reports it started).
// With Options.Elapsed the store notes when on that monotonic clock, so
// that Finish can time the run without a wall-clock step in it.
func (s *Store) Start(id string) (Job, error) {
	j, err := jobResult(s.commitOne(cmdStart{At: s.stamp(), ID: id}))
	if err == nil && s.elapsed != nil {
		s.running.started(id, s.elapsed())
	}
	return j, err
}

// Finish moves an admitted or running job to final (succeeded, failed or
// killed) with diagnostics diag (truncated to 16 KiB). A success adds the
// run to its kind's history: the time since Start on Options.Elapsed
// when this process saw it start, else now − RunningAt (or AdmittedAt
// when it was never seen running); a negative one (the wall clock went
// back) is not added. FinishedAt is never before the time the job
// started.
func (s *Store) Finish(id string, final State, diag string) (Job, error) {
	cmd := cmdFinish{At: s.stamp(), ID: id, Final: final, Diagnostics: diag}
	if t0, ok := s.running.take(id); ok {
		cmd.Runtime, cmd.Measured = s.elapsed()-t0, true
	}
	return jobResult(s.commitOne(cmd))
}

// Cancel moves a pending job to cancelled. Any other state gives a
// *transitionError (a job on the cluster must be killed there, then
// finished as killed).
func (s *Store) Cancel(id string) (Job, error) {
	return jobResult(s.commitOne(cmdCancel{At: s.stamp(), ID: id}))
}

// Compact deletes terminal jobs that finished before before, with their
// index and idempotency entries, and returns how many it deleted. It works
// in commands of at most 1000 deletions; a crash midway leaves a
// consistent file with some of them done. After compaction a retry with the
// same idempotency key creates a new job.
func (s *Store) Compact(before time.Time) (int, error) {
	total := 0
	for _, st := range States {
		if !st.Terminal() {
			continue
		}
		var from []byte
		for {
			r, err := s.commitOne(cmdCompact{At: s.stamp(), Before: before, State: st, From: from})
			total += r.Compacted
			if err != nil {
				return total, err
			}
			if r.Next == nil {
				break
			}
			from = r.Next
		}
	}
	return total, nil
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

// starts is when this process saw each running job start, on
// Options.Elapsed: what Finish times a run by. It is the proposer's
// memory, not the store's state (a restart forgets it, and a replica that
// takes over never had it: Finish then uses the stored times).
type starts struct {
	mu sync.Mutex
	at map[string]time.Duration
}

func (r *starts) started(id string, t time.Duration) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.at == nil {
		r.at = map[string]time.Duration{}
	}
	r.at[id] = t
}

func (r *starts) take(id string) (time.Duration, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	t, ok := r.at[id]
	delete(r.at, id)
	return t, ok
}

func (r *starts) forget(id string) { r.take(id) }
