//go:build !unix

package daemon

import "errors"

func statFree(string) (uint64, error) { return 0, errors.New("free space: not on this platform") }
