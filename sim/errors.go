package sim

import (
	"errors"
	"strconv"
)

// Errors of this package. Validation errors are *FieldError and match
// ErrInvalid with errors.Is.
var (
	ErrInvalid     = errors.New("sim: invalid")
	ErrNoFit       = errors.New("sim: job does not fit the free resources")
	ErrUnknownKind = errors.New("sim: unknown kind")
	ErrUnknownApp  = errors.New("sim: unknown application")
	ErrDuplicate   = errors.New("sim: application already submitted")
	ErrStarted     = errors.New("sim: realtime driver already started")
)

// FieldError is a validation error naming the key path of the bad value,
// e.g. "kinds[2].phases[0].seconds".
type FieldError struct {
	Path   string
	Reason string
	Line   int // line in the YAML document, 0 when unknown
}

func (e *FieldError) Error() string {
	s := e.Path + ": " + e.Reason
	if e.Line > 0 {
		s += " (line " + strconv.Itoa(e.Line) + ")"
	}
	return s
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *FieldError) Is(target error) bool { return target == ErrInvalid }
