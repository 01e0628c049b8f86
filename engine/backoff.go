package engine

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"time"
)

// Calls to a failing cluster back off: capped exponential waits with
// jitter, on the engine's clock, drawn from an injected random source.
//
// Two kinds of calls back off for the whole cluster, each on its own:
//   - reads: the cluster state every sync and admission pass reads first,
//     and Reconcile's reads. When the cluster fails them, no sync,
//     reconciliation or admission calls it until the wait ends; then the
//     next pass's first read is the one probe, and its failure starts a
//     longer wait.
//   - submissions of new jobs: a reservation or submission that failed
//     (an ambiguous outcome: the cluster answered neither yes nor no)
//     holds the admission passes until the wait ends; the next admission
//     is the probe. Any submission the cluster answers, a resubmission
//     included, ends the backoff.
//
// And each job backs off on its own: an admitted job whose submission had
// an unknown outcome, or whose application could not be read, is not
// checked or submitted again until its own wait ends. A job that the
// cluster, not the job, keeps failing thus costs one check per wait, and a
// job the cluster fails for its own reasons never holds the others.
//
// A backoff never changes a job's state: a held call is simply not made,
// and the job stays pending (not admitted yet) or admitted under its
// recorded application id, so that exactly-once submission rests on the
// same proofs as without it.

// BackoffConfig says how calls to a failing cluster back off
// (admission.backoff). After a failure, calls of that kind wait Initial;
// each further failure in a row doubles the wait, up to Max. Each wait is
// drawn uniformly from [w/2, w] (jitter), so that daemons restarted
// together do not probe in step. Zero Initial turns backoff off: every
// pass calls the cluster (tests of the engine's retry paths).
type BackoffConfig struct {
	Initial time.Duration `mapstructure:"initial"`
	Max     time.Duration `mapstructure:"max"`
}

// Backoff defaults (admission.backoff). Max matches the loop's own retry
// of a failed reconciliation: a recovered cluster is seen within a minute.
const (
	defaultBackoffInitial = time.Second
	DefaultBackoffMax     = time.Minute
)

// DefaultBackoffConfig is admission.backoff's default.
func DefaultBackoffConfig() BackoffConfig {
	return BackoffConfig{Initial: defaultBackoffInitial, Max: DefaultBackoffMax}
}

// Validate reports a negative wait or a Max below Initial.
func (c BackoffConfig) Validate() error {
	switch {
	case c.Initial < 0:
		return fmt.Errorf("backoff initial %v is negative", c.Initial)
	case c.Initial > 0 && c.Max < c.Initial:
		return fmt.Errorf("backoff max %v is below initial %v", c.Max, c.Initial)
	}
	return nil
}

// callKind is what kind of call a cluster-wide backoff holds.
type callKind int

const (
	callRead   callKind = iota // State, and Reconcile's reads
	callSubmit                 // Reserve and Submit of a new admission
	numCallKinds
)

// The kinds' names, as telemetrySink labels them ("job": a job's own backoff).
const (
	backoffRead   = "read"
	backoffSubmit = "submit"
	backoffJob    = "job"
)

func (k callKind) String() string { return [...]string{backoffRead, backoffSubmit}[k] }

// backoff is one backoff's state: zero when calls are not backing off.
type backoff struct {
	fails int           // failures in a row
	wait  time.Duration // the current wait, jitter drawn
	until time.Time     // no call before this (engine clock)
	since time.Time     // the first failure in a row
	err   error         // the latest failure
}

// waiting reports whether calls must wait at now.
func (b *backoff) waiting(now time.Time) bool { return b.fails > 0 && now.Before(b.until) }

// backoffPolicy draws the waits.
type backoffPolicy struct {
	cfg BackoffConfig
	rng *rand.Rand
}

func (p backoffPolicy) on() bool { return p.cfg.Initial > 0 }

// fail records a failure at now: the wait doubles (from Initial, up to
// Max), and is drawn from [w/2, w].
func (p backoffPolicy) fail(b *backoff, now time.Time, err error) {
	if b.fails == 0 {
		b.since = now
	}
	b.fails++
	w := p.cfg.Max
	if shift := b.fails - 1; shift < 32 && p.cfg.Initial<<shift > 0 && p.cfg.Initial<<shift < p.cfg.Max {
		w = p.cfg.Initial << shift
	}
	half := w / 2
	b.wait = half + time.Duration(p.rng.Int64N(int64(w-half)+1))
	b.until, b.err = now.Add(b.wait), err
}

// String describes a backoff for Ready and the logs.
func (b backoff) String() string {
	return fmt.Sprintf("%d failures in a row since %s, next try at %s (waiting %v); the latest: %v",
		b.fails, b.since.UTC().Format(time.RFC3339), b.until.UTC().Format(time.RFC3339Nano), b.wait.Round(time.Millisecond), b.err)
}

// heldError is the error of a call held by b.
func heldError(k callKind, b backoff) error {
	return fmt.Errorf("%w: %s calls wait until %s after %d failures in a row",
		errBackoff, k, b.until.UTC().Format(time.RFC3339Nano), b.fails)
}

// held reports whether calls of kind k must wait now; a held call is
// counted. Called under mu.
func (e *Engine) held(k callKind) bool {
	if !e.bo.on() || !e.rmBackoff[k].waiting(e.clock.Now()) {
		return false
	}
	if e.mx != nil {
		e.mx.CallsBackedOff(k.String())
	}
	return true
}

// called records the outcome of a call of kind k: a failure (err not nil)
// starts or lengthens the backoff, a success ends it; the caller's own
// cancellation says nothing about the cluster. Called under mu.
func (e *Engine) called(k callKind, err error) {
	if !e.bo.on() || errors.Is(err, context.Canceled) {
		return
	}
	b := &e.rmBackoff[k]
	if err == nil {
		if b.fails == 0 {
			return
		}
		e.log.Info("cluster answers again: calls resume", "calls", k.String(), "failures", b.fails, e.clockKey("since"), b.since)
		*b = backoff{}
	} else {
		e.bo.fail(b, e.clock.Now(), err)
		if b.fails == 1 {
			e.log.Warn("cluster call failed: calls of its kind back off", "calls", k.String(), e.clockKey("wait"), b.wait, "err", err)
		}
	}
	e.publishBackoff()
}

// jobHeld reports whether job id waits out its own backoff now; a held
// check is counted. Called under mu.
func (e *Engine) jobHeld(id string) bool {
	b, ok := e.jobBackoff[id]
	if !e.bo.on() || !ok || !b.waiting(e.clock.Now()) {
		return false
	}
	if e.mx != nil {
		e.mx.CallsBackedOff(backoffJob)
	}
	return true
}

// jobFailed starts or lengthens job id's own backoff after a call about
// it failed (an unknown submission outcome, an unreadable application).
// Called under mu.
func (e *Engine) jobFailed(id string, err error) {
	if !e.bo.on() || errors.Is(err, context.Canceled) {
		return
	}
	b := e.jobBackoff[id]
	if b == nil {
		b = &backoff{}
		e.jobBackoff[id] = b
	}
	e.bo.fail(b, e.clock.Now(), err)
	e.publishBackoff()
}

// jobSettled ends job id's own backoff: the cluster answered about it.
// Called under mu.
func (e *Engine) jobSettled(id string) {
	if _, ok := e.jobBackoff[id]; ok {
		delete(e.jobBackoff, id)
		e.publishBackoff()
	}
}

// pruneJobBackoff drops the backoff of every job not in active (it
// finished, or went back to the queue, or was parked). Called under mu.
func (e *Engine) pruneJobBackoff(active map[string]bool) {
	n := len(e.jobBackoff)
	for id := range e.jobBackoff {
		if !active[id] {
			delete(e.jobBackoff, id)
		}
	}
	if len(e.jobBackoff) != n {
		e.publishBackoff()
	}
}

// publishBackoff copies the backoffs where Ready reads them and into the
// metrics. Called under mu.
func (e *Engine) publishBackoff() {
	if e.mx != nil {
		for k := range numCallKinds {
			e.mx.ClusterBackoff(k.String(), e.rmBackoff[k].wait)
		}
		e.mx.JobsBackingOff(len(e.jobBackoff))
	}
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	e.health.state.backoff = e.rmBackoff
	e.health.state.jobsBackingOff = len(e.jobBackoff)
}

// backoffReport describes the cluster-wide backoffs in force for Ready;
// "" when none is.
func backoffReport(bs [numCallKinds]backoff, jobs int) string {
	var parts []string
	for k, b := range bs {
		if b.fails > 0 {
			parts = append(parts, fmt.Sprintf("%s calls: %s", callKind(k), b))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	if jobs > 0 {
		parts = append(parts, fmt.Sprintf("%d admitted jobs wait out their own backoff", jobs))
	}
	return strings.Join(parts, "; ")
}

// backoffEnd is when the earliest cluster-wide backoff that holds calls
// after now ends; ok is false when none does.
func (e *Engine) backoffEnd(now time.Time) (end time.Time, ok bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	for _, b := range e.rmBackoff {
		if b.waiting(now) && (!ok || b.until.Before(end)) {
			end, ok = b.until, true
		}
	}
	return end, ok
}
