package goodness

// The external tests' name for an unexported variable or function.
var ErrInvalid = errInvalid

// The external tests' name for an unexported type.
type FieldError = fieldError
