//go:build !unix

package queue

import "os"

// unlockFile: on other systems closing the file releases bbolt's lock.
func unlockFile(*os.File) {}
