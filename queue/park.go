package queue

import (
	"time"

	bolt "go.etcd.io/bbolt"
)

// Park moves an admitted or running job to parked: the cluster no longer
// knows its application and nobody can tell whether it ran. The job keeps
// its AppID; reason goes to Diagnostics. A parked job is not pending (it
// is never admitted again on its own) and holds no resources in the
// pipeline's accounting; Resolve ends the parking.
func (s *Store) Park(id, reason string) (Job, error) {
	return s.move(id, StateParked, func(_ *bolt.Tx, j *Job, _ time.Time) error {
		j.Diagnostics = truncate(reason, MaxDiagnosticsBytes)
		return nil
	})
}

// Resolve ends a parked job as an operator decided: StatePending runs it
// again (it never ran: back to its place in the FIFO under a new
// application id, counted as a requeue), StateSucceeded, StateFailed or
// StateKilled records how it ended (it ran; no runtime is added to the
// kind's history, since none was observed). reason goes to Diagnostics.
// Any other target, or a job that is not parked, is an error.
func (s *Store) Resolve(id string, to State, reason string) (Job, error) {
	switch to {
	case StatePending, StateSucceeded, StateFailed, StateKilled:
	default:
		return Job{}, fieldErr("state", "%q is not pending, succeeded, failed or killed", to)
	}
	var out Job
	err := s.update(func(tx *bolt.Tx) error {
		j, err := getJob(tx, id)
		if err != nil {
			return err
		}
		if j.State != StateParked {
			return &TransitionError{ID: id, From: j.State, To: to}
		}
		now := s.stamp()
		j.State = to
		j.Diagnostics = truncate(reason, MaxDiagnosticsBytes)
		if to == StatePending {
			j.AppID, j.AdmittedAt, j.RunningAt, j.Decision = "", nil, nil, nil
			j.Requeues++
		} else {
			j.FinishedAt = &now
		}
		if err := putJob(tx, &j); err != nil {
			return err
		}
		if err := index(tx, &j, StateParked); err != nil {
			return err
		}
		out = j
		return nil
	})
	if err != nil {
		return Job{}, err
	}
	return out, nil
}
