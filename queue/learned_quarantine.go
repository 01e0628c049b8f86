package queue

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	bolt "go.etcd.io/bbolt"
)

// QuarantineLearned moves section's stored learned state out of the way, in
// one transaction: every key of its bucket (the header, the dense vector,
// each row) and its single-key snapshot of the layout before rows, if any,
// become quarantined entries in the quarantine bucket — Bucket
// "prefs/learned_<section>" (or "prefs" for the single key), Key the key
// ("header", "dense", a row's index) and "@" the time, so that a later
// quarantine of the same section keeps this one — with their raw bytes and
// reason. Store.Quarantined and `colocd store check` list them. The section
// is then empty: the model starts over and its next save writes it afresh.
// The move is logged at ERROR once it commits. A section that holds
// nothing is left as it is.
//
// The daemon calls it at start for a section whose state does not restore
// (it does not decode, or the model refuses it), rather than refuse to
// start.
func (s *Store) QuarantineLearned(section Section, reason string) error {
	if err := section.valid(); err != nil {
		return err
	}
	_, err := s.commitOne(cmdQuarantineLearned{At: s.stamp(), Section: section, Reason: reason})
	return err
}

// applyQuarantineLearned moves the section aside (cmdQuarantineLearned).
func (s *Store) applyQuarantineLearned(tx *bolt.Tx, c cmdQuarantineLearned) (Result, error) {
	section, reason, at := c.Section, c.Reason, c.At
	if err := section.valid(); err != nil {
		return Result{Err: err}, nil
	}
	suffix := "@" + at.Format(time.RFC3339Nano)
	prefs := tx.Bucket(bucketPrefs)
	var qs []*QuarantinedRecord
	if v := prefs.Get(section.legacy()); v != nil {
		qs = append(qs, &QuarantinedRecord{Bucket: string(bucketPrefs), Key: string(section.legacy()) + suffix, Reason: reason, Raw: cloneBytes(v), At: at})
	}
	name := string(bucketPrefs) + "/" + string(section.bucket())
	if b := prefs.Bucket(section.bucket()); b != nil {
		err := b.ForEach(func(k, v []byte) error {
			qs = append(qs, &QuarantinedRecord{Bucket: name, Key: learnedKeyName(k) + suffix, Reason: reason, Raw: cloneBytes(v), At: at})
			return nil
		})
		if err != nil {
			return Result{}, err
		}
	}
	if len(qs) == 0 {
		return Result{}, nil
	}
	for _, q := range qs {
		if err := putQuarantined(tx, q); err != nil {
			return Result{}, err
		}
	}
	if prefs.Bucket(section.bucket()) != nil {
		if err := prefs.DeleteBucket(section.bucket()); err != nil {
			return Result{}, fmt.Errorf("queue: quarantine learned %s: %w", section, err)
		}
	}
	if err := prefs.Delete(section.legacy()); err != nil {
		return Result{}, fmt.Errorf("queue: quarantine learned %s: %w", section, err)
	}
	path := tx.DB().Path()
	tx.OnCommit(func() {
		s.log.Error("queue: learned state quarantined; that model starts over (colocd store check lists it)",
			"file", path, "section", section, "keys", len(qs), "reason", reason)
	})
	return Result{}, nil
}

// learnedKeyName names a key of a learned section's bucket: "header",
// "dense", a row's index in decimal, or the key quoted.
func learnedKeyName(k []byte) string {
	switch {
	case bytes.Equal(k, keyHeader), bytes.Equal(k, keyDense):
		return string(k)
	case len(k) == 4:
		return strconv.FormatUint(uint64(binary.BigEndian.Uint32(k)), 10)
	}
	return strconv.Quote(string(k))
}
