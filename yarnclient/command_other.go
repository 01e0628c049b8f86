//go:build !unix

package yarnclient

import "os/exec"

// setProcessGroup is a no-op where process groups do not exist; cancellation
// kills only the command itself.
func setProcessGroup(*exec.Cmd) {}
