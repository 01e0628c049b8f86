//go:build linux || darwin || freebsd

package queue

import (
	"path/filepath"
	"syscall"
)

// dirFreeSpace reports the bytes an unprivileged writer may still use on
// the file system holding path's directory.
func dirFreeSpace(path string) func() (uint64, error) {
	dir := filepath.Dir(path)
	return func() (uint64, error) {
		var st syscall.Statfs_t
		if err := syscall.Statfs(dir, &st); err != nil {
			return 0, err
		}
		return uint64(st.Bavail) * uint64(st.Bsize), nil
	}
}
