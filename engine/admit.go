package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// AdmitReport says what one AdmitPass did.
type AdmitReport struct {
	Admitted  []string // job ids admitted and submitted (or left for Reconcile)
	Requeued  []string // job ids whose submission the cluster rejected
	Ambiguous []string // job ids whose submission outcome is unknown (left admitted)
	// Stopped says why the pass ended: "empty", "nothing fits", "max_running",
	// "rejected", "ambiguous", "context".
	Stopped string
}

// AdmitPass admits jobs while the pipeline yields one that fits and
// admission.max_running allows. Each admission is recorded first and acted
// on second: reserve an application id, store.Admit (the job, its app id
// and the decision in one transaction), then submit. A definite rejection
// requeues the job; an ambiguous failure (a timeout) leaves it admitted for
// Sync/Reconcile to check under the same id. In shadow mode the learned
// choice is computed and journaled, but the FIFO choice is admitted.
func (e *Engine) AdmitPass(ctx context.Context) (AdmitReport, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	var rep AdmitReport
	if !e.reconciled {
		return rep, ErrNotReady
	}
	e.sharesFresh = false
	defer e.refreshShares(ctx)
	defer e.persistFairness()
	for {
		if ctx.Err() != nil {
			rep.Stopped = "context"
			return rep, nil
		}
		done, err := e.admitOne(ctx, &rep)
		if err != nil || done {
			return rep, err
		}
	}
}

// refreshShares brings the dominant-share gauges up to date at the end of
// a pass that took no snapshot (nothing pending, or max_running reached),
// so that a user whose jobs ended loses the gauge even when no decision
// follows. It reads the cluster state only while some user has a gauge.
func (e *Engine) refreshShares(ctx context.Context) {
	if e.sharesFresh || e.mx == nil || len(e.shareUsers) == 0 || ctx.Err() != nil {
		return
	}
	st, err := e.cluster.State(ctx)
	if err != nil {
		e.backendError("state")
		e.log.Debug("dominant shares: cluster state unavailable", "err", err)
		return
	}
	e.dominantShares(st)
}

// admitOne admits at most one job; done reports that the pass should end.
func (e *Engine) admitOne(ctx context.Context, rep *AdmitReport) (done bool, err error) {
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
	snap, err := e.snapshot(ctx)
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
		e.backendError("reserve")
		return true, fmt.Errorf("admit job %s: reserve application: %w", admit.Chosen, err)
	}
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
		if err := e.journal.AddDecision(rec); err != nil {
			log.Warn("journal decision", "err", err)
		}
	}
	// Then act.
	err = e.cluster.Submit(ctx, appID, job)
	switch {
	case err == nil:
		rep.Admitted = append(rep.Admitted, job.ID)
		if e.mx != nil {
			e.mx.Admitted()
		}
		log.Info("admitted", "app", appID, "forced", learned.Forced, "shadow", rec.Shadow,
			"learned_choice", learned.Chosen, "passed", len(admit.Passed))
		return false, nil
	case errors.Is(err, cluster.ErrRejected):
		if e.mx != nil {
			e.mx.AdmissionFailed()
		}
		_, err2 := e.store.Requeue(job.ID, err.Error())
		e.StoreWrite("requeue", err2)
		if err2 != nil {
			return true, fmt.Errorf("admit job %s: requeue after rejection (%v): %w", job.ID, err, err2)
		}
		log.Warn("submission rejected; job requeued", "app", appID, "err", err)
		rep.Requeued = append(rep.Requeued, job.ID)
		rep.Stopped = "rejected"
		return true, nil
	default:
		e.backendError("submit")
		log.Warn("submission outcome unknown; left admitted for reconcile", "app", appID, "err", err)
		rep.Ambiguous = append(rep.Ambiguous, job.ID)
		rep.Stopped = "ambiguous"
		return true, nil
	}
}

// snapshot gathers the pipeline's input: cluster state, the pending window
// and the kinds' runtime history. Resources of admitted jobs whose
// application does not hold resources yet (YARN allocates asynchronously)
// are taken off the free capacity, so one pass cannot over-admit.
func (e *Engine) snapshot(ctx context.Context) (queue.Snapshot, error) {
	now := e.clock.Now()
	st, err := e.cluster.State(ctx)
	if err != nil {
		e.backendError("state")
		return queue.Snapshot{}, fmt.Errorf("admit: cluster state: %w", err)
	}
	var pending []queue.Job
	if f := e.fairness; f != nil {
		pending, err = e.store.PendingHeads(e.window, f.GroupBy, cmp.Or(f.Scan, queue.DefaultFairScan))
	} else {
		pending, err = e.store.Pending(e.window)
	}
	if err != nil {
		return queue.Snapshot{}, fmt.Errorf("admit: pending jobs: %w", err)
	}
	hist, err := e.store.Histories()
	if err != nil {
		return queue.Snapshot{}, fmt.Errorf("admit: kind histories: %w", err)
	}
	admitted, err := e.store.List(queue.StateAdmitted, 0)
	if err != nil {
		return queue.Snapshot{}, fmt.Errorf("admit: admitted jobs: %w", err)
	}
	holding := map[string]bool{}
	for _, a := range st.Apps {
		holding[a.ID] = true
		if a.JobID != "" {
			holding[a.JobID] = true
		}
	}
	free := st.Free
	for _, j := range admitted {
		if !holding[j.AppID] && !holding[j.ID] {
			free.MemoryMB -= j.Resources.TotalMemoryMB()
			free.VCores -= j.Resources.TotalVCores()
		}
	}
	free.MemoryMB = max(free.MemoryMB, 0)
	free.VCores = max(free.VCores, 0)

	apps := make(map[string]*cluster.App, len(st.Apps))
	for i := range st.Apps {
		apps[st.Apps[i].ID] = &st.Apps[i]
	}
	nodes := make([]queue.NodeFree, 0, len(st.Nodes))
	for _, n := range st.Nodes {
		nf := queue.NodeFree{Name: n.Name, Free: n.Free, Capacity: n.Capacity}
		for _, id := range n.Apps {
			a, ok := apps[id]
			if !ok {
				continue
			}
			if c := a.ContainersOn(n.Name); c > 0 {
				nf.Jobs = append(nf.Jobs, queue.NodeJob{JobID: a.JobID, Kind: a.Kind, Containers: c})
			}
		}
		nodes = append(nodes, nf)
	}
	var weights []float64 // read only by the bandit's preference stage
	if e.weighContext {
		weights = contextWeights(st, pending)
	}
	running := make([]queue.Running, 0, len(st.Apps))
	for i, a := range st.Apps {
		ru := queue.Running{JobID: a.JobID, Kind: a.Kind, User: a.User, Queue: a.Queue, Alloc: a.Alloc}
		if weights != nil {
			ru.Weight = weights[i]
		}
		running = append(running, ru)
	}
	sort.Slice(running, func(i, j int) bool { return running[i].JobID < running[j].JobID })
	e.dominantShares(st)
	e.shape.Store(&clusterShape{capa: st.Capacity, nodes: nodes})
	return queue.Snapshot{
		Now: now, Capacity: st.Capacity, Free: free, Nodes: nodes,
		Running: running, Pending: pending, History: hist,
	}, nil
}

// dominantShares reports each running user's dominant share of the
// cluster and deletes the gauge of every user that runs nothing.
func (e *Engine) dominantShares(st cluster.State) {
	if e.mx == nil || st.Capacity.MemoryMB <= 0 || st.Capacity.VCores <= 0 {
		return
	}
	e.sharesFresh = true
	use := map[string]queue.Capacity{}
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
	slots := func(f queue.Capacity) int64 {
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
