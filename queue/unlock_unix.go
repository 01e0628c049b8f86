//go:build unix

package queue

import (
	"os"
	"syscall"
)

// unlockFile drops bbolt's flock on f. Needed when bbolt panics during Open:
// its memory map still references the file, so closing the descriptor alone
// would keep the lock.
func unlockFile(f *os.File) { _ = syscall.Flock(int(f.Fd()), syscall.LOCK_UN) }
