package daemon

import "errors"

// Sentinel errors of the package. Test with errors.Is; *ConfigError carries
// the key of a configuration error.
var (
	// ErrConfig is wrapped by every configuration error (*ConfigError); the
	// CLI maps it to exit status 2.
	ErrConfig = errors.New("invalid configuration")
	// ErrUnknownApp: the cluster has no application with that id (it never
	// saw a submission under it).
	ErrUnknownApp = errors.New("unknown application")
	// ErrRejected: the cluster refused a submission; it certainly does not
	// run, and retrying it unchanged would fail again.
	ErrRejected = errors.New("submission rejected")
	// ErrMetrics wraps errors of the metrics source during learning; the
	// daemon keeps admitting with its last preferences.
	ErrMetrics = errors.New("metrics source failed")
	// ErrNotReady: the engine has not reconciled with the cluster yet.
	ErrNotReady = errors.New("engine not ready")
	// ErrNotKillable: the job is neither admitted nor running.
	ErrNotKillable = errors.New("job is not admitted or running")
	// ErrSimState wraps errors of the simulator's durable state (data_dir/sim).
	ErrSimState = errors.New("simulator state")
)
