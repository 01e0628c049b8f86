package queue

import (
	"encoding/json"

	bolt "go.etcd.io/bbolt"
)

// checkLearned adds a "learned" problem for every key of the learned state
// that would not load: in each section's bucket, a header, dense vector or
// row that does not decode (named by its kind when the header names it),
// and a single-key snapshot of the layout before rows that is not JSON.
// Whether the numbers make a valid model is the model's to say, when the
// daemon restores it (a state it refuses is quarantined then:
// Store.QuarantineLearned).
func checkLearned(tx *bolt.Tx, rep *Report) {
	prefs := tx.Bucket(bucketPrefs)
	for _, section := range []Section{SectionPreferences, SectionProfiles} {
		if v := prefs.Get(section.legacy()); v != nil && !json.Valid(v) {
			rep.add("learned", string(bucketPrefs)+"/"+string(section.legacy()),
				"the %s snapshot (the layout before rows) is not JSON; the next colocd start quarantines the %s and learns them afresh", section, section)
		}
		b := prefs.Bucket(section.bucket())
		if b == nil {
			continue
		}
		walkLearned(section, b, func(e *LearnedError) bool {
			where := string(bucketPrefs) + "/" + string(section.bucket()) + "/" + e.Key
			what := e.Reason
			if e.Name != "" {
				what = "the row of " + e.Name + ": " + what
			}
			rep.add("learned", where, "%s; the next colocd start quarantines the %s and learns them afresh", what, section)
			return true
		})
	}
}
