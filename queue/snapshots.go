package queue

import (
	bolt "go.etcd.io/bbolt"
)

// SavePreferences stores a snapshot of the pair preferences under the
// single key of the layout before rows (replacing the last one; nil or
// empty b deletes it). The daemon saves SectionPreferences with
// SaveLearned; this is what an older colocd wrote, kept to read such a
// store (LoadPreferences, then MigrateLearned) and to write one in tests.
func (s *Store) SavePreferences(b []byte) error {
	_, err := s.commitOne(cmdSaveLegacy{Section: SectionPreferences, Snapshot: b})
	return err
}

// SaveProfiles is SavePreferences for the profile model's snapshot
// (SectionProfiles).
func (s *Store) SaveProfiles(b []byte) error {
	_, err := s.commitOne(cmdSaveLegacy{Section: SectionProfiles, Snapshot: b})
	return err
}

// LoadProfiles returns the profile model's snapshot in the layout before
// rows, or nil, nil when there is none (SaveProfiles).
func (s *Store) LoadProfiles() ([]byte, error) {
	return s.loadPrefsKey(keyProfiles)
}

// LoadPreferences returns the pair preferences' snapshot in the layout
// before rows, or nil, nil when there is none (SavePreferences). A store
// the daemon has opened since holds none: restoring migrated it.
func (s *Store) LoadPreferences() ([]byte, error) {
	return s.loadPrefsKey(keyPrefs)
}

// SaveFairness stores the fairness stage's state (Pipeline.FairnessState,
// encoded; nil deletes it), beside the preferences.
func (s *Store) SaveFairness(b []byte) error {
	_, err := s.commitOne(cmdSaveFairness{State: b})
	return err
}

// LoadFairness returns the stored fairness state bytes, or nil, nil when
// none were saved.
func (s *Store) LoadFairness() ([]byte, error) {
	return s.loadPrefsKey(keyFairness)
}

func (s *Store) loadPrefsKey(k []byte) ([]byte, error) {
	var out []byte
	err := s.view(func(tx *bolt.Tx) error {
		out = cloneBytes(tx.Bucket(bucketPrefs).Get(k))
		return nil
	})
	return out, err
}
