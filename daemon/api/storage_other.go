//go:build !unix

package api

import "syscall"

// storageErrno recognises no errno outside Unix.
func storageErrno(error) (syscall.Errno, bool) { return 0, false }
