package yarncluster

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// forgetfulRM is a Cluster over a fake RM (and optionally a fake
// Timeline Server it publishes to), keeping maxCompleted ended apps.
func forgetfulRM(t *testing.T, maxCompleted int, timeline bool, opts ...yarntest.Option) (*Cluster, *yarntest.FakeRM, *yarntest.FakeTimeline) {
	t.Helper()
	rm := yarntest.NewFakeRM(t, append([]yarntest.Option{yarntest.AutoStart(), yarntest.MaxCompletedApps(maxCompleted)}, opts...)...)
	rm.AddNode(yarnclient.Node{ID: "worker1:8041"})
	cfg := Config{RMURLs: []string{rm.URL()}, User: "colocd", Timeout: 5 * time.Second, Submit: SubmitREST,
		MaxCompletedApps: maxCompleted}
	var tl *yarntest.FakeTimeline
	if timeline {
		tl = yarntest.NewFakeTimeline(t)
		rm.PublishTo(tl)
		cfg.TimelineURL = tl.URL()
	}
	cc := cfg.ClientConfig(nil)
	cc.Retries = -1
	c, err := yarnclient.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	return New(c, cfg, nil), rm, tl
}

// runJob reserves, submits and (when final is set) ends one job.
func runJob(t *testing.T, y *Cluster, rm *yarntest.FakeRM, id, final string) string {
	t.Helper()
	ctx := context.Background()
	app, err := y.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := y.Submit(ctx, app, queue.Job{ID: id, Kind: "wordcount", Submit: []byte(`{"am-container-spec":{"commands":{"command":"true"}}}`)}); err != nil {
		t.Fatal(err)
	}
	if final != "" {
		if err := rm.FinishApp(app, final); err != nil {
			t.Fatal(err)
		}
	}
	return app
}

func TestForgottenProofs(t *testing.T) {
	ctx := context.Background()
	var checkAt func(t *testing.T, y *Cluster, app string, recorded time.Time, want cluster.Outcome, reason string) cluster.Verdict
	const later = yarntest.DefaultClusterTimestamp + 3_600_000
	check := func(t *testing.T, y *Cluster, app string, want cluster.Outcome, reason string) cluster.Verdict {
		t.Helper()
		return checkAt(t, y, app, time.Time{}, want, reason)
	}
	checkAt = func(t *testing.T, y *Cluster, app string, recorded time.Time, want cluster.Outcome, reason string) cluster.Verdict {
		t.Helper()
		if _, err := y.App(ctx, app); !errors.Is(err, cluster.ErrUnknownApp) {
			t.Fatalf("App(%s) = %v, want cluster.ErrUnknownApp (the scenario is wrong)", app, err)
		}
		v, err := y.Forgotten(ctx, app, recorded)
		if err != nil {
			t.Fatalf("Forgotten(%s): %v", app, err)
		}
		if v.Outcome != want || !strings.Contains(v.Reason, reason) {
			t.Errorf("Forgotten(%s) = %+v, want outcome %d with %q in the reason", app, v, want, reason)
		}
		return v
	}
	t.Run("reserved, never submitted, same RM", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 1000, false)
		runJob(t, y, rm, "J1", "SUCCEEDED")
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(t, y, app, cluster.OutcomeNeverRan, "still holds every application")
	})
	t.Run("ended and dropped beyond max-completed-applications", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 2, false)
		app := runJob(t, y, rm, "J1", "SUCCEEDED")
		runJob(t, y, rm, "J2", "FAILED")
		runJob(t, y, rm, "J3", "KILLED")
		check(t, y, app, cluster.OutcomeUnprovable, "3 applications ended")
	})
	// Beyond max-completed-applications, the admission's time decides: the
	// RM drops ended applications oldest first.
	t.Run("reserved beyond retention, an older ended application still held", func(t *testing.T) {
		clk := &fakeClock{now: time.UnixMilli(yarntest.DefaultClusterTimestamp + 1000)}
		y, rm, _ := forgetfulRM(t, 2, false, yarntest.Clock(clk.Now))
		for _, id := range []string{"J1", "J2", "J3"} {
			runJob(t, y, rm, id, "SUCCEEDED")
			clk.advance(time.Second)
		}
		clk.advance(clockSkew) // the RM holds an application ended clockSkew before the admission
		recorded := clk.Now()
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		clk.advance(time.Second)
		checkAt(t, y, app, recorded, cluster.OutcomeNeverRan, "drops ended applications oldest first")
	})
	t.Run("ran after its admission, ended and dropped", func(t *testing.T) {
		clk := &fakeClock{now: time.UnixMilli(yarntest.DefaultClusterTimestamp + 1000)}
		y, rm, _ := forgetfulRM(t, 1, false, yarntest.Clock(clk.Now))
		runJob(t, y, rm, "J0", "SUCCEEDED")
		clk.advance(time.Second)
		recorded := clk.Now()
		clk.advance(time.Second)
		app := runJob(t, y, rm, "J1", "SUCCEEDED") // ran, ended after it was recorded
		clk.advance(time.Second)
		runJob(t, y, rm, "J2", "SUCCEEDED") // and was dropped for this one
		checkAt(t, y, app, recorded, cluster.OutcomeUnprovable, "applications ended")
	})
	t.Run("an older ended application, but within the clock skew", func(t *testing.T) {
		clk := &fakeClock{now: time.UnixMilli(yarntest.DefaultClusterTimestamp + 1000)}
		y, rm, _ := forgetfulRM(t, 1, false, yarntest.Clock(clk.Now))
		runJob(t, y, rm, "J1", "SUCCEEDED")
		runJob(t, y, rm, "J2", "SUCCEEDED")
		clk.advance(time.Minute) // J2 ended a minute before: the clocks may disagree by more
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		checkAt(t, y, app, clk.Now(), cluster.OutcomeUnprovable, "applications ended")
	})
	t.Run("ran, then the RM restarted without recovery", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 1000, false)
		app := runJob(t, y, rm, "J1", "")
		rm.Restart(later, false)
		v := check(t, y, app, cluster.OutcomeUnprovable, "the RM restarted")
		if !strings.Contains(v.Reason, "yarn.timeline_url") {
			t.Errorf("reason %q does not say a timeline server would help", v.Reason)
		}
	})
	t.Run("the history knows how it ended", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 1000, true)
		app := runJob(t, y, rm, "J1", "FAILED")
		rm.Restart(later, false)
		v := check(t, y, app, cluster.OutcomeRan, "Timeline Server has")
		// The job is the engine's to say (from the id it recorded); the
		// history gives the owner, which the engine checks.
		if v.Status.Phase != cluster.PhaseFailed || v.Status.ID != app || v.Status.User != "colocd" || v.Status.JobID != "" {
			t.Errorf("history status %+v, want %s failed, owned by colocd, no job read from its tags", v.Status, app)
		}
	})
	t.Run("the history never saw it, the RM that issued it is gone", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 1000, true)
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		rm.Restart(later, false)
		check(t, y, app, cluster.OutcomeNeverRanStaleID, "never saw")
	})
	t.Run("the history never saw it, same RM beyond retention", func(t *testing.T) {
		y, rm, _ := forgetfulRM(t, 1, true)
		runJob(t, y, rm, "J1", "SUCCEEDED")
		runJob(t, y, rm, "J2", "SUCCEEDED")
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		check(t, y, app, cluster.OutcomeNeverRan, "nor the Timeline Server")
	})
	t.Run("the history does not answer", func(t *testing.T) {
		y, rm, tl := forgetfulRM(t, 1000, true)
		app := runJob(t, y, rm, "J1", "SUCCEEDED")
		rm.Restart(later, false)
		tl.SetDown(true)
		if _, err := y.Forgotten(ctx, app, time.Time{}); err == nil {
			t.Error("Forgotten with the Timeline Server down: no error, want one (decide later)")
		}
	})
	t.Run("command tokens record their RM", func(t *testing.T) {
		if ts, ok := issuerOf("cmd-1700000000000-0123456789abcdef"); !ok || ts != 1700000000000 {
			t.Errorf("issuerOf(token) = %d, %v", ts, ok)
		}
		if _, ok := issuerOf("cmd-0123456789abcdef"); ok {
			t.Error("a token without its RM: issuer known")
		}
		if ts, ok := issuerOf("application_1700000000000_0007"); !ok || ts != 1700000000000 {
			t.Errorf("issuerOf(app id) = %d, %v", ts, ok)
		}
	})
}

// fakeClock is a settable clock for the fake RM's times.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}
