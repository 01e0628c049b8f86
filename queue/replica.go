package queue

import (
	"bytes"
	"fmt"
	"io"
	"os"

	bolt "go.etcd.io/bbolt"
)

// What a replicated log needs of the store besides Apply: a consistent
// copy of the file to bootstrap another replica (a snapshot), and the
// installation of such a copy in place of this store's content.

// WriteSnapshot writes a consistent copy of the store's file to w (one
// read transaction: writers go on meanwhile) and returns the index of the
// last log entry the copy holds.
func (s *Store) WriteSnapshot(w io.Writer) (applied uint64, err error) {
	err = s.view(func(tx *bolt.Tx) error {
		applied = appliedIndex(tx)
		_, err := tx.WriteTo(w)
		return err
	})
	return applied, err
}

// InstallSnapshot replaces the store's content with the content of the
// store file at path (a WriteSnapshot copy), in one transaction: a reader
// sees the old content or the new, and a crash leaves one or the other.
// The copy must be a colocd store of this schema (errForeign, errSchema
// otherwise); this store's quarantine bucket is kept, the copy's is not
// taken, and neither is the copy's cluster when this store follows one
// (its membership is its own). It returns the copy's applied index.
func (s *Store) InstallSnapshot(path string) (uint64, error) {
	src, err := bolt.Open(path, 0o600, &bolt.Options{ReadOnly: true, Timeout: lockTimeout(0)})
	if err != nil {
		return 0, fmt.Errorf("queue: open snapshot %s: %w", path, err)
	}
	defer src.Close()
	var applied uint64
	err = src.View(func(from *bolt.Tx) error {
		if err := checkCopy(from, path); err != nil {
			return err
		}
		applied = appliedIndex(from)
		return s.update(func(to *bolt.Tx) error {
			cluster := cloneBytes(to.Bucket(bucketMeta).Get(keyCluster))
			if err := replaceContent(from, to); err != nil {
				return err
			}
			if cluster == nil {
				return nil
			}
			return to.Bucket(bucketMeta).Put(keyCluster, cluster)
		})
	})
	return applied, err
}

// checkCopy checks that a snapshot is a colocd store of this schema.
func checkCopy(tx *bolt.Tx, path string) error {
	meta := tx.Bucket(bucketMeta)
	if meta == nil || !bytes.Equal(meta.Get(keyMagic), magicValue) {
		return fmt.Errorf("%w: snapshot %s", errForeign, path)
	}
	if v := meta.Get(keySchema); len(v) != 8 || u64be(v) != schemaVersion {
		return fmt.Errorf("%w: snapshot %s has schema %v, this build writes %d", errSchema, path, v, schemaVersion)
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("%w: snapshot %s: bucket %q missing", ErrCorrupt, path, name)
		}
	}
	return nil
}

// replaceContent drops every bucket of to but the quarantine and copies
// every bucket of from but the quarantine, nested buckets and sequences
// included.
func replaceContent(from, to *bolt.Tx) error {
	var names [][]byte
	if err := to.ForEach(func(name []byte, _ *bolt.Bucket) error {
		if !bytes.Equal(name, bucketQuarantine) {
			names = append(names, cloneBytes(name))
		}
		return nil
	}); err != nil {
		return err
	}
	for _, name := range names {
		if err := to.DeleteBucket(name); err != nil {
			return err
		}
	}
	return from.ForEach(func(name []byte, b *bolt.Bucket) error {
		if bytes.Equal(name, bucketQuarantine) {
			return nil
		}
		nb, err := to.CreateBucket(name)
		if err != nil {
			return err
		}
		return copyBucket(b, nb)
	})
}

func copyBucket(from, to *bolt.Bucket) error {
	if err := to.SetSequence(from.Sequence()); err != nil {
		return err
	}
	return from.ForEach(func(k, v []byte) error {
		if v != nil {
			return to.Put(k, v)
		}
		nb, err := to.CreateBucket(k)
		if err != nil {
			return err
		}
		return copyBucket(from.Bucket(k), nb)
	})
}

func u64be(b []byte) uint64 {
	var n uint64
	for _, c := range b {
		n = n<<8 | uint64(c)
	}
	return n
}

// SnapshotFile writes a snapshot of the store to a new temporary file in
// dir and returns its path and applied index; the caller removes it.
func (s *Store) SnapshotFile(dir string) (string, uint64, error) {
	f, err := os.CreateTemp(dir, "snapshot-*.db")
	if err != nil {
		return "", 0, err
	}
	applied, err := s.WriteSnapshot(f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(f.Name())
		return "", 0, err
	}
	return f.Name(), applied, nil
}

// keyCluster is the meta key naming the replicated colocd cluster whose
// log this store follows (package ha): a store follows one log only.
var keyCluster = []byte("cluster")

// Cluster is the replicated cluster this store follows ("" for none).
func (s *Store) Cluster() (string, error) {
	var id string
	err := s.view(func(tx *bolt.Tx) error {
		id = string(tx.Bucket(bucketMeta).Get(keyCluster))
		return nil
	})
	return id, err
}

// JoinCluster records that the store follows cluster id's log from now
// on. It is the file's membership, not a command of the log.
func (s *Store) JoinCluster(id string) error {
	return s.update(func(tx *bolt.Tx) error {
		return tx.Bucket(bucketMeta).Put(keyCluster, []byte(id))
	})
}
