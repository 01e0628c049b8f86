package ha

// The external tests' name for an unexported constant.
const EventSnapshotInstalled = eventSnapshotInstalled

// The external tests' name for an unexported variable or function.
var ErrOtherCluster = errOtherCluster

// The external tests' name for an unexported type.
type NotLeaderError = notLeaderError
