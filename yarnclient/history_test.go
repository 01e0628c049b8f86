package yarnclient_test

import (
	"errors"
	"testing"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestHistoryAppAfterTheRMForgets: the history service keeps an application
// the RM forgot, with its final state and tags; it answers ErrNotFound for
// one it never saw, ErrUnavailable when down; a client without a timeline
// URL says so.
func TestHistoryAppAfterTheRMForgets(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart())
	tl := yarntest.NewFakeTimeline(t)
	rm.PublishTo(tl)
	addNodes(rm, "n1:8041")
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.TimelineURL = tl.URL() }, rm.URL())
	ctx := ctxT(t)
	na, err := c.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sc := yarnclient.SubmissionContext{ApplicationID: na.ApplicationID, ApplicationName: "job"}
	sc.AddTags(yarnclient.JobTags("01JOB", "tpch")...)
	if _, err := c.SubmitApp(ctx, sc); err != nil {
		t.Fatal(err)
	}
	h, err := c.HistoryApp(ctx, na.ApplicationID)
	if err != nil || h.AppState != "RUNNING" {
		t.Fatalf("history of a running app: %+v, %v", h, err)
	}
	if err := rm.FinishApp(na.ApplicationID, "FAILED"); err != nil {
		t.Fatal(err)
	}
	rm.Restart(yarntest.DefaultClusterTimestamp+3_600_000, false)
	if _, err := c.App(ctx, na.ApplicationID); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Fatalf("the RM after a restart without recovery: %v, want ErrNotFound", err)
	}
	h, err = c.HistoryApp(ctx, na.ApplicationID)
	if err != nil || h.AppState != "FAILED" || h.FinalAppStatus != "FAILED" || len(h.Tags()) != 2 {
		t.Errorf("history after the RM forgot: %+v, %v", h, err)
	}
	if _, err := c.HistoryApp(ctx, yarnclient.FormatAppID(yarntest.DefaultClusterTimestamp, 99)); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Errorf("history of an app never submitted: %v, want ErrNotFound", err)
	}
	if _, err := c.HistoryApp(ctx, "not-an-id"); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("history of a malformed id: %v, want ErrInvalid", err)
	}
	tl.SetDown(true)
	if _, err := c.HistoryApp(ctx, na.ApplicationID); !errors.Is(err, yarnclient.ErrUnavailable) {
		t.Errorf("history service down: %v, want ErrUnavailable", err)
	}
	plain, _ := newClient(t, nil, rm.URL())
	if _, err := plain.HistoryApp(ctx, na.ApplicationID); !errors.Is(err, yarnclient.ErrNoTimeline) {
		t.Errorf("no timeline configured: %v, want ErrNoTimeline", err)
	}
	if _, err := yarnclient.New(yarnclient.Config{RMURLs: []string{rm.URL()}, TimelineURL: "ftp://x"}); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("bad TimelineURL: %v, want ErrInvalid", err)
	}
}

// TestFakeRMForgetsLikeYARN: the fake follows the RM's retention rules:
// the oldest completed apps beyond max-completed-applications are
// forgotten while the queue metrics keep counting; a restart changes the
// cluster id and resets the counters, and forgets everything without
// recovery.
func TestFakeRMForgetsLikeYARN(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart(), yarntest.MaxCompletedApps(2))
	addNodes(rm, "n1:8041")
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	var ids []string
	for i := range 4 {
		na, err := c.NewApplication(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: na.ApplicationID}); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, na.ApplicationID)
		if i < 3 {
			if err := rm.FinishApp(na.ApplicationID, []string{"SUCCEEDED", "KILLED", "FAILED"}[i]); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := c.App(ctx, ids[0]); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Errorf("oldest completed beyond the limit: %v, want ErrNotFound", err)
	}
	for _, id := range ids[1:] {
		if _, err := c.App(ctx, id); err != nil {
			t.Errorf("app %s within the limit: %v", id, err)
		}
	}
	m, err := c.ClusterMetrics(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if m.AppsSubmitted != 4 || m.AppsCompleted != 1 || m.AppsKilled != 1 || m.AppsFailed != 1 || m.AppsRunning != 1 {
		t.Errorf("metrics after an eviction: %+v", m)
	}
	const later = yarntest.DefaultClusterTimestamp + 60_000
	rm.Restart(later, true)
	info, err := c.ClusterInfo(ctx)
	if err != nil || info.ID != later {
		t.Fatalf("cluster id after a restart: %+v, %v", info, err)
	}
	if _, err := c.App(ctx, ids[3]); err != nil {
		t.Errorf("running app after a recovering restart: %v", err)
	}
	if m, _ := c.ClusterMetrics(ctx); m.AppsSubmitted != 0 || m.AppsCompleted != 0 {
		t.Errorf("metrics after a restart: %+v, want the counters reset", m)
	}
	na, err := c.NewApplication(ctx)
	if ts, _ := yarnclient.AppIDClusterTimestamp(na.ApplicationID); err != nil || ts != later {
		t.Errorf("new id after a restart: %s, %v", na.ApplicationID, err)
	}
	rm.Restart(later+60_000, false)
	if _, err := c.App(ctx, ids[3]); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Errorf("running app after a restart without recovery: %v, want ErrNotFound", err)
	}
}
