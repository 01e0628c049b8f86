package queue

import (
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
)

// The stages of Open's whole-file check, one at a time, for the benchmark.

// WalkFile runs the meta inspection and the page walk on path.
func WalkFile(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	in, err := inspect(f)
	if err != nil {
		return nil, err
	}
	if err := in.fileError(path); err != nil {
		return nil, err
	}
	return walkPages(f, &in), nil
}

// BoltCheck runs bbolt's tx.Check on path.
func BoltCheck(path string) error {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return err
	}
	defer db.Close()
	return check(db)
}

// ScanRecords runs the record scan on path and returns how many records
// are damaged and how many index entries disagree.
func ScanRecords(path string) (damaged, diffs, live int, err error) {
	db, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true})
	if err != nil {
		return 0, 0, 0, err
	}
	defer db.Close()
	err = db.View(func(tx *bolt.Tx) error {
		r := scanRecords(tx)
		damaged, diffs, live = len(r.damaged), r.ndiffs, len(r.live)
		if r.rebuild && r.ndiffs == 0 && len(r.damaged) == 0 {
			return fmt.Errorf("rebuild without a reason")
		}
		return nil
	})
	return damaged, diffs, live, err
}
