package ha

// The external tests' name for an unexported constant.
const EventSnapshotInstalled = eventSnapshotInstalled

// The external tests' name for an unexported variable or function.
var ErrOtherCluster = errOtherCluster

// The external tests' name for an unexported type.
type NotLeaderError = notLeaderError

// SetSnapshotHook runs f in each snapshot after the store is packed;
// the returned function removes it.
func SetSnapshotHook(f func()) (restore func()) {
	snapshotHook = f
	return func() { snapshotHook = nil }
}
