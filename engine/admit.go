package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// admitReport says what one AdmitPass did.
type admitReport struct {
	Admitted  []string // job ids admitted and submitted (or left for Reconcile)
	Rejected  []string // job ids failed because the cluster refused their submission
	Requeued  []string // job ids queued again: the cluster refused their application id
	Ambiguous []string // job ids whose submission outcome is unknown (left admitted)
	// Stopped says why the pass ended: "empty", "nothing fits", "max_running",
	// "stale id", "ambiguous", "backoff" (submissions wait out a backoff
	// after failures), "context".
	Stopped string
}

// AdmitPass admits jobs while the pipeline yields one that fits and
// admission.max_running allows. Each admission is recorded first and acted
// on second: reserve an application id, store.Admit (the job, its app id
// and the decision in one transaction), then submit. A definite rejection
// fails the job with the cluster's reason and the pass goes on; an
// ambiguous failure (a timeout) leaves it admitted for
// Sync/Reconcile to check under the same id, once its own backoff ends,
// and holds further admissions until the submissions' backoff ends
// (backoff.go). In shadow mode the learned choice is computed and
// journaled, but the FIFO choice is admitted.
//
// The pass reads the cluster's state once, not once per job (passView):
// each admitted job then joins the pass's picture of the cluster as the
// cluster will hold it, so the next decision of the pass sees it.
func (e *Engine) AdmitPass(ctx context.Context) (admitReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.admitPass(ctx, nil)
}

// admitStep is AdmitPass for the loop: synced is the cluster state the
// step's Sync read a moment ago (nil when it read none). Between the two,
// only the learning tick, retention and the checkpoint ran, none of which
// changes the cluster; a job the API killed in between still holds its
// room in the pass's picture (the kill kicks another step).
func (e *Engine) admitStep(ctx context.Context, synced *cluster.State) (admitReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.admitPass(ctx, synced)
}

func (e *Engine) admitPass(ctx context.Context, synced *cluster.State) (admitReport, error) {
	var rep admitReport
	if !e.reconciled {
		return rep, ErrNotReady
	}
	e.journalSpace()
	v := &passView{st: synced}
	defer e.passShares(ctx, v)
	defer e.persistFairness()
	for {
		if ctx.Err() != nil {
			rep.Stopped = "context"
			return rep, nil
		}
		done, err := e.admitOne(ctx, &rep, v)
		if err != nil || done {
			return rep, err
		}
	}
}

// passShares brings the dominant-share gauges up to date at the end of a
// pass: from the pass's picture of the cluster when it has one (the jobs
// it admitted included, as the pipeline saw them), else — so that a user
// whose jobs ended loses the gauge even when no decision follows — from
// a fresh read, made only while some user has a gauge.
func (e *Engine) passShares(ctx context.Context, v *passView) {
	if e.mx == nil {
		return
	}
	if v.st != nil {
		e.dominantShares(*v.st)
		return
	}
	if len(e.shareUsers) == 0 || ctx.Err() != nil || e.held(callRead) {
		return
	}
	st, err := e.cluster.State(ctx)
	e.called(callRead, err)
	if err != nil {
		e.backendError("state", err)
		e.log.Debug("dominant shares: cluster state unavailable", "err", err)
		return
	}
	e.backendOK(backendCluster)
	if err := e.claimState(&st); err != nil {
		e.log.Debug("dominant shares: active jobs unavailable", "err", err)
		return
	}
	e.remember(st, e.clock.Now())
	e.dominantShares(st)
}

// admitOne admits at most one job; done reports that the pass should end.
func (e *Engine) admitOne(ctx context.Context, rep *admitReport, v *passView) (done bool, err error) {
	counts, err := e.store.Counts()
	if err != nil {
		return true, fmt.Errorf("admit: count jobs: %w", err)
	}
	if counts[queue.StatePending] == 0 {
		rep.Stopped = "empty"
		return true, nil
	}
	if e.maxRunning > 0 && counts[queue.StateAdmitted]+counts[queue.StateRunning] >= e.maxRunning {
		rep.Stopped = "max_running"
		return true, nil
	}
	if e.held(callSubmit) {
		rep.Stopped = "backoff"
		return true, nil
	}
	if err := e.openView(ctx, v); err != nil {
		return true, err
	}
	snap, err := e.snapshot(v)
	if err != nil {
		return true, err
	}
	t0 := e.wall()
	learned := e.pipeline.Decide(snap, e.rng)
	took := e.wall().Sub(t0)
	e.fairDirty = true
	rec := journal.DecisionRecord{Decision: learned}
	admit := learned
	if e.mode == ModeShadow {
		admit = e.fifo.Decide(snap, e.rng)
		rec.Shadow = true
		rec.FIFOChoice = admit.Chosen
	}
	if e.mx != nil {
		e.mx.ObserveDecision(took)
	}
	if admit.Chosen == "" {
		rep.Stopped = "nothing fits"
		return true, nil
	}
	log := e.log.With("job", admit.Chosen, "kind", admit.ChosenKind)

	appID, err := e.cluster.Reserve(ctx)
	if err != nil {
		e.called(callSubmit, err) // a success proves nothing yet: the submission tells
		e.backendError("reserve", err)
		return true, fmt.Errorf("admit job %s: reserve application: %w", admit.Chosen, err)
	}
	e.backendOK(backendCluster)
	rec.AppID = appID
	decJSON, err := json.Marshal(rec)
	if err != nil {
		return true, fmt.Errorf("admit job %s: encode decision: %w", admit.Chosen, err)
	}
	// Record first: from here on a crash leaves the job admitted under
	// appID, and Reconcile asks the cluster about appID before anything else.
	job, err := e.store.Admit(admit.Chosen, appID, decJSON, admit.Passed, admit.Blocked)
	e.StoreWrite("admit", err)
	if err != nil {
		return true, fmt.Errorf("admit job %s: record: %w", admit.Chosen, err)
	}
	if e.journal != nil {
		e.journalWrote(e.journal.AddDecision(rec))
	}
	// Then act.
	err = e.act(ctx, func(ctx context.Context) error { return e.cluster.Submit(ctx, appID, job) })
	return e.submitted(rep, v, job, appID, err, admit, learned, rec.Shadow, log)
}

// submitted acts on the outcome err of submitting job as appID, decided by
// admit (learned: the learned policy's decision): the job joins the pass's
// view, fails (a refusal), goes back to the queue (a refused id) or is
// left admitted for Sync (an unknown outcome). done reports that the pass
// should end.
func (e *Engine) submitted(rep *admitReport, v *passView, job queue.Job, appID string, err error,
	admit, learned pipeline.Decision, shadow bool, log *slog.Logger) (done bool, _ error) {
	switch {
	case err == nil:
		e.called(callSubmit, nil)
		v.arrive(job, appID)
		rep.Admitted = append(rep.Admitted, job.ID)
		e.backendOK(backendCluster)
		if e.mx != nil {
			e.mx.Admitted(e.clock.Now().Sub(job.CreatedAt), forcedBy(admit), job.Queue, job.Kind)
		}
		log.Info("job admitted", "app", appID, "state", queue.StateAdmitted, "forced", learned.Forced, "shadow", shadow,
			"learned_choice", learned.Chosen, "passed", len(admit.Passed))
		return false, nil
	case errors.Is(err, cluster.ErrRejected):
		// A definite refusal (a malformed spec, a user the proxy-user
		// rules refuse, a queue that does not exist): the same submission
		// would fail again, so the job fails with the cluster's reason and
		// the pass goes on. Requeueing it stalled the queue behind it.
		e.called(callSubmit, nil)
		e.backendOK(backendCluster) // it answered: a refusal, not an outage
		if e.mx != nil {
			e.mx.AdmissionFailed()
		}
		if err2 := e.failRejected(job, err); err2 != nil {
			return true, fmt.Errorf("admit job %s: %w", job.ID, err2)
		}
		rep.Rejected = append(rep.Rejected, job.ID)
		return false, nil
	case errors.Is(err, errFenced):
		log.Warn("not submitted: this replica may no longer lead; left admitted for the leader to reconcile", "app", appID, "err", err)
		rep.Ambiguous = append(rep.Ambiguous, job.ID)
		rep.Stopped = "fenced"
		return true, nil
	case errors.Is(err, cluster.ErrStaleAppID):
		e.called(callSubmit, nil)
		e.backendOK(backendCluster)
		_, err2 := e.store.Requeue(job.ID, err.Error())
		e.StoreWrite("requeue", err2)
		if err2 != nil {
			return true, fmt.Errorf("admit job %s: requeue after its application id was refused (%v): %w", job.ID, err, err2)
		}
		log.Warn("job requeued: the cluster refused its application id", "app", appID, "state", queue.StatePending, "err", err)
		rep.Requeued = append(rep.Requeued, job.ID)
		rep.Stopped = "stale id"
		return true, nil
	default:
		e.called(callSubmit, err)
		e.jobFailed(job.ID, err)
		e.backendError("submit", err)
		log.Warn("submission outcome unknown; left admitted for reconcile", "app", appID, "err", err)
		rep.Ambiguous = append(rep.Ambiguous, job.ID)
		rep.Stopped = "ambiguous"
		return true, nil
	}
}

// passView is one admission pass's picture of the cluster, read once
// and kept up to date locally: the state as read (or as the loop step's
// Sync read it), with every admitted job whose application holds nothing
// in it added as the cluster will hold it (arrive). That is one mechanism
// for the jobs this pass admits and for those earlier passes admitted
// whose applications YARN has not given containers yet.
//
// Reading the state again after each submission would not show more:
// YARN allocates containers asynchronously, so right after a submission
// the application is ACCEPTED and holds nothing; and on YARN a read is
// cluster metrics, every running application and, at a slower cadence,
// every node — megabytes per admitted job on a large cluster.
type passView struct {
	st    *cluster.State // nil until the pass first needs it
	open  bool           // openView ran
	hist  map[string]queue.KindHistory
	nodes []profile.Node // scratch for profile.Place
	land  []profile.Landing
}

// openView reads, once per pass, what every decision of the pass shares:
// the cluster state (unless the step's Sync read it), the kinds' runtime
// histories (they change only when a job finishes), and the admitted jobs
// whose applications hold nothing in the state, which arrive in it.
func (e *Engine) openView(ctx context.Context, v *passView) error {
	if v.open {
		return nil
	}
	if v.st == nil {
		if e.held(callRead) {
			return fmt.Errorf("admit: cluster state: %w", heldError(callRead, e.rmBackoff[callRead]))
		}
		st, err := e.cluster.State(ctx)
		e.called(callRead, err)
		if err != nil {
			e.backendError("state", err)
			return fmt.Errorf("admit: cluster state: %w", err)
		}
		e.backendOK(backendCluster)
		if err := e.claimState(&st); err != nil {
			return fmt.Errorf("admit: %w", err)
		}
		e.remember(st, e.clock.Now())
		v.st = &st
	}
	hist, err := e.store.Histories()
	if err != nil {
		return fmt.Errorf("admit: kind histories: %w", err)
	}
	admitted, err := e.store.List(queue.StateAdmitted, 0)
	if err != nil {
		return fmt.Errorf("admit: admitted jobs: %w", err)
	}
	v.hist = hist
	holding := map[string]bool{}
	for _, a := range v.st.Apps {
		holding[a.ID] = true
		if a.JobID != "" {
			holding[a.JobID] = true
		}
	}
	for _, j := range admitted {
		if !holding[j.AppID] && !holding[j.ID] {
			v.arrive(j, j.AppID)
		}
	}
	v.open = true
	return nil
}

// snapshot gathers one decision's input: the pass's picture of the
// cluster, the pending window (read from the store for every decision: an
// admitted job leaves it and the next pending job enters), how many jobs
// are pending in all, and the kinds' runtime history.
func (e *Engine) snapshot(v *passView) (pipeline.Snapshot, error) {
	now := e.clock.Now()
	var pending []queue.Job
	var err error
	if f := e.fairness; f != nil {
		pending, err = e.store.PendingHeads(e.window, f.GroupBy == pipeline.GroupByQueue, cmp.Or(f.Scan, pipeline.DefaultFairScan))
	} else {
		pending, err = e.store.Pending(e.window)
	}
	if err != nil {
		return pipeline.Snapshot{}, fmt.Errorf("admit: pending jobs: %w", err)
	}
	st := v.st
	free := st.Free
	free.MemoryMB = max(free.MemoryMB, 0)
	free.VCores = max(free.VCores, 0)

	apps := make(map[string]*cluster.App, len(st.Apps))
	for i := range st.Apps {
		apps[st.Apps[i].ID] = &st.Apps[i]
	}
	nodes := make([]pipeline.NodeFree, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		nf := pipeline.NodeFree{Name: n.Name, Free: n.Free, Capacity: n.Capacity}
		for _, id := range n.Apps {
			a, ok := apps[id]
			if !ok {
				continue
			}
			if c := a.ContainersOn(n.Name); c > 0 {
				nf.Jobs = append(nf.Jobs, pipeline.NodeJob{JobID: a.JobID, Kind: a.Kind, Containers: c})
			}
		}
		nf.Jobs = append(nf.Jobs, e.foreign.nodeJobs(n.Name, apps)...)
		nodes = append(nodes, nf)
	}
	var weights []float64 // read only by the bandit's preference stage
	if e.weighContext {
		weights = contextWeights(*st, pending)
	}
	running := make([]pipeline.Running, 0, len(st.Apps))
	for i, a := range st.Apps {
		ru := pipeline.Running{JobID: a.JobID, Kind: a.Kind, User: a.User, Queue: a.Queue, Alloc: a.Alloc, Started: a.Starts}
		if k, ok := e.foreign.kind[a.ID]; ok && a.JobID == "" {
			ru.Kind = k // another tenant's, as the learner knows it
		}
		if weights != nil {
			ru.Weight = weights[i]
		}
		running = append(running, ru)
	}
	sort.Slice(running, func(i, j int) bool { return running[i].JobID < running[j].JobID })
	e.shape.Store(&clusterShape{capa: st.Capacity, nodes: nodes})
	counts, err := e.store.Counts() // the tail stage needs to know whether the window holds every pending job
	if err != nil {
		return pipeline.Snapshot{}, fmt.Errorf("admit: job counts: %w", err)
	}
	return pipeline.Snapshot{
		Now: now, Capacity: st.Capacity, Free: free, Nodes: nodes,
		Running: running, Pending: pending, PendingTotal: counts[queue.StatePending], History: v.hist,
	}, nil
}

// arrive adds admitted job j, whose application appID holds nothing in
// the picture yet, as the cluster will hold it: it joins the running
// applications with its whole allocation, the cluster's free room drops by
// its resources, and its containers take the nodes profile.Place predicts
// by the cluster's placement rule — the prediction the co-location scorer
// makes — so the next decision sees the nodes as they will be. A job that
// does not fit anywhere waits in the resource manager's queue: it takes
// no node until room frees.
func (v *passView) arrive(j queue.Job, appID string) {
	st := v.st
	r := j.Resources
	a := cluster.App{ID: appID, JobID: j.ID, Kind: j.Kind, User: j.User, Queue: j.Queue,
		Alloc: pipeline.Capacity{MemoryMB: r.TotalMemoryMB(), VCores: r.TotalVCores()}}
	st.Free.MemoryMB -= a.Alloc.MemoryMB
	st.Free.VCores -= a.Alloc.VCores
	counts := v.place(r)
	if len(counts) > 0 {
		a.Placement = make(map[string]int, len(counts))
	}
	for i, c := range counts {
		n := &st.Nodes[i]
		a.Nodes = append(a.Nodes, n.Name)
		a.Placement[n.Name] = c
		n.Free.MemoryMB -= int64(c) * r.MemoryMB
		n.Free.VCores -= int64(c) * int64(r.VCores)
		n.Apps = append(slices.Clip(n.Apps), appID)
	}
	slices.Sort(a.Nodes)
	st.Apps = append(slices.Clip(st.Apps), a)
}

// place predicts where a job of resources r lands on the picture's nodes
// (profile.Place, group profile.DefaultGroup, as the scorer does) and
// turns the expectation into whole containers per node index; nil when
// the job does not fit.
func (v *passView) place(r queue.Resources) map[int]int {
	each := profile.Room{VCores: int64(r.VCores), MemoryMB: r.MemoryMB}
	v.nodes = v.nodes[:0]
	for _, n := range v.st.Nodes {
		pn := profile.Node{Capacity: profile.Room{VCores: n.Capacity.VCores, MemoryMB: n.Capacity.MemoryMB},
			Free: profile.Room{VCores: n.Free.VCores, MemoryMB: n.Free.MemoryMB}}
		if len(n.Apps) > 0 {
			pn.Jobs = runsSomething // Place asks only whether a node runs something
		}
		v.nodes = append(v.nodes, pn)
	}
	var ok bool
	v.land, ok = profile.Place(v.nodes, profile.Shape{Containers: r.Containers, Each: each}, profile.DefaultGroup, v.land)
	if !ok || r.Containers <= 0 {
		return nil
	}
	return profile.Whole(v.nodes, v.land, each, r.Containers)
}

// runsSomething marks a node that runs a job for profile.Place.
var runsSomething = []profile.KindCount{{Containers: 1}}

// dominantShares reports each running user's dominant share of the
// cluster and deletes the gauge of every user that runs nothing.
func (e *Engine) dominantShares(st cluster.State) {
	if e.mx == nil || st.Capacity.MemoryMB <= 0 || st.Capacity.VCores <= 0 {
		return
	}
	use := map[string]pipeline.Capacity{}
	for _, a := range st.Apps {
		u := use[a.User]
		u.MemoryMB += a.Alloc.MemoryMB
		u.VCores += a.Alloc.VCores
		use[a.User] = u
	}
	for user, u := range use {
		share := max(float64(u.MemoryMB)/float64(st.Capacity.MemoryMB), float64(u.VCores)/float64(st.Capacity.VCores))
		e.mx.DominantShare(user, share)
	}
	for user := range e.shareUsers { // users that stopped running
		if _, ok := use[user]; !ok {
			e.mx.ForgetDominantShare(user)
			delete(e.shareUsers, user)
		}
	}
	for user := range use {
		e.shareUsers[user] = true
	}
}

// contextWeights weights each running application (st.Apps, same order) by
// the chance that the next job's containers land beside it: the free slots
// of the nodes it occupies, in container units of the window head (the
// binding resource of vcores and memory), over all slots the head's
// containers can take once the empty nodes have received theirs. Empty
// nodes are filled first, profile.DefaultGroup containers each; when they can hold
// the whole head, the job will have no partner and every weight is 0 (the
// pipeline then treats the cluster as running nothing: the FIFO head wins).
func contextWeights(st cluster.State, pending []queue.Job) []float64 {
	w := make([]float64, len(st.Apps))
	if len(st.Apps) == 0 || len(pending) == 0 {
		return w
	}
	head := pending[0].Resources
	slots := func(f pipeline.Capacity) int64 {
		s := int64(-1)
		if head.VCores > 0 {
			s = max(f.VCores, 0) / int64(head.VCores)
		}
		if head.MemoryMB > 0 {
			m := max(f.MemoryMB, 0) / head.MemoryMB
			if s < 0 || m < s {
				s = m
			}
		}
		if s < 0 { // a zero-sized container: count vcores
			s = max(f.VCores, 0)
		}
		return s
	}
	left := int64(max(head.Containers, 1))
	nodeSlots := make(map[string]int64, len(st.Nodes))
	var total int64
	for _, n := range st.Nodes {
		s := slots(n.Free)
		if len(n.Apps) == 0 && n.Free == n.Capacity {
			put := min(s, int64(profile.DefaultGroup), left)
			left -= put
			s -= put // what is left on it sits beside the new job only
			total += s
			continue
		}
		nodeSlots[n.Name] = s
		total += s
	}
	if left <= 0 || total <= 0 {
		return w
	}
	for i, a := range st.Apps {
		var s int64
		for _, n := range a.Nodes {
			s += nodeSlots[n]
		}
		w[i] = float64(s) / float64(total)
	}
	return w
}
