package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// syncReport says what a Sync or Reconcile changed.
type syncReport struct {
	At          time.Time // the clock when the cluster state was read
	Started     []string  // job ids that became running
	Finished    []string  // job ids that ended
	Resubmitted []string  // job ids submitted again under their recorded app id
	Requeued    []string  // job ids returned to pending (no application id, or one the cluster refused)
	Rejected    []string  // job ids failed: the cluster refused their resubmission
	Parked      []string  // job ids parked: their application vanished and may have run
}

// Reconcile checks every admitted or running job against the cluster before
// anything new is admitted: an application the cluster knows makes its job
// running or finished; an admitted job whose application the cluster never
// saw is submitted again under the same id (the adapter looks a command
// submission's tag up first), so a crash between recording and submitting
// neither loses the job nor runs it twice. A running job whose application
// vanished is marked failed. First it makes the kinds of every unfinished
// job known to the learner. Reconcile may be retried; once it returns nil
// the engine is ready.
func (e *Engine) Reconcile(ctx context.Context) (syncReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rep syncReport
	if err := e.knowStoredKinds(); err != nil {
		return rep, fmt.Errorf("reconcile: %w", err)
	}
	jobs, err := e.activeJobs()
	if err != nil {
		return rep, err
	}
	for _, j := range jobs {
		if e.held(callRead) {
			return rep, fmt.Errorf("reconcile: %w", heldError(callRead, e.rmBackoff[callRead]))
		}
		st, err := e.cluster.App(ctx, j.AppID)
		if err != nil && !errors.Is(err, cluster.ErrUnknownApp) {
			e.called(callRead, err)
			e.backendError("app", err)
			return rep, fmt.Errorf("reconcile job %s (application %s): %w", j.ID, j.AppID, err)
		}
		e.called(callRead, nil)
		e.backendOK(backendCluster)
		if err := e.applyStatus(ctx, j, st, err, &rep); err != nil {
			return rep, fmt.Errorf("reconcile job %s: %w", j.ID, err)
		}
	}
	e.reconciled = true
	if len(jobs) == 0 {
		// Nothing was asked of the cluster: its first sync says whether
		// it answers.
		e.log.Info("reconciled: no admitted or running job to look up in the cluster")
		return rep, nil
	}
	e.log.Info("reconciled with the cluster", "jobs", len(jobs), "started", len(rep.Started),
		"finished", len(rep.Finished), "resubmitted", len(rep.Resubmitted), "requeued", len(rep.Requeued), "rejected", len(rep.Rejected),
		"parked", len(rep.Parked))
	return rep, nil
}

// Sync polls the cluster: admitted jobs whose application runs become
// running, ended applications finish their jobs, and the per-node presence
// of jobs (for learning) is updated. A finished job kicks admission.
func (e *Engine) Sync(ctx context.Context) (syncReport, error) {
	rep, _, err := e.syncStep(ctx)
	return rep, err
}

// syncStep is Sync for the loop: it also returns the cluster state it
// read, which the admission pass of the same loop step reuses instead of
// reading it again (nil after an error).
func (e *Engine) syncStep(ctx context.Context) (syncReport, *cluster.State, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	rep, st, err := e.syncLocked(ctx)
	if err != nil {
		return rep, nil, err
	}
	return rep, st, nil
}

func (e *Engine) syncLocked(ctx context.Context) (syncReport, *cluster.State, error) {
	var rep syncReport
	if !e.reconciled {
		return rep, nil, ErrNotReady
	}
	rep.At = e.clock.Now()
	if e.held(callRead) {
		return rep, nil, fmt.Errorf("sync: cluster state: %w", heldError(callRead, e.rmBackoff[callRead]))
	}
	st, err := e.cluster.State(ctx)
	e.called(callRead, err)
	if err != nil {
		e.backendError("state", err)
		return rep, nil, fmt.Errorf("sync: cluster state: %w", err)
	}
	e.backendOK(backendCluster)
	jobs, err := e.activeJobs()
	if err != nil {
		return rep, nil, err
	}
	byApp := e.claim(&st, jobs)
	e.remember(st, rep.At)
	running := map[string]bool{} // job ids whose application holds resources
	for _, j := range byApp {
		running[j.ID] = true
	}
	pending := e.pendingApps(ctx, jobs, running)
	for _, j := range jobs {
		if running[j.ID] {
			e.jobSettled(j.ID) // the cluster runs its application
			if j.State == queue.StateAdmitted {
				js, err := e.store.Start(j.ID)
				if err != nil {
					return rep, nil, fmt.Errorf("sync: start job %s: %w", j.ID, err)
				}
				e.logStarted(js)
				rep.Started = append(rep.Started, j.ID)
			}
			continue
		}
		if e.jobHeld(j.ID) {
			continue // checked again once its own backoff ends
		}
		s, ok := pending[j.AppID]
		var err error
		if !ok {
			s, err = e.cluster.App(ctx, j.AppID)
		}
		if err != nil && !errors.Is(err, cluster.ErrUnknownApp) {
			e.jobFailed(j.ID, err)
			e.backendError("app", err)
			e.jobLog(j).Warn("sync: application status unavailable", "err", err)
			continue
		}
		if err == nil {
			e.jobSettled(j.ID) // the cluster knows its application
		}
		e.backendOK(backendCluster)
		if err := e.applyStatus(ctx, j, s, err, &rep); err != nil {
			return rep, nil, fmt.Errorf("sync job %s: %w", j.ID, err)
		}
	}
	e.pruneJobBackoff(stillActive(jobs, rep))
	e.observe(st, byApp, rep.At)
	if len(rep.Finished) > 0 || len(rep.Requeued) > 0 || len(rep.Rejected) > 0 {
		e.Kick()
	}
	return rep, &st, nil
}

// pendingApps is, when the cluster reads them in one call (pendingApps),
// the waiting applications among those of jobs that are not running and
// not held; nil otherwise, or when the call fails (each is then read on
// its own).
func (e *Engine) pendingApps(ctx context.Context, jobs []queue.Job, running map[string]bool) map[string]cluster.AppStatus {
	pa, ok := e.cluster.(pendingApps)
	if !ok {
		return nil
	}
	var ids []string
	for _, j := range jobs {
		if !running[j.ID] && !e.jobHeld(j.ID) && j.AppID != "" {
			ids = append(ids, j.AppID)
		}
	}
	if len(ids) < 2 { // one is as cheap read on its own
		return nil
	}
	out, err := pa.PendingApps(ctx, ids)
	if err != nil {
		e.log.Debug("sync: waiting applications unread in one call; reading each", "err", err)
		return nil
	}
	return out
}

// applyStatus moves job j according to what the cluster said about its
// application (appErr is nil or wraps cluster.ErrUnknownApp).
func (e *Engine) applyStatus(ctx context.Context, j queue.Job, s cluster.AppStatus, appErr error, rep *syncReport) error {
	if appErr != nil { // the cluster does not know it (now)
		return e.unknownApp(ctx, j, rep)
	}
	if !e.owns(j, s.User) {
		return e.parkTaken(j, s, rep)
	}
	switch {
	case s.Phase == cluster.PhaseRunning && j.State == queue.StateAdmitted:
		js, err := e.store.Start(j.ID)
		if err != nil {
			return err
		}
		e.logStarted(js)
		rep.Started = append(rep.Started, j.ID)
	case s.Phase.Terminal():
		final := finalStates[s.Phase]
		jf, err := e.store.Finish(j.ID, final, s.Diagnostics)
		if err != nil {
			return err
		}
		e.finishRuntime(jf)
		e.logFinished(jf, "outcome_from", "the cluster")
		rep.Finished = append(rep.Finished, j.ID)
	}
	return nil
}

// unknownApp decides what to do with job j, whose application the cluster
// does not know: submit it again only when the cluster proves it never ran
// (forgetful); take the history's word when it has one; park it otherwise.
// A cluster that never forgets knows every application it was given, so
// there an admitted job's unknown application was never submitted.
func (e *Engine) unknownApp(ctx context.Context, j queue.Job, rep *syncReport) error {
	log := e.jobLog(j)
	v := cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: "the cluster never saw a submission"}
	if j.State == queue.StateRunning {
		// It was seen running: it ran, and a cluster that never forgets
		// cannot lose it.
		v = cluster.Verdict{Outcome: cluster.OutcomeUnprovable, Reason: "the job was running and its application vanished from the cluster"}
	}
	if f, ok := e.cluster.(forgetful); ok && j.AppID != "" {
		var recorded time.Time
		if j.AdmittedAt != nil {
			recorded = *j.AdmittedAt
		}
		got, err := f.Forgotten(ctx, j.AppID, recorded)
		if err != nil {
			e.jobFailed(j.ID, err)
			e.backendError("app", err)
			log.Warn("application unknown to the cluster and nothing can be proven now; will check again", "err", err)
			return nil
		}
		v = got
		if j.State == queue.StateRunning && v.Outcome != cluster.OutcomeRan {
			v.Outcome = cluster.OutcomeUnprovable // it was seen running: it did run
			v.Reason = "the job was running and the cluster forgot its application: " + v.Reason
		}
	}
	switch v.Outcome {
	case cluster.OutcomeRan:
		if !e.owns(j, v.Status.User) {
			return e.parkTaken(j, v.Status, rep)
		}
		if !v.Status.Phase.Terminal() {
			return e.park(j, "the application history says "+string(v.Status.Phase)+" but the cluster does not know the application: "+v.Reason, rep)
		}
		final := finalStates[v.Status.Phase]
		diag := v.Status.Diagnostics
		if diag == "" {
			diag = "outcome from the application history: " + v.Reason
		}
		jf, err := e.store.Finish(j.ID, final, diag)
		if err != nil {
			return err
		}
		e.finishRuntime(jf)
		e.logFinished(jf, "outcome_from", "the application history (the cluster forgot the application)")
		rep.Finished = append(rep.Finished, j.ID)
		return nil
	case cluster.OutcomeNeverRan:
		return e.resubmit(ctx, j, rep)
	case cluster.OutcomeNeverRanStaleID:
		if e.fence != nil && !e.fence.Reassignable(j.AdmitEpoch) {
			log.Info("not requeued yet: an earlier leader may still be submitting it under its application id; checking again later",
				"app", j.AppID, "admit_epoch", j.AdmitEpoch)
			return nil
		}
		if _, err := e.store.Requeue(j.ID, "never submitted, and its application id is gone with the RM that issued it: "+v.Reason); err != nil {
			return err
		}
		log.Warn("job requeued: its application id is from an RM that is gone; proven never submitted", "state", queue.StatePending, "reason", v.Reason)
		rep.Requeued = append(rep.Requeued, j.ID)
		return nil
	default:
		return e.park(j, v.Reason, rep)
	}
}

// park takes job j out of the loop for an operator to resolve.
func (e *Engine) park(j queue.Job, reason string, rep *syncReport) error {
	if _, err := e.store.Park(j.ID, reason); err != nil {
		return err
	}
	e.jobLog(j).Error("job parked: its application is unknown to the cluster and it may have run; resolve it with `colocd jobs resolve`",
		"state", queue.StateParked, "reason", reason)
	rep.Parked = append(rep.Parked, j.ID)
	return nil
}

// parkTaken parks job j, whose recorded application id the cluster knows
// as another user's application (s): another user submitted under the id
// colocd reserved, so the RM took colocd's submission for a repeat and
// never ran it, or the cluster's owner rule is wrong (appOwners). Either
// way nothing proves what ran: an operator resolves it, and a requeue
// runs it under a new id. Requeueing on its own could run the job again
// and again were the rule wrong.
func (e *Engine) parkTaken(j queue.Job, s cluster.AppStatus, rep *syncReport) error {
	reason := fmt.Sprintf("application %s, under the id colocd recorded for this job, belongs to %s, not to %s: "+
		"another user's application took the id, so this job's was not run under it (or, if the RM names colocd's own applications %s, "+
		"colocd expects the wrong user: see yarn.app_user and `colocd yarn info`)", s.ID, s.User, strings.Join(e.owners(j), " or "), s.User)
	if _, err := e.store.Park(j.ID, reason); err != nil {
		return err
	}
	e.jobLog(j).Error("job parked: another user's application holds its application id; resolve it with `colocd resolve`",
		"state", queue.StateParked, "app", s.ID, "app_user", s.User, "reason", reason)
	rep.Parked = append(rep.Parked, j.ID)
	return nil
}

// resubmit submits admitted job j again under its recorded application id.
func (e *Engine) resubmit(ctx context.Context, j queue.Job, rep *syncReport) error {
	log := e.jobLog(j)
	if j.AppID == "" {
		if _, err := e.store.Requeue(j.ID, "admitted without an application id"); err != nil {
			return err
		}
		log.Warn("job requeued: admitted without an application id", "state", queue.StatePending)
		rep.Requeued = append(rep.Requeued, j.ID)
		return nil
	}
	err := e.act(ctx, func(ctx context.Context) error { return e.cluster.Submit(ctx, j.AppID, j) })
	if errors.Is(err, errFenced) {
		log.Warn("not resubmitted: this replica may no longer lead", "err", err)
		return nil
	}
	if err == nil || errors.Is(err, cluster.ErrRejected) || errors.Is(err, cluster.ErrStaleAppID) {
		// The cluster answered: submissions work (this job's failures
		// were its own, and count against it alone).
		e.called(callSubmit, nil)
		e.jobSettled(j.ID)
		e.backendOK(backendCluster)
	}
	switch {
	case err == nil:
		log.Info("resubmitted under the recorded application id")
		rep.Resubmitted = append(rep.Resubmitted, j.ID)
		if s, err := e.cluster.App(ctx, j.AppID); err == nil && s.Phase == cluster.PhaseRunning && e.owns(j, s.User) {
			js, err := e.store.Start(j.ID)
			if err != nil {
				return err
			}
			e.logStarted(js)
			rep.Started = append(rep.Started, j.ID)
		}
	case errors.Is(err, cluster.ErrRejected):
		if err2 := e.failRejected(j, err); err2 != nil {
			return err2
		}
		rep.Rejected = append(rep.Rejected, j.ID)
	case errors.Is(err, cluster.ErrStaleAppID):
		if _, err2 := e.store.Requeue(j.ID, err.Error()); err2 != nil {
			return err2
		}
		log.Warn("job requeued: the cluster refused its recorded application id", "state", queue.StatePending, "err", err)
		rep.Requeued = append(rep.Requeued, j.ID)
	default:
		e.jobFailed(j.ID, err)
		e.backendError("submit", err)
		log.Warn("resubmission outcome unknown; will check again once its backoff ends", "err", err)
	}
	return nil
}

// claim gives each application of st the job it runs: the active job
// (jobs) whose recorded application id is the application's id, or its
// Reservation (a command submission's token, which the adapter proved),
// when the application's user is one the cluster expects for that job
// (owns). Every other application is another tenant's: its JobID and Kind
// are cleared, whatever its tags say (any user can tag an application
// colocd-job-<id>). It returns the claimed jobs by application id.
func (e *Engine) claim(st *cluster.State, jobs []queue.Job) map[string]queue.Job {
	recorded := make(map[string]queue.Job, len(jobs))
	for _, j := range jobs {
		if j.AppID != "" {
			recorded[j.AppID] = j
		}
	}
	byApp := make(map[string]queue.Job, len(jobs))
	claimed := make(map[string]bool, len(jobs)) // job ids: one application per job
	for i := range st.Apps {
		a := &st.Apps[i]
		j, ok := recorded[a.ID]
		if !ok && a.Reservation != "" {
			j, ok = recorded[a.Reservation]
		}
		if !ok || claimed[j.ID] || !e.owns(j, a.User) {
			a.JobID, a.Kind = "", ""
			continue
		}
		claimed[j.ID] = true
		a.JobID, a.Kind = j.ID, j.Kind
		byApp[a.ID] = j
	}
	return byApp
}

// claimState claims st's applications (claim) for the admitted and
// running jobs.
func (e *Engine) claimState(st *cluster.State) error {
	jobs, err := e.activeJobs()
	if err != nil {
		return err
	}
	e.claim(st, jobs)
	return nil
}

// owners is who may own job j's application (appOwners); nil: anyone.
func (e *Engine) owners(j queue.Job) []string {
	if o, ok := e.cluster.(appOwners); ok {
		return o.AppOwners(j)
	}
	return nil
}

// owns reports whether an application of user may be job j's: the cluster
// did not say whose it is, or expects no one in particular, or user is one
// it expects.
func (e *Engine) owns(j queue.Job, user string) bool {
	if user == "" {
		return true
	}
	owners := e.owners(j)
	return len(owners) == 0 || slices.Contains(owners, user)
}

// stillActive is the set of the jobs (of jobs, admitted or running) that
// are still admitted or running after a sync that reported rep.
func stillActive(jobs []queue.Job, rep syncReport) map[string]bool {
	out := make(map[string]bool, len(jobs))
	for _, j := range jobs {
		out[j.ID] = true
	}
	for _, ids := range [][]string{rep.Finished, rep.Requeued, rep.Rejected, rep.Parked} {
		for _, id := range ids {
			delete(out, id)
		}
	}
	return out
}

// activeJobs lists admitted and running jobs.
func (e *Engine) activeJobs() ([]queue.Job, error) {
	var out []queue.Job
	for _, s := range []queue.State{queue.StateAdmitted, queue.StateRunning} {
		js, err := e.store.List(s, 0)
		if err != nil {
			return nil, fmt.Errorf("list %s jobs: %w", s, err)
		}
		out = append(out, js...)
	}
	return out, nil
}

// observe updates which jobs are present on which node at time now. A
// presence this observation saw carries its number (e.observed), so
// those it did not see are found without a set of what it saw.
func (e *Engine) observe(st cluster.State, byApp map[string]queue.Job, now time.Time) {
	e.observed++
	apps := make(map[string]*cluster.App, len(st.Apps))
	for i := range st.Apps {
		apps[st.Apps[i].ID] = &st.Apps[i]
	}
	e.nodes = e.nodes[:0]
	clear(e.nodeSize)
	for _, n := range st.Nodes {
		e.nodes = append(e.nodes, n.Name)
		if sz := e.sizes.size(n.Name, n.Capacity.VCores); sz != (profile.Vector{}) {
			if e.nodeSize == nil {
				e.nodeSize = map[string]profile.Vector{}
			}
			e.nodeSize[n.Name] = sz
		}
		for _, appID := range n.Apps {
			j, ok := byApp[appID]
			if !ok {
				continue
			}
			m := e.presence[n.Name]
			if m == nil {
				m = map[string]*presence{}
				e.presence[n.Name] = m
			}
			p := m[j.ID]
			if p == nil || !p.goneAt.IsZero() {
				p = &presence{kind: j.Kind, seq: j.Seq, since: now}
				if j.AdmittedAt != nil {
					p.admitted = *j.AdmittedAt
				}
				m[j.ID] = p
			}
			p.lastSeen, p.seen, p.app = now, e.observed, appID
			p.containers = 1
			if a, ok := apps[appID]; ok {
				p.containers = max(a.ContainersOn(n.Name), 1)
			}
		}
	}
	for _, m := range e.presence {
		for _, p := range m {
			if p.goneAt.IsZero() && p.seen != e.observed {
				p.goneAt = now
			}
		}
	}
}

// prune forgets presences that ended before t.
func (e *Engine) prune(t time.Time) {
	for node, m := range e.presence {
		for id, p := range m {
			if !p.goneAt.IsZero() && p.goneAt.Before(t) {
				delete(m, id)
			}
		}
		if len(m) == 0 {
			delete(e.presence, node)
		}
	}
}

// colocation is a node whose kinds were present for a whole interval.
type colocation struct {
	node  string
	kinds []string // ordered by admission: earliest first
	// foreign are the kinds among kinds of other tenants' applications
	// (placement read from samples only); nil when none.
	foreign map[string]bool
}

// admission orders the kinds of a co-location, earliest admitted first:
// a job's admission time and sequence, or an application id's cluster
// timestamp and sequence (appOrder).
type admission struct {
	at  time.Time
	seq uint64
}

func (a admission) before(b admission) bool {
	if !a.at.Equal(b.at) {
		return a.at.Before(b.at)
	}
	return a.seq < b.seq
}

// stay is one job's (or application's) time on a node within a learning
// window, as the co-location rule and the compositions read it.
type stay struct {
	kind    string
	id      string // job or application id: sums run in its order
	order   admission
	whole   bool // present over the whole window
	foreign bool // another tenant's application
	// start and end bound its time in the window, containers its mean
	// containers there (read by stayCompositions).
	start, end time.Time
	containers float64
}

// colocations lists the nodes that had containers of between 2 and
// maxKinds distinct kinds for the whole of [from, to], and of no other kind
// at any time in it; and, as the kind's own pair [k, k], the nodes that had
// two or more jobs of one kind k, each for the whole interval, and no other
// job (the paper's §5.3 scores nodes running "two distinct jobs"). Here
// the stays are the presences the syncs recorded (colocationOf says the
// rule).
func (e *Engine) colocations(from, to time.Time) []colocation {
	var out []colocation
	var ss []stay // one node's, reused
	for node, m := range e.presence {
		ss = ss[:0]
		for id, p := range m {
			overlaps := p.since.Before(to) && (p.goneAt.IsZero() || p.goneAt.After(from))
			if !overlaps {
				continue
			}
			ss = append(ss, stay{kind: p.kind, id: id, order: admission{p.admitted, p.seq},
				whole: !p.since.After(from) && !p.lastSeen.Before(to)})
		}
		if c, ok := colocationOf(node, ss, e.maxKinds); ok {
			out = append(out, c)
		}
	}
	sort.Slice(out, func(a, b int) bool { return out[a].node < out[b].node })
	return out
}

// colocationOf applies the co-location rule to the stays of one node that
// overlap a window: between 2 and maxKinds distinct kinds, each with a
// stay over the whole window, ordered by their earliest admission (then
// name); or one kind k with two or more stays, all over the whole window,
// as [k, k].
func colocationOf(node string, ss []stay, maxKinds int) (colocation, bool) {
	// A node holds a few kinds: a slice searched in order, not maps.
	type kindStays struct {
		kind  string
		first admission // its earliest stay's
		whole bool      // one of its stays covers the window
	}
	var buf [4]kindStays
	all := buf[:0]
	var foreign map[string]bool
	wholeJobs := 0
	for _, s := range ss {
		i := slices.IndexFunc(all, func(k kindStays) bool { return k.kind == s.kind })
		if i < 0 {
			all = append(all, kindStays{kind: s.kind, first: s.order})
			i = len(all) - 1
		} else if s.order.before(all[i].first) {
			all[i].first = s.order
		}
		if s.whole {
			all[i].whole = true
			wholeJobs++
		}
		if s.foreign {
			if foreign == nil {
				foreign = map[string]bool{}
			}
			foreign[s.kind] = true
		}
	}
	if len(all) == 1 && len(ss) >= 2 && wholeJobs == len(ss) {
		// Two or more jobs of one kind (the paper's "two distinct
		// jobs"): the kind's own pair, so that the learner also sees
		// what running beside itself is worth.
		return colocation{node: node, kinds: []string{all[0].kind, all[0].kind}, foreign: foreign}, true
	}
	if len(all) < 2 || len(all) > maxKinds || slices.ContainsFunc(all, func(k kindStays) bool { return !k.whole }) {
		return colocation{}, false
	}
	slices.SortFunc(all, func(a, b kindStays) int {
		switch {
		case a.first.before(b.first):
			return -1
		case b.first.before(a.first):
			return 1
		}
		return strings.Compare(a.kind, b.kind)
	})
	kinds := make([]string, len(all))
	for i, k := range all {
		kinds[i] = k.kind
	}
	return colocation{node: node, kinds: kinds, foreign: foreign}, true
}

// finalStates is the job state of each final application phase.
var finalStates = map[cluster.Phase]queue.State{
	cluster.PhaseSucceeded: queue.StateSucceeded,
	cluster.PhaseFailed:    queue.StateFailed,
	cluster.PhaseKilled:    queue.StateKilled,
}
