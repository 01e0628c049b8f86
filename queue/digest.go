package queue

import (
	"crypto/sha256"
	"encoding/binary"

	bolt "go.etcd.io/bbolt"
)

// Digest is a SHA-256 of the store's logical content — every bucket's
// keys, values and sequence, in key order, nested buckets included —
// read in one transaction with the applied index it belongs to. Two
// replicas that applied the same log to the same index have the same
// digest, whatever their files' page layouts. The quarantine bucket is
// left out: what a damaged disk held is that disk's own.
func (s *Store) Digest() (applied uint64, sum [32]byte, err error) {
	h := sha256.New()
	err = s.view(func(tx *bolt.Tx) error {
		applied = appliedIndex(tx)
		return tx.ForEach(func(name []byte, b *bolt.Bucket) error {
			if string(name) == string(bucketQuarantine) {
				return nil
			}
			return walkContent(nil, name, b, func(path, k, v []byte) {
				for _, p := range [][]byte{path, k, v} {
					h.Write(binary.BigEndian.AppendUint32(nil, uint32(len(p))))
					h.Write(p)
				}
			})
		})
	})
	copy(sum[:], h.Sum(nil))
	return applied, sum, err
}

// walkContent calls fn for every key of b (a nested bucket's keys under
// its own path, with a nil value) and once for b's sequence (a nil key).
func walkContent(parent, name []byte, b *bolt.Bucket, fn func(path, k, v []byte)) error {
	path := append(append(append([]byte(nil), parent...), '/'), name...)
	fn(path, nil, binary.BigEndian.AppendUint64(nil, b.Sequence()))
	return b.ForEach(func(k, v []byte) error {
		if v != nil {
			fn(path, k, v)
			return nil
		}
		fn(path, k, nil)
		return walkContent(path, k, b.Bucket(k), fn)
	})
}
