package queue

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime/debug"
	"strings"
	"time"

	bolt "go.etcd.io/bbolt"
)

// CheckOptions configure Check. The zero value waits 1 s for the lock.
type CheckOptions struct {
	// Timeout bounds the wait for the shared lock (a running colocd holds
	// the file exclusively). Zero means 1 s; negative means wait forever.
	Timeout time.Duration
}

// problem is one thing Check found wrong.
type problem struct {
	// Kind is "file" (size), "meta" (a bbolt meta page), "pages" (the page
	// walk), "bbolt" (bbolt's tx.Check or open), "layout" (colocd's
	// buckets), "record" (a job or kind history that would be quarantined),
	// "index" (an index entry that disagrees with the records) or
	// "learned" (a key of the learned preferences or profiles that would
	// not load).
	Kind  string `json:"kind"`
	Where string `json:"where"` // "meta page 1", "jobs/<id>", "kinds/<kind>", the file
	What  string `json:"what"`
}

// Report is what Check found.
type Report struct {
	Path     string      `json:"path"`
	Size     int64       `json:"size"`
	PageSize int64       `json:"page_size"`
	Meta     [2]metaPage `json:"meta"`
	// Txid is the transaction bbolt opens the file at (0 when it cannot).
	Txid   uint64 `json:"txid"`
	Schema uint64 `json:"schema"`
	// Scanned says the records were read (not when the file or its pages
	// are too damaged for bbolt to read them safely).
	Scanned bool          `json:"scanned"`
	Jobs    map[State]int `json:"jobs"`  // intact job records by state
	Kinds   int           `json:"kinds"` // intact kind histories
	// Problems is everything wrong, most basic first; empty when clean.
	Problems []problem `json:"problems"`
	// Quarantined are the records Open (or a read) already moved aside:
	// handled damage, listed for ops, not a problem of the file.
	Quarantined []QuarantinedRecord `json:"quarantined"`
}

// Clean reports whether Check found nothing wrong.
func (r *Report) Clean() bool { return len(r.Problems) == 0 }

// Summary is one line: the number of problems and the first few.
func (r *Report) Summary() string {
	if r.Clean() {
		return fmt.Sprintf("%s: clean (txid %d, %d quarantined record(s))", r.Path, r.Txid, len(r.Quarantined))
	}
	var parts []string
	for i, p := range r.Problems {
		if i == 3 {
			parts = append(parts, fmt.Sprintf("and %d more", len(r.Problems)-3))
			break
		}
		parts = append(parts, p.Where+": "+p.What)
	}
	return fmt.Sprintf("%s: %d problem(s): %s", r.Path, len(r.Problems), strings.Join(parts, "; "))
}

func (r *Report) add(kind, where, format string, args ...any) {
	r.Problems = append(r.Problems, problem{Kind: kind, Where: where, What: fmt.Sprintf(format, args...)})
}

// Check reads the store file at path without changing it, as `colocd store
// check` does: both meta pages, the file's size, the page walk, bbolt's
// tx.Check, colocd's buckets, every job record and kind history, the
// indexes against the records, the learned state's keys, and the
// quarantine bucket. It opens the file read-only (bbolt Options.ReadOnly:
// a shared lock, so it waits for, and then fails on, a running colocd,
// which holds the lock exclusively).
// Damage goes into the Report; the error is for a file Check cannot read
// at all (missing, locked, not a colocd queue, a newer schema).
func Check(path string, opts CheckOptions) (rep Report, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	rep = Report{Path: path, Jobs: map[State]int{}}
	st, err := os.Stat(path)
	if err != nil {
		return rep, fmt.Errorf("queue: check %s: %w", path, err)
	}
	if st.IsDir() {
		return rep, fmt.Errorf("%w: %s is a directory", errForeign, path)
	}
	if err := sniff(path); err != nil {
		return rep, err
	}
	o := &opener{path: path, readOnly: true, timeout: lockTimeout(opts.Timeout), accept: true, walk: true}
	db, openErr := safeOpen(path, o, &bolt.Options{Timeout: o.timeout, FreelistType: bolt.FreelistMapType})
	if errors.Is(openErr, errLocked) {
		return rep, openErr
	}
	rep.Size, rep.PageSize, rep.Meta = o.in.size, o.in.pageSize, o.in.meta
	inspectProblems(&rep, &o.in, path)
	if db == nil {
		if rep.Clean() {
			rep.add("bbolt", path, "bbolt cannot open it: %v", openErr)
		}
		return rep, nil
	}
	defer db.Close()
	rep.Txid = o.in.meta[o.in.use].Txid
	if err := checkContents(db, &rep); err != nil {
		return rep, err
	}
	return rep, nil
}

// inspectProblems turns what the opener read into problems.
func inspectProblems(rep *Report, in *inspection, path string) {
	var te *truncatedError
	var me *MetaError
	switch err := in.fileError(path); {
	case errors.As(err, &te):
		rep.add("file", path, "%d bytes: %s", te.Size, te.Why)
		return
	case errors.As(err, &me):
		for _, m := range me.Meta {
			rep.add("meta", fmt.Sprintf("meta page %d", m.Page), "damaged: %s", m.Damage)
		}
		return
	}
	if me := in.metaError(path); me != nil {
		d := me.Meta[me.Page]
		rep.add("meta", fmt.Sprintf("meta page %d", me.Page),
			"damaged: %s (its txid field reads %d); bbolt opens at meta page %d (txid %d) and loses transaction %d if page %d was the newer one; "+
				"colocd refuses to start until the file is restored or the fallback accepted (queue.Options.AcceptMetaFallback)",
			d.Damage, d.Txid, 1-me.Page, me.ValidTxid, me.LostTxid, me.Page)
	}
	for _, p := range in.pages {
		rep.add("pages", path, "%s", p)
	}
}

// checkContents runs bbolt's tx.Check and the record scan in one read
// transaction.
func checkContents(db *bolt.DB, rep *Report) (err error) {
	defer func() {
		if r := recover(); r != nil {
			rep.add("bbolt", db.Path(), "bbolt panicked reading the file: %v", r)
		}
	}()
	return db.View(func(tx *bolt.Tx) error {
		empty := true
		_ = tx.ForEach(func([]byte, *bolt.Bucket) error { empty = false; return nil })
		meta := tx.Bucket(bucketMeta)
		switch {
		case empty:
			rep.add("layout", db.Path(), "no buckets: a bbolt file colocd created but never initialised")
			return nil
		case meta == nil || !bytes.Equal(meta.Get(keyMagic), magicValue):
			return fmt.Errorf("%w: %s is a bbolt database of another program", errForeign, db.Path())
		}
		if v := meta.Get(keySchema); len(v) == 8 {
			rep.Schema = binary.BigEndian.Uint64(v)
		} else {
			rep.add("layout", "meta/schema", "schema version key missing or malformed")
		}
		if rep.Schema > schemaVersion {
			return fmt.Errorf("%w: %s has schema %d, this build knows up to %d (check it with a newer colocd)", errSchema, db.Path(), rep.Schema, schemaVersion)
		}
		before := len(rep.Problems)
		for e := range tx.Check() {
			rep.add("bbolt", db.Path(), "%v", e)
		}
		for _, name := range allBuckets {
			if tx.Bucket(name) == nil {
				rep.add("layout", string(name), "bucket missing")
			}
		}
		if len(rep.Problems) > before {
			return nil // the scan needs every bucket and sound pages
		}
		r := scanRecords(tx)
		rep.Scanned = true
		for _, e := range r.live {
			rep.Jobs[e.state]++
		}
		rep.Kinds = r.kinds
		for _, q := range r.damaged {
			what := q.Reason
			if q.State != "" {
				what += fmt.Sprintf(" (indexed as %s, seq %d)", q.State, q.Seq)
			}
			rep.add("record", q.Bucket+"/"+q.Key, "%s; the next colocd start quarantines it", what)
		}
		for _, d := range r.diffs {
			rep.add("index", db.Path(), "%s; the next colocd start rebuilds the indexes", d)
		}
		if n := r.ndiffs - len(r.diffs); n > 0 {
			rep.add("index", db.Path(), "%d more index differences", n)
		}
		checkLearned(tx, rep)
		rep.Quarantined = listQuarantined(tx)
		return nil
	})
}
