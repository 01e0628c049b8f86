package queue_test

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// A wall-clock step during a run: with a monotonic clock (Options.Elapsed)
// the kind's history gets the run's true length, and FinishedAt is never
// before RunningAt; without one, a step back is left out of the history.
func TestRuntimeAcrossAWallClockStep(t *testing.T) {
	for _, c := range []struct {
		name      string
		step      time.Duration
		monotonic bool
		wantRuns  int
		wantMean  time.Duration
	}{
		{"forward 1h, monotonic", time.Hour, true, 1, 20 * time.Second},
		{"back 1h, monotonic", -time.Hour, true, 1, 20 * time.Second},
		{"back 1h, wall only", -time.Hour, false, 0, 0},
		{"no step, wall only", 0, false, 1, 20 * time.Second},
	} {
		t.Run(c.name, func(t *testing.T) {
			var mono atomic.Int64
			opts := queue.Options{}
			if c.monotonic {
				opts.Elapsed = func() time.Duration { return time.Duration(mono.Load()) }
			}
			s, clk := queuetest.OpenStore(t, opts)
			j, _, err := s.Submit(t.Context(), queuetest.Job("scan"))
			if err != nil {
				t.Fatal(err)
			}
			must(t)(s.Admit(j.ID, "application_1_0001", nil, nil, nil))
			must(t)(s.Start(j.ID))
			clk.Advance(20*time.Second + c.step)
			mono.Add(int64(20 * time.Second))
			done, err := s.Finish(j.ID, queue.StateSucceeded, "")
			if err != nil {
				t.Fatal(err)
			}
			if done.FinishedAt.Before(*done.RunningAt) {
				t.Errorf("finished at %v, before it started running at %v", done.FinishedAt, done.RunningAt)
			}
			h, err := s.History("scan")
			if err != nil {
				t.Fatal(err)
			}
			if h.Runs != c.wantRuns || (c.wantRuns > 0 && h.MeanRuntime != c.wantMean) {
				t.Errorf("history %d runs, mean %v; want %d, %v", h.Runs, h.MeanRuntime, c.wantRuns, c.wantMean)
			}
		})
	}
}
