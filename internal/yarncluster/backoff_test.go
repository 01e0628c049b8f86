package yarncluster

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// vclock is a virtual clock the harness moves; yarnclient's retry waits
// move it too, so a window of virtual time holds every wait a real
// daemon would spend.
type vclock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *vclock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// After is never waited on: the harness steps the loop itself.
func (c *vclock) After(time.Duration) <-chan time.Time { return make(chan time.Time) }

func (c *vclock) Advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// rmHarness is the daemon's loop (engine.Loop over this adapter over
// yarnclient) in front of a fake RM, in virtual time.
type rmHarness struct {
	t     testing.TB
	clk   *vclock
	rm    *yarntest.FakeRM
	front *front
	store *queue.Store
	e     *engine.Engine
	l     *engine.Loop
	due   time.Time // the loop's next iteration without a kick
	jobs  int
}

func newRMHarness(t testing.TB, eo func(*engine.Options)) *rmHarness {
	t.Helper()
	clk := &vclock{now: time.Date(2026, 3, 2, 9, 0, 0, 0, time.UTC)}
	rm := yarntest.NewFakeRM(t, yarntest.Clock(clk.Now))
	for i := range 4 {
		rm.AddNode(yarnclient.Node{ID: fmt.Sprintf("w%d:8041", i+1)})
	}
	fr := newFront(t, rm.URL())
	cfg := DefaultConfig()
	cfg.RMURLs, cfg.User = []string{fr.srv.URL}, "colocd"
	cc := cfg.ClientConfig(nil)
	cc.Sleep = clk.Advance // the retry waits pass in virtual time
	c, err := yarnclient.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	y := New(c, cfg, nil)
	y.now = clk.Now
	store, err := queue.Open(filepath.Join(t.TempDir(), "colocd.db"), queue.Options{NoSync: true, Now: clk.Now})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	q := pipeline.DefaultConfig()
	q.Preference.Mode, q.Select.Mode = pipeline.PreferenceModel, pipeline.SelectArgmax
	q.Preference.ObserveWait = 0
	o := engine.Options{Store: store, Learner: bandit.New(bandit.Config{StepSize: 0.1}), Cluster: y, Clock: clk,
		Rand: rand.New(rand.NewPCG(1, 2)), Queue: q, Scorer: engine.DefaultScorerConfig(), Wall: clk.Now}
	o.Profile.HalfLife, o.Profile.PriorStrength, o.Profile.Saturation = 720, 1, 0.9
	if eo != nil {
		eo(&o)
	}
	e, err := engine.New(o)
	if err != nil {
		t.Fatal(err)
	}
	learn, err := engine.ParseSchedule("@every 60s")
	if err != nil {
		t.Fatal(err)
	}
	l, err := engine.NewLoop(e, engine.LoopOptions{Tick: 10 * time.Second, Learn: learn})
	if err != nil {
		t.Fatal(err)
	}
	h := &rmHarness{t: t, clk: clk, rm: rm, front: fr, store: store, e: e, l: l}
	if err := l.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	return h
}

// submit queues one job through the store, as the API does, and kicks.
func (h *rmHarness) submit() {
	h.t.Helper()
	h.jobs++
	j := queue.Job{Kind: fmt.Sprintf("etl-%d", h.jobs%3), User: "ana", Queue: "default",
		Resources: queue.Resources{Containers: 1, MemoryMB: 1024, VCores: 1},
		Submit:    []byte(`{"am-container-spec":{"commands":{"command":"true"}}}`)}
	if err := h.e.Prepare(&j); err != nil {
		h.t.Fatal(err)
	}
	got, _, err := h.store.Submit(context.Background(), j)
	if err != nil {
		h.t.Fatal(err)
	}
	h.e.AddKind(got.Kind)
	h.e.Kick()
}

// step runs one loop iteration, as Run does on a kick or when due.
func (h *rmHarness) step() engine.Iteration {
	h.t.Helper()
	select { // Run consumes the kick that wakes it
	case <-h.e.Kicked():
	default:
	}
	it, err := h.l.Step(context.Background())
	if err != nil {
		h.t.Fatal(err)
	}
	h.due = it.Due
	return it
}

// drive submits perSecond jobs a second (none when 0) through the API for window of
// virtual time and runs the loop as Run would: an iteration whenever a
// kick is pending or the next one is due, back to back while kicks keep
// coming (a pass's retry waits take virtual time, and the submissions
// made meanwhile coalesce into one kick). It returns the requests the RM
// received per second of virtual time.
func (h *rmHarness) drive(window time.Duration, perSecond int) float64 {
	h.t.Helper()
	start, before := h.clk.Now(), h.front.count()
	end := start.Add(window)
	next, gap := end, time.Duration(0)
	if perSecond > 0 {
		next, gap = start, time.Second/time.Duration(perSecond)
	}
	for h.clk.Now().Before(end) {
		kicked := false
		for !next.After(h.clk.Now()) && next.Before(end) {
			h.submit()
			kicked = true
			next = next.Add(gap)
		}
		if kicked || !h.clk.Now().Before(h.due) {
			h.step()
			continue
		}
		wake := next
		if h.due.Before(wake) {
			wake = h.due
		}
		if end.Before(wake) {
			wake = end
		}
		h.clk.Advance(wake.Sub(h.clk.Now()))
	}
	elapsed := h.clk.Now().Sub(start)
	return float64(h.front.count()-before) / elapsed.Seconds()
}

// stuck makes n admitted jobs whose submission answered 500: the RM
// never saw them, and the engine must submit them again. Each is admitted
// a minute after the last, once any backoff of submissions has ended.
func (h *rmHarness) stuck(n int) {
	h.t.Helper()
	h.rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Method: http.MethodPost, Status: http.StatusInternalServerError})
	for range n {
		h.submit()
		h.clk.Advance(engine.DefaultBackoffMax + time.Second)
		h.step()
	}
	admitted, err := h.store.List(queue.StateAdmitted, 0)
	if err != nil {
		h.t.Fatal(err)
	}
	if len(admitted) != n {
		h.t.Fatalf("%d admitted jobs after %d failed submissions, want %d", len(admitted), n, n)
	}
	h.rm.ClearFaults()
}

// front stands between colocd and the fake RM: it counts every request
// and, while failing is set, answers each one 500 with a RemoteException
// itself (the fake's faults are per path; this covers the per-application
// paths too).
type front struct {
	srv     *httptest.Server
	mu      sync.Mutex
	n       int
	paths   map[string]int
	failing bool
}

func newFront(t testing.TB, target string) *front {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	proxy := httputil.NewSingleHostReverseProxy(u)
	f := &front{paths: map[string]int{}}
	f.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		f.mu.Lock()
		f.n++
		p := r.URL.Path
		if strings.HasPrefix(p, yarnclient.PathApps+"/application_") {
			p = r.Method + " app/"
		} else {
			p = r.Method + " " + p
		}
		f.paths[p]++
		failing := f.failing
		f.mu.Unlock()
		if failing {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusInternalServerError)
			fmt.Fprint(w, `{"RemoteException":{"exception":"WebApplicationException","message":"injected","javaClassName":"javax.ws.rs.WebApplicationException"}}`)
			return
		}
		proxy.ServeHTTP(w, r)
	}))
	t.Cleanup(f.srv.Close)
	return f
}

func (f *front) count() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.n
}

// reset forgets the requests counted by path.
func (f *front) reset() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.paths = map[string]int{}
}

// counts returns the requests counted by method and path since reset
// (one application's paths count as "app/").
func (f *front) counts() map[string]int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return maps.Clone(f.paths)
}

func (f *front) fail(on bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.failing = on
}

// The attack of issue 28 (finding 8): 10 jobs stuck admitted (their
// submission answered 500) and 17 submissions a second through the API,
// in front of an RM answering 500 to every call, or to submissions only.
const (
	attackStuck     = 10
	attackPerSecond = 17
)

var attacks = []struct {
	name string
	fail func(*rmHarness)
}{
	{"every call 500", func(h *rmHarness) { h.front.fail(true) }},
	{"submissions 500", func(h *rmHarness) {
		h.rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Method: http.MethodPost, Status: http.StatusInternalServerError})
	}},
}

// attacked is a harness with the attack's stuck jobs, under attack from
// now on, its per-path counts reset.
func attacked(t testing.TB, bo engine.BackoffConfig, fail func(*rmHarness)) *rmHarness {
	t.Helper()
	h := newRMHarness(t, func(o *engine.Options) {
		o.Backoff, o.BackoffRand = bo, rand.New(rand.NewPCG(5, 6))
	})
	h.stuck(attackStuck)
	fail(h)
	h.front.reset()
	return h
}

// TestFailingRMBackoff: under the attack, the daemon's requests to the RM
// drop to its probes (every call failing) or to the state reads of a
// healthy RM (submissions failing: one per kick, and each stuck job once
// per its own backoff); /readyz names the backoff; and once the RM
// recovers, admission resumes and every job reaches the RM exactly once.
func TestFailingRMBackoff(t *testing.T) {
	for _, tc := range attacks {
		t.Run(tc.name, func(t *testing.T) {
			h := attacked(t, engine.DefaultBackoffConfig(), tc.fail)
			rate := h.drive(time.Minute, attackPerSecond)
			paths := h.front.counts()
			t.Logf("%.2f requests/s: %v", rate, paths)
			// The state reads every kick makes of an RM that answers them
			// (metrics, running apps) are not calls to a failing RM. The
			// submissions are: a backoff's waits of about 1, 2, 4 … 32 s
			// allow at most 7 tries a minute of each stuck job and of the
			// admission's probe, where no backoff made 2,700 requests a
			// second. And 17 kicks a second read the state at most 17
			// times a second.
			submits := paths["POST "+yarnclient.PathApps] + paths["POST "+yarnclient.PathNewApplication]
			if rate > 2*attackPerSecond+5 || submits > 7*(attackStuck+1) {
				t.Errorf("%.2f requests/s and %d submissions in a minute under attack: %v", rate, submits, paths)
			}
			if err := h.e.Ready(context.Background()); !errors.Is(err, engine.ErrClusterBackoff) {
				t.Errorf("Ready under attack = %v, want ErrClusterBackoff", err)
			}
			pending := h.count(queue.StatePending)

			h.rm.ClearFaults()
			h.front.fail(false)
			h.drive(2*time.Minute, 0)
			if err := h.e.Ready(context.Background()); err != nil {
				t.Errorf("Ready two minutes after the RM recovered: %v", err)
			}
			if got := h.count(queue.StatePending); got >= pending {
				t.Errorf("%d jobs pending after the RM recovered, %d before: admission did not resume", got, pending)
			}
			h.exactlyOnce()
		})
	}
}

// exactlyOnce checks that every job the store holds is pending, or
// admitted or running under an application the RM holds exactly once for
// it (its colocd-job tag), and that the RM holds no other application
// of colocd's.
func (h *rmHarness) exactlyOnce() {
	h.t.Helper()
	byJob := map[string][]string{}
	for _, a := range h.rm.Apps() {
		if job, _ := yarnclient.ParseJobTags(a.Tags()); job != "" {
			byJob[job] = append(byJob[job], a.ID)
		}
	}
	seen := 0
	for _, st := range []queue.State{queue.StatePending, queue.StateAdmitted, queue.StateRunning} {
		jobs, err := h.store.List(st, 0)
		if err != nil {
			h.t.Fatal(err)
		}
		for _, j := range jobs {
			apps := byJob[j.ID]
			switch {
			case st == queue.StatePending && len(apps) != 0:
				h.t.Errorf("pending job %s has applications %v on the RM", j.ID, apps)
			case st != queue.StatePending && (len(apps) != 1 || apps[0] != j.AppID):
				h.t.Errorf("%s job %s (application %s): the RM holds %v for it, want exactly its application", st, j.ID, j.AppID, apps)
			}
			seen++
		}
	}
	h.t.Logf("exactly once: %d jobs in the store, %d with applications on the RM", seen, len(byJob))
	if seen != h.jobs {
		h.t.Errorf("the store holds %d pending, admitted or running jobs of the %d submitted: some were lost", seen, h.jobs)
	}
	if len(byJob) > seen {
		h.t.Errorf("the RM holds applications of %d jobs, the store %d", len(byJob), seen)
	}
}

func (h *rmHarness) count(s queue.State) int {
	h.t.Helper()
	c, err := h.store.Counts()
	if err != nil {
		h.t.Fatal(err)
	}
	return c[s]
}

// BenchmarkFailingRM measures the requests per second of virtual time
// the RM receives under the attack, with backoff off (before issue 28)
// and at its defaults; and, for reference, a healthy RM under the same
// submissions (its admitted applications stay ACCEPTED, each checked
// every kick). Run with -benchtime=1x: each iteration is a minute of
// virtual time.
func BenchmarkFailingRM(b *testing.B) {
	cases := append([]struct {
		name string
		fail func(*rmHarness)
	}{{"healthy", func(*rmHarness) {}}}, attacks...)
	for _, tc := range cases {
		for _, bo := range []struct {
			name string
			cfg  engine.BackoffConfig
		}{{"backoff=off", engine.BackoffConfig{}}, {"backoff=default", engine.DefaultBackoffConfig()}} {
			b.Run(strings.ReplaceAll(tc.name, " ", "_")+"/"+bo.name, func(b *testing.B) {
				var rate float64
				for range b.N {
					h := attacked(b, bo.cfg, tc.fail)
					rate += h.drive(time.Minute, attackPerSecond)
				}
				b.ReportMetric(rate/float64(b.N), "requests/s")
			})
		}
	}
}
