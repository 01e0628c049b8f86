package queue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"

	bolt "go.etcd.io/bbolt"
	bolterrors "go.etcd.io/bbolt/errors"
)

// sniff looks for bbolt's meta-page magic before bbolt reads the file, so a
// foreign file is reported as such instead of as corrupt. An empty file is
// left to the opener, which refuses it unless this Open created it.
func sniff(path string) error {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("queue: open %s: %w", path, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("queue: stat %s: %w", path, err)
	}
	if st.Size() == 0 {
		return nil
	}
	if st.IsDir() {
		return fmt.Errorf("%w: %s is a directory", errForeign, path)
	}
	var buf [4]byte
	// The meta page header is 16 bytes (id, flags, count, overflow); the
	// magic follows. Page 0 holds the first meta, page 1 the second.
	for _, off := range append([]int{0}, boltPageSzs...) {
		if _, err := f.ReadAt(buf[:], int64(off)+16); err != nil {
			continue
		}
		if binary.LittleEndian.Uint32(buf[:]) == boltMagic || binary.BigEndian.Uint32(buf[:]) == boltMagic {
			return nil
		}
	}
	return fmt.Errorf("%w: %s is not a bbolt database (no meta page magic)", errForeign, path)
}

// safeOpen calls bolt.Open with o as its OpenFile hook, turning bbolt's
// errors and panics into ours. The hook's own errors (lock, short file,
// meta pages, page walk) come back as they are. When bbolt panics it has
// already locked the file; we unlock and close it, so the process can retry
// or open another copy.
func safeOpen(path string, o *opener, bo *bolt.Options) (db *bolt.DB, err error) {
	var hookErr error
	bo.OpenFile = func(name string, flag int, perm os.FileMode) (*os.File, error) {
		f, err := o.open(name, flag, perm)
		hookErr = err
		return f, err
	}
	bo.ReadOnly = o.readOnly
	defer func() {
		if r := recover(); r != nil {
			if o.file != nil { // the memory map bbolt made stays: a small leak
				unlockFile(o.file)
				o.file.Close()
			}
			db, err = nil, fmt.Errorf("%w: %s: bbolt panicked on open: %v", ErrCorrupt, path, r)
		}
	}()
	db, err = bolt.Open(path, 0o600, bo)
	switch {
	case err == nil:
		return db, nil
	case hookErr != nil:
		return nil, hookErr
	case errors.Is(err, bolterrors.ErrTimeout):
		return nil, o.lockedError()
	case errors.Is(err, os.ErrPermission), errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("queue: open %s: %w", path, err)
	default:
		return nil, fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
	}
}

// initialise classifies the file (fresh, ours, foreign, newer), creates the
// layout on a fresh file and runs migrations on an older one. Panics inside
// bbolt (corrupt pages) become ErrCorrupt.
func initialise(db *bolt.DB, sch schema) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: bbolt panicked reading the file: %v", ErrCorrupt, db.Path(), r)
		}
	}()
	fresh, version, err := classify(db, sch)
	if err != nil {
		return err
	}
	switch {
	case fresh:
		return db.Update(func(tx *bolt.Tx) error {
			for _, name := range allBuckets {
				if _, err := tx.CreateBucketIfNotExists(name); err != nil {
					return fmt.Errorf("queue: create bucket %s: %w", name, err)
				}
			}
			meta := tx.Bucket(bucketMeta)
			if err := meta.Put(keyMagic, magicValue); err != nil {
				return err
			}
			return meta.Put(keySchema, u64(sch.version))
		})
	case version < sch.version:
		return db.Update(func(tx *bolt.Tx) error { return migrate(tx, db.Path(), sch, version) })
	}
	return nil
}

// classify reads the file: fresh (no bucket), or colocd's at schema
// version; another program's, a newer schema or a missing layout is an
// error. At the current schema every bucket's root is touched, so a
// broken page shows now.
func classify(db *bolt.DB, sch schema) (fresh bool, version uint64, err error) {
	err = db.View(func(tx *bolt.Tx) error {
		empty := true
		if err := tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil }); err != nil {
			return err
		}
		if empty {
			fresh = true
			return nil
		}
		meta := tx.Bucket(bucketMeta)
		if meta == nil || !bytes.Equal(meta.Get(keyMagic), magicValue) {
			return fmt.Errorf("%w: %s is a bbolt database of another program", errForeign, db.Path())
		}
		v := meta.Get(keySchema)
		if len(v) != 8 {
			return fmt.Errorf("%w: %s: schema version key missing or malformed", ErrCorrupt, db.Path())
		}
		version = binary.BigEndian.Uint64(v)
		if version > sch.version {
			return fmt.Errorf("%w: %s has schema %d, this build knows up to %d (newer colocd?)", errSchema, db.Path(), version, sch.version)
		}
		if version == sch.version {
			for _, name := range allBuckets {
				b := tx.Bucket(name)
				if b == nil {
					return fmt.Errorf("%w: %s: bucket %q missing", ErrCorrupt, db.Path(), name)
				}
				b.Cursor().First()
			}
		}
		return nil
	})
	return fresh, version, err
}

// migrate runs the migrations from schema version to sch's in tx.
func migrate(tx *bolt.Tx, path string, sch schema, version uint64) error {
	for v := version; v < sch.version; v++ {
		m, ok := sch.migrations[v]
		if !ok {
			return fmt.Errorf("%w: %s: no migration from schema %d to %d", errSchema, path, v, v+1)
		}
		if err := m(tx); err != nil {
			return fmt.Errorf("%w: %s: migration %d → %d: %w", errSchema, path, v, v+1, err)
		}
	}
	for _, name := range allBuckets {
		if tx.Bucket(name) == nil {
			return fmt.Errorf("%w: %s: bucket %q missing after migration", errSchema, path, name)
		}
	}
	return tx.Bucket(bucketMeta).Put(keySchema, u64(sch.version))
}

// check runs bbolt's consistency check.
func check(db *bolt.DB) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%w: %s: bbolt panicked during check: %v", ErrCorrupt, db.Path(), r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		var errs []error
		for e := range tx.Check() {
			errs = append(errs, e)
		}
		if len(errs) > 0 {
			return fmt.Errorf("%w: %s: %w (restore the file from a backup, or copy what it still holds with `colocd store salvage --to NEW`)",
				ErrCorrupt, db.Path(), errors.Join(errs...))
		}
		return nil
	})
}
