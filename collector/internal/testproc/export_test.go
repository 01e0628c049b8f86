package testproc

// Names the external tests use.

// DefaultKillTimeout is defaultKillTimeout.
const DefaultKillTimeout = defaultKillTimeout

// The sentinel errors.
var (
	ErrExited   = errExited
	ErrKilled   = errKilled
	ErrNotReady = errNotReady
)

// Option is option.
type Option = option

// WithStopTimeouts is withStopTimeouts.
var WithStopTimeouts = withStopTimeouts
