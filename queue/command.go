package queue

import (
	"context"
	"encoding/json"
	"time"
)

// The store's writes as commands.
//
// Every change a caller makes to the store is a Command: a value of the
// closed set below, carrying everything its application needs — the time
// it happened, the ids it creates, the runtime it measured — so that
// applying it is a function of the store's content and the command alone.
// The same commands applied in order to an empty store give the same
// buckets, key for key and byte for byte, on any machine (the
// determinism test in command_test.go). That is what lets a replicated log
// (package ha) carry the store: each replica applies the log's entries to
// its own file with Apply, and the applied index commits in the same
// transaction.
//
// The store's methods (Submit, Admit, Start, …) are the proposers: they
// read the clock and the entropy source, build a command and hand it to
// the store's Log, which orders it, makes it durable and applies it. The
// embedded log applies it at once, in one bbolt transaction; a replicated
// log appends it first.
//
// Two kinds of write are not commands, because they are this file's own
// business and not the queue's: quarantining a damaged record (the damage
// is this disk's) and the upgrade of an old layout at Open.

// Command is one mutation of the store. The set is closed: only the
// command types of this package (CmdSubmit, cmdAdmit, …) implement it.
type Command interface{ command() }

// CmdSubmit stores new jobs at the tail of the FIFO, in order. Each job
// carries the id its proposer minted; Apply gives it its sequence
// number, CreatedAt = At and state pending. A job whose user already
// used its idempotency key is not stored: its result is the first job.
// A job that fails validation, or whose deadline is not after At, is
// refused alone (its result's Err) and the others go on.
type CmdSubmit struct {
	At   time.Time
	Jobs []Job
}

// cmdAdmit moves a pending job to admitted with its RM application id and
// the decision that chose it, and counts a skip for every job in Passed
// and a block for every job in Blocked that is still pending. The entry's
// epoch (Entry.Epoch) is stored with it.
type cmdAdmit struct {
	At       time.Time
	ID       string
	AppID    string
	Decision json.RawMessage
	Passed   []string
	Blocked  []string
}

// cmdRequeue rolls an admitted job back to pending (its submit failed).
type cmdRequeue struct {
	At     time.Time
	ID     string
	Reason string
}

// cmdStart marks an admitted job running.
type cmdStart struct {
	At time.Time
	ID string
}

// cmdFinish ends an admitted or running job. A success adds its runtime
// to the kind's history: Runtime when Measured (the proposer timed it on
// a monotonic clock), else At minus the time it started running.
type cmdFinish struct {
	At          time.Time
	ID          string
	Final       State
	Diagnostics string
	Runtime     time.Duration
	Measured    bool
}

// cmdCancel moves a pending job to cancelled.
type cmdCancel struct {
	At time.Time
	ID string
}

// cmdPark moves an admitted or running job to parked.
type cmdPark struct {
	At     time.Time
	ID     string
	Reason string
}

// cmdResolve ends a parked job as an operator decided (Store.Resolve).
type cmdResolve struct {
	At     time.Time
	ID     string
	To     State
	Reason string
}

// cmdCompact deletes up to compactChunk jobs in state State that finished
// before Before, scanning the state's index from the key From (nil: its
// start); its result's Next is where the next step goes on (nil: done).
type cmdCompact struct {
	At     time.Time // stamps a damaged record met on the way
	Before time.Time
	State  State
	From   []byte
}

// cmdSaveLearned writes learned models' states, all in one transaction.
type cmdSaveLearned struct {
	Saves []LearnedSave
}

// cmdMigrateLearned replaces a section's single-key snapshot of the layout
// before rows (Legacy, as it was read) with State.
type cmdMigrateLearned struct {
	Section Section
	State   Learned
	Legacy  []byte
}

// cmdSaveFairness stores the fairness stage's state (nil deletes it).
type cmdSaveFairness struct {
	State []byte
}

// cmdSaveLegacy writes a section's single-key snapshot of the layout
// before rows (nil deletes it): what an older colocd wrote, kept so tests
// can make such a store.
type cmdSaveLegacy struct {
	Section  Section
	Snapshot []byte
}

// cmdQuarantineLearned moves a learned section that does not restore
// (every key, and its single-key snapshot) to the quarantine bucket: the
// model starts over (Store.QuarantineLearned).
type cmdQuarantineLearned struct {
	At      time.Time
	Section Section
	Reason  string
}

func (cmdQuarantineLearned) command() {}
func (CmdSubmit) command()            {}
func (cmdAdmit) command()             {}
func (cmdRequeue) command()           {}
func (cmdStart) command()             {}
func (cmdFinish) command()            {}
func (cmdCancel) command()            {}
func (cmdPark) command()              {}
func (cmdResolve) command()           {}
func (cmdCompact) command()           {}
func (cmdSaveLearned) command()       {}
func (cmdMigrateLearned) command()    {}
func (cmdSaveFairness) command()      {}
func (cmdSaveLegacy) command()        {}

// Entry is one record of the store's log: the commands one commit
// applies, at its index, under the epoch of the leader that appended it
// (0 for the embedded log).
type Entry struct {
	Index    uint64
	Epoch    uint64
	Commands []Command
}

// Result is what applying one command did. Err is a refusal — the
// command broke the state machine or a rule (a *transitionError, a
// *FieldError, ErrNotFound, a *QuarantinedError) and changed nothing —
// and is the same on every replica; a storage failure fails the whole
// Apply instead.
type Result struct {
	Err error
	// Job is the job the command changed (admit, requeue, start, finish,
	// cancel, park, resolve).
	Job Job
	// Submitted holds a CmdSubmit's outcome, one per job in order.
	Submitted []submitted
	// Compacted and Next are a cmdCompact's deletions and where to go on.
	Compacted int
	Next      []byte
}

// submitted is one job's outcome in a CmdSubmit: the stored job (the
// first one when its idempotency key was used before, Created false), or
// the refusal.
type submitted struct {
	Job     Job
	Created bool
	Err     error
}

// Log orders the store's commands, makes them durable and applies them to
// the store. Commit returns the results of cmds, in order, once they are
// applied to this store; an error means they may or may not have been
// (a replicated log that lost its leadership mid-append cannot tell).
// The embedded log (the default) applies them at once as the next entry.
type Log interface {
	Commit(ctx context.Context, cmds []Command) ([]Result, error)
}

// localLog is the embedded log: the next entry, applied at once.
type localLog struct{ s *Store }

func (l localLog) Commit(_ context.Context, cmds []Command) ([]Result, error) {
	res, err := l.s.Apply(Entry{Commands: cmds})
	if err != nil {
		return nil, err
	}
	return res[0], nil
}

// SetLog makes l the log every later write goes through (nil: the
// embedded log). Set it before the store is shared.
func (s *Store) SetLog(l Log) {
	if l == nil {
		l = localLog{s}
	}
	s.commits = l
}

// commitOne commits a single command and returns its result: a refusal
// (Result.Err) comes back as the error.
func (s *Store) commitOne(cmd Command) (Result, error) {
	res, err := s.commits.Commit(context.Background(), []Command{cmd})
	if err != nil {
		return Result{}, err
	}
	return res[0], res[0].Err
}
