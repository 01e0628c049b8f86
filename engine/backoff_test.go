package engine

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/queue"
)

// TestBackoffWaits: each failure in a row doubles the wait from Initial
// up to Max, and the jitter draws it from [w/2, w]; a success ends it.
func TestBackoffWaits(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	t.Logf("seed %d", seed)
	p := backoffPolicy{cfg: BackoffConfig{Initial: time.Second, Max: 8 * time.Second}, rng: rand.New(rand.NewPCG(seed, 1))}
	now := time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)
	want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second, 8 * time.Second, 8 * time.Second, 8 * time.Second}
	var b backoff
	var got []time.Duration
	for i := range want {
		p.fail(&b, now, fmt.Errorf("failure %d", i))
		if b.wait < want[i]/2 || b.wait > want[i] {
			t.Errorf("failure %d: wait %v, want within [%v, %v]", i+1, b.wait, want[i]/2, want[i])
		}
		if !b.waiting(now.Add(b.wait-time.Nanosecond)) || b.waiting(now.Add(b.wait)) {
			t.Errorf("failure %d: waiting does not end at the wait %v", i+1, b.wait)
		}
		got = append(got, max(b.wait, want[i]/2).Round(want[i]))
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("waits rounded to their step (-want +got):\n%s", diff)
	}
	if !b.since.Equal(now) || b.fails != len(want) {
		t.Errorf("since %v fails %d, want %v and %d", b.since, b.fails, now, len(want))
	}
	// A huge Initial never overflows into a negative wait.
	p.cfg = BackoffConfig{Initial: time.Duration(1) << 62, Max: time.Duration(math.MaxInt64)}
	b = backoff{}
	for range 70 {
		p.fail(&b, now, errors.New("x"))
		if b.wait <= 0 {
			t.Fatalf("failure %d: wait %v", b.fails, b.wait)
		}
	}
}

func TestBackoffConfigValidate(t *testing.T) {
	for name, tc := range map[string]struct {
		cfg BackoffConfig
		ok  bool
	}{
		"default":          {DefaultBackoffConfig(), true},
		"off":              {BackoffConfig{}, true},
		"off, any max":     {BackoffConfig{Max: -time.Second}, true},
		"negative initial": {BackoffConfig{Initial: -time.Second, Max: time.Second}, false},
		"max below":        {BackoffConfig{Initial: 2 * time.Second, Max: time.Second}, false},
		"equal":            {BackoffConfig{Initial: time.Second, Max: time.Second}, true},
	} {
		if err := tc.cfg.Validate(); (err == nil) != tc.ok {
			t.Errorf("%s: Validate(%+v) = %v, want ok %v", name, tc.cfg, err, tc.ok)
		}
	}
}

// outageCluster fails reads (State, App), reservations or submissions
// while told to, counting the calls that reach it and the submissions
// that reached the cluster behind it. A failed Submit does not reach it:
// the outcome is ambiguous for the engine, and the cluster never saw it.
type outageCluster struct {
	Cluster
	failReads, failReserves, failSubmits bool
	states, apps                         int
	reserves, submits                    int
	reached                              map[string]int // app id → submissions the cluster received
}

// Prepare is the simulator's: it fills a job's resources from its kind.
func (c *outageCluster) Prepare(j *queue.Job) error { return c.Cluster.(JobPreparer).Prepare(j) }

func (c *outageCluster) State(ctx context.Context) (cluster.State, error) {
	c.states++
	if c.failReads {
		return cluster.State{}, errors.New("GET /ws/v1/cluster/metrics: 500 Internal Server Error")
	}
	return c.Cluster.State(ctx)
}

func (c *outageCluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	c.apps++
	if c.failReads {
		return cluster.AppStatus{}, errors.New("GET app: 500 Internal Server Error")
	}
	return c.Cluster.App(ctx, appID)
}

func (c *outageCluster) Reserve(ctx context.Context) (string, error) {
	c.reserves++
	if c.failReserves {
		return "", errors.New("POST new-application: 500 Internal Server Error")
	}
	return c.Cluster.Reserve(ctx)
}

func (c *outageCluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	c.submits++
	if c.failSubmits {
		return errors.New("POST apps: 500 Internal Server Error")
	}
	c.reached[appID]++
	return c.Cluster.Submit(ctx, appID, j)
}

// backoffHarness is an engine with the default backoff over a flaky
// simulator, driven by a loop the test steps.
func backoffHarness(t *testing.T) (*harness, *outageCluster, *Loop, *recorder) {
	t.Helper()
	var fc *outageCluster
	h := newHarness(t, harnessOpts{nodes: 4, noRecon: true, cluster: func(sc *simcluster.Cluster) Cluster {
		fc = &outageCluster{Cluster: sc, reached: map[string]int{}}
		return fc
	}})
	h.e.bo = backoffPolicy{cfg: DefaultBackoffConfig(), rng: rand.New(rand.NewPCG(11, 12))}
	rec := &recorder{}
	h.e.mx = rec
	l := hourlyLoop(t, h.e)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	return h, fc, l, rec
}

// kicks submits a job of kind every 1/perSecond of virtual time for d and
// steps the loop after each (a kick), and when it is due, as Run does.
func (h *harness) kicks(t *testing.T, l *Loop, d time.Duration, perSecond int, kind string) {
	t.Helper()
	end := h.s.Now().Add(d)
	for h.s.Now().Before(end) {
		if kind != "" {
			h.submit(kind)
		}
		if _, err := l.Step(h.ctx); err != nil {
			t.Fatal(err)
		}
		h.advance(time.Second / time.Duration(perSecond))
	}
}

// TestBackoffFailingReads: while the cluster fails every read, the loop
// reads the state once per backoff wait however often it is kicked,
// Ready names the backoff, and the first read after the cluster recovers
// ends it: syncs and admissions resume.
func TestBackoffFailingReads(t *testing.T) {
	h, fc, l, rec := backoffHarness(t)
	fc.failReads = true
	before := fc.states
	h.kicks(t, l, time.Minute, 17, "cpu")
	// Waits of about 1, 2, 4, 8, 16, 32 s: at most 7 reads in a minute,
	// where 17 kicks a second read 1,020 times.
	if n := fc.states - before; n < 4 || n > 7 {
		t.Errorf("%d state reads in a minute of a failing cluster kicked 17 times a second, want 4..7", n)
	}
	if fc.reserves != 0 || fc.submits != 0 {
		t.Errorf("%d reservations and %d submissions while reads fail, want none", fc.reserves, fc.submits)
	}
	err := ready(h)
	if !errors.Is(err, ErrClusterBackoff) || !errors.Is(err, ErrClusterSync) || !errors.Is(err, errBackoff) ||
		!strings.Contains(err.Error(), "read calls:") || !strings.Contains(err.Error(), "500 Internal Server Error") {
		t.Errorf("Ready while reads back off = %v, want ErrClusterBackoff, ErrClusterSync and the read backoff with its cause", err)
	}
	var public interface{ PublicReason() string }
	if !errors.As(err, &public) || public.PublicReason() != "backing off from a failing cluster" {
		t.Errorf("public reason of %v: %v", err, public)
	}
	if !rec.has("held read") || !slicesHasPrefix(rec.calls, "backoff read ") {
		t.Errorf("metrics: %q, want held reads and the read backoff's wait", rec.calls)
	}

	fc.failReads = false
	pending := h.count(queue.StatePending)
	h.kicks(t, l, time.Minute, 1, "")
	if err := ready(h); err != nil {
		t.Errorf("Ready a minute after the cluster recovered: %v", err)
	}
	if got := h.count(queue.StatePending); got >= pending {
		t.Errorf("%d jobs pending a minute after the cluster recovered, %d before: admission did not resume", got, pending)
	}
	if !rec.has("backoff read 0s") {
		t.Errorf("metrics: %q, want the read backoff back to 0", rec.calls)
	}
}

// TestBackoffFailingSubmissions: while the cluster fails submissions, an
// admission is tried once per backoff wait, and a job whose submission
// had an unknown outcome is not submitted again before its own wait
// ends; once the cluster recovers, admission resumes and every job
// reaches the cluster exactly once, under the application id recorded
// for it.
func TestBackoffFailingSubmissions(t *testing.T) {
	h, fc, l, rec := backoffHarness(t)
	ids := h.submit("cpu", "disk", "net", "cpu")
	fc.failReserves = true
	h.kicks(t, l, time.Minute, 17, "")
	if fc.reserves < 4 || fc.reserves > 7 {
		t.Errorf("%d reservations in a minute of failing submissions kicked 17 times a second, want 4..7", fc.reserves)
	}
	if fc.submits != 0 {
		t.Errorf("%d submissions after failed reservations, want 0", fc.submits)
	}
	if err := ready(h); !errors.Is(err, ErrClusterBackoff) || errors.Is(err, ErrClusterSync) || !strings.Contains(err.Error(), "submit calls:") {
		t.Errorf("Ready while submissions back off = %v, want ErrClusterBackoff naming the submissions only", err)
	}

	// Reservations work, submissions do not: the job admitted under its
	// reserved id waits out its own backoff between submissions.
	fc.failReserves = false
	h.kicks(t, l, time.Minute, 1, "") // admits everything
	fc.failSubmits = true
	ids = append(ids, h.submit("disk")...)
	resubmits := fc.submits
	h.kicks(t, l, time.Minute, 17, "")
	if n := fc.submits - resubmits; n < 4 || n > 9 {
		t.Errorf("%d submissions in a minute of failing submissions kicked 17 times a second, want 4..9", n)
	}
	stuck, err := h.store.Get(ids[4])
	if err != nil {
		t.Fatal(err)
	}
	if stuck.State != queue.StateAdmitted || stuck.AppID == "" {
		t.Fatalf("the job whose submissions failed: %s under %q, want admitted with its application id", stuck.State, stuck.AppID)
	}
	if !rec.has("held job") && !rec.has("held submit") {
		t.Errorf("metrics: %q, want held submissions", rec.calls)
	}

	fc.failSubmits = false
	h.kicks(t, l, 2*time.Minute, 1, "")
	if err := ready(h); err != nil {
		t.Errorf("Ready after the cluster recovered: %v", err)
	}
	for _, id := range ids {
		j, err := h.store.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		if j.State == queue.StatePending || j.AppID == "" {
			t.Errorf("job %s: %s under %q after recovery, want admitted", id, j.State, j.AppID)
			continue
		}
		if n := fc.reached[j.AppID]; n != 1 {
			t.Errorf("job %s (%s): the cluster received %d submissions of %s, want exactly 1", id, j.State, n, j.AppID)
		}
	}
	if len(h.e.jobBackoff) != 0 {
		t.Errorf("job backoffs left after recovery: %v", h.e.jobBackoff)
	}
}

func slicesHasPrefix(calls []string, prefix string) bool {
	for _, c := range calls {
		if strings.HasPrefix(c, prefix) && c != prefix+"0s" {
			return true
		}
	}
	return false
}

// count is how many jobs are in state s.
func (h *harness) count(s queue.State) int {
	h.tb.Helper()
	c, err := h.store.Counts()
	if err != nil {
		h.tb.Fatal(err)
	}
	return c[s]
}

// TestLoopDueWhileSyncFails: a learning tick that fell due while the
// cluster fails waits for a sync that succeeds; the loop's next iteration
// is due at the admission tick, or at the end of the reads' backoff when
// that comes first, never at once (Run would iterate without pause).
func TestLoopDueWhileSyncFails(t *testing.T) {
	for name, cfg := range map[string]BackoffConfig{"no backoff": {}, "backoff": DefaultBackoffConfig()} {
		t.Run(name, func(t *testing.T) {
			h, fc, l, _ := backoffHarness(t)
			h.e.bo.cfg = cfg
			fc.failReads = true
			h.advance(time.Hour + time.Second) // the hourly learning tick is due
			for range 5 {
				it, err := l.Step(h.ctx)
				if err != nil {
					t.Fatal(err)
				}
				if it.Learned {
					t.Fatal("learned without a sync")
				}
				if wait := it.Due.Sub(h.s.Now()); wait <= 0 || wait > time.Second {
					t.Fatalf("next iteration due in %v, want within the 1 s tick", wait)
				}
				h.advance(it.Due.Sub(h.s.Now()))
			}
			fc.failReads = false
			h.advance(DefaultBackoffMax) // past any wait
			if it, err := l.Step(h.ctx); err != nil || !it.Learned {
				t.Errorf("first iteration after the cluster recovered: learned %v, %v; want the overdue tick", it.Learned, err)
			}
		})
	}
}
