package bench

import "errors"

// Errors of this package; each is wrapped with the field or value at fault.
var (
	// ErrUnknownPolicy: a policy name that is not one of Policies().
	ErrUnknownPolicy = errors.New("bench: unknown policy")
	// ErrInvalid: a RunConfig or study configuration field out of range.
	ErrInvalid = errors.New("bench: invalid configuration")
	// ErrStuck: jobs are pending, nothing runs, nothing arrives and the
	// policy admits nothing (e.g. max_running 0 with a broken cluster).
	ErrStuck = errors.New("bench: run cannot make progress")
)
