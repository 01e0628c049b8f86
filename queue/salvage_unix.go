//go:build unix

package queue

import (
	"os"
	"syscall"
)

// sameOwner gives path the owner and group of fi's file, as far as this
// process may (root may; anyone may keep their own): a salvage run as root
// for a daemon that runs as its own user writes a file that user can open.
func sameOwner(path string, fi os.FileInfo) error {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok || int(st.Uid) == os.Getuid() && int(st.Gid) == os.Getgid() {
		return nil
	}
	return os.Chown(path, int(st.Uid), int(st.Gid))
}
