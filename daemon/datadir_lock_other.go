//go:build !unix

package daemon

import "os"

// tryLock: no flock on other systems; the store's own lock (bbolt's) is
// the only guard there.
func tryLock(*os.File) (bool, error) { return true, nil }

func unlock(*os.File) {}
