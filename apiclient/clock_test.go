package apiclient_test

import (
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/journal"
)

var wall0 = time.Date(2026, 11, 24, 16, 0, 0, 0, time.UTC)

// simulated: two daemon starts, at 600× then at 60×, the second resuming
// the virtual clock where the first stopped (after 10 wall minutes, 100
// virtual hours).
func simulated() v1.Clock {
	v0 := time.Date(2026, 11, 20, 9, 0, 0, 0, time.UTC)
	return v1.Clock{
		Simulated: true, Speed: 60,
		Started: v0.Add(100 * time.Hour), WallStarted: wall0.Add(time.Hour),
		Now: v0.Add(130 * time.Hour), WallNow: wall0.Add(time.Hour + 30*time.Minute),
		Runs: []v1.ClockRun{
			{From: v0, WallFrom: wall0, Speed: 600},
			{From: v0.Add(100 * time.Hour), WallFrom: wall0.Add(time.Hour), Speed: 60},
		},
	}
}

func TestClockWall(t *testing.T) {
	c := simulated()
	v0 := c.Runs[0].From
	for _, tc := range []struct {
		name string
		t    time.Time
		want time.Time
		ok   bool
	}{
		{"the first start", v0, wall0, true},
		{"one virtual hour into the first run", v0.Add(time.Hour), wall0.Add(6 * time.Second), true},
		{"the second start", v0.Add(100 * time.Hour), wall0.Add(time.Hour), true},
		{"one virtual hour into the second run", v0.Add(101 * time.Hour), wall0.Add(time.Hour + time.Minute), true},
		{"before any recorded run", v0.Add(-time.Second), time.Time{}, false},
	} {
		got, ok := c.Wall(tc.t)
		if ok != tc.ok || !got.Equal(tc.want) {
			t.Errorf("%s: Wall(%s) = %s, %v; want %s, %v", tc.name, tc.t, got, ok, tc.want, tc.ok)
		}
	}
	// No runs recorded: this start alone.
	c.Runs = nil
	if got, ok := c.Wall(c.Started.Add(time.Hour)); !ok || !got.Equal(wall0.Add(time.Hour+time.Minute)) {
		t.Errorf("Wall without runs = %s, %v", got, ok)
	}
	wc := v1.Clock{Speed: 1}
	if got, ok := wc.Wall(v0); !ok || !got.Equal(v0) {
		t.Errorf("the wall clock maps %s to %s, %v", v0, got, ok)
	}
}

// TestClockEndpoint: GET /v1/clock serves the daemon's description, and on
// a simulated clock GET /v1/goodness defaults to the window since the
// daemon started, however long ago in virtual time.
func TestClockEndpoint(t *testing.T) {
	c := simulated()
	s, cl := start(t, apiclienttest.Options{Now: func() time.Time { return c.Now }, Clock: func() v1.Clock { return c }})
	got, err := cl.reader.Clock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	if !got.Body.Simulated || !got.Body.Now.Equal(c.Now) || len(got.Body.Runs) != 2 || got.Body.Runs[1].Speed != 60 {
		t.Errorf("GET /v1/clock = %+v, want %+v", got.Body, c)
	}
	// One record before this start, two after it, one of them 26 virtual
	// hours ago: outside a 24-hour window but after the start.
	for _, at := range []time.Time{c.Started.Add(-time.Hour), c.Now.Add(-26 * time.Hour), c.Now.Add(-time.Minute)} {
		if err := s.Journal.AddGoodness(journal.GoodnessRecord{At: at, From: at.Add(-time.Minute), To: at, Node: "n1", Chosen: "a", Given: "b", G: 10}); err != nil {
			t.Fatal(err)
		}
	}
	g, err := cl.reader.Goodness(t.Context(), apiclient.GoodnessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if !g.Body.From.Equal(c.Started) {
		t.Errorf("default goodness window starts at %s, want the daemon's start %s", g.Body.From, c.Started)
	}
	if g.Body.Total != 2 {
		t.Errorf("default goodness window holds %d records, want the 2 since the start", g.Body.Total)
	}
}

// TestClockEndpointWall: without a simulated clock GET /v1/clock is the
// wall clock at speed 1, and the goodness window stays the last 24 hours.
func TestClockEndpointWall(t *testing.T) {
	_, cl := start(t, apiclienttest.Options{})
	got, err := cl.reader.Clock(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	b := got.Body
	if b.Simulated || b.Speed != 1 || !b.Now.Equal(apiclienttest.Epoch) || !b.WallNow.Equal(b.Now) || len(b.Runs) != 0 {
		t.Errorf("GET /v1/clock on the wall clock = %+v", b)
	}
	g, err := cl.reader.Goodness(t.Context(), apiclient.GoodnessOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if want := apiclienttest.Epoch.Add(-24 * time.Hour); !g.Body.From.Equal(want) {
		t.Errorf("default goodness window from %s, want %s", g.Body.From, want)
	}
}
