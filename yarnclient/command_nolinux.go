//go:build unix && !linux

package yarnclient

import "syscall"

// parentDeath does nothing where there is no PR_SET_PDEATHSIG: a command
// can outlive the daemon there.
func parentDeath(*syscall.SysProcAttr) {}
