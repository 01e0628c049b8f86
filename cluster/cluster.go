// Package cluster is what colocd's engine and the resource managers it
// drives exchange: a snapshot of the cluster (State: capacity, free room,
// nodes, running applications and where their containers are), one
// application's status (AppStatus), what can be proven about an application
// a resource manager no longer knows (Verdict), and the two errors with a
// meaning the engine acts on.
//
// # What it owns
//
// These data types and their sentinel errors, nothing else: the interfaces
// live with the engine that consumes them, the adapters (the simulator,
// YARN) with their own packages.
//
// # What it must not do
//
// It holds no state and does no I/O. It imports nothing of colocd but
// queue (resources).
package cluster

import (
	"errors"
	"slices"
	"time"

	"github.com/colocd/colocd/pipeline"
)

// Errors with a meaning the engine acts on. Test with errors.Is.
var (
	// ErrUnknownApp: the cluster has no application with that id (it never
	// saw a submission under it, or has forgotten it).
	ErrUnknownApp = errors.New("unknown application")
	// ErrRejected: the cluster refused the job (its spec, its kind, its
	// user); it certainly does not run, and submitting it again would fail
	// again: the engine fails the job with the refusal.
	ErrRejected = errors.New("submission rejected")
	// ErrStaleAppID: the cluster refused the application id, not the job
	// (an id it never reserved, or one holding another job); it certainly
	// does not run, and the engine puts the job back in the queue to be
	// admitted under a fresh id.
	ErrStaleAppID = errors.New("application id not usable")
)

// State is a snapshot of the cluster.
type State struct {
	Capacity, Free pipeline.Capacity
	Nodes          []Node
	Apps           []App // running (resource-holding) applications, colocd's or not
}

// Node is one schedulable node.
type Node struct {
	Name           string // host name, as the metrics source knows it
	Capacity, Free pipeline.Capacity
	Apps           []string // ids of applications with containers here
}

// App is one running application.
type App struct {
	ID string
	// JobID and Kind are the job the application runs and its kind, ""
	// for applications colocd did not submit. A cluster adapter may
	// leave them empty: the engine sets them from its store, for the
	// application under a job's recorded id (or Reservation) only, never
	// from what the application says of itself (its tags, which any user
	// can set).
	JobID string
	Kind  string
	// Reservation is the id Reserve returned for this application when
	// that is not ID (a YARN command submission's token), as the adapter
	// proved it; "" otherwise.
	Reservation string
	User        string
	Queue       string
	Alloc       pipeline.Capacity
	Nodes       []string
	// Placement is how many of its containers run on each node (nil when
	// the cluster cannot tell; then one container per node in Nodes is
	// assumed).
	Placement map[string]int
	Starts    time.Time
}

// ContainersOn is a's container count on node.
func (a *App) ContainersOn(node string) int {
	if c, ok := a.Placement[node]; ok {
		return c
	}
	if a.Placement == nil && slices.Contains(a.Nodes, node) {
		return 1
	}
	return 0
}

// Phase is an application's coarse state.
type Phase string

// Application phases.
const (
	PhaseAccepted  Phase = "accepted" // known, not yet running (YARN NEW..ACCEPTED)
	PhaseRunning   Phase = "running"
	PhaseSucceeded Phase = "succeeded"
	PhaseFailed    Phase = "failed"
	PhaseKilled    Phase = "killed"
)

// Terminal reports whether the application has ended.
func (p Phase) Terminal() bool {
	return p == PhaseSucceeded || p == PhaseFailed || p == PhaseKilled
}

// AppStatus is what the cluster says about one application.
type AppStatus struct {
	ID          string
	JobID       string
	User        string // who the cluster says owns it; "" when it does not say
	Phase       Phase
	Diagnostics string
	Started     time.Time
	Finished    time.Time
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
