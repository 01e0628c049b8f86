package simcluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestAddRun(t *testing.T) {
	st := &State{dir: t.TempDir()}
	t0 := time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC)
	var runs []Run
	for i := range 5 {
		r := Run{From: t0.Add(time.Duration(i) * time.Hour), WallFrom: t0.Add(time.Duration(i) * time.Minute), Speed: 600}
		var err error
		if runs, err = st.AddRun(r, 3); err != nil {
			t.Fatal(err)
		}
	}
	if len(runs) != 3 || !runs[0].From.Equal(t0.Add(2*time.Hour)) || !runs[2].WallFrom.Equal(t0.Add(4*time.Minute)) {
		t.Fatalf("runs after 5 starts keeping 3: %+v", runs)
	}
	again, err := readJSON[[]Run](filepath.Join(st.dir, runsFile))
	if err != nil || len(again) != 3 || !again[2].From.Equal(runs[2].From) {
		t.Fatalf("runs.json = %+v, %v", again, err)
	}

	// A damaged file is reported, and the list starts over with the run.
	if err := os.WriteFile(filepath.Join(st.dir, runsFile), []byte("{not json"), 0o640); err != nil {
		t.Fatal(err)
	}
	r := Run{From: t0, WallFrom: t0, Speed: 1}
	runs, err = st.AddRun(r, 3)
	if !errors.Is(err, errSimState) || len(runs) != 1 || runs[0] != r {
		t.Fatalf("AddRun over a damaged file = %+v, %v; want the run alone and errSimState", runs, err)
	}
}
