package main

import (
	"context"
	"fmt"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
)

// clockView prints the daemon's timestamps for people: on the wall clock
// in the local zone, with date and zone, and where the daemon runs the
// simulator, the simulated clock beside, labelled. Every API timestamp is
// on the daemon's clock (GET /v1/clock); on YARN that is the wall clock.
type clockView struct {
	c     v1.Clock
	known bool           // false: GET /v1/clock failed; times print as they are
	loc   *time.Location // nil: time.Local
	wide  bool           // -o wide: tables print more columns
}

// wallFormat and simFormat print a wall time and a simulated one.
const (
	wallFormat = "2006-01-02 15:04:05 MST"
	simFormat  = "2006-01-02 15:04:05Z07:00"
)

// fetchClock reads the daemon's clock. A daemon without GET /v1/clock (or
// any failure) gives a view that prints times as they are, with zone.
func fetchClock(ctx context.Context, api *apiclient.Client) clockView {
	r, err := api.Clock(ctx)
	if err != nil {
		return clockView{}
	}
	return clockView{c: r.Body, known: true}
}

func (v clockView) location() *time.Location {
	if v.loc != nil {
		return v.loc
	}
	return time.Local
}

// simulated reports whether the daemon's clock is the simulator's.
func (v clockView) simulated() bool { return v.known && v.c.Simulated }

// at prints a daemon-clock time: "2026-11-24 16:17:38 CET", and on the
// simulator "2026-11-24 16:17:38 CET (simulated 2026-11-24 19:14:10Z)".
func (v clockView) at(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	if !v.simulated() {
		return t.In(v.location()).Format(wallFormat)
	}
	sim := "simulated " + t.UTC().Format(simFormat)
	w, ok := v.c.Wall(t)
	if !ok {
		return sim + " (before the first recorded start)"
	}
	return w.In(v.location()).Format(wallFormat) + " (" + sim + ")"
}

// dur prints a duration on the daemon's clock; on the simulator it says so
// and gives the wall time it takes at the simulator's speed.
func (v clockView) dur(d time.Duration) string {
	d = d.Round(time.Second)
	if !v.simulated() || v.c.Speed <= 0 {
		return d.String()
	}
	wall := time.Duration(float64(d) / v.c.Speed).Round(time.Second / 10)
	return fmt.Sprintf("%s simulated (%s wall at %g×)", d, wall, v.c.Speed)
}

// header is the line that names the simulated clock; "" on the wall clock.
func (v clockView) header() string {
	if !v.simulated() {
		return ""
	}
	return fmt.Sprintf("simulated cluster: its clock reads %s, running %g× real time; times are wall-clock (%s) with the simulated time beside",
		v.c.Now.UTC().Format(simFormat), v.c.Speed, v.c.WallNow.In(v.location()).Format("MST"))
}

// wall prints a daemon-clock time on the wall clock alone; "" for a zero
// time or one before the first recorded start.
func (v clockView) wall(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	w, ok := t, true
	if v.simulated() {
		w, ok = v.c.Wall(t)
	}
	if !ok {
		return ""
	}
	return w.In(v.location()).Format(wallFormat)
}

// seconds is a float number of seconds as a duration.
func seconds(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// daemonNow is the daemon's clock (GET /v1/clock), or the wall clock when
// it cannot be read: a relative deadline is on the daemon's clock, which on
// the simulator runs far ahead of the wall.
func daemonNow(ctx context.Context, api *apiclient.Client) time.Time {
	if cv := fetchClock(ctx, api); cv.known && !cv.c.Now.IsZero() {
		return cv.c.Now
	}
	return time.Now()
}
