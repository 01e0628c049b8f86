package daemon

import (
	"context"
	"slices"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/queue"
)

// Clock is the daemon's only source of time. On the simulator backend it is
// the simulator's virtual clock, so every cadence (admission tick, learning
// schedule, retention) runs in virtual time.
type Clock interface {
	Now() time.Time
	After(d time.Duration) <-chan time.Time
}

// Cluster is what the engine needs of a resource manager.
type Cluster interface {
	// State is the cluster now: capacity, free resources, nodes and the
	// applications running on them.
	State(ctx context.Context) (ClusterState, error)
	// Reserve obtains an application id before the job is recorded as
	// admitted (YARN new-application).
	Reserve(ctx context.Context) (appID string, err error)
	// Submit starts the job as application appID. An error wrapping
	// ErrRejected is definite (the cluster did not and will not run it);
	// any other error is ambiguous (it may have been accepted).
	Submit(ctx context.Context, appID string, j queue.Job) error
	// App reports one application; ErrUnknownApp when the cluster never saw
	// a submission for appID.
	App(ctx context.Context, appID string) (AppStatus, error)
	// Kill stops an application.
	Kill(ctx context.Context, appID string) error
}

// Forgetful is a cluster that can forget applications: YARN drops ended
// applications beyond yarn.resourcemanager.max-completed-applications, and
// all of them on a restart without recovery. When App answers
// ErrUnknownApp for a job colocd admitted, the engine asks Forgotten what
// can be proven before it submits the job again: submitting an application
// that did run would run the job twice. A cluster that never forgets (the
// simulator, whose log holds every submission) does not implement it, and
// an unknown application there was never submitted.
type Forgetful interface {
	// Forgotten reports what is known of appID, for which App answered
	// ErrUnknownApp. An error means nothing could be decided now (the
	// history service or the RM did not answer): ask again later.
	Forgotten(ctx context.Context, appID string) (Verdict, error)
}

// Verdict is what a cluster can prove about an application it does not
// know.
type Verdict struct {
	Outcome Outcome
	Status  AppStatus // OutcomeRan: the application as the history reports it
	Reason  string    // why, for the log and the parked job's diagnostics
}

// Outcome is the kind of a Verdict.
type Outcome int

// Outcomes.
const (
	// OutcomeNeverRan: the id was never submitted; submitting it now runs
	// the job once.
	OutcomeNeverRan Outcome = iota
	// OutcomeNeverRanStaleID: never submitted, but the id was issued by an
	// RM process that is gone; the job must be admitted again under a new id.
	OutcomeNeverRanStaleID
	// OutcomeRan: the application history knows it (Status).
	OutcomeRan
	// OutcomeUnprovable: it may have run; the job is parked for an operator.
	OutcomeUnprovable
)

// Metrics is a source of node usage.
type Metrics interface {
	// Usage returns each host's mean usage over [from, to). Hosts without
	// fresh data are absent from the map and listed in stale.
	Usage(ctx context.Context, hosts []string, from, to time.Time) (usage map[string]goodness.Usage, stale []string, err error)
}

// ClusterState is a snapshot of the cluster.
type ClusterState struct {
	Capacity, Free queue.Capacity
	Nodes          []NodeState
	Apps           []AppState // running (resource-holding) applications, colocd's or not
}

// NodeState is one schedulable node.
type NodeState struct {
	Name           string // host name, as the metrics source knows it
	Capacity, Free queue.Capacity
	Apps           []string // ids of applications with containers here
}

// AppState is one running application.
type AppState struct {
	ID    string
	JobID string // "" for applications colocd did not submit
	Kind  string
	User  string
	Queue string
	Alloc queue.Capacity
	Nodes []string
	// Placement is how many of its containers run on each node (nil when
	// the cluster cannot tell; then one container per node in Nodes is
	// assumed).
	Placement map[string]int
	Starts    time.Time
}

// containersOn is a's container count on node.
func (a *AppState) containersOn(node string) int {
	if c, ok := a.Placement[node]; ok {
		return c
	}
	if a.Placement == nil && slices.Contains(a.Nodes, node) {
		return 1
	}
	return 0
}

// AppPhase is an application's coarse state.
type AppPhase string

// Application phases.
const (
	AppAccepted  AppPhase = "accepted" // known, not yet running (YARN NEW..ACCEPTED)
	AppRunning   AppPhase = "running"
	AppSucceeded AppPhase = "succeeded"
	AppFailed    AppPhase = "failed"
	AppKilled    AppPhase = "killed"
)

// Terminal reports whether the application has ended.
func (p AppPhase) Terminal() bool {
	return p == AppSucceeded || p == AppFailed || p == AppKilled
}

// AppStatus is what the cluster says about one application.
type AppStatus struct {
	ID          string
	JobID       string
	Phase       AppPhase
	Diagnostics string
	Started     time.Time
	Finished    time.Time
}
