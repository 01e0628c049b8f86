package engine

import "errors"

// Sentinel errors of the engine. Test with errors.Is.
var (
	// errMetrics wraps errors of the usage source during learning; the
	// engine keeps admitting with what it learned before.
	errMetrics = errors.New("metrics source failed")
	// ErrNotReady: the engine has not reconciled with the cluster yet.
	ErrNotReady = errors.New("engine not ready")
	// errNotKillable: the job is neither admitted nor running.
	errNotKillable = errors.New("job is not admitted or running")
	// errFenced: the fence (Options.Fence) refused to let this replica act
	// on the cluster: it may no longer lead.
	errFenced = errors.New("not acting on the cluster: this replica may no longer lead")
	// errBackoff: a pass did not call the cluster because calls of that
	// kind back off after failures (backoff.go).
	errBackoff = errors.New("cluster calls backing off")
)

// Why Ready fails: its error wraps one of these. Each names a reason safe to
// show anyone (api.PublicReasoner), never the rest of the error, which may
// name hosts, users and paths.
var (
	// ErrStarting: not reconciled with the cluster yet.
	ErrStarting = readyReason("starting")
	// ErrStoreUnavailable: the store does not answer reads.
	ErrStoreUnavailable = readyReason("store unavailable")
	// ErrStoreWrites: the last store write failed (a full disk) and none has
	// succeeded since.
	ErrStoreWrites = readyReason("store writes failing")
	// errLowSpace: the file system holding the store has less free space
	// than the store's reserve, so it takes no new job (queue.SpaceError).
	errLowSpace = readyReason("data directory low on space")
	// ErrClusterSync: the loop's last sync with the cluster failed.
	ErrClusterSync = readyReason("cannot sync with the cluster")
	// ErrClusterBackoff: calls to the cluster back off after failures
	// (reads, or submissions of new jobs): the engine calls it once per
	// wait until it answers.
	ErrClusterBackoff = readyReason("backing off from a failing cluster")
	// ErrStalled: the admission loop has completed no iteration for too long.
	ErrStalled = readyReason("admission loop stalled")
)

// readyReason is a reason Ready gives, public by design.
type readyReason string

func (r readyReason) Error() string { return string(r) }

// PublicReason makes the reason showable without a token.
func (r readyReason) PublicReason() string { return string(r) }
