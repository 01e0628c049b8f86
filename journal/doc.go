// Package journal keeps colocd's explanation of itself: the most recent
// admission decisions (DecisionRecord: the pipeline's decision and what the
// daemon did with it) and goodness observations (GoodnessRecord: one node,
// two kinds, one learning interval), in bounded in-memory rings backed by
// append-only JSON-lines files that are compacted as they grow.
//
// # What it owns
//
// The two record types and their JSON shapes, the Journal (Open, Add*, the
// readers), its files decisions.jsonl and goodness.jsonl in one directory.
// The engine writes records; the HTTP API and its tests read them; both
// through small interfaces of their own.
//
// # What it must not do
//
// It is not the record of truth (the queue store is): appends are not
// fsync'd one by one, and a torn or corrupt line is skipped and counted at
// open; while SetMemoryOnly holds (a nearly full disk) new records are
// not written at all. It imports nothing of colocd but queue (the decision) and goodness
// (the usage of an observation).
package journal

import "errors"

// Errors of the journal. Test with errors.Is.
var (
	// errConfig: Open was given an empty directory or a cap below 1.
	errConfig = errors.New("journal: invalid configuration")
	// errClosed: the journal was closed.
	errClosed = errors.New("journal: closed")
	// errIO wraps the I/O errors of the journal files.
	errIO = errors.New("journal: I/O")
)
