package yarnclient

// Names the external tests use.

// Limits and defaults.
const (
	DefaultMaxOutput = defaultMaxOutput
	DefaultTagEnv    = defaultTagEnv
)

// The sentinel errors.
var (
	ErrBadRequest     = errBadRequest
	ErrCommandTimeout = errCommandTimeout
	ErrDecode         = errDecode
	ErrNoTimeline     = errNoTimeline
	ErrTooLarge       = errTooLarge
	ErrUnavailable    = errUnavailable
)

// Types.
type (
	CommandError = commandError
	Credentials  = credentials
	DecodeError  = decodeError
	Tags         = tags
)
