package engine

import (
	"context"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/queue"
)

// Clock is the engine's only source of time. On the simulator backend it is
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
	State(ctx context.Context) (cluster.State, error)
	// Reserve obtains an application id before the job is recorded as
	// admitted (YARN new-application).
	Reserve(ctx context.Context) (appID string, err error)
	// Submit starts the job as application appID. An error wrapping
	// cluster.ErrRejected (the job is refused: it fails) or
	// cluster.ErrStaleAppID (the id is: the job is queued again) is
	// definite, the cluster did not and will not run it; any other error is
	// ambiguous (it may have been accepted).
	Submit(ctx context.Context, appID string, j queue.Job) error
	// App reports one application; cluster.ErrUnknownApp when the cluster
	// does not know appID.
	App(ctx context.Context, appID string) (cluster.AppStatus, error)
	// Kill stops an application.
	Kill(ctx context.Context, appID string) error
}

// forgetful is a cluster that can forget applications: YARN drops ended
// applications beyond yarn.resourcemanager.max-completed-applications, and
// all of them on a restart without recovery. When App answers
// cluster.ErrUnknownApp for a job colocd admitted, the engine asks
// Forgotten what can be proven before it submits the job again: submitting
// an application that did run would run the job twice. A cluster that
// never forgets (the simulator, whose log holds every submission) does not
// implement it, and an unknown application there was never submitted.
type forgetful interface {
	// Forgotten reports what is known of appID, for which App answered
	// cluster.ErrUnknownApp; recorded is when colocd recorded the job's
	// admission under appID (it was submitted after, if at all; zero when
	// not known). An error means nothing could be decided now (the history
	// service or the RM did not answer): ask again later.
	Forgotten(ctx context.Context, appID string, recorded time.Time) (cluster.Verdict, error)
}

// appOwners is implemented by clusters whose applications belong to users
// (YARN): an application is taken for job j only while the user the
// cluster reports for it is one of AppOwners(j). Any user can submit under
// an id another reserved, and the RM treats a second submission under an
// id it knows as a repeat: the user tells colocd's application from one
// that took its id. An empty list, or a cluster that does not implement
// it, checks nothing.
type appOwners interface {
	AppOwners(j queue.Job) []string
}

// pendingApps is implemented by clusters that can report, in one call,
// the applications among ids that are waiting to run (accepted, not yet
// running): a sync reads the status of every admitted job that is not
// running, and one read per job per sync is a request per accepted
// application per second to the RM. Ids it does not report (finished,
// unknown, or not its kind of id) are read one by one with App; an error
// falls back to that for all.
type pendingApps interface {
	PendingApps(ctx context.Context, ids []string) (map[string]cluster.AppStatus, error)
}

// JobPreparer is implemented by clusters that fill backend defaults into a
// job before it is queued and reject what they cannot run.
type JobPreparer interface {
	Prepare(j *queue.Job) error
}

// UsageSource is where the learning tick reads node usage.
type UsageSource interface {
	// Usage returns each host's mean usage over [from, to). Hosts without
	// fresh data are absent from the map and listed in stale.
	Usage(ctx context.Context, hosts []string, from, to time.Time) (usage map[string]goodness.Usage, stale []string, err error)
}

// ContainerUsageSource reads what each application's own containers used
// on each host (the cgroup of each YARN container: CPU time and block I/O,
// not network). With one (Options.ContainerUsage) the learning tick fits
// each kind's CPU and disk from its own containers
// (profile.Observation.Parts) instead of from the node's sum, where two
// kinds never observed apart cannot be told from each other; and, while
// the ticks find such usage on at least half the nodes that ran something,
// admission does not hold a job back to observe a kind first.
type ContainerUsageSource interface {
	// ContainerUsage returns, per host, each application's mean use over
	// [from, to), by application id: CPU as a fraction of the host's
	// cores, DiskRead and DiskWrite in bytes per second (goodness.Usage's
	// units; its other fields are zero). An application present for part
	// of the window counts its use over the whole window. A host or an
	// application absent has no reading: its node is then fitted whole.
	ContainerUsage(ctx context.Context, hosts []string, from, to time.Time) (map[string]map[string]goodness.Usage, error)
}

// Fence is asked before the engine acts on the cluster when colocd runs
// as one of several replicas (package ha implements it): only the leader
// acts, and only while its ZooKeeper session is surely its own. Nil
// Options.Fence: one colocd, which always may.
type Fence interface {
	// Act returns a context within which the engine may act on the
	// cluster (a submit, a kill): it ends when the leadership might have
	// ended. An error means not now: the engine leaves the job as
	// recorded, for whoever leads to reconcile.
	Act(ctx context.Context) (context.Context, context.CancelFunc, error)
	// Reassignable reports whether a job admitted under epoch (an earlier
	// leader's, maybe) may be given a new application id now: not while
	// that leader could still be submitting it under the old one.
	Reassignable(epoch uint64) bool
}
