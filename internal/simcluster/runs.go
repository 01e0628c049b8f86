package simcluster

import (
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"
)

// Run is one start of the daemon on this simulator state: from then on the
// virtual clock ran from From at Speed × the wall clock from WallFrom.
// People read wall-clock times; the runs place any virtual timestamp of
// the store on the wall clock (v1.Clock.Wall).
type Run struct {
	From     time.Time `json:"from"`
	WallFrom time.Time `json:"wall_from"`
	Speed    float64   `json:"speed"`
}

// runsFile holds the runs, oldest first.
const runsFile = "runs.json"

// AddRun appends r to the recorded runs, keeping the last keep, and
// returns them (oldest first). The file is presentation only: a missing
// one starts a new list, and an unreadable one is reported with the list
// holding r alone, which the caller may still use.
func (st *State) AddRun(r Run, keep int) ([]Run, error) {
	path := filepath.Join(st.dir, runsFile)
	runs, err := readJSON[[]Run](path)
	var readErr error
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		readErr = fmt.Errorf("%w: %v (starting a new list)", errSimState, err)
		runs = nil
	}
	runs = append(runs, r)
	if keep > 0 && len(runs) > keep {
		runs = runs[len(runs)-keep:]
	}
	if err := writeJSONAtomic(path, runs, false); err != nil {
		return runs, errors.Join(readErr, fmt.Errorf("%w: %v", errSimState, err))
	}
	return runs, readErr
}
