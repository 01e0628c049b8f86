package collector

// Names the external tests use.

// LanguageFlux is languageFlux.
const LanguageFlux = languageFlux

// The sentinel errors.
var (
	ErrAuth     = errAuth
	ErrBadQuery = errBadQuery
	ErrInvalid  = errInvalid
)

// FieldError is fieldError.
type FieldError = fieldError
