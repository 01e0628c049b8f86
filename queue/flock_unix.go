//go:build unix

package queue

import (
	"errors"
	"os"
	"syscall"
	"time"
)

// errLockTimeout: lockFile gave up waiting.
var errLockTimeout = errors.New("timed out waiting for the file lock")

// lockFile takes the flock bbolt takes (bolt_unix.go, flock): exclusive
// for writing, shared for reading, retried every 50 ms until timeout (0:
// forever).
func lockFile(f *os.File, exclusive bool, timeout time.Duration) error {
	how := syscall.LOCK_SH | syscall.LOCK_NB
	if exclusive {
		how = syscall.LOCK_EX | syscall.LOCK_NB
	}
	const retry = 50 * time.Millisecond
	start := time.Now()
	for {
		err := syscall.Flock(int(f.Fd()), how)
		if err == nil {
			return nil
		}
		if !errors.Is(err, syscall.EWOULDBLOCK) {
			return err
		}
		if timeout != 0 && time.Since(start) > timeout-retry {
			return errLockTimeout
		}
		time.Sleep(retry)
	}
}
