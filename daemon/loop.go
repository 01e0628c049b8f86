package daemon

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/colocd/colocd/queue"
)

// loop drives the engine on its clock: reconcile once, then repeatedly
// sync, learn when the learning schedule is due, compact when the
// retention schedule is due, admit, and sleep until the next kick, tick or
// schedule. It is the daemon's only goroutine that calls the engine's
// passes (the API calls Kick, Prepare, Kill and Ready).
type loop struct {
	e          *Engine
	clock      Clock
	store      *queue.Store
	log        *slog.Logger
	tick       time.Duration
	learn      Schedule
	retention  Schedule
	keep       time.Duration // retention.finished_after; 0 = forever
	checkpoint func() error
	every      time.Duration // checkpoint cadence (clock time)
	// hook, when set, is called at the end of every iteration, once the
	// loop has armed its timer and is about to wait (tests step a fake
	// clock on it).
	hook func(iteration)
}

// iteration is what one loop iteration did.
type iteration struct {
	At      time.Time // the clock at the sync
	Learned bool
	Learn   LearnReport
	Admit   AdmitReport
}

func newLoop(e *Engine, b backend, cfg Config, store *queue.Store, log *slog.Logger) (*loop, error) {
	learn, err := ParseSchedule(cfg.Learning.Schedule)
	if err != nil {
		return nil, cfgErr("learning.schedule", "%v", err)
	}
	ret, err := ParseSchedule(cfg.Retention.Schedule)
	if err != nil {
		return nil, cfgErr("retention.schedule", "%v", err)
	}
	return &loop{
		e: e, clock: b.clock, store: store, log: log, tick: cfg.Admission.Tick,
		learn: learn, retention: ret, keep: cfg.Retention.FinishedAfter,
		checkpoint: b.checkpoint, every: time.Minute,
	}, nil
}

// run returns when stop is closed (nil) or ctx is cancelled.
func (l *loop) run(ctx context.Context, stop <-chan struct{}) error {
	backoff := time.Second
	for {
		_, err := l.e.Reconcile(ctx)
		if err == nil {
			break
		}
		l.log.Warn("reconcile failed; retrying", "err", err, "in", backoff)
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-l.clock.After(backoff):
		}
		backoff = min(2*backoff, time.Minute)
	}
	start := l.clock.Now()
	lastLearn, nextLearn := start, l.learn.Next(start)
	nextRetention := l.retention.Next(start)
	lastCheckpoint := start
	for {
		var it iteration
		now := l.clock.Now()
		rep, err := l.e.Sync(ctx)
		if err != nil {
			l.log.Warn("sync", "err", err)
		} else {
			now = rep.At
		}
		if !now.Before(nextLearn) && err == nil {
			lr, err := l.e.Learn(ctx, lastLearn, now)
			it.Learned, it.Learn = true, lr
			switch {
			case errors.Is(err, ErrMetrics):
				l.log.Warn("learning skipped: metrics unavailable; admitting with the last preferences", "err", err)
			case err != nil:
				l.log.Error("learning", "err", err)
			default:
				l.log.Debug("learning tick", "from", lr.From, "to", lr.To, "colocations", lr.Colocations, "updates", lr.Updates, "stale", lr.Stale)
			}
			lastLearn, nextLearn = now, l.learn.Next(now)
		}
		if !now.Before(nextRetention) {
			if l.keep > 0 {
				n, err := l.store.Compact(now.Add(-l.keep))
				if err != nil {
					l.log.Warn("retention", "err", err)
				} else if n > 0 {
					l.log.Info("retention: compacted finished jobs", "deleted", n)
				}
			}
			nextRetention = l.retention.Next(now)
		}
		if now.Sub(lastCheckpoint) >= l.every {
			if err := l.checkpoint(); err != nil {
				l.log.Warn("checkpoint", "err", err)
			}
			lastCheckpoint = now
		}
		select { // stop before starting a pass
		case <-stop:
			return nil
		default:
		}
		ar, err := l.e.AdmitPass(ctx)
		if err != nil {
			l.log.Warn("admission pass", "err", err)
		}
		it.At, it.Admit = now, ar
		// Wake at the earliest due time, measured from the clock now (it
		// moved during the pass).
		due := now.Add(l.tick)
		for _, t := range []time.Time{nextLearn, nextRetention} {
			if t.Before(due) {
				due = t
			}
		}
		wake := due.Sub(l.clock.Now())
		timer := l.clock.After(max(wake, 0))
		// The clock may have moved between reading it and setting the timer
		// (After is relative), which would set the timer past due and lose a
		// wake-up; checking again after the timer is set closes that gap.
		if !l.clock.Now().Before(due) {
			timer = l.clock.After(0)
		}
		if l.hook != nil {
			l.hook(it)
		}
		select {
		case <-stop:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case <-l.e.Kicked():
		case <-timer:
		}
	}
}
