//go:build unix

package daemon

import "syscall"

// statFree is the bytes available to an unprivileged user on dir's file
// system (statfs f_bavail × f_bsize), as queue's reserve reads them.
func statFree(dir string) (uint64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return st.Bavail * uint64(st.Bsize), nil
}
