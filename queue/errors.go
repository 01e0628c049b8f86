package queue

import (
	"errors"
	"fmt"
)

// Sentinel errors. Every error the package returns wraps one of them (test
// with errors.Is); *FieldError and *TransitionError carry the details.
var (
	// ErrInvalid: a job, a config or an argument failed validation
	// (the error is a *FieldError naming the field).
	ErrInvalid = errors.New("queue: invalid")
	// ErrNotFound: no job with that id.
	ErrNotFound = errors.New("queue: job not found")
	// ErrNotPending: Position was asked about a job that is not pending.
	ErrNotPending = errors.New("queue: job is not pending")
	// ErrIllegalTransition: the job's state does not allow the requested
	// move (the error is a *TransitionError naming from and to).
	ErrIllegalTransition = errors.New("queue: illegal state transition")
	// ErrCorrupt: the file looks like a bbolt database but cannot be read
	// (bad checksum, broken pages, a panic inside bbolt).
	ErrCorrupt = errors.New("queue: database file is corrupt")
	// ErrForeign: the file is not a bbolt database, or is a bbolt database
	// written by another program (no colocd queue magic).
	ErrForeign = errors.New("queue: file is not a colocd queue")
	// ErrSchema: the file was written by a newer colocd (schema version
	// above the one this build knows), or a migration failed.
	ErrSchema = errors.New("queue: unsupported schema version")
	// ErrLocked: another process holds the file lock past Options.Timeout.
	ErrLocked = errors.New("queue: database file is locked by another process")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("queue: store closed")
)

// FieldError names the field that failed validation and why. It wraps
// ErrInvalid. Field uses the JSON names with dots and brackets, e.g.
// "resources.memory_mb", "labels[team]", "starvation.max_skips".
type FieldError struct {
	Field  string
	Reason string
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("queue: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// TransitionError reports a state move the state machine forbids. It wraps
// ErrIllegalTransition.
type TransitionError struct {
	ID       string
	From, To State
}

func (e *TransitionError) Error() string {
	return fmt.Sprintf("queue: job %s: illegal transition %s → %s", e.ID, e.From, e.To)
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) true.
func (e *TransitionError) Unwrap() error { return ErrIllegalTransition }
