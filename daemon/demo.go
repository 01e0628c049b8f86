package daemon

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// demoPoll is how often (wall time) the simulator's demo checks whether
// its queue drained: one store count, a bbolt read.
const demoPoll = 2 * time.Second

// fifoReport watches the simulator's queue: each time it drains (nothing
// pending, admitted or running) after new jobs finished, the jobs that
// succeeded since this daemon started are simulated again, from the same
// arrivals, under first-in-first-out admission on a fresh simulator of the
// same workload and seed (sim.ReplayFIFO: a separate simulation, which
// changes nothing of colocd's own), and the two are compared: mean job
// completion time (arrival to finish) and makespan. The comparison is
// logged at INFO and served in GET /v1/summary (the page, colocd summary).
type fifoReport struct {
	store   *queue.Store
	started func() time.Time // this daemon's start, on the simulator's clock
	replay  func(start time.Time, arrivals []sim.Arrival) (sim.FIFOResult, error)
	log     *slog.Logger
	last    atomic.Pointer[apiclient.FIFOComparison]
	done    func() // tests: after each comparison
}

// current is the latest comparison; nil before the first drain.
func (f *fifoReport) current() *apiclient.FIFOComparison {
	if f == nil {
		return nil
	}
	return f.last.Load()
}

func (f *fifoReport) run(ctx context.Context) {
	t := time.NewTicker(demoPoll)
	defer t.Stop()
	reported := 0
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		counts, err := f.store.Counts()
		if err != nil || counts[queue.StatePending]+counts[queue.StateAdmitted]+counts[queue.StateRunning] > 0 {
			continue
		}
		c, n, err := f.compare()
		if err != nil {
			f.log.Warn("demo: the FIFO replay failed", "err", err)
			reported = n // not again for the same jobs
			continue
		}
		if c == nil || n == reported {
			continue
		}
		reported = n
		f.last.Store(c)
		f.log.Info("demo: the queue drained; the same jobs from the same arrivals under FIFO",
			"jobs", c.Jobs, "mean_jct", secs(c.MeanJCTSeconds), "fifo_mean_jct", secs(c.FIFOMeanJCTSeconds),
			"jct_gain_pct", round1(c.JCTGainPercent), "makespan", secs(c.MakespanSeconds), "fifo_makespan", secs(c.FIFOMakespanSeconds),
			"makespan_gain_pct", round1(c.MakespanGainPercent))
		if f.done != nil {
			f.done()
		}
	}
}

// compare replays the succeeded jobs of this run; nil without any, and
// how many jobs it compared.
func (f *fifoReport) compare() (*apiclient.FIFOComparison, int, error) {
	started := f.started()
	jobs, err := f.store.Recent(queue.StateSucceeded, apiclient.MaxSummaryJobs)
	if err != nil {
		return nil, 0, err
	}
	var arrivals []sim.Arrival
	var sumJCT time.Duration
	var first, last time.Time
	for _, j := range jobs {
		if j.CreatedAt.Before(started) || j.FinishedAt == nil {
			continue
		}
		arrivals = append(arrivals, sim.Arrival{JobID: j.ID, Kind: j.Kind, At: j.CreatedAt})
		sumJCT += j.FinishedAt.Sub(j.CreatedAt)
		if first.IsZero() || j.CreatedAt.Before(first) {
			first = j.CreatedAt
		}
		if j.FinishedAt.After(last) {
			last = *j.FinishedAt
		}
	}
	if len(arrivals) == 0 {
		return nil, 0, nil
	}
	r, err := f.replay(started, arrivals)
	if err != nil {
		return nil, len(arrivals), err
	}
	c := &apiclient.FIFOComparison{Jobs: len(arrivals),
		MeanJCTSeconds: (sumJCT / time.Duration(len(arrivals))).Seconds(), FIFOMeanJCTSeconds: r.MeanJCT().Seconds(),
		MakespanSeconds: last.Sub(first).Seconds(), FIFOMakespanSeconds: r.Makespan().Seconds()}
	if c.FIFOMeanJCTSeconds > 0 {
		c.JCTGainPercent = 100 * (1 - c.MeanJCTSeconds/c.FIFOMeanJCTSeconds)
	}
	if c.FIFOMakespanSeconds > 0 {
		c.MakespanGainPercent = 100 * (1 - c.MakespanSeconds/c.FIFOMakespanSeconds)
	}
	return c, len(arrivals), nil
}

func secs(s float64) time.Duration { return time.Duration(s * float64(time.Second)).Round(time.Second) }

func round1(x float64) float64 { return float64(int64(x*10+0.5*sign(x))) / 10 }

func sign(x float64) float64 {
	if x < 0 {
		return -1
	}
	return 1
}
