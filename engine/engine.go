package engine

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// Engine is the daemon's core: it reconciles the store with the cluster,
// follows applications, admits jobs and learns preferences. It has no
// goroutines and reads time only from its Clock, so the loop (Server) or a
// benchmark drives it, in wall or virtual time. Its methods are safe for
// concurrent use; passes are serialised.
type Engine struct {
	store    *queue.Store
	learner  *bandit.Learner
	profiles *profile.Model     // per-kind resource profiles, learned
	scoreSrc profile.Profiles   // what the scorer reads: profiles, or given ones
	pipeline *pipeline.Pipeline // the learned ordering
	// fit says whether jobs are checked against the cluster's capacity
	// (pipeline.fit), per node or not; shape is that capacity at the last
	// admission pass (nil before one), for Prepare's too-large check.
	fit, fitPerNode bool
	shape           atomic.Pointer[clusterShape]
	view            atomic.Pointer[clusterView]
	fifo            *pipeline.Pipeline // shadow mode's FIFO ordering (no preferences)
	cluster         Cluster
	metrics         UsageSource
	parts           ContainerUsageSource // Options.ContainerUsage; nil: nodes fitted whole
	// apart says the learning tick sees each kind's own usage: true with a
	// container usage source until a tick finds parts on fewer than half
	// the nodes that ran something (then the scorer stops telling the
	// hold-back that no landing confounds), and again once one finds them
	// on at least half.
	apart   *atomic.Bool
	clock   Clock
	journal journalSink   // nil: no journal
	mx      telemetrySink // nil: no Prometheus metrics
	rng     *rand.Rand
	log     *slog.Logger
	// fairness is the pipeline's fairness configuration when it is on: the
	// snapshot then reads each group's window (Store.PendingHeads).
	fairness *pipeline.FairnessConfig
	// fairDirty: a decision since the fairness state was last stored.
	fairDirty bool
	// fairSaved is the fairness state last stored (persistFairness).
	fairSaved []byte
	wall      func() time.Time // decision latency and readiness only
	simClock  bool             // Options.SimulatedClock
	placer    *Placer          // Options.Placement; nil: the syncs' presence
	fence     Fence            // Options.Fence; nil: always act
	// foreignPrefix starts the kinds of other tenants' applications
	// (Options.ForeignPrefix): reserved, an import may not make them
	// unless the placer does (checkImportKinds).
	foreignPrefix string

	window     int
	maxRunning int
	// weighContext: the pipeline's preference stage is the bandit's, which
	// weights the running jobs by where the next job lands.
	weighContext bool
	mode         AdmissionMode
	creditMode   CreditMode
	aggregate    Aggregate
	maxKinds     int
	pairReward   PairReward
	sizes        nodeSizes                 // how each node compares with the reference node
	nodeSize     map[string]profile.Vector // each node's size at the last sync (zero entries absent)
	nodes        []string                  // the cluster's nodes at the last sync
	stallAfter   time.Duration
	dependencyOf func(error) string // Options.DependencyOf

	kick   chan struct{}
	health health
	bo     backoffPolicy // admission.backoff

	// learnMu serialises learning ticks (Learn), whose reads run without
	// mu.
	learnMu    sync.Mutex
	mu         sync.Mutex // serialises passes and guards the fields below
	reconciled bool
	presence   map[string]map[string]*presence // node → job id → presence
	runtimes   *runtimes                       // solo runtimes from predicted speeds (runtimes.go); nil: lookahead off
	observed   uint64                          // observations of presence so far (observe)
	shareUsers map[string]bool                 // users with a dominant-share gauge
	// journalLow: the journal's disk writes are stopped, the data
	// directory being below the store's space reserve (journalSpace).
	journalLow bool
	// journalFails counts the journal writes failed since the last that
	// succeeded (journalWrote).
	journalFails int
	// foreign is where other tenants' applications ran at the end of the
	// last placement read, with their foreign kinds (learning.placement:
	// influx): admission puts them on their nodes. Empty otherwise.
	foreign foreignView
	// rmBackoff holds the cluster-wide backoffs, by kind of call, and
	// jobBackoff each admitted job's own (backoff.go).
	rmBackoff  [numCallKinds]backoff
	jobBackoff map[string]*backoff
}

// presence is one job's containers on one node, as seen by Sync.
type presence struct {
	kind       string
	app        string    // its application id at the last sync that saw it
	containers int       // at the last sync that saw it
	admitted   time.Time // when the job was admitted (credit order)
	seq        uint64    // tiebreak
	since      time.Time // first seen on the node
	lastSeen   time.Time
	goneAt     time.Time // first sync that no longer saw it; zero while present
	seen       uint64    // the observation (Engine.observed) that last saw it
}

// act runs fn within the fence's bound (Options.Fence); a refusal is
// errFenced and fn does not run.
func (e *Engine) act(ctx context.Context, fn func(context.Context) error) error {
	if e.fence == nil {
		return fn(ctx)
	}
	actx, cancel, err := e.fence.Act(ctx)
	if err != nil {
		return fmt.Errorf("%w: %w", errFenced, err)
	}
	defer cancel()
	return fn(actx)
}

// Resume readies the engine to lead again (package ha): the other
// leaders changed the learned state, the fairness state and the jobs
// through the log meanwhile, so it reloads the first two from the store
// and forgets what it knew of the cluster; the loop then reconciles
// before it admits. Call it before the term's loop starts.
//
// A learned state that does not restore is quarantined
// (RestoreOrQuarantine) and that model starts over; quarantined names the
// sections it moved aside.
func (e *Engine) Resume() (quarantined []queue.Section, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, restore := range []func() (bool, error){
		func() (bool, error) { return RestoreLearner(e.store, e.learner, e.learner.Config()) },
		func() (bool, error) { return RestoreProfiles(e.store, e.profiles) },
	} {
		_, q, err := RestoreOrQuarantine(e.store, restore)
		if err != nil {
			return quarantined, fmt.Errorf("resume: %w", err)
		}
		if q != nil {
			quarantined = append(quarantined, q.Section)
		}
	}
	if err := e.restoreFairness(); err != nil {
		return quarantined, fmt.Errorf("resume: %w", err)
	}
	e.reconciled = false
	e.presence = map[string]map[string]*presence{}
	e.foreign = foreignView{}
	e.rmBackoff, e.jobBackoff = [numCallKinds]backoff{}, map[string]*backoff{}
	e.health.mu.Lock()
	e.health.state = healthState{}
	e.health.mu.Unlock()
	return quarantined, nil
}

// Kicked delivers a value after Kick; the loop waits on it.
func (e *Engine) Kicked() <-chan struct{} { return e.kick }

// Kick asks for an admission pass soon. It never blocks; kicks coalesce.
func (e *Engine) Kick() {
	select {
	case e.kick <- struct{}{}:
	default:
	}
}

// Prepare refuses a kind under the foreign prefix when placement is read
// from the plugin (those kinds are other tenants'), fills backend defaults
// into j and validates what the backend needs (api.Controller), then
// refuses a job that would not fit the cluster even idle, as the last
// admission pass saw it (with pipeline.fit on): it could never be
// admitted, and would hold no reservation. Errors are *queue.FieldError.
// It changes nothing else: a kind becomes known to the learner once a job
// of it is stored (AddKind).
func (e *Engine) Prepare(j *queue.Job) error {
	if pl := e.placer; pl != nil && strings.HasPrefix(j.Kind, pl.cfg.ForeignPrefix) {
		return &queue.FieldError{Field: "kind", Reason: fmt.Sprintf("%q starts with %q, which names other tenants' applications (learning.foreign.prefix)",
			j.Kind, pl.cfg.ForeignPrefix)}
	}
	if p, ok := e.cluster.(JobPreparer); ok {
		if err := p.Prepare(j); err != nil {
			return err
		}
	}
	sh := e.shape.Load()
	if sh == nil || !e.fit || sh.capa.MemoryMB <= 0 {
		return nil
	}
	var nodes []pipeline.NodeFree
	if e.fitPerNode {
		nodes = sh.nodes
	}
	if ok, why := pipeline.FitsCluster(j.Resources, sh.capa, nodes); !ok {
		return &queue.FieldError{Field: "resources", Reason: "larger than the whole cluster, which could never run it: " + why}
	}
	return nil
}

// clusterShape is the cluster's capacity, in all and per node.
type clusterShape struct {
	capa  pipeline.Capacity
	nodes []pipeline.NodeFree
}

// Kill stops an admitted or running job on the cluster and marks it killed.
func (e *Engine) Kill(ctx context.Context, id string) (queue.Job, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	j, err := e.store.Get(id)
	if err != nil {
		return queue.Job{}, err
	}
	if j.State != queue.StateAdmitted && j.State != queue.StateRunning {
		return j, fmt.Errorf("kill job %s: %w (state %s)", id, errNotKillable, j.State)
	}
	if j.AppID != "" {
		err := e.act(ctx, func(ctx context.Context) error { return e.cluster.Kill(ctx, j.AppID) })
		if errors.Is(err, errFenced) {
			return j, fmt.Errorf("kill job %s: %w", id, err)
		}
		if err != nil && !errors.Is(err, cluster.ErrUnknownApp) {
			e.backendError("kill", err)
			return j, fmt.Errorf("kill job %s application %s: %w", id, j.AppID, err)
		}
	}
	j, err = e.store.Finish(id, queue.StateKilled, "killed through the API")
	e.StoreWrite("kill", err)
	if err != nil {
		return j, fmt.Errorf("kill job %s: %w", id, err)
	}
	e.logFinished(j)
	e.Kick()
	return j, nil
}

// Ready reports whether the daemon can take and admit jobs (api.Controller),
// from what the loop and the store writes last reported; it calls nothing
// remote and never waits behind a pass. It fails, wrapping the api reason
// named, while the engine has not reconciled (ErrStarting, and
// ErrNotReady), the store does not answer reads (ErrStoreUnavailable),
// the file system holding the store is below its space reserve
// (errLowSpace), the last store write failed and none succeeded since
// (ErrStoreWrites), the loop completed no iteration for StallAfter
// (ErrStalled), calls to the cluster back off after failures
// (ErrClusterBackoff, naming each backoff; with ErrClusterSync too when
// the last sync failed), or the loop's last sync with the cluster failed
// (ErrClusterSync).
func (e *Engine) Ready(context.Context) error {
	e.health.mu.Lock()
	h := e.health.state
	h.writeFails = maps.Clone(h.writeFails) // StoreWrite changes the map itself
	e.health.mu.Unlock()
	if !h.reconciled && !e.reconciledNow() {
		if h.startErr != nil {
			return fmt.Errorf("%w: %w: reconciling with the cluster failed (retrying): %w", ErrStarting, ErrNotReady, h.startErr)
		}
		return fmt.Errorf("%w: %w: not reconciled with the cluster yet", ErrStarting, ErrNotReady)
	}
	if _, err := e.store.Counts(); err != nil {
		return fmt.Errorf("%w: %w", ErrStoreUnavailable, err)
	}
	if err := e.store.CheckSpace(); err != nil {
		return fmt.Errorf("%w: %w", errLowSpace, err)
	}
	if op, f, n := h.lastWriteFail(); n > 0 {
		return fmt.Errorf("%w: store writes are failing (%s; the latest, %s, failed at %s): %w",
			ErrStoreWrites, strings.Join(slices.Sorted(maps.Keys(h.writeFails)), ", "), op, f.at.Format(time.RFC3339), f.err)
	}
	if e.stallAfter > 0 && !h.lastPass.IsZero() {
		if idle := e.wall().Sub(h.lastPass); idle > e.stallAfter {
			return fmt.Errorf("%w: no loop iteration completed for %v (the bound is %v)", ErrStalled, idle.Round(time.Millisecond), e.stallAfter)
		}
	}
	if b := backoffReport(h.backoff, h.jobsBackingOff); b != "" {
		if h.syncErr != nil {
			return fmt.Errorf("%w: %w: the last sync failed: %w; %s", ErrClusterBackoff, ErrClusterSync, h.syncErr, b)
		}
		return fmt.Errorf("%w: %s", ErrClusterBackoff, b)
	}
	if h.syncErr != nil {
		return fmt.Errorf("%w: the last sync failed: %w", ErrClusterSync, h.syncErr)
	}
	return nil
}

// reconciledNow reports whether Reconcile succeeded, without waiting for
// e.mu: while a reconciliation or a pass holds it, the answer is no (the
// loop records its own reconciliation in health, so this only matters to
// an engine no loop drives).
func (e *Engine) reconciledNow() bool {
	if !e.mu.TryLock() {
		return false
	}
	defer e.mu.Unlock()
	return e.reconciled
}

// health is what Ready answers from.
type health struct {
	mu    sync.Mutex
	state healthState
}

type healthState struct {
	reconciled bool      // the loop reconciled
	startErr   error     // the loop's last failed reconciliation, until one succeeds
	lastPass   time.Time // Wall time the loop last completed an iteration (or reconciled)
	syncErr    error     // the last iteration's sync error; nil when it succeeded
	// writeFails are the store writes, by op, whose last attempt failed;
	// see StoreWrite for what clears one.
	writeFails map[string]writeFail
	// backoff and jobsBackingOff are the engine's backoffs, as
	// publishBackoff last copied them.
	backoff        [numCallKinds]backoff
	jobsBackingOff int
	// deps are the dependencies failing now (degraded.go).
	deps map[string]depFail
}

// writeFail is a failed store write: its error and wall time.
type writeFail struct {
	err error
	at  time.Time
}

// writeQuiet is how long (wall time) writes of every kind must have stopped
// failing before a successful write of one op clears the failures of
// others. On a full disk a small write can still succeed in pages the store
// file already holds while a submission, which needs new ones, fails: one
// success is not the disk coming back.
const writeQuiet = 10 * time.Second

// lastWriteFail is the most recent failing write and how many ops fail.
func (h healthState) lastWriteFail() (op string, f writeFail, n int) {
	for o, w := range h.writeFails {
		if n == 0 || w.at.After(f.at) || (w.at.Equal(f.at) && o < op) {
			op, f = o, w
		}
		n++
	}
	return op, f, n
}

// loopStarted records the outcome of the loop's reconciliation.
func (e *Engine) loopStarted(err error) {
	now := e.wall()
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	if err != nil {
		e.health.state.startErr = err
		return
	}
	e.health.state.reconciled, e.health.state.startErr, e.health.state.lastPass = true, nil, now
}

// passDone records a completed loop iteration and the outcome of its last
// sync.
func (e *Engine) passDone(syncErr error) {
	now := e.wall()
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	e.health.state.lastPass, e.health.state.syncErr = now, syncErr
}

// StoreWrite records the outcome of a store write (api.WriteRecorder; the
// engine's own writes too): a failure makes Ready fail until the same op
// succeeds, or any op succeeds after no write failed for writeQuiet. Errors
// that say nothing about the disk are ignored: an invalid job, an unknown
// id, an illegal transition, a request cancelled before its commit; so is
// a submission refused under the space reserve, which Ready checks itself.
func (e *Engine) StoreWrite(op string, err error) {
	switch {
	case errors.Is(err, queue.ErrLowSpace), errors.Is(err, queue.ErrInvalid), errors.Is(err, queue.ErrNotFound), errors.Is(err, queue.ErrNotPending),
		errors.Is(err, queue.ErrIllegalTransition), errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return
	}
	now := e.wall()
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	h := &e.health.state
	was := len(h.writeFails)
	if err != nil {
		if was == 0 {
			e.log.Warn("store write failed: not ready until store writes succeed again", "op", op, "err", err)
		}
		if h.writeFails == nil {
			h.writeFails = map[string]writeFail{}
		}
		h.writeFails[op] = writeFail{err: err, at: now}
		return
	}
	delete(h.writeFails, op)
	if _, last, n := h.lastWriteFail(); n > 0 && now.Sub(last.at) >= writeQuiet {
		clear(h.writeFails)
	}
	if was > 0 && len(h.writeFails) == 0 {
		e.log.Info("store write succeeded: store writes ready again", "op", op)
	}
}

// journalSpace stops the journal's disk writes while the store is below
// its space reserve (the space left is the accepted jobs': at 10,000 nodes
// a learning tick journals about a megabyte), and resumes them once it is
// not. Called under mu at the start of each pass and tick: one statfs.
func (e *Engine) journalSpace() {
	if e.journal == nil {
		return
	}
	low := e.store.CheckSpace()
	if (low != nil) == e.journalLow {
		return
	}
	e.journalLow = low != nil
	e.journal.SetMemoryOnly(e.journalLow)
	if low != nil {
		e.log.Warn("journal: new records are kept in memory only while the data directory is low on space", "err", low)
		return
	}
	e.log.Info("journal: writing records to disk again")
}

// journalWrote logs the outcome of a journal write once per streak: the
// first failure at WARN, and at INFO the success that ends the streak with
// how many failed (a failing disk fails every record: at 10,000 nodes
// thousands per learning tick). Called under mu.
func (e *Engine) journalWrote(err error) {
	switch {
	case err != nil && e.journalFails == 0:
		e.log.Warn("journal: writing a record failed; the records stay in memory, and the next failures are counted, not logged", "err", err)
		e.journalFails++
	case err != nil:
		e.journalFails++
	case e.journalFails > 0:
		e.log.Info("journal: writing records again", "failed", e.journalFails)
		e.journalFails = 0
	}
}

// Profiles is the engine's resource profile model.
func (e *Engine) Profiles() *profile.Model { return e.profiles }

// backendError counts a failed call to a backend, by operation, and marks
// that backend down: op "metrics" is the usage source, any other the
// cluster.
func (e *Engine) backendError(op string, err error) {
	if e.mx != nil {
		e.mx.BackendErrors(op)
		e.mx.BackendUp(backendOf(op), false)
	}
	dep := DepCluster
	if backendOf(op) == backendMetrics {
		dep = DepMetrics
	}
	e.dependencyDown(dep, op, err)
}

// backendOK marks backend (backendCluster, backendMetrics) up: a call to
// it succeeded.
func (e *Engine) backendOK(backend string) {
	if e.mx != nil {
		e.mx.BackendUp(backend, true)
	}
	if backend == backendMetrics {
		e.dependencyUp(DepMetrics)
	} else {
		e.dependencyUp(DepCluster)
	}
}

// The backends, as telemetrySink.BackendUp names them.
const (
	backendCluster = "cluster"
	backendMetrics = "metrics"
)

func backendOf(op string) string {
	if op == "metrics" {
		return backendMetrics
	}
	return backendCluster
}

// forcedBy names the hard rule that chose d's job, for telemetrySink.Admitted:
// "max_skips" (starvation), "reservation", or "" when the distribution did.
func forcedBy(d pipeline.Decision) string {
	switch {
	case d.Reserved != "" && d.Reserved == d.Chosen:
		return "reservation"
	case d.Forced != "":
		return "max_skips"
	}
	return ""
}

// journalSink is where the engine explains itself: each decision and each
// goodness observation (journal.Journal).
type journalSink interface {
	AddDecision(journal.DecisionRecord) error
	AddGoodness(journal.GoodnessRecord) error
	// SetMemoryOnly stops (or resumes) writing records to disk; the engine
	// stops it while the store is below its space reserve (journalSpace).
	SetMemoryOnly(bool)
}

// telemetrySink is what the engine counts (telemetry.Metrics).
type telemetrySink interface {
	ObserveDecision(time.Duration)
	// Admitted counts an admission: how long the job waited pending
	// (CreatedAt to the engine clock's now) and the hard rule that chose
	// it ("max_skips", "reservation"; "" when none did).
	Admitted(wait time.Duration, forced, queue, kind string)
	AdmissionFailed()
	LearningUpdates(n int)
	// LearningTick records a learning tick that returned no error, at the
	// engine clock's time.
	LearningTick(at time.Time)
	StaleHosts(n int)
	// ContainerUsageHosts sets, with a container usage source, the nodes
	// that ran something in the last tick: fitted apart, and whole.
	ContainerUsageHosts(apart, whole int)
	DominantShare(group string, v float64)
	ForgetDominantShare(group string)
	BackendErrors(op string)
	// BackendUp records the outcome of the last call to a backend
	// ("cluster" or "metrics").
	BackendUp(backend string, up bool)
	// ClusterBackoff sets the wait of the cluster-wide backoff of calls
	// (backoffRead, backoffSubmit); zero when they do not back off.
	ClusterBackoff(calls string, wait time.Duration)
	// CallsBackedOff counts one call to the cluster not made because of a
	// backoff (backoffRead, backoffSubmit, backoffJob).
	CallsBackedOff(calls string)
	// JobsBackingOff sets how many admitted jobs wait out their own backoff.
	JobsBackingOff(n int)
	// Retention records one run of retention at the engine clock's time:
	// how many finished jobs it deleted, or its error.
	Retention(deleted int, err error, at time.Time)
}
