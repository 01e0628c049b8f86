//go:build !(linux || darwin || freebsd)

package queue

// dirFreeSpace: outside Unix the free space is not read, and the reserve
// is not enforced (Options.FreeSpace can still provide it).
func dirFreeSpace(string) func() (uint64, error) { return nil }
