package yarncluster

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/yarnclient"
)

// App reports an application's phase.
func (y *Cluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	id, err := y.resolve(ctx, appID)
	if err != nil {
		return cluster.AppStatus{}, err
	}
	a, err := y.c.App(ctx, id)
	if errors.Is(err, yarnclient.ErrNotFound) {
		return cluster.AppStatus{}, fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
	}
	if err != nil {
		return cluster.AppStatus{}, err
	}
	st := appStatus(a.ID, a.State, a.FinalStatus, a.Diagnostics, a.StartedTime, a.FinishedTime)
	st.User = a.User
	return st, nil
}

// pendingStates are the RM's states of an application that waits to run.
var pendingStates = []string{"NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED"}

// PendingApps reports, in one call to the RM (GET apps?states=NEW,
// NEW_SAVING,SUBMITTED,ACCEPTED, colocd's user's with yarn.submit_as
// daemon), those of ids that wait to run (engine.pendingApps). Command
// tokens are not application ids: they are left to App.
func (y *Cluster) PendingApps(ctx context.Context, ids []string) (map[string]cluster.AppStatus, error) {
	want := map[string]bool{}
	for _, id := range ids {
		if !strings.HasPrefix(id, commandTokenPrefix) {
			want[id] = true
		}
	}
	if len(want) == 0 {
		return nil, nil
	}
	f := yarnclient.AppsFilter{States: pendingStates}
	if y.cfg.SubmitAs != SubmitAsJobUser {
		f.User = y.daemonUser()
	}
	apps, err := y.c.Apps(ctx, f)
	if err != nil {
		return nil, err
	}
	out := map[string]cluster.AppStatus{}
	for _, a := range apps {
		if !want[a.ID] {
			continue
		}
		st := appStatus(a.ID, a.State, a.FinalStatus, a.Diagnostics, a.StartedTime, a.FinishedTime)
		st.User = a.User
		out[a.ID] = st
	}
	return out, nil
}

// appStatus is an application's status from what the RM and the Timeline
// Server both report (times in ms since the epoch, 0 for none). Its JobID
// stays empty: tags say nothing about who submitted an application.
func appStatus(id, state, final, diag string, started, finished int64) cluster.AppStatus {
	st := cluster.AppStatus{ID: id, Phase: yarnPhase(state, final), Diagnostics: diag}
	if started > 0 {
		st.Started = time.UnixMilli(started)
	}
	if finished > 0 {
		st.Finished = time.UnixMilli(finished)
	}
	return st
}

func yarnPhase(state, final string) cluster.Phase {
	switch strings.ToUpper(state) {
	case "RUNNING":
		return cluster.PhaseRunning
	case "FINISHED":
		switch strings.ToUpper(final) {
		case "FAILED":
			return cluster.PhaseFailed
		case "KILLED":
			return cluster.PhaseKilled
		}
		return cluster.PhaseSucceeded
	case "FAILED":
		return cluster.PhaseFailed
	case "KILLED":
		return cluster.PhaseKilled
	}
	return cluster.PhaseAccepted // NEW, NEW_SAVING, SUBMITTED, ACCEPTED
}

// Forgotten decides what can be proven about appID, which the RM does not
// know (App answered cluster.ErrUnknownApp), before the engine submits its job
// again. In order:
//
//  1. The Timeline Server (yarn.timeline_url), when configured, has every
//     application the RM published: a record gives the outcome; no record
//     proves the application was never submitted.
//  2. An RM forgets an application it issued only by a restart (a new
//     cluster timestamp: the id's timestamp, or the one in a command token,
//     then differs from GET /cluster/info's id) or, once ended, when more
//     than yarn.resourcemanager.max-completed-applications applications have
//     ended since it started (the queue metrics' appsCompleted, appsFailed
//     and appsKilled count them; the oldest are dropped first, so one that
//     ended in this RM's life is dropped only after that many more ended).
//     So the same RM, with no more endings than yarn.max_completed_applications,
//     proves the application was never submitted; so does the same RM
//     still holding an application that ended before the job's admission
//     was recorded (less clockSkew): it drops ended applications oldest
//     first, and appID could only have ended after.
//  3. Otherwise it may have run: cluster.OutcomeUnprovable, and the job is parked.
//
// The Timeline Server's word is trusted: set yarn.timeline_url only where
// the RM publishes every application to it
// (yarn.system-metrics-publisher.enabled).
func (y *Cluster) Forgotten(ctx context.Context, appID string, recorded time.Time) (cluster.Verdict, error) {
	command := strings.HasPrefix(appID, commandTokenPrefix)
	noHistory := false
	if !command && y.cfg.TimelineURL != "" {
		h, err := y.c.HistoryApp(ctx, appID)
		switch {
		case err == nil:
			return cluster.Verdict{Outcome: cluster.OutcomeRan, Status: historyStatus(h),
				Reason: fmt.Sprintf("the Timeline Server has %s as %s/%s", appID, h.AppState, h.FinalAppStatus)}, nil
		case errors.Is(err, yarnclient.ErrNotFound):
			noHistory = true
		default:
			return cluster.Verdict{}, fmt.Errorf("ask the Timeline Server about %s: %w", appID, err)
		}
	}
	info, err := y.c.ClusterInfo(ctx)
	if err != nil {
		return cluster.Verdict{}, fmt.Errorf("cluster info: %w", err)
	}
	m, err := y.c.ClusterMetrics(ctx)
	if err != nil {
		return cluster.Verdict{}, fmt.Errorf("cluster metrics: %w", err)
	}
	issued, known := issuerOf(appID)
	sameRM := known && issued == info.ID
	ended := m.AppsCompleted + m.AppsFailed + m.AppsKilled
	retained := sameRM && ended <= y.cfg.MaxCompletedApps
	switch {
	case retained:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: fmt.Sprintf(
			"the RM that issued %s (started %s) still holds every application it ran (%d ended, yarn.max_completed_applications %d)",
			appID, time.UnixMilli(info.ID).UTC().Format(time.RFC3339), ended, y.cfg.MaxCompletedApps)}, nil
	case noHistory && sameRM:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: "neither the RM that issued " + appID + " nor the Timeline Server has it"}, nil
	case sameRM && !recorded.IsZero():
		// The RM drops its ended applications oldest first: one that it
		// still holds and that ended before the job was recorded proves
		// it would still hold appID, which could only have ended after.
		// "Before" leaves clockSkew between colocd's clock and the RM's.
		older, err := y.c.Apps(ctx, yarnclient.AppsFilter{States: []string{"FINISHED", "FAILED", "KILLED"},
			FinishedTimeEnd: recorded.Add(-clockSkew), Limit: 1})
		if err != nil {
			return cluster.Verdict{}, fmt.Errorf("list the applications that ended before %s: %w", recorded.UTC().Format(time.RFC3339), err)
		}
		if len(older) > 0 {
			return cluster.Verdict{Outcome: cluster.OutcomeNeverRan, Reason: fmt.Sprintf(
				"the RM that issued %s still holds %s, which ended before the job was recorded (%s), and drops ended applications oldest first",
				appID, older[0].ID, recorded.UTC().Format(time.RFC3339))}, nil
		}
	case noHistory:
		return cluster.Verdict{Outcome: cluster.OutcomeNeverRanStaleID, Reason: "the Timeline Server never saw " + appID +
			", and the RM that issued it is gone (restarted)"}, nil
	}
	var why string
	switch {
	case !known:
		why = fmt.Sprintf("%s does not say which RM issued it", appID)
	case !sameRM:
		why = fmt.Sprintf("the RM restarted since it issued %s (then started %s, now %s); it may have run before the restart",
			appID, time.UnixMilli(issued).UTC().Format(time.RFC3339), time.UnixMilli(info.ID).UTC().Format(time.RFC3339))
	default:
		why = fmt.Sprintf("%d applications ended since the RM started, more than yarn.max_completed_applications %d: the RM may have dropped %s after it ended",
			ended, y.cfg.MaxCompletedApps, appID)
	}
	if y.cfg.TimelineURL == "" && !command {
		why += "; no yarn.timeline_url to ask the application history"
	}
	return cluster.Verdict{Outcome: cluster.OutcomeUnprovable, Reason: why}, nil
}

// clockSkew is how far colocd's clock and the RM's may disagree when
// Forgotten compares the RM's end times with the time colocd recorded an
// admission: Kerberos's default limit, which a kerberized cluster's clocks
// keep within.
const clockSkew = 5 * time.Minute

// issuerOf is the start time (ms) of the RM process that issued id: an
// application id's cluster timestamp, or the one a command token records.
func issuerOf(id string) (int64, bool) {
	if rest, ok := strings.CutPrefix(id, commandTokenPrefix); ok {
		ts, _, found := strings.Cut(rest, "-")
		if !found {
			return 0, false // a token minted before the RM was recorded
		}
		v, err := strconv.ParseInt(ts, 10, 64)
		return v, err == nil
	}
	return yarnclient.AppIDClusterTimestamp(id)
}

// historyStatus is an application as the Timeline Server reports it.
func historyStatus(h yarnclient.HistoryApp) cluster.AppStatus {
	st := appStatus(h.AppID, h.AppState, h.FinalAppStatus, h.DiagnosticsInfo, h.StartedTime, h.FinishedTime)
	st.User = h.User
	return st
}

// Kill kills an application; with yarn.submit_as job_user as its owner,
// whom the RM always lets kill it (MODIFY_APP), read from its report.
func (y *Cluster) Kill(ctx context.Context, appID string) error {
	id, err := y.resolve(ctx, appID)
	if err != nil {
		return err
	}
	var opts []yarnclient.CallOption
	if y.cfg.SubmitAs == SubmitAsJobUser && !strings.HasPrefix(appID, commandTokenPrefix) {
		a, err := y.c.App(ctx, id)
		if errors.Is(err, yarnclient.ErrNotFound) {
			return fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
		}
		if err != nil {
			return fmt.Errorf("read the owner of application %s to kill it as them: %w", id, err)
		}
		if a.User != "" && a.User != y.daemonUser() {
			opts = append(opts, yarnclient.As(a.User))
		}
	}
	err = y.c.KillApp(ctx, id, opts...)
	if errors.Is(err, yarnclient.ErrNotFound) {
		return fmt.Errorf("application %s: %w: %w", id, cluster.ErrUnknownApp, err)
	}
	return err
}
