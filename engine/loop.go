package engine

import (
	"context"
	"errors"
	"log/slog"
	"math"
	"time"

	"github.com/colocd/colocd/queue"
)

// Loop drives the engine: reconcile once, then iterations of sync, learn
// when the learning schedule is due, compact when the retention schedule is
// due, checkpoint, admit, and sync again after admitting. It is colocd's one
// loop: `colocd serve` runs it in wall (or accelerated simulator) time with
// Run, which waits between iterations on the clock, kicks and stop; the
// benchmark calls Step itself in virtual time, advancing the simulator to the
// due time Step returns or to the next event that would kick it (a job
// arriving or finishing). Both execute exactly the same iteration.
//
// A Loop is driven by one goroutine; it is the only caller of the engine's
// passes (the API calls Kick, Prepare, Kill and Ready).
type Loop struct {
	e         *Engine
	clock     Clock
	store     *queue.Store
	log       *slog.Logger
	tick      time.Duration // 0: no periodic pass
	learn     Schedule
	retention Schedule      // nil: no compaction
	keep      time.Duration // retention.finished_after; 0 = forever
	// compact deletes the finished jobs older than its argument (the
	// store's Compact; tests make it fail).
	compact    func(before time.Time) (int, error)
	checkpoint func() error
	every      time.Duration // checkpoint cadence (clock time)
	wake       <-chan struct{}
	stepTol    time.Duration // LoopOptions.StepTolerance
	kickGap    time.Duration // LoopOptions.KickGap

	started bool
	// The loop measures elapsed time on the clock's monotonic reading
	// (mono): the schedules' next firings, the checkpoint's last run and the
	// next iteration's due time are monotonic readings, and wall times are
	// derived from them. A clock without one (virtual time) reads as its
	// wall time since origin.
	origin                   time.Time
	lastWall                 time.Time     // the wall reading of the last iteration, to detect a step
	lastMono                 time.Duration // the monotonic reading taken with lastWall
	lastLearn                time.Time     // the wall time the learning window starts at
	nextLearn, nextRetention time.Duration
	lastCheck, due           time.Duration

	// hook, when set, is called at the end of every Run iteration, once the
	// loop has armed its timer and is about to wait (tests step a fake
	// clock on it).
	hook func(Iteration)
}

// Iteration is what one loop iteration did.
type Iteration struct {
	At       time.Time // the clock at the sync
	Learned  bool
	Learn    LearnReport
	LearnErr error // the learning tick's error, if any (admission went on)
	// Retained: retention ran (retention.finished_after > 0): Compacted
	// finished jobs were deleted, or RetentionErr says why none could be.
	Retained     bool
	Compacted    int
	RetentionErr error
	Admit        admitReport
	// Due is when the next iteration is due without a kick: the earliest
	// of the admission tick, the learning and the retention schedules.
	Due time.Time
	// ClockStep is how far the wall clock stepped since the last iteration,
	// beyond what the monotonic clock measured (0: no step detected).
	ClockStep time.Duration
}

// LoopOptions configure a Loop. Learn is required.
type LoopOptions struct {
	// Tick is the periodic admission pass; 0 means none (passes only when
	// kicked or when a schedule is due).
	Tick time.Duration
	// Learn is the learning schedule (learning.schedule).
	Learn Schedule
	// Retention is the compaction schedule; nil means no compaction.
	// FinishedAfter is retention.finished_after (0: keep forever).
	Retention     Schedule
	FinishedAfter time.Duration
	// Checkpoint is called every CheckpointEvery of clock time (nil: none).
	Checkpoint      func() error
	CheckpointEvery time.Duration
	// Wake, when not nil, starts an iteration as a kick does: the
	// cluster's own events (the simulator signals a job's end).
	Wake   <-chan struct{}
	Logger *slog.Logger // nil: the engine's
	// KickGap is the least time, on the clock, from the start of an
	// iteration to the start of one a kick brings on (a submission's, a
	// kill's): kicks that come faster share iterations, so that a burst of
	// submissions does not read the whole cluster once per submission.
	// 0: none. The cluster's own events (Wake) are not held.
	KickGap time.Duration
	// StepTolerance is how far the wall clock's elapsed time between two
	// iterations may differ from the monotonic clock's before the loop takes
	// it for a step of the wall clock (0: defaultStepTolerance). It matters
	// only on a Clock that implements monotonic.
	StepTolerance time.Duration
}

// NewLoop builds the loop over engine e on e's clock.
func NewLoop(e *Engine, o LoopOptions) (*Loop, error) {
	if o.Learn == nil {
		return nil, errors.New("new loop: nil learning schedule")
	}
	l := &Loop{
		e: e, clock: e.clock, store: e.store, log: o.Logger, tick: o.Tick,
		learn: o.Learn, retention: o.Retention, keep: o.FinishedAfter, compact: e.store.Compact,
		checkpoint: o.Checkpoint, every: o.CheckpointEvery, wake: o.Wake, stepTol: o.StepTolerance, kickGap: o.KickGap,
	}
	if l.stepTol <= 0 {
		l.stepTol = defaultStepTolerance
	}
	if l.log == nil {
		l.log = e.log
	}
	if l.checkpoint == nil {
		l.checkpoint = func() error { return nil }
	}
	if l.every <= 0 {
		l.every = time.Minute
	}
	return l, nil
}

// Start reconciles the engine with the cluster (once; a failure may be
// retried) and sets the schedules from the clock's now. Step calls it if
// it has not succeeded yet.
func (l *Loop) Start(ctx context.Context) error {
	if l.started {
		return nil
	}
	if _, err := l.e.Reconcile(ctx); err != nil {
		l.e.loopStarted(err)
		return err
	}
	l.e.loopStarted(nil)
	start, mono := l.read()
	l.lastWall, l.lastMono = start, mono
	l.lastLearn, l.nextLearn = start, next(l.learn, start, mono)
	if l.retention != nil {
		l.nextRetention = next(l.retention, start, mono)
	}
	l.lastCheck = mono
	l.started = true
	return nil
}

// read reads the clock: its wall time and its monotonic reading.
func (l *Loop) read() (time.Time, time.Duration) {
	now := l.clock.Now()
	if m, ok := l.clock.(monotonic); ok {
		return now, m.Monotonic()
	}
	if l.origin.IsZero() {
		l.origin = now
	}
	return now, now.Sub(l.origin)
}

// next is the monotonic reading at which s fires next, read at wall time
// now and monotonic reading mono; never (the largest reading) when s names
// no time.
func next(s Schedule, now time.Time, mono time.Duration) time.Duration {
	t := s.Next(now)
	if t.IsZero() { // robfig/cron: no matching time within five years
		return math.MaxInt64
	}
	return mono + t.Sub(now)
}

// detectStep compares the wall clock's elapsed time since the last
// iteration with the monotonic clock's. A difference beyond the tolerance
// is a step of the wall clock (NTP, an operator's date): it is logged, once,
// and the schedules that name wall-clock times fire next at their next time
// from the new wall time. Interval schedules, the admission tick and the
// checkpoint measure elapsed time and are left as they are. A firing
// already due by the elapsed time (the step was seen late) still fires,
// once. It returns the step, or 0.
func (l *Loop) detectStep(now time.Time, mono time.Duration) time.Duration {
	// Round(0) strips time.Now's monotonic reading: the wall readings are
	// compared.
	expected := l.lastWall.Round(0).Add(mono - l.lastMono)
	step := now.Round(0).Sub(expected)
	l.lastWall, l.lastMono = now, mono
	if step.Abs() <= l.stepTol {
		return 0
	}
	l.log.Warn("the wall clock stepped; schedules of wall-clock times go on from the new time",
		"step", step, "expected", expected, "now", now)
	if !isInterval(l.learn) && mono < l.nextLearn {
		l.nextLearn = next(l.learn, now, mono)
	}
	if l.retention != nil && !isInterval(l.retention) && mono < l.nextRetention {
		l.nextRetention = next(l.retention, now, mono)
	}
	return step
}

// Step runs one iteration at the clock's now and reports it. Errors of the
// passes are logged and reported, never fatal: the next iteration retries.
// The returned error is only Start's (reconciliation failed).
func (l *Loop) Step(ctx context.Context) (Iteration, error) {
	if err := l.Start(ctx); err != nil {
		return Iteration{}, err
	}
	var it Iteration
	now, mono := l.read()
	it.ClockStep = l.detectStep(now, mono)
	rep, synced, err := l.e.syncStep(ctx)
	syncErr := err // readiness reports the iteration's last sync
	if err != nil {
		l.warn("sync", err)
	} else {
		// The sync's time, and its monotonic reading (a step during the
		// sync is seen at the next iteration).
		mono = l.syncMono(mono, rep.At.Sub(now))
		now = rep.At
	}
	if mono >= l.nextLearn && err == nil {
		// The window is [last tick, now] in wall time; after a step back
		// it is empty or inverted, and Learn skips it.
		lr, err := l.e.Learn(ctx, l.lastLearn, now)
		it.Learned, it.Learn, it.LearnErr = true, lr, err
		switch {
		case errors.Is(err, errMetrics):
			l.log.Warn("learning skipped: metrics unavailable; admitting with the last preferences", "err", err)
		case err != nil:
			l.log.Error("learning", "err", err)
		}
		l.lastLearn, l.nextLearn = now, next(l.learn, now, mono)
	}
	if l.retention != nil && mono >= l.nextRetention {
		if l.keep > 0 {
			n, err := l.compact(now.Add(-l.keep))
			it.Retained, it.Compacted, it.RetentionErr = true, n, err
			if err != nil {
				l.log.Warn("retention", "err", err)
			} else if n > 0 {
				l.log.Info("retention: compacted finished jobs", "deleted", n)
			}
			if l.e.mx != nil {
				l.e.mx.Retention(n, err, now)
			}
		}
		l.nextRetention = next(l.retention, now, mono)
	}
	if mono-l.lastCheck >= l.every {
		if err := l.checkpoint(); err != nil {
			l.log.Warn("checkpoint", "err", err)
		}
		l.lastCheck = mono
	}
	// The admission pass sees the cluster as this step's sync read it: it
	// is fresh (only learning, retention and the checkpoint ran since, and
	// none of them changes the cluster), and reading it again would cost
	// the resource manager a second full state per step.
	ar, err := l.e.admitStep(ctx, synced)
	if err != nil {
		l.warn("admission pass", err)
	}
	if len(ar.Admitted) > 0 {
		// The new applications may already hold containers: see them now,
		// so that learning counts them from their start.
		_, syncErr = l.e.Sync(ctx)
		if syncErr != nil {
			l.log.Warn("sync after admission", "err", syncErr)
		}
	}
	l.due = l.dueAfter(mono, now)
	it.At, it.Admit = now, ar
	it.Due = now.Add(l.due - mono)
	l.e.passDone(syncErr)
	return it, nil
}

// syncMono is the monotonic reading of a sync that began at mono and read
// the wall clock d after the loop did: mono + d, kept within [mono, the
// clock's monotonic reading now] on a clock whose wall reading can step.
// A step of the wall clock while the sync ran would otherwise move the
// monotonic reading by the step: an hour forward set the next iteration an
// hour away (admission stalled until a kick), an hour back made every
// iteration due at once.
func (l *Loop) syncMono(mono, d time.Duration) time.Duration {
	m, ok := l.clock.(monotonic)
	if !ok {
		return mono + d
	}
	return min(max(mono+d, mono), m.Monotonic())
}

// warn logs a pass's error: at DEBUG when the pass did not call the
// cluster because its calls back off (the backoff's start and end are
// logged, and a kick each second would log each), else at WARN.
func (l *Loop) warn(pass string, err error) {
	if errors.Is(err, errBackoff) {
		l.log.Debug(pass, "err", err)
		return
	}
	l.log.Warn(pass, "err", err)
}

// dueAfter is the earliest of the admission tick after mono, the
// schedules and the end of a backoff of calls to the cluster (its probe is
// due then), as a monotonic reading; now is the clock at mono. A learning
// tick that is overdue waits for a sync that succeeds: it is left out
// when there is an admission tick, or the loop would iterate without
// pause while the cluster fails.
func (l *Loop) dueAfter(mono time.Duration, now time.Time) time.Duration {
	due := l.nextLearn
	if l.tick > 0 {
		if due <= mono { // overdue
			due = mono + l.tick
		}
		due = min(due, mono+l.tick)
	}
	if l.retention != nil {
		due = min(due, l.nextRetention)
	}
	if end, ok := l.e.backoffEnd(now); ok {
		due = min(due, mono+end.Sub(now))
	}
	return due
}

// Run reconciles (retrying with backoff), then steps until stop is closed
// (nil) or ctx is cancelled, sleeping on the clock until the next iteration
// is due or the engine is kicked.
func (l *Loop) Run(ctx context.Context, stop <-chan struct{}) error {
	backoff := time.Second
	for {
		err := l.Start(ctx)
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
	for {
		select { // stop before starting a pass
		case <-stop:
			return nil
		default:
		}
		_, began := l.read()
		it, err := l.Step(ctx)
		if err != nil { // not reached: Start succeeded above
			return err
		}
		// Wake when due, measured from the clock now (it moved during the
		// pass), on the monotonic clock (After waits on it).
		_, mono := l.read()
		timer := l.clock.After(max(l.due-mono, 0))
		// The clock may have moved between reading it and setting the timer
		// (After is relative), which would set the timer past due and lose a
		// wake-up; checking again after the timer is set closes that gap.
		if _, mono := l.read(); mono >= l.due {
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
			if end, err := l.afterGap(ctx, stop, began, timer); end {
				return err
			}
		case <-l.wake:
		case <-timer:
		}
	}
}

// afterGap waits, after a kick, until KickGap has passed since the
// iteration that began at began (a monotonic reading), the iteration due
// then, or the cluster's wake — whichever comes first. end reports that
// the loop must end (stop, or ctx with its error).
func (l *Loop) afterGap(ctx context.Context, stop <-chan struct{}, began time.Duration, due <-chan time.Time) (end bool, err error) {
	_, mono := l.read()
	wait := began + l.kickGap - mono
	if wait <= 0 {
		return false, nil
	}
	select {
	case <-stop:
		return true, nil
	case <-ctx.Done():
		return true, ctx.Err()
	case <-l.clock.After(wait):
	case <-l.wake:
	case <-due:
	}
	return false, nil
}
