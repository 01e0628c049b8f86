package queue

import (
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
