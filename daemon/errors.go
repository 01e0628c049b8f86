package daemon

import "errors"

// ErrConfig is wrapped by every configuration error (*configError); the CLI
// maps it to exit status 2.
var ErrConfig = errors.New("invalid configuration")
