package bandit

// The external tests' names for unexported constants.
const (
	MaxSelfPrior    = maxSelfPrior
	SnapshotVersion = snapshotVersion
)

// The external tests' names for unexported variables and functions.
var (
	ErrInvalidConfig       = errInvalidConfig
	ErrUnknownBaselineMode = errUnknownBaselineMode
)
