package queue

import (
	bolt "go.etcd.io/bbolt"
)

// SavePreferences stores the learner's snapshot bytes (replacing the last
// ones). Nil or empty b deletes them.
func (s *Store) SavePreferences(b []byte) error {
	return s.update(func(tx *bolt.Tx) error {
		if len(b) == 0 {
			return tx.Bucket(bucketPrefs).Delete(keyPrefs)
		}
		return tx.Bucket(bucketPrefs).Put(keyPrefs, cloneBytes(b))
	})
}

// SaveProfiles stores the profile model's snapshot bytes (replacing the
// last ones; nil deletes them), beside the preferences.
func (s *Store) SaveProfiles(b []byte) error {
	return s.update(func(tx *bolt.Tx) error {
		if len(b) == 0 {
			return tx.Bucket(bucketPrefs).Delete(keyProfiles)
		}
		return tx.Bucket(bucketPrefs).Put(keyProfiles, cloneBytes(b))
	})
}

// LoadProfiles returns the stored profile snapshot bytes, or nil, nil when
// none were saved.
func (s *Store) LoadProfiles() ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(keyProfiles))
		return nil
	})
	return out, err
}

// LoadPreferences returns the stored snapshot bytes, or nil, nil when none
// were saved.
func (s *Store) LoadPreferences() ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(keyPrefs))
		return nil
	})
	return out, err
}

// SaveFairness stores the fairness stage's state (Pipeline.FairnessState,
// encoded; nil deletes it), beside the preferences.
func (s *Store) SaveFairness(b []byte) error {
	return s.update(func(tx *bolt.Tx) error {
		if len(b) == 0 {
			return tx.Bucket(bucketPrefs).Delete(keyFairness)
		}
		return tx.Bucket(bucketPrefs).Put(keyFairness, cloneBytes(b))
	})
}

// LoadFairness returns the stored fairness state bytes, or nil, nil when
// none were saved.
func (s *Store) LoadFairness() ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(keyFairness))
		return nil
	})
	return out, err
}
