package queue

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	bolt "go.etcd.io/bbolt"
)

// ReleaseOptions configure Release. The zero value waits 1 s for the lock.
type ReleaseOptions struct {
	// Timeout bounds the wait for the file lock (a running colocd holds
	// it), as Options.Timeout.
	Timeout time.Duration
	// Log receives what opening the store logs; nil discards it.
	Log *slog.Logger
}

// errRelease: Release refused the record or the job.
var errRelease = errors.New("queue: release refused")

// Release puts quarantined job id back into the store file at path as a
// pending job, from record: the job's JSON as the store keeps it (the
// quarantined bytes repaired, `colocd store check --json` shows them; or
// the job as its submitter sent it, for a job a salvage lost), read
// strictly (an unknown field is refused). The store must be closed: Release
// opens it with the exclusive lock, as colocd does.
//
// Only a job the indexes last placed in the pending state comes back: one
// that was admitted or running may have an application on the cluster,
// and putting it back as pending would submit it again. The record keeps
// the job's id (empty takes id), its sequence number (0 takes the one the
// indexes gave it; any other must equal it), so the job sits where it sat
// in the FIFO; its state is pending; it must pass submit-time validation.
// Its idempotency key is indexed again, unless another job holds it. Then
// the quarantine entry is removed.
//
// Quarantine is this file's own business (the damage was this disk's), and
// so is its release: a replica's store (package ha) is refused, since its
// content must stay what the log gives every replica.
func Release(path, id string, record []byte, opts ReleaseOptions) (Job, error) {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	s, err := Open(path, Options{Timeout: opts.Timeout, Logger: log})
	if err != nil {
		return Job{}, err
	}
	var j Job
	err = s.update(func(tx *bolt.Tx) error {
		var err error
		j, err = releaseTx(tx, id, record)
		return err
	})
	if cerr := s.Close(); err == nil && cerr != nil {
		err = cerr
	}
	if err != nil {
		return Job{}, err
	}
	return j, nil
}

func releaseTx(tx *bolt.Tx, id string, record []byte) (Job, error) {
	refuse := func(format string, args ...any) (Job, error) {
		return Job{}, fmt.Errorf("%w: job %s: %s", errRelease, id, fmt.Sprintf(format, args...))
	}
	if c := tx.Bucket(bucketMeta).Get(keyCluster); c != nil {
		return refuse("the store is a replica's (it follows cluster %q): a replica's content is what the log gives it", c)
	}
	qb := tx.Bucket(bucketQuarantine)
	var raw []byte
	if qb != nil {
		raw = qb.Get(quarantineKey(string(bucketJobs), id))
	}
	if raw == nil {
		if tx.Bucket(bucketJobs).Get([]byte(id)) != nil {
			return refuse("it is not quarantined: its record is in the store")
		}
		return Job{}, fmt.Errorf("%w: job %s is not quarantined", ErrNotFound, id)
	}
	var q QuarantinedRecord
	if err := json.Unmarshal(raw, &q); err != nil {
		return refuse("its quarantine entry does not decode (%v): where it sat is not known", err)
	}
	if q.State != StatePending || q.Seq == 0 {
		state := string(q.State)
		if state == "" {
			state = "not known"
		}
		return refuse("its state when quarantined is %s, not pending: it may have an application on the cluster, and a release would submit it again", state)
	}
	var j Job
	dec := json.NewDecoder(bytes.NewReader(record))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&j); err != nil {
		return refuse("the record does not decode as a job: %v", err)
	}
	if dec.More() {
		return refuse("the record holds more than one JSON value")
	}
	switch {
	case j.ID == "":
		j.ID = id
	case j.ID != id:
		return refuse("the record is job %s", j.ID)
	}
	switch {
	case j.Seq == 0:
		j.Seq = q.Seq
	case j.Seq != q.Seq:
		return refuse("the record has sequence number %d; the indexes placed the job at %d", j.Seq, q.Seq)
	}
	if j.State != "" && j.State != StatePending {
		return refuse("the record's state is %s: a job is released as pending", j.State)
	}
	j.State = StatePending
	if err := j.Validate(); err != nil {
		return refuse("the record is not a valid job: %v", err)
	}
	if j.CreatedAt.IsZero() {
		return refuse("the record has no created_at")
	}
	if other := tx.Bucket(bucketPending).Get(u64(j.Seq)); other != nil {
		return refuse("job %s holds its sequence number %d", other, j.Seq)
	}
	if j.IdempotencyKey != "" {
		k := idemKey(j.User, j.IdempotencyKey)
		switch holder := tx.Bucket(bucketIdem).Get(k); {
		case holder == nil:
			if err := tx.Bucket(bucketIdem).Put(k, []byte(j.ID)); err != nil {
				return Job{}, err
			}
		case string(holder) != j.ID:
			return refuse("its idempotency key %q is held by job %s", j.IdempotencyKey, holder)
		}
	}
	if err := putJob(tx, &j); err != nil {
		return Job{}, err
	}
	if err := index(tx, &j, ""); err != nil {
		return Job{}, err
	}
	if err := qb.Delete(quarantineKey(string(bucketJobs), id)); err != nil {
		return Job{}, err
	}
	if seq := tx.Bucket(bucketJobs).Sequence(); j.Seq > seq {
		if err := tx.Bucket(bucketJobs).SetSequence(j.Seq); err != nil {
			return Job{}, err
		}
	}
	return j, nil
}
