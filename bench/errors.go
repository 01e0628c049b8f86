package bench

import "errors"

// Errors of this package; each is wrapped with the field or value at fault.
var (
	// errUnknownPolicy: a policy name that is not one of policies().
	errUnknownPolicy = errors.New("bench: unknown policy")
	// errInvalid: a RunConfig or study configuration field out of range.
	errInvalid = errors.New("bench: invalid configuration")
	// errStuck: jobs are pending, nothing runs, nothing arrives and the
	// policy admits nothing (e.g. max_running 0 with a broken cluster).
	errStuck = errors.New("bench: run cannot make progress")
)
