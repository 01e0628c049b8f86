package engine

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/colocd/colocd/queue"
)

// Job transitions are logged at INFO, one line each, with the same keys:
// job, kind, app, state and, when it finished, took (its runtime; sim_took
// on a simulated clock). The unhappy ones (requeued, parked) are WARN and
// ERROR lines with the same keys.

// jobLog is the logger of job j: its id, kind and application.
func (e *Engine) jobLog(j queue.Job) *slog.Logger {
	return e.log.With("job", j.ID, "kind", j.Kind, "app", j.AppID)
}

// logStarted logs that job j, just marked running, started.
func (e *Engine) logStarted(j queue.Job) {
	e.jobLog(j).Info("job started", "state", j.State)
}

// logFinished logs that job j reached its final state, with its runtime:
// from running (or, never seen running, from admission) to the end.
func (e *Engine) logFinished(j queue.Job, attrs ...any) {
	attrs = append([]any{"state", j.State, e.clockKey("took"), jobRuntime(j)}, attrs...)
	e.jobLog(j).Info("job finished", attrs...)
}

// jobRuntime is how long finished job j ran; zero when its times are missing.
func jobRuntime(j queue.Job) time.Duration {
	from := j.RunningAt
	if from == nil {
		from = j.AdmittedAt
	}
	if from == nil || j.FinishedAt == nil {
		return 0
	}
	return j.FinishedAt.Sub(*from)
}

// clockKey is the log key of a time or duration on the engine's clock:
// "sim_"+key on a simulated one.
func (e *Engine) clockKey(key string) string {
	if e.simClock {
		return "sim_" + key
	}
	return key
}

// logTick logs a learning tick that ran: the kinds whose preferences it
// updated, the hosts it scored and those it skipped, and how long it took
// (wall time; its window is on the engine's clock).
func (e *Engine) logTick(rep LearnReport, took time.Duration) {
	kinds := map[string]bool{}
	for _, g := range rep.Goodness {
		for _, k := range g.Kinds {
			kinds[k] = true
		}
	}
	// A tick that learned nothing new (no co-located kind, no update, no
	// new kind, no host skipped) is at DEBUG: at the demo's 60× that is
	// most ticks, one a wall second, and they buried the lines that say
	// something. The tick's time is in colocd_learning_last_tick_* all the same.
	level := slog.LevelInfo
	if len(kinds) == 0 && rep.Updates == 0 && rep.Profile.NewKinds == 0 && len(rep.Stale) == 0 && len(rep.Invalid) == 0 {
		level = slog.LevelDebug
	}
	e.log.Log(context.Background(), level, "learning tick", e.clockKey("from"), rep.From, e.clockKey("to"), rep.To,
		"kinds", len(kinds), "updates", rep.Updates,
		"hosts_observed", rep.Observed, "hosts_profiled", rep.Profile.Observations,
		"hosts_stale", len(rep.Stale), "hosts_invalid", len(rep.Invalid),
		"new_kinds", rep.Profile.NewKinds, "hosts_in_parts", rep.Parts, "took", took)
}

// failRejected fails job j, whose submission the cluster definitely
// refused (cluster.ErrRejected), with the refusal as its diagnostics: an
// ERROR line, as a job that will not run is one an operator must hear of.
func (e *Engine) failRejected(j queue.Job, rejected error) error {
	done, err := e.store.Finish(j.ID, queue.StateFailed, rejected.Error())
	e.StoreWrite("fail", err)
	if err != nil {
		return fmt.Errorf("fail after the cluster refused it (%v): %w", rejected, err)
	}
	e.jobLog(done).Error("job failed: the cluster refused its submission", "state", done.State, "err", rejected)
	return nil
}
