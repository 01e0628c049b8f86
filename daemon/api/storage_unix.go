//go:build unix

package api

import (
	"errors"
	"syscall"
)

// storageErrno finds in err the errno of a file system that cannot take a
// write.
func storageErrno(err error) (syscall.Errno, bool) {
	for _, e := range []syscall.Errno{syscall.ENOSPC, syscall.EDQUOT, syscall.EROFS, syscall.EFBIG, syscall.EIO} {
		if errors.Is(err, e) {
			return e, true
		}
	}
	return 0, false
}
