package queue

import (
	"errors"
	"fmt"
	"syscall"
)

// The space reserve.
//
// On a full disk bbolt still commits whatever fits in the pages its file
// already holds (its freelist), so a nearly full disk does not fail every
// write: a submission may fail while the next one, or a state change,
// succeeds. Jobs already accepted must still be admitted and finish, so
// the store keeps Options.Reserve bytes of the file system for them:
// below it, Submit refuses new jobs with a *SpaceError before writing
// anything, and every other write goes on. A retry of an accepted job's
// idempotency key still gets the job back.

// ErrLowSpace: the file system holding the store has less free space than
// Options.Reserve; Submit takes no new job (the error is a *SpaceError,
// which also matches syscall.ENOSPC).
var ErrLowSpace = errors.New("queue: low on space")

// SpaceError is a submission refused under the space reserve.
type SpaceError struct {
	Free, Reserve uint64 // bytes
}

func (e *SpaceError) Error() string {
	return fmt.Sprintf("queue: the data directory has %s free, below the reserve of %s kept for the jobs already accepted",
		formatBytes(e.Free), formatBytes(e.Reserve))
}

// Is matches ErrLowSpace and syscall.ENOSPC: callers that handle a full
// disk handle this too.
func (e *SpaceError) Is(target error) bool {
	return target == ErrLowSpace || target == syscall.ENOSPC
}

// CheckSpace returns a *SpaceError when the file system holding the store
// has less free space than Options.Reserve, nil otherwise: with no
// reserve, or when the free space cannot be read (the writes will say what
// is wrong).
func (s *Store) CheckSpace() error {
	if s.reserve == 0 || s.freeSpace == nil {
		return nil
	}
	free, err := s.freeSpace()
	if err != nil || free >= s.reserve {
		return nil
	}
	return &SpaceError{Free: free, Reserve: s.reserve}
}

// formatBytes writes n in binary units ("12.5 MiB").
func formatBytes(n uint64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := uint64(unit), 0
	for m := n / unit; m >= unit && exp < 5; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGTPE"[exp])
}
