package simcluster

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"time"

	"github.com/colocd/colocd/sim"
)

// The simulator backend's durability.
//
// On the sim backend the "cluster" lives inside the daemon process, so a
// SIGKILL would take every running application with it and a restart would
// meet an empty cluster: Reconcile would then submit every admitted job
// again, and jobs the store marked running would be unknown. To make the
// simulated cluster as durable as a real ResourceManager, the daemon keeps,
// in data_dir/sim/:
//
//   - state.json: the seed, the virtual start time and the workload's
//     checksum, written once at first start;
//   - submissions.jsonl: an append-only, fsync'd log of every call that
//     changes the simulated cluster — {op: reserve|submit|kill, app_id,
//     job_id, kind, user, queue, at} with at in virtual time — written
//     under the simulator's lock *before* the call is applied (write-ahead:
//     when the log cannot be written, the call is not made, so the
//     simulator in memory never holds what the log lacks);
//   - checkpoint.json: the latest virtual time, replaced periodically.
//
// At restart, Open rebuilds the simulator deterministically: same
// seed and start, then every logged call replayed at its virtual time, then
// advanced to the checkpoint. Applications submitted before the crash are
// therefore known again, running or finished exactly as they would have
// been, and Reconcile never submits them twice; a job recorded as admitted
// whose submit call never reached the simulator is unknown to it, so
// Reconcile submits it under its reserved id, once. Virtual time resumes
// from the checkpoint (it may step back by up to one checkpoint interval;
// jobs the store already finished in that gap simply end again in the
// simulator, which the store ignores).
//
// A record that cannot be written whole (a full disk, an I/O error, a
// failed fsync) is cut off again before Append returns its error: the log
// never holds a torn record followed by others, so a later crash and
// restart replays it. If even the cut fails, every later Append retries it
// first and fails until it succeeds.
//
// A submission is logged only once it is sure to succeed: one that does
// not fit is refused before sim.Submit is called (sim.Fits), because a
// refused Submit still draws random numbers, and replay would not draw
// them.
//
// The log grows with the number of submissions; the simulator backend is
// meant for demos, tests and what-if runs, not months of service.

// logEntry is one line of submissions.jsonl.
type logEntry struct {
	Op    string `json:"op"` // reserve | submit | kill
	AppID string `json:"app_id"`
	JobID string `json:"job_id,omitempty"`
	Kind  string `json:"kind,omitempty"`
	User  string `json:"user,omitempty"`
	Queue string `json:"queue,omitempty"`
	// Containers and Scale are the submission's sim.AppSpec fields: 0, the
	// kind's containers and work.
	Containers int       `json:"containers,omitempty"`
	Scale      float64   `json:"scale,omitempty"`
	At         time.Time `json:"at"`
}

// Sim log operations.
const (
	opReserve = "reserve"
	OpSubmit  = "submit"
	opKill    = "kill"
)

// simState is state.json.
type simState struct {
	Seed     uint64    `json:"seed"`
	Start    time.Time `json:"start"`
	Workload string    `json:"workload_sha256"`
}

type simCheckpoint struct {
	At time.Time `json:"at"`
}

// State is the simulator's durable state in a directory.
type State struct {
	dir    string
	f      simLogFile // submissions.jsonl
	off    int64      // the end of the last whole record
	broken error      // a torn record beyond off that could not be cut yet
	Seed   uint64
	// Replayed counts the log entries replayed at open, Submits the
	// submissions among them.
	Replayed, Submits int
}

// simLogFile is what State needs of its log file (*os.File; tests
// inject failures).
type simLogFile interface {
	io.Writer
	Sync() error
	Truncate(size int64) error
	Seek(offset int64, whence int) (int64, error)
	Close() error
}

// Open opens (or creates) the simulator state in dir and returns a
// simulator rebuilt from it. seed and start are used only when the state is
// new (seed 0 means: the caller already chose one). newSim builds an empty
// simulator from a seed and start.
func Open(dir string, workloadSum string, seed uint64, start time.Time,
	newSim func(seed uint64, start time.Time) (*sim.Sim, error)) (*State, *sim.Sim, error) {
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	}
	st, err := readJSON[simState](filepath.Join(dir, "state.json"))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		st = simState{Seed: seed, Start: start.UTC(), Workload: workloadSum}
		if err := writeJSONAtomic(filepath.Join(dir, "state.json"), st, true); err != nil {
			return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
		}
	case err != nil:
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	case st.Workload != workloadSum:
		return nil, nil, fmt.Errorf("%w: %s was written with another workload file (checksum %.12s, now %.12s); use a new data_dir",
			errSimState, dir, st.Workload, workloadSum)
	}
	s, err := newSim(st.Seed, st.Start)
	if err != nil {
		return nil, nil, err
	}
	logPath := filepath.Join(dir, "submissions.jsonl")
	n, submits, good, err := replay(logPath, s)
	if err != nil {
		return nil, nil, err
	}
	cp, err := readJSON[simCheckpoint](filepath.Join(dir, "checkpoint.json"))
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	}
	if cp.At.After(s.Now()) {
		s.Advance(cp.At)
	}
	f, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY, 0o640)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	}
	// Drop a torn last line (a crash mid-append) so appends stay parseable.
	if err := f.Truncate(good); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	}
	if _, err := f.Seek(good, io.SeekStart); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %v", errSimState, err)
	}
	return &State{dir: dir, f: f, off: good, Seed: st.Seed, Replayed: n, Submits: submits}, s, nil
}

// CheckStore refuses a job store that cannot be the one this simulator
// ran with. Every submission in the log came from a stored job, so a store
// that has held fewer jobs than the log submitted (submitted: the store's
// count of jobs ever stored, queue.Store.Submitted) was replaced, lost or
// restored from an older copy: starting on it would run an empty (or
// older) queue beside a simulated cluster whose jobs nobody tracks.
func (st *State) CheckStore(submitted uint64, storePath string) error {
	if uint64(st.Submits) <= submitted {
		return nil
	}
	return fmt.Errorf("%w: %s has held %d jobs, but %s lists %d submissions: the store was lost, replaced or restored from an older copy; restore the latest one, or start over with an empty data_dir",
		errSimState, storePath, submitted, filepath.Join(st.dir, "submissions.jsonl"), st.Submits)
}

// replay applies the log at path to s; it returns the number of entries,
// of submissions among them, and the byte offset after the last complete
// one.
func replay(path string, s *sim.Sim) (n, submits int, good int64, err error) {
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, 0, 0, nil
	}
	if err != nil {
		return 0, 0, 0, fmt.Errorf("%w: %v", errSimState, err)
	}
	r := bufio.NewReader(bytes.NewReader(b))
	for line := 1; ; line++ {
		raw, err := r.ReadBytes('\n')
		if err == io.EOF {
			return n, submits, good, nil // a last line without '\n' is torn
		}
		var e logEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return n, submits, good, fmt.Errorf("%w: %s line %d: %v", errSimState, path, line, err)
		}
		s.Advance(e.At)
		if err := apply(s, e); err != nil {
			return n, submits, good, fmt.Errorf("%w: %s line %d: replay %s %s: %v", errSimState, path, line, e.Op, e.AppID, err)
		}
		good += int64(len(raw))
		n++
		if e.Op == OpSubmit {
			submits++
		}
	}
}

func apply(s *sim.Sim, e logEntry) error {
	switch e.Op {
	case opReserve:
		if id := s.NewApplication(); id != e.AppID {
			return fmt.Errorf("replay reserved %s, the log says %s (not the same simulator)", id, e.AppID)
		}
		return nil
	case OpSubmit:
		return s.Submit(e.AppID, sim.AppSpec{JobID: e.JobID, Kind: e.Kind, User: e.User, Queue: e.Queue, Tags: jobTags(e.JobID, e.Kind),
			Containers: e.Containers, Scale: e.Scale})
	case opKill:
		return s.Kill(e.AppID)
	}
	return fmt.Errorf("unknown op %q", e.Op)
}

// Append writes e and fsyncs. On failure the log is cut back to its last
// whole record and the error wraps the cause (errors.Is(err,
// syscall.ENOSPC) on a full disk).
func (st *State) Append(e logEntry) error {
	if err := st.repair(); err != nil {
		return err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return err
	}
	b = append(b, '\n')
	if _, err := st.f.Write(b); err != nil {
		return st.cut(fmt.Errorf("%w: append %s %s: %w", errSimState, e.Op, e.AppID, err))
	}
	if err := st.f.Sync(); err != nil {
		return st.cut(fmt.Errorf("%w: sync %s %s: %w", errSimState, e.Op, e.AppID, err))
	}
	st.off += int64(len(b))
	return nil
}

// cut removes whatever a failed Append left beyond the last whole record
// and returns cause; if it cannot, the log is broken until repair succeeds.
func (st *State) cut(cause error) error {
	st.broken = cause
	if err := st.repair(); err != nil {
		return errors.Join(cause, err)
	}
	return cause
}

// repair cuts the log back to off when an earlier Append left a partial
// record there.
func (st *State) repair() error {
	if st.broken == nil {
		return nil
	}
	err := st.f.Truncate(st.off)
	if err == nil {
		_, err = st.f.Seek(st.off, io.SeekStart)
	}
	if err == nil {
		err = st.f.Sync()
	}
	if err != nil {
		return fmt.Errorf("%w: the log holds a partial record after byte %d that cannot be cut yet (%w); no change is made to the simulator until it can",
			errSimState, st.off, err)
	}
	st.broken = nil
	return nil
}

// Checkpoint records virtual time at (atomic replace; not fsync'd: a
// process crash keeps it, a power loss falls back to an older one).
func (st *State) Checkpoint(at time.Time) error {
	return writeJSONAtomic(filepath.Join(st.dir, "checkpoint.json"), simCheckpoint{At: at}, false)
}

// Close closes the log.
func (st *State) Close() error { return st.f.Close() }

// ReadLog reads a submissions.jsonl file (for tests and tools).
func ReadLog(path string) ([]logEntry, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var out []logEntry
	for _, line := range bytes.Split(b, []byte("\n")) {
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		var e logEntry
		if err := json.Unmarshal(line, &e); err != nil {
			return out, err
		}
		out = append(out, e)
	}
	return out, nil
}

func readJSON[T any](path string) (T, error) {
	var v T
	b, err := os.ReadFile(path)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("decode %s: %v", path, err)
	}
	return v, nil
}

func writeJSONAtomic(path string, v any, sync bool) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	f, err := os.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o640)
	if err != nil {
		return err
	}
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if sync {
		if err := f.Sync(); err != nil {
			f.Close()
			return err
		}
	}
	if err := f.Close(); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// errSimState wraps errors of the simulator's durable state (data_dir/sim).
var errSimState = errors.New("simulator state")
