package queue

import (
	"errors"
	"fmt"
	"time"
)

// Sentinel errors. Every error the package returns wraps one of them (test
// with errors.Is); *FieldError and *transitionError carry the details.
var (
	// ErrInvalid: a job, a config or an argument failed validation
	// (the error is a *FieldError naming the field).
	ErrInvalid = errors.New("queue: invalid")
	// ErrNotFound: no job with that id.
	ErrNotFound = errors.New("queue: job not found")
	// ErrNotPending: Position was asked about a job that is not pending.
	ErrNotPending = errors.New("queue: job is not pending")
	// ErrIllegalTransition: the job's state does not allow the requested
	// move (the error is a *transitionError naming from and to).
	ErrIllegalTransition = errors.New("queue: illegal state transition")
	// ErrCorrupt: the file looks like a bbolt database but cannot be read
	// (bad checksum, broken pages, a panic inside bbolt). *MetaError and
	// *truncatedError wrap it with the details.
	ErrCorrupt = errors.New("queue: database file is corrupt")
	// errQuarantined: the job's stored record was damaged (it did not decode
	// or broke an invariant) and was moved to the quarantine bucket; the job
	// will never be admitted. The error is a *QuarantinedError; the raw bytes
	// are in Store.Quarantined.
	errQuarantined = errors.New("queue: job record quarantined")
	// errForeign: the file is not a bbolt database, or is a bbolt database
	// written by another program (no colocd queue magic).
	errForeign = errors.New("queue: file is not a colocd queue")
	// errSchema: the file was written by a newer colocd (schema version
	// above the one this build knows), or a migration failed.
	errSchema = errors.New("queue: unsupported schema version")
	// errLocked: another process holds the file lock past Options.Timeout.
	errLocked = errors.New("queue: database file is locked by another process")
	// ErrClosed: the store was closed.
	ErrClosed = errors.New("queue: store closed")
	// ErrRefused: a job that is well formed but that the configuration
	// does not allow (a submit parameter the operator did not declare, a
	// tag reserved for colocd): a *FieldError with Refused set matches it
	// as well as ErrInvalid.
	ErrRefused = errors.New("queue: refused by the configuration")
)

// FieldError names the field that failed validation and why. It wraps
// ErrInvalid. Field uses the JSON names with dots and brackets, e.g.
// "resources.memory_mb", "labels[team]", "starvation.max_skips".
type FieldError struct {
	Field  string
	Reason string
	// Refused: the field is well formed, but the configuration does not
	// allow its value (errors.Is(err, ErrRefused)).
	Refused bool
}

func (e *FieldError) Error() string {
	return fmt.Sprintf("queue: invalid %s: %s", e.Field, e.Reason)
}

// Unwrap makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Unwrap() error { return ErrInvalid }

// Is makes errors.Is(err, ErrRefused) true when e.Refused.
func (e *FieldError) Is(target error) bool { return target == ErrRefused && e.Refused }

// FieldReason is the field and the reason, for a config loader that
// names the whole key.
func (e *FieldError) FieldReason() (field, reason string) { return e.Field, e.Reason }

func fieldErr(field, format string, args ...any) error {
	return &FieldError{Field: field, Reason: fmt.Sprintf(format, args...)}
}

// transitionError reports a state move the state machine forbids. It wraps
// ErrIllegalTransition.
type transitionError struct {
	ID       string
	From, To State
}

func (e *transitionError) Error() string {
	return fmt.Sprintf("queue: job %s: illegal transition %s → %s", e.ID, e.From, e.To)
}

// Unwrap makes errors.Is(err, ErrIllegalTransition) true.
func (e *transitionError) Unwrap() error { return ErrIllegalTransition }

// MetaError reports a damaged bbolt meta page. bbolt keeps two meta pages
// and opens at the valid one with the higher txid, so when the newer one is
// damaged it silently rolls back the last committed transaction. Open
// refuses the file instead, unless Options.AcceptMetaFallback. It wraps
// ErrCorrupt.
type MetaError struct {
	Path string
	// Page is the damaged meta page (0 or 1), or -1 when both are.
	Page int
	// Meta is what was read of page 0 and page 1 (Damage says what is wrong
	// with each; empty on a valid page).
	Meta [2]metaPage
	// ValidTxid is the txid of the valid page, the state bbolt opens at;
	// LostTxid = ValidTxid+1 is the transaction lost if the damaged page was
	// the newer one (its own txid field cannot be trusted). Both are zero
	// when both pages are damaged.
	ValidTxid, LostTxid uint64
}

func (e *MetaError) Error() string {
	if e.Page < 0 {
		return fmt.Sprintf("%v: %s: both bbolt meta pages are damaged (page 0: %s; page 1: %s), so bbolt cannot open it; "+
			"restore the file from a backup, or try `colocd store salvage --to NEW`, which walks from a damaged page whose root still fits the file",
			ErrCorrupt, e.Path, e.Meta[0].Damage, e.Meta[1].Damage)
	}
	d, v := e.Meta[e.Page], e.Meta[1-e.Page]
	return fmt.Sprintf("%v: %s: bbolt meta page %d (bytes %d–%d) is damaged: %s; its txid field reads %d. "+
		"bbolt would fall back to meta page %d (txid %d) and silently drop transaction %d, with every job acknowledged in it, "+
		"if page %d was the newer one. Stop colocd, copy the file aside and restore it from a backup; "+
		"or accept losing transaction %d: open it once with the meta fallback accepted (queue.Options.AcceptMetaFallback), "+
		"which rewrites the damaged page. `colocd store check` shows both pages",
		ErrCorrupt, e.Path, e.Page, d.Offset, d.Offset+metaEnd-1, d.Damage, d.Txid,
		v.Page, e.ValidTxid, e.LostTxid, e.Page, e.LostTxid)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *MetaError) Unwrap() error { return ErrCorrupt }

// truncatedError reports a store file too short to be what it claims: 0
// bytes (bbolt would silently start a new, empty database in it), shorter
// than bbolt's two meta pages, or shorter than the pages its meta page
// says are in use. It wraps ErrCorrupt.
type truncatedError struct {
	Path string
	Size int64 // the file's size in bytes
	Want int64 // the least size it should have (0 for an empty file)
	Why  string
}

func (e *truncatedError) Error() string {
	return fmt.Sprintf("%v: %s is %d bytes: %s. Restore it from a backup, or move it aside to start an empty queue",
		ErrCorrupt, e.Path, e.Size, e.Why)
}

// Unwrap makes errors.Is(err, ErrCorrupt) true.
func (e *truncatedError) Unwrap() error { return ErrCorrupt }

// QuarantinedError is returned for a job whose record was quarantined. It
// wraps errQuarantined.
type QuarantinedError struct {
	ID     string
	Reason string    // what was wrong with the record
	At     time.Time // when it was quarantined
}

func (e *QuarantinedError) Error() string {
	return fmt.Sprintf("queue: job %s: its stored record was damaged (%s) and quarantined at %s; it will not run. "+
		"`colocd store check` lists the raw bytes; resubmit it if it should still run",
		e.ID, e.Reason, e.At.Format(time.RFC3339))
}

// Unwrap makes errors.Is(err, errQuarantined) true.
func (e *QuarantinedError) Unwrap() error { return errQuarantined }
