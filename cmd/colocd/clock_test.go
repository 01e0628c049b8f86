package main

import (
	"strings"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient/apiclienttest"
)

// TestSimulatedClockCLI: against a daemon on the simulator, queue, job and
// queues print wall-clock times with date and zone and the simulated time
// beside, labelled; durations say they are simulated; a relative
// --deadline counts from the daemon's clock, not the caller's.
func TestSimulatedClockCLI(t *testing.T) {
	vnow := time.Date(2026, 11, 25, 7, 30, 0, 0, time.UTC) // far ahead of the wall
	wall := time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC)
	clock := v1.Clock{Simulated: true, Now: vnow, WallNow: wall, Speed: 600,
		Started: vnow.Add(-600 * time.Minute), WallStarted: wall.Add(-time.Minute)}
	s := apiclienttest.Start(t, apiclienttest.Options{Now: func() time.Time { return vnow }, Clock: func() v1.Clock { return clock }})
	srv := &cliServer{url: s.URL, store: s.Store}

	out, err := srv.runCLI(t, apiclienttest.SubmitterToken, "", "submit", "--kind", "kmeans", "--containers", "2", "--memory-mb", "1024", "--vcores", "1", "--deadline", "2h", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, `"deadline":"2026-11-25T09:30:00Z"`) {
		t.Errorf("--deadline 2h on a simulated clock at %s: %s; want the deadline 2 h after the daemon's now", vnow, out)
	}
	wantWall := wall.In(time.Local).Format(wallFormat)
	wantSim := "2026-11-25 07:30:00Z"

	out, err = srv.runCLI(t, apiclienttest.ReaderToken, "", "queue")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"simulated cluster: its clock reads 2026-11-25 07:30:00Z, running 600× real time", "CREATED (SIMULATED)", wantWall, wantSim} {
		if !strings.Contains(out, want) {
			t.Errorf("queue output lacks %q:\n%s", want, out)
		}
	}

	id := strings.Fields(strings.Split(out, "\n")[2])[1]
	out, err = srv.runCLI(t, apiclienttest.ReaderToken, "", "job", id)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"created:", wantWall + " (simulated " + wantSim + ")",
		"deadline:", wall.Add(12*time.Second).In(time.Local).Format(wallFormat) + " (simulated 2026-11-25 09:30:00Z)",
		"clock:", "600× real time",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
}

func TestClockViewFormats(t *testing.T) {
	loc := time.FixedZone("CET", 3600)
	at := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	wall := clockView{known: true, c: v1.Clock{Speed: 1}, loc: loc}
	if got, want := wall.at(at), "2026-11-24 16:00:00 CET"; got != want {
		t.Errorf("wall clock at = %q, want %q", got, want)
	}
	if got, want := wall.dur(90*time.Second), "1m30s"; got != want {
		t.Errorf("wall clock dur = %q, want %q", got, want)
	}
	if wall.header() != "" {
		t.Errorf("a wall clock has a header: %q", wall.header())
	}
	sim := clockView{known: true, loc: loc, c: v1.Clock{Simulated: true, Speed: 600,
		Runs: []v1.ClockRun{{From: at, WallFrom: at.Add(-time.Hour), Speed: 600}}}}
	if got, want := sim.at(at.Add(10*time.Minute)), "2026-11-24 15:00:01 CET (simulated 2026-11-24 15:10:00Z)"; got != want {
		t.Errorf("simulated at = %q, want %q", got, want)
	}
	if got, want := sim.at(at.Add(-time.Second)), "simulated 2026-11-24 14:59:59Z (before the first recorded start)"; got != want {
		t.Errorf("simulated at before the runs = %q, want %q", got, want)
	}
	if got, want := sim.dur(10*time.Minute), "10m0s simulated (1s wall at 600×)"; got != want {
		t.Errorf("simulated dur = %q, want %q", got, want)
	}
	if got := (clockView{}).at(at); got != at.In(time.Local).Format(wallFormat) {
		t.Errorf("unknown clock at = %q", got)
	}
}
