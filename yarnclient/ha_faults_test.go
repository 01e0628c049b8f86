package yarnclient_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

func TestHAFailover(t *testing.T) {
	tests := map[string]func(t *testing.T, active *yarntest.FakeRM) (first string, firstRM *yarntest.FakeRM){
		"first RM down": func(t *testing.T, _ *yarntest.FakeRM) (string, *yarntest.FakeRM) {
			return deadaddr.URL(t), nil
		},
		"first RM standby, 3.x redirect": func(t *testing.T, active *yarntest.FakeRM) (string, *yarntest.FakeRM) {
			rm := yarntest.NewFakeRM(t)
			rm.SetStandby(true)
			rm.SetActiveURL(active.URL())
			return rm.URL(), rm
		},
		"first RM standby, 2.x text answer": func(t *testing.T, active *yarntest.FakeRM) (string, *yarntest.FakeRM) {
			rm := yarntest.NewFakeRM(t, yarntest.Hadoop2())
			rm.SetStandby(true)
			rm.SetActiveURL(active.URL())
			return rm.URL(), rm
		},
		"first RM standby, no active known": func(t *testing.T, _ *yarntest.FakeRM) (string, *yarntest.FakeRM) {
			rm := yarntest.NewFakeRM(t)
			rm.SetStandby(true)
			return rm.URL(), rm
		},
	}
	for name, setup := range tests {
		t.Run(name, func(t *testing.T) {
			active := yarntest.NewFakeRM(t)
			id := active.AddApp(yarnclient.App{Name: "x", User: "u"})
			first, firstRM := setup(t, active)
			c, sleeps := newClient(t, nil, first, active.URL())
			ctx := ctxT(t)

			apps, err := c.Apps(ctx, yarnclient.AppsFilter{})
			if err != nil {
				t.Fatal(err)
			}
			if len(apps) != 1 || apps[0].ID != id {
				t.Fatalf("Apps = %+v, want the active RM's app %s", apps, id)
			}
			if c.ActiveRM() != active.URL() {
				t.Errorf("ActiveRM = %s, want %s", c.ActiveRM(), active.URL())
			}
			if len(sleeps.got()) != 0 {
				t.Errorf("failover waited %v; it should move on at once", sleeps.got())
			}
			before := 0
			if firstRM != nil {
				before = firstRM.Requests(http.MethodGet, yarnclient.PathApps)
			}
			// The active RM is remembered; a write goes straight to it.
			na, err := c.NewApplication(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: na.ApplicationID}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.App(ctx, na.ApplicationID); err != nil {
				t.Fatal(err)
			}
			if firstRM != nil {
				if got := firstRM.Requests(http.MethodGet, yarnclient.PathApps); got != before {
					t.Errorf("the standby RM got %d more GETs after failover", got-before)
				}
				if firstRM.SubmitCalls() != 0 {
					t.Errorf("the standby RM accepted %d submissions", firstRM.SubmitCalls())
				}
			}
			if len(active.Submissions()) != 1 {
				t.Errorf("active RM saw %d submissions, want 1", len(active.Submissions()))
			}
		})
	}
}

// TestHAStandbyWriteFailsOver: a write that meets a standby goes to the active
// RM (the standby cannot have acted on it).
func TestHAStandbyWriteFailsOver(t *testing.T) {
	active := yarntest.NewFakeRM(t)
	standby := yarntest.NewFakeRM(t)
	standby.SetStandby(true)
	standby.SetActiveURL(active.URL())
	c, _ := newClient(t, nil, standby.URL(), active.URL())
	ctx := ctxT(t)
	if _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: "application_1700000000000_0042"}); err != nil {
		t.Fatal(err)
	}
	if standby.Requests(http.MethodPost, yarnclient.PathApps) != 1 || standby.SubmitCalls() != 0 || len(active.Submissions()) != 1 {
		t.Errorf("standby POSTs %d (handled %d), active submissions %d; want 1, 0, 1",
			standby.Requests(http.MethodPost, yarnclient.PathApps), standby.SubmitCalls(), len(active.Submissions()))
	}
}

// TestHARedirectJumpsToTheNamedRM: a standby's Location names the active RM;
// the client goes there directly, skipping the RMs in between.
func TestHARedirectJumpsToTheNamedRM(t *testing.T) {
	rm1, rm2, rm3 := yarntest.NewFakeRM(t), yarntest.NewFakeRM(t), yarntest.NewFakeRM(t)
	for _, rm := range []*yarntest.FakeRM{rm1, rm2} {
		rm.SetStandby(true)
		rm.SetActiveURL(rm3.URL())
	}
	c, _ := newClient(t, nil, rm1.URL(), rm2.URL(), rm3.URL())
	if _, err := c.ClusterMetrics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if got := rm2.Requests(http.MethodGet, yarnclient.PathClusterMetrics); got != 0 {
		t.Errorf("rm2 got %d requests; the redirect named rm3", got)
	}
	if c.ActiveRM() != rm3.URL() {
		t.Errorf("ActiveRM = %s, want rm3 %s", c.ActiveRM(), rm3.URL())
	}
}

// TestHAClusterInfo: a standby answers /cluster/info itself (haState
// STANDBY); the client asks the others for the active one.
func TestHAClusterInfo(t *testing.T) {
	active, standby := yarntest.NewFakeRM(t), yarntest.NewFakeRM(t)
	standby.SetStandby(true)
	standby.SetActiveURL(active.URL())
	c, _ := newClient(t, nil, standby.URL(), active.URL())
	info, err := c.ClusterInfo(ctxT(t))
	if err != nil || info.HAState != "ACTIVE" || c.ActiveRM() != active.URL() {
		t.Errorf("ClusterInfo = %s, %v via %s; want ACTIVE from %s", info.HAState, err, c.ActiveRM(), active.URL())
	}
	alone, _ := newClient(t, nil, standby.URL())
	info, err = alone.ClusterInfo(ctxT(t))
	if err != nil || info.HAState != "STANDBY" {
		t.Errorf("single standby ClusterInfo = %s, %v; want its STANDBY answer", info.HAState, err)
	}
}

func TestHANoActiveRM(t *testing.T) {
	rm1, rm2 := yarntest.NewFakeRM(t), yarntest.NewFakeRM(t)
	rm1.SetStandby(true)
	rm2.SetStandby(true)
	c, sleeps := newClient(t, nil, rm1.URL(), deadaddr.URL(t), rm2.URL())
	ctx := ctxT(t)
	_, err := c.Apps(ctx, yarnclient.AppsFilter{})
	if !errors.Is(err, yarnclient.ErrUnavailable) {
		t.Fatalf("Apps error = %v, want ErrUnavailable", err)
	}
	if diff := cmp.Diff([]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}, sleeps.got()); diff != "" {
		t.Errorf("a read retries the whole RM list with backoff (-want +got)\n%s", diff)
	}
	if got := rm1.Requests(http.MethodGet, yarnclient.PathApps); got != 4 {
		t.Errorf("rm1 saw %d tries, want 4 (1 + 3 retries)", got)
	}
	_, err = c.NewApplication(ctx)
	if !errors.Is(err, yarnclient.ErrUnavailable) {
		t.Fatalf("NewApplication error = %v, want ErrUnavailable", err)
	}
	if got := rm1.Requests(http.MethodPost, yarnclient.PathNewApplication); got != 1 {
		t.Errorf("a write went %d times to rm1, want 1", got)
	}
	if len(sleeps.got()) != 3 {
		t.Errorf("a write waited to retry: %v", sleeps.got())
	}
}

func TestFaults(t *testing.T) {
	type result struct {
		requests int // to the faulted path
		sleeps   int
	}
	getApps := func(ctx context.Context, c *yarnclient.Client) error {
		_, err := c.Apps(ctx, yarnclient.AppsFilter{})
		return err
	}
	submit := func(ctx context.Context, c *yarnclient.Client) error {
		_, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: "application_1700000000000_0007"})
		return err
	}
	tests := map[string]struct {
		path, method string
		fault        yarntest.Fault
		call         func(context.Context, *yarnclient.Client) error
		check        func(t *testing.T, err error)
		want         result
	}{
		"GET 503 twice, then success": {yarnclient.PathApps, "GET", yarntest.Fault{Status: 503, Times: 2}, getApps,
			func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("err = %v, want success after retries", err)
				}
			}, result{3, 2}},
		"GET 500 every time": {yarnclient.PathApps, "GET", yarntest.Fault{Status: 500}, getApps,
			func(t *testing.T, err error) {
				var re *yarnclient.RemoteError
				if !errors.As(err, &re) || re.StatusCode != 500 || !errors.Is(err, yarnclient.ErrUnavailable) {
					t.Errorf("err = %v, want a 500 *RemoteError matching ErrUnavailable", err)
				}
			}, result{4, 3}},
		"GET 502 HTML from a proxy": {yarnclient.PathApps, "GET", yarntest.Fault{Status: 502, Body: "<html><body><h1>502 Bad Gateway</h1></body></html>"}, getApps,
			func(t *testing.T, err error) {
				var re *yarnclient.RemoteError
				if !errors.As(err, &re) || !strings.Contains(re.Message, "502 Bad Gateway") {
					t.Errorf("err = %v, want a *RemoteError quoting the page", err)
				}
			}, result{4, 3}},
		"POST submit 500 is not retried": {yarnclient.PathApps, "POST", yarntest.Fault{Status: 500}, submit,
			func(t *testing.T, err error) {
				if !errors.Is(err, yarnclient.ErrUnavailable) {
					t.Errorf("err = %v, want ErrUnavailable", err)
				}
			}, result{1, 0}},
		"POST new-application 503 is not retried": {yarnclient.PathNewApplication, "POST", yarntest.Fault{Status: 503},
			func(ctx context.Context, c *yarnclient.Client) error { _, err := c.NewApplication(ctx); return err },
			func(t *testing.T, err error) {
				if !errors.Is(err, yarnclient.ErrUnavailable) {
					t.Errorf("err = %v, want ErrUnavailable", err)
				}
			}, result{1, 0}},
		"PUT kill 500 is not retried": {yarnclient.PathAppState("application_1700000000000_0001"), "PUT", yarntest.Fault{Status: 500},
			func(ctx context.Context, c *yarnclient.Client) error {
				return c.KillApp(ctx, "application_1700000000000_0001")
			},
			func(t *testing.T, err error) {
				if !errors.Is(err, yarnclient.ErrUnavailable) {
					t.Errorf("err = %v, want ErrUnavailable", err)
				}
			}, result{1, 0}},
		"malformed JSON": {yarnclient.PathApps, "GET", yarntest.Fault{Malformed: true}, getApps,
			func(t *testing.T, err error) {
				var de *yarnclient.DecodeError
				if !errors.Is(err, yarnclient.ErrDecode) || !errors.As(err, &de) || de.StatusCode != 200 || !strings.HasPrefix(de.Snippet, `{"apps"`) {
					t.Errorf("err = %v, want a *DecodeError with status 200 and the body's start", err)
				}
				if !strings.Contains(err.Error(), "200") || !strings.Contains(err.Error(), `{\"apps\"`) {
					t.Errorf("message %q lacks the status or the snippet", err.Error())
				}
			}, result{1, 0}},
		"HTML login page with 200": {yarnclient.PathClusterMetrics, "GET", yarntest.Fault{Status: 200, Body: "<html><title>Sign in</title></html>"},
			func(ctx context.Context, c *yarnclient.Client) error { _, err := c.ClusterMetrics(ctx); return err },
			func(t *testing.T, err error) {
				var de *yarnclient.DecodeError
				if !errors.As(err, &de) || !strings.Contains(de.Snippet, "Sign in") || !strings.Contains(de.ContentType, "html") {
					t.Errorf("err = %v, want a *DecodeError showing the page", err)
				}
			}, result{1, 0}},
		"GET connection reset, then success": {yarnclient.PathApps, "GET", yarntest.Fault{Reset: true, Times: 1}, getApps,
			func(t *testing.T, err error) {
				if err != nil {
					t.Errorf("err = %v, want success after the reset", err)
				}
			}, result{2, 1}},
		"POST submit connection reset is not retried": {yarnclient.PathApps, "POST", yarntest.Fault{Reset: true}, submit,
			func(t *testing.T, err error) {
				if err == nil || errors.Is(err, yarnclient.ErrUnavailable) {
					t.Errorf("err = %v, want a transport error (not a failover)", err)
				}
			}, result{1, 0}},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			rm := yarntest.NewFakeRM(t)
			rm.AddApp(yarnclient.App{Name: "a", User: "u"})
			rm.InjectFault(tt.path, yarntest.Fault{Method: tt.method, Status: tt.fault.Status, Body: tt.fault.Body,
				Malformed: tt.fault.Malformed, Reset: tt.fault.Reset, Times: tt.fault.Times})
			c, sleeps := newClient(t, nil, rm.URL())
			err := tt.call(ctxT(t), c)
			tt.check(t, err)
			got := result{rm.Requests(tt.method, tt.path), len(sleeps.got())}
			if got.requests < tt.want.requests || (tt.method != "GET" && got.requests != tt.want.requests) || got.sleeps != tt.want.sleeps {
				t.Errorf("requests %d, backoff waits %d; want %d and %d", got.requests, got.sleeps, tt.want.requests, tt.want.sleeps)
			}
			if tt.method == "POST" && tt.path == yarnclient.PathApps && (rm.SubmitCalls() != 0 || len(rm.Submissions()) != 0) {
				t.Errorf("a faulted submission reached the RM: %d calls", rm.SubmitCalls())
			}
		})
	}
}

// TestSlowAnswer: a held answer makes the call wait for it, and the caller's
// context bounds the wait; an expired context is not retried.
func TestSlowAnswer(t *testing.T) {
	t.Run("context deadline", func(t *testing.T) {
		rm := yarntest.NewFakeRM(t)
		hold := make(chan struct{}) // never released
		rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Block: hold})
		c, sleeps := newClient(t, nil, rm.URL())
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		_, err := c.Apps(ctx, yarnclient.AppsFilter{})
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("err = %v, want context.DeadlineExceeded", err)
		}
		if n := rm.Requests(http.MethodGet, yarnclient.PathApps); n != 1 || len(sleeps.got()) != 0 {
			t.Errorf("requests %d, waits %v; want 1 and none", n, sleeps.got())
		}
	})
	t.Run("released", func(t *testing.T) {
		rm := yarntest.NewFakeRM(t)
		hold, arrived := make(chan struct{}), make(chan struct{}, 1)
		rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Block: hold, Arrived: arrived})
		c, _ := newClient(t, nil, rm.URL())
		done := make(chan error, 1)
		go func() {
			_, err := c.ClusterMetrics(ctxT(t))
			done <- err
		}()
		<-arrived
		select {
		case err := <-done:
			t.Fatalf("call returned (%v) while its answer was held", err)
		default:
		}
		close(hold)
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	})
	t.Run("HTTP client timeout", func(t *testing.T) {
		rm := yarntest.NewFakeRM(t)
		hold := make(chan struct{})
		rm.InjectFault(yarnclient.PathNewApplication, yarntest.Fault{Block: hold})
		c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.Timeout = 100 * time.Millisecond }, rm.URL())
		_, err := c.NewApplication(ctxT(t))
		var ne net.Error
		if !errors.As(err, &ne) || !ne.Timeout() {
			t.Fatalf("err = %v, want a timeout", err)
		}
		if n := rm.Requests(http.MethodPost, yarnclient.PathNewApplication); n != 1 {
			t.Errorf("new-application sent %d times, want 1", n)
		}
	})
}

func TestBackoffIsCapped(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.InjectFault(yarnclient.PathNodes, yarntest.Fault{Status: 503})
	c, sleeps := newClient(t, func(cfg *yarnclient.Config) { cfg.Retries = 5; cfg.MaxBackoff = 250 * time.Millisecond }, rm.URL())
	if _, err := c.Nodes(ctxT(t)); !errors.Is(err, yarnclient.ErrUnavailable) {
		t.Fatalf("err = %v, want ErrUnavailable", err)
	}
	ms := time.Millisecond
	if diff := cmp.Diff([]time.Duration{100 * ms, 200 * ms, 250 * ms, 250 * ms, 250 * ms}, sleeps.got()); diff != "" {
		t.Errorf("backoff (-want +got)\n%s", diff)
	}
	none, s2 := newClient(t, func(cfg *yarnclient.Config) { cfg.Retries = -1 }, rm.URL())
	if _, err := none.Nodes(ctxT(t)); err == nil || len(s2.got()) != 0 {
		t.Errorf("Retries -1: err %v, waits %v; want an error and no wait", err, s2.got())
	}
}

// TestAuthHook: the Auth is asked for every try, on a fresh request.
func TestAuthHook(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Status: 503, Times: 1})
	var calls atomic.Int32
	auth := yarnclient.AuthFunc(func(r *http.Request) error {
		calls.Add(1)
		if r.Header.Get("Authorization") != "" {
			t.Error("request reused: Authorization already set")
		}
		r.Header.Set("Authorization", "Negotiate dG9rZW4=")
		return yarnclient.SimpleAuth{User: "svc"}.Authenticate(r)
	})
	c, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = auth }, rm.URL())
	if _, err := c.ClusterMetrics(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	if calls.Load() != 2 {
		t.Errorf("Auth called %d times, want 2 (one per try)", calls.Load())
	}
	failing := yarnclient.AuthFunc(func(*http.Request) error { return errors.New("no ticket") })
	c2, _ := newClient(t, func(cfg *yarnclient.Config) { cfg.User = ""; cfg.Auth = failing }, rm.URL())
	if _, err := c2.ClusterMetrics(ctxT(t)); err == nil || !strings.Contains(err.Error(), "no ticket") {
		t.Errorf("err = %v, want the Auth's error", err)
	}
}

// TestSubmitAnswerLost: the RM accepts a submission but the answer is lost.
// SubmitApp fails without retrying, and the way to learn the outcome is to
// ask the RM for the id, as the daemon's reconciliation does.
func TestSubmitAnswerLost(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Method: "POST", ResetAfter: true, Times: 1})
	c, sleeps := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	na, err := c.NewApplication(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.SubmitApp(ctx, yarnclient.SubmissionContext{ApplicationID: na.ApplicationID}); err == nil {
		t.Fatal("SubmitApp succeeded although its answer was lost")
	}
	if rm.SubmitCalls() != 1 || len(rm.Submissions()) != 1 || len(sleeps.got()) != 0 {
		t.Fatalf("submit calls %d, submissions %d, waits %v; want 1, 1, none", rm.SubmitCalls(), len(rm.Submissions()), sleeps.got())
	}
	app, err := c.App(ctx, na.ApplicationID)
	if err != nil || app.State != "ACCEPTED" {
		t.Errorf("App after the lost answer = %+v, %v; want it known to the RM", app, err)
	}
}
