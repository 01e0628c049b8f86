package queue

// Park moves an admitted or running job to parked: the cluster no longer
// knows its application and nobody can tell whether it ran. The job keeps
// its AppID; reason goes to Diagnostics. A parked job is not pending (it
// is never admitted again on its own) and holds no resources in the
// pipeline's accounting; Resolve ends the parking.
func (s *Store) Park(id, reason string) (Job, error) {
	s.running.forget(id)
	return jobResult(s.commitOne(cmdPark{At: s.stamp(), ID: id, Reason: reason}))
}

// Resolve ends a parked job as an operator decided: StatePending runs it
// again (it never ran: back to its place in the FIFO under a new
// application id, counted as a requeue), StateSucceeded, StateFailed or
// StateKilled records how it ended (it ran; no runtime is added to the
// kind's history, since none was observed). reason goes to Diagnostics.
// Any other target, or a job that is not parked, is an error.
func (s *Store) Resolve(id string, to State, reason string) (Job, error) {
	return jobResult(s.commitOne(cmdResolve{At: s.stamp(), ID: id, To: to, Reason: reason}))
}
