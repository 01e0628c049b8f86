package daemon

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// lockFileName is the file in data_dir whose lock a serving colocd holds.
const lockFileName = "lock"

// errDataDirLocked is wrapped by *dataDirLockedError: another process
// serves from data_dir.
var errDataDirLocked = errors.New("data_dir is in use")

// dataDirLockedError says who holds data_dir's lock.
type dataDirLockedError struct {
	Dir string
	PID int // the holder's process id as it wrote it; 0 when unknown
}

func (e *dataDirLockedError) Error() string {
	holder := "another colocd"
	if e.PID > 0 {
		holder = fmt.Sprintf("another colocd (pid %d)", e.PID)
	}
	return fmt.Sprintf("%v: %s holds %s; one colocd per data_dir", errDataDirLocked, holder, filepath.Join(e.Dir, lockFileName))
}

func (e *dataDirLockedError) Unwrap() error { return errDataDirLocked }

// lockDataDir takes the exclusive lock of data_dir (a flock on
// data_dir/lock), without waiting, and writes this process's id into the
// file for the next one to name. Serve takes it before it opens or writes
// anything else in data_dir (the simulator's state, the store, the
// journal), whatever the backend: a second colocd on the same directory
// must not touch the first one's files, not even before the store's own
// lock would refuse it. The kernel drops the lock with the process, so a
// crash leaves no stale lock; the pid in the file is a hint only. release
// unlocks and closes (the file stays).
func lockDataDir(dir string) (release func() error, err error) {
	path := filepath.Join(dir, lockFileName)
	// No O_TRUNC: the holder's pid must survive a refused open.
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o640)
	if err != nil {
		return nil, fmt.Errorf("lock data_dir: %w", err)
	}
	locked, err := tryLock(f)
	if err != nil {
		f.Close()
		return nil, fmt.Errorf("lock data_dir: %s: %w", path, err)
	}
	if !locked {
		pid := readPID(f)
		f.Close()
		return nil, &dataDirLockedError{Dir: dir, PID: pid}
	}
	if err := writePID(f); err != nil {
		unlock(f)
		f.Close()
		return nil, fmt.Errorf("lock data_dir: write %s: %w", path, err)
	}
	return func() error {
		unlock(f)
		return f.Close()
	}, nil
}

func readPID(f *os.File) int {
	b := make([]byte, 32)
	n, _ := f.ReadAt(b, 0)
	pid, err := strconv.Atoi(strings.TrimSpace(string(b[:n])))
	if err != nil || pid <= 0 {
		return 0
	}
	return pid
}

func writePID(f *os.File) error {
	if err := f.Truncate(0); err != nil {
		return err
	}
	if _, err := f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0); err != nil {
		return err
	}
	return f.Sync()
}
