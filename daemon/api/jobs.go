package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/queue"
)

// maxWaitScan bounds how many jobs ahead the estimate reads; beyond it the
// mean of the scanned ones stands in for the rest.
const maxWaitScan = 5000

const waitMethod = "sum of EWMA runtimes of the kinds of the jobs ahead (kinds without history: mean EWMA) / jobs admitted or running now"

// redact hides what is private in another user's job from callers other
// than admins: its submit spec (a YARN submission context can carry
// credentials and environment), its idempotency key (a client's retry
// handle, often derived from its own identifiers), its labels and its
// diagnostics (the cluster's and the operators' notes, which may name paths,
// hosts and users). Its owner and admins see the whole job; everyone else
// sees that it exists, its kind, user, queue, resources, state and times,
// which the queue's fairness makes everyone's business. v1.Job's
// Redacted says so.
func (s *server) redact(j queue.Job, p principal) v1.Job {
	if ok, _ := s.jobAccess(j, p); ok {
		return wireJob(j)
	}
	j.Submit, j.IdempotencyKey, j.Labels, j.Diagnostics = nil, "", nil, ""
	v := wireJob(j)
	v.Redacted = true
	return v
}

// jobAccess reports whether p may see all of j and act on it (cancel,
// kill), and the rule that says so: "owner", the admin role's rule
// ("api.acl.admin", or "tokens" for an admin token), or
// "api.job_groups[g]" when p and j's user are both members of a group g
// that api.job_groups names.
func (s *server) jobAccess(j queue.Job, p principal) (bool, string) {
	switch {
	case j.User == p.User:
		return true, "owner"
	case p.Role >= RoleAdmin:
		return true, p.RoleRule
	}
	if len(s.auth.jobGroups) == 0 || len(p.Groups) == 0 || s.auth.groups == nil {
		return false, ""
	}
	owner := s.auth.groups.Groups(j.User)
	for _, g := range s.auth.jobGroups {
		if slices.Contains(p.Groups, g) && slices.Contains(owner, g) {
			return true, "api.job_groups[" + g + "]"
		}
	}
	return false, ""
}

// submitJob: POST /v1/jobs.
func (s *server) submitJob(w http.ResponseWriter, r *http.Request, p principal) error {
	var req v1.JobRequest
	if err := decodeJSON(w, r, s.maxBody, &req); err != nil {
		return err
	}
	// The job's user is the authenticated identity (or whom a proxy rule
	// lets it act for, ?doAs=): never the body's, which is ignored.
	job := queue.Job{
		Kind: req.Kind, User: p.User, Queue: req.Queue, Priority: req.Priority,
		Labels: req.Labels, IdempotencyKey: r.Header.Get("Idempotency-Key"),
	}
	if req.User != "" && req.User != p.User {
		s.log.Info("submission's body user ignored: a job is its authenticated caller's (a proxy acts for another with ?doAs=)",
			"body_user", req.User, "user", p.User, "real_user", p.RealUser)
	}
	if k := job.IdempotencyKey; len(k) > maxIdempotencyKey || strings.ContainsFunc(k, func(c rune) bool { return c < 0x21 || c > 0x7e }) {
		return errorf(http.StatusBadRequest, "Idempotency-Key", "Idempotency-Key must be printable ASCII without spaces, at most %d bytes", maxIdempotencyKey)
	}
	if req.Resources != nil {
		job.Resources = queue.Resources{Containers: req.Resources.Containers, MemoryMB: req.Resources.MemoryMB, VCores: req.Resources.VCores}
	}
	if len(req.Submit) > 0 && !bytes.Equal(bytes.TrimSpace(req.Submit), []byte("null")) {
		job.Submit = req.Submit
	}
	if req.Deadline != nil {
		d, err := time.Parse(time.RFC3339, *req.Deadline)
		if err != nil {
			return errorf(http.StatusBadRequest, "deadline", "deadline %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", *req.Deadline)
		}
		job.Deadline = &d
	}
	if err := s.ctl.Prepare(&job); err != nil {
		return invalidJob(err, "preparing job")
	}
	if err := job.Validate(); err != nil {
		return invalidJob(err, "validating job")
	}
	done, err := s.kinds.reserve(job.Kind)
	if err != nil {
		return err
	}
	stored, created, err := s.store.Submit(r.Context(), job)
	done(err == nil)
	if err != nil || created {
		s.storeWrite("submit", err)
	}
	if err != nil {
		return invalidJob(err, "storing job")
	}
	if !created && !sameRequest(job, stored) {
		e := errorf(http.StatusConflict, "Idempotency-Key", "Idempotency-Key %q was already used for job %s with a different request", job.IdempotencyKey, stored.ID)
		e.Code = v1.CodeIdempotencyConflict
		return e
	}
	if created && p.RealUser != "" {
		s.log.Info("job submitted by a proxy user", "job", stored.ID, "user", p.User, "real_user", p.RealUser, "rule", p.ProxyRule)
	}
	// No position here: Store.Position walks the FIFO (O(position)), too
	// dear on the submit path of a deep queue. GET /v1/jobs/{id} has it.
	v := wireJob(stored)
	w.Header().Set("Location", "/v1/jobs/"+url.PathEscape(stored.ID))
	if !created {
		writeJSON(w, http.StatusOK, v)
		return nil
	}
	s.ctl.Kick()
	writeJSON(w, http.StatusCreated, v)
	return nil
}

// storeWrite reports the outcome of a store write to Deps.Writes.
func (s *server) storeWrite(op string, err error) {
	if s.writes != nil {
		s.writes.StoreWrite(op, err)
	}
}

// invalidJob maps Prepare, Validate and Submit errors: field errors are
// the client's (400 naming the field; 422 when the configuration refuses
// a well-formed value), a closed store is 503, anything else is ours.
func invalidJob(err error, doing string) error {
	var fe *queue.FieldError
	switch {
	case errors.As(err, &fe) && errors.Is(err, queue.ErrRefused):
		return errorf(http.StatusUnprocessableEntity, fe.Field, "refused %s: %s", fe.Field, fe.Reason)
	case errors.As(err, &fe):
		return errorf(http.StatusBadRequest, fe.Field, "invalid %s: %s", fe.Field, fe.Reason)
	case errors.Is(err, queue.ErrInvalid):
		return errorf(http.StatusBadRequest, "", "invalid job: %v", err)
	case errors.Is(err, queue.ErrClosed):
		return errorf(http.StatusServiceUnavailable, "", "store is closed (shutting down)")
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		// The store writes nothing for a submit cancelled before its commit.
		return errorf(http.StatusServiceUnavailable, "", "request ended before the job was stored: %v", err)
	}
	return fmt.Errorf("%s: %w", doing, err)
}

// sameRequest reports whether a repeated idempotent submit asked for the
// same job as the stored one.
func sameRequest(req, stored queue.Job) bool {
	deadlineEq := (req.Deadline == nil) == (stored.Deadline == nil) &&
		(req.Deadline == nil || req.Deadline.Equal(*stored.Deadline))
	return req.Kind == stored.Kind && req.User == stored.User && req.Queue == stored.Queue &&
		req.Priority == stored.Priority && req.Resources == stored.Resources && deadlineEq &&
		maps.Equal(req.Labels, stored.Labels) && jsonEqual(req.Submit, stored.Submit)
}

func jsonEqual(a, b json.RawMessage) bool {
	if len(a) == 0 || len(b) == 0 {
		return len(a) == len(b)
	}
	var ca, cb bytes.Buffer
	if json.Compact(&ca, a) != nil || json.Compact(&cb, b) != nil {
		return bytes.Equal(a, b)
	}
	return bytes.Equal(ca.Bytes(), cb.Bytes())
}

// parseStates parses the state filter: empty = pending, admitted,
// running; "all" = every state; else a comma-separated list.
func parseStates(q string) ([]queue.State, error) {
	switch strings.TrimSpace(strings.ToLower(q)) {
	case "":
		return []queue.State{queue.StatePending, queue.StateAdmitted, queue.StateRunning}, nil
	case "all":
		return slices.Clone(queue.States), nil
	}
	var out []queue.State
	for part := range strings.SplitSeq(q, ",") {
		st, err := queue.ParseState(part)
		if err != nil {
			return nil, errorf(http.StatusBadRequest, "state", "state %q is not one of %v (or all)", part, queue.States)
		}
		if !slices.Contains(out, st) {
			out = append(out, st)
		}
	}
	// Pending first (queue order), then the rest in life-cycle order.
	slices.SortStableFunc(out, func(a, b queue.State) int {
		return slices.Index(queue.States, a) - slices.Index(queue.States, b)
	})
	return out, nil
}

// getJob: GET /v1/jobs/{id} with position and estimated wait when pending.
// The decision that admitted the job is in its "decision" field.
func (s *server) getJob(w http.ResponseWriter, r *http.Request, p principal) error {
	id := r.PathValue("id")
	j, err := s.store.Get(id)
	if err != nil {
		return jobError(err, id)
	}
	v := s.redact(j, p)
	if j.State == queue.StatePending {
		if pos, err := s.store.Position(id); err == nil {
			v.Position = &pos
			if est, err := s.estimateWait(j.Kind, pos); err == nil {
				v.EstimatedWait = est
			} else {
				s.log.Warn("estimating wait", "job", id, "err", err)
			}
		}
	}
	writeJSON(w, http.StatusOK, v)
	return nil
}

func jobError(err error, id string) error {
	switch {
	case errors.Is(err, queue.ErrNotFound):
		return errorf(http.StatusNotFound, "id", "no job %q", id)
	case errors.Is(err, queue.ErrClosed):
		return errorf(http.StatusServiceUnavailable, "", "store is closed (shutting down)")
	}
	return fmt.Errorf("reading job %s: %w", id, err)
}

// waitModel is the documented wait estimate's inputs, read once: the
// kinds' EWMA runtimes and the number of jobs admitted or running.
type waitModel struct {
	hist        map[string]queue.KindHistory
	concurrency int
	known       bool    // some kind has a history
	fallback    float64 // the mean EWMA of the kinds with one, for those without
}

func (s *server) waitModel(counts map[queue.State]int) (waitModel, error) {
	hist, err := s.store.Histories()
	if err != nil {
		return waitModel{}, err
	}
	m := waitModel{hist: hist, concurrency: max(1, counts[queue.StateAdmitted]+counts[queue.StateRunning])}
	var known, sumKnown float64
	for _, h := range hist {
		if h.Runs > 0 {
			known++
			sumKnown += h.EWMARuntime.Seconds()
		}
	}
	if known > 0 {
		m.known, m.fallback = true, sumKnown/known
	}
	return m, nil
}

// runtime is kind's EWMA runtime in seconds; ok false without a history.
func (m waitModel) runtime(kind string) (secs float64, ok bool) {
	if h, found := m.hist[kind]; found && h.Runs > 0 {
		return h.EWMARuntime.Seconds(), true
	}
	return 0, false
}

// waitSum accumulates the expected runtimes of the jobs ahead, in queue
// order.
type waitSum struct {
	total       float64
	n           int // jobs added
	withHistory int // of which with a history
}

func (m waitModel) add(sum *waitSum, kind string) {
	sum.n++
	if rt, ok := m.runtime(kind); ok {
		sum.total += rt
		sum.withHistory++
		return
	}
	sum.total += m.fallback
}

// estimate is the WaitEstimate of a job of kind behind the jobs ahead,
// the first of pos pending jobs (when fewer, the mean of those stands in
// for the rest).
func (m waitModel) estimate(kind string, pos int, ahead []queue.Job) *v1.WaitEstimate {
	var sum waitSum
	for _, j := range ahead {
		m.add(&sum, j.Kind)
	}
	return m.estimateFrom(kind, pos, sum)
}

// estimateFrom is estimate with the jobs ahead summed.
func (m waitModel) estimateFrom(kind string, pos int, sum waitSum) *v1.WaitEstimate {
	est := &v1.WaitEstimate{JobsAhead: pos, Method: waitMethod, Concurrency: m.concurrency}
	if rt, ok := m.runtime(kind); ok {
		est.RuntimeSeconds = &rt
	}
	if !m.known {
		return est
	}
	est.WithHistory = sum.withHistory
	total := sum.total
	if sum.n > 0 && pos > sum.n {
		total *= float64(pos) / float64(sum.n) // the unscanned rest, at the scanned mean
	}
	secs := total / float64(est.Concurrency)
	est.Seconds = &secs
	return est
}

// estimateWait computes the documented v1.WaitEstimate for a job
// of kind at queue position pos.
func (s *server) estimateWait(kind string, pos int) (*v1.WaitEstimate, error) {
	counts, err := s.store.Counts()
	if err != nil {
		return nil, err
	}
	m, err := s.waitModel(counts)
	if err != nil {
		return nil, err
	}
	var ahead []queue.Job
	if m.known && pos > 0 { // Pending(0) would read every pending job
		if ahead, err = s.store.Pending(min(pos, maxWaitScan)); err != nil {
			return nil, err
		}
	}
	return m.estimate(kind, pos, ahead), nil
}

// estimateList is GET /v1/jobs?estimate=1: l's pending jobs, which come
// first from the head of the queue, get their wait estimates in one
// pass; when the listing asked for pending jobs (queued), the queue's is
// that of a job behind every pending one (reading up to maxWaitScan
// pending jobs when l lists fewer than there are). counts are the store's
// jobs by state.
func (s *server) estimateList(l v1.JobList, counts map[queue.State]int, queued bool) (v1.JobListEstimate, error) {
	out := v1.JobListEstimate{JobList: l, KindRuntimes: map[string]float64{}}
	m, err := s.waitModel(counts)
	if err != nil {
		return out, fmt.Errorf("estimating waits: %w", err)
	}
	var listed waitSum // the pending jobs listed so far, from the head
	for i := range out.Jobs {
		j := &out.Jobs[i]
		if rt, ok := m.runtime(j.Kind); ok {
			out.KindRuntimes[j.Kind] = rt
		}
		if j.State != v1.StatePending || j.Position == nil || *j.Position != listed.n {
			continue
		}
		j.EstimatedWait = m.estimateFrom(j.Kind, listed.n, listed)
		m.add(&listed, j.Kind)
	}
	pending := counts[queue.StatePending]
	if pending == 0 || !queued {
		return out, nil
	}
	if listed.n < pending && m.known {
		ahead, err := s.store.Pending(min(pending, maxWaitScan))
		if err != nil {
			return out, fmt.Errorf("estimating the queue's wait: %w", err)
		}
		out.QueueWait = m.estimate("", pending, ahead)
		return out, nil
	}
	out.QueueWait = m.estimateFrom("", pending, listed)
	return out, nil
}

// deleteJob: DELETE /v1/jobs/{id}. A pending job is cancelled; an
// admitted or running one is killed on the cluster. Only its owner or an
// admin may do either. A job that leaves pending between our read and the
// cancel (admitted by the engine meanwhile) gets 409 naming its new state:
// never a silent no-op.
func (s *server) deleteJob(w http.ResponseWriter, r *http.Request, p principal) error {
	id := r.PathValue("id")
	j, err := s.store.Get(id)
	if err != nil {
		return jobError(err, id)
	}
	if ok, _ := s.jobAccess(j, p); !ok {
		rule := "owner"
		if len(s.auth.jobGroups) > 0 {
			rule = "api.job_groups"
		}
		return forbidden(rule, "job %s belongs to user %s; %s (role %s) may cancel only its own jobs, those of a group api.job_groups names (%s), or any as admin",
			id, j.User, p.User, p.Role, listOrNone(s.auth.jobGroups))
	}
	switch {
	case j.State == queue.StatePending:
		if s.beforeCancel != nil {
			s.beforeCancel(id)
		}
		done, err := s.store.Cancel(id)
		s.storeWrite("cancel", err)
		if err == nil {
			s.log.Info("job cancelled", "job", id, "by", p.User, "real_user", p.RealUser)
			writeJSON(w, http.StatusOK, wireJob(done))
			return nil
		}
		if !errors.Is(err, queue.ErrIllegalTransition) {
			return jobError(err, id)
		}
		// Lost the race with the admission engine.
		now, gerr := s.store.Get(id)
		if gerr != nil {
			return jobError(gerr, id)
		}
		if now.State.Terminal() {
			return errorf(http.StatusConflict, "", "job %s is already %s; nothing to cancel", id, now.State)
		}
		return errorf(http.StatusConflict, "", "job %s was %s before it could be cancelled; it was not cancelled: DELETE it again to kill it", id, now.State)
	case j.State.Terminal():
		return errorf(http.StatusConflict, "", "job %s is already %s; nothing to cancel", id, j.State)
	case j.State == queue.StateParked:
		return errorf(http.StatusConflict, "", "job %s is parked (%s): an admin resolves it with POST /v1/jobs/%s/resolve (colocd resolve)", id, j.Diagnostics, id)
	}
	killed, err := s.ctl.Kill(r.Context(), id)
	switch {
	case err == nil:
		s.log.Info("job killed", "job", id, "by", p.User, "real_user", p.RealUser)
		writeJSON(w, http.StatusOK, wireJob(killed))
		return nil
	case errors.Is(err, queue.ErrIllegalTransition):
		now, gerr := s.store.Get(id)
		if gerr != nil {
			return jobError(gerr, id)
		}
		return errorf(http.StatusConflict, "", "job %s could not be killed: it is now %s", id, now.State)
	case errors.Is(err, queue.ErrNotFound):
		return jobError(err, id)
	}
	return errorf(http.StatusBadGateway, "", "killing job %s on the cluster: %v", id, err)
}

// resolveJob: POST /v1/jobs/{id}/resolve (admin). Ends a parked job as
// the operator found it: requeue, or record its final state.
func (s *server) resolveJob(w http.ResponseWriter, r *http.Request, p principal) error {
	id := r.PathValue("id")
	var req v1.ResolveRequest
	if err := decodeJSON(w, r, s.maxBody, &req); err != nil {
		return err
	}
	to := map[string]queue.State{"requeue": queue.StatePending, "succeeded": queue.StateSucceeded,
		"failed": queue.StateFailed, "killed": queue.StateKilled}[req.Outcome]
	if to == "" {
		return errorf(http.StatusBadRequest, "outcome", "outcome must be requeue, succeeded, failed or killed, got %q", req.Outcome)
	}
	if strings.TrimSpace(req.Reason) == "" {
		return errorf(http.StatusBadRequest, "reason", "reason is required: say what you found (it goes to the job's diagnostics)")
	}
	if len(req.Reason) > 1024 {
		return errorf(http.StatusBadRequest, "reason", "reason is %d bytes, at most 1024", len(req.Reason))
	}
	j, err := s.store.Resolve(id, to, fmt.Sprintf("resolved by %s: %s", p.User, req.Reason))
	s.storeWrite("resolve", err)
	switch {
	case err == nil:
	case errors.Is(err, queue.ErrIllegalTransition):
		now, gerr := s.store.Get(id)
		if gerr != nil {
			return jobError(gerr, id)
		}
		return errorf(http.StatusConflict, "", "job %s is %s, not parked: nothing to resolve", id, now.State)
	default:
		return jobError(err, id)
	}
	s.log.Warn("parked job resolved", "job", id, "outcome", req.Outcome, "by", p.User, "reason", req.Reason)
	if to == queue.StatePending {
		s.ctl.Kick()
	}
	writeJSON(w, http.StatusOK, s.redact(j, p))
	return nil
}
