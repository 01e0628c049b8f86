package api

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
	"github.com/colocd/colocd/telemetry"
)

// Test tokens: one per role, plus a second submitter.
const (
	readerTok     = "reader-secret-0001"
	submitterTok  = "submitter-secret-0002"
	submitter2Tok = "submitter-secret-0003"
	adminTok      = "admin-secret-0004"
)

var testTokens = []Token{
	{Secret: readerTok, User: "rita", Role: RoleReader},
	{Secret: submitterTok, User: "sam", Role: RoleSubmitter},
	{Secret: submitter2Tok, User: "sue", Role: RoleSubmitter},
	{Secret: adminTok, User: "ada", Role: RoleAdmin},
}

// newClock is the settable clock the store and the API share.
func newClock() *queuetest.Clock {
	return queuetest.NewClock(time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC))
}

// fakeController records what the API asks of the engine. Prepare fills
// resources for the kinds in defaults (like the simulator backend); Kill
// marks admitted/running jobs killed in the store; the preference writes
// go to learner and are saved in the store, as the engine does.
type fakeController struct {
	store   *queue.Store
	learner *bandit.Learner

	mu         sync.Mutex
	kicks      int
	prepared   []string // kinds
	killed     []string // ids
	defaults   map[string]queue.Resources
	prepareErr error
	readyErr   error
}

var _ Controller = (*fakeController)(nil)

func (c *fakeController) Kick() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.kicks++
}

func (c *fakeController) Prepare(j *queue.Job) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.prepared = append(c.prepared, j.Kind)
	if c.prepareErr != nil {
		return c.prepareErr
	}
	if r, ok := c.defaults[j.Kind]; ok && j.Resources == (queue.Resources{}) {
		j.Resources = r
	}
	return nil
}

func (c *fakeController) Kill(_ context.Context, id string) (queue.Job, error) {
	c.mu.Lock()
	c.killed = append(c.killed, id)
	c.mu.Unlock()
	return c.store.Finish(id, queue.StateKilled, "killed through the API")
}

func (c *fakeController) Ready(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.readyErr != nil {
		return c.readyErr
	}
	return ctx.Err()
}

func (c *fakeController) AddKind(kind string) { c.learner.Add(kind) }

func (c *fakeController) ImportPreferences(s bandit.Snapshot) error {
	if err := c.learner.Restore(s); err != nil {
		return err
	}
	return c.save()
}

func (c *fakeController) ResetPreferences() error {
	c.learner.Reset()
	return c.save()
}

func (c *fakeController) save() error {
	b, err := json.Marshal(c.learner.Snapshot())
	if err != nil {
		return err
	}
	return c.store.SavePreferences(b)
}

func (c *fakeController) Kicks() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.kicks
}

func (c *fakeController) Killed() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.killed...)
}

// harness is an API server on 127.0.0.1 over a real store and learner.
type harness struct {
	t       testing.TB
	srv     *httptest.Server
	api     *server // the handler's state, for test hooks
	store   *queue.Store
	learner *bandit.Learner
	journal *journal.Journal
	ctl     *fakeController
	metrics *telemetry.Metrics
	clock   *queuetest.Clock
	client  *http.Client
	dir     string
}

// harnessCfg is what options may change before the harness starts.
type harnessCfg struct {
	Deps
	durable bool // fsync every store commit (benchmarks of durable submits)
	// entropy feeds the store's job ids (nil: crypto/rand).
	entropy io.Reader
	// deps, when set, changes the Deps last (after the test tokens).
	deps func(*Deps)
}

// withDeps changes the API's Deps after the harness filled them.
func withDeps(f func(*Deps)) harnessOpt { return func(c *harnessCfg) { c.deps = f } }

type harnessOpt func(*harnessCfg)

func withMaxBody(n int64) harnessOpt { return func(c *harnessCfg) { c.MaxBodyBytes = n } }

// withProfiles serves src on GET /v1/profiles, converting with lim.
func withProfiles(src profileSource, lim goodness.Limits) harnessOpt {
	return func(c *harnessCfg) { c.Profiles, c.Limits = src, lim }
}

// durable makes the store fsync its commits; tests otherwise skip fsync
// (they do not measure durability).
func durable() harnessOpt { return func(c *harnessCfg) { c.durable = true } }

func newHarness(t testing.TB, opts ...harnessOpt) *harness {
	t.Helper()
	var cfg harnessCfg
	for _, o := range opts {
		o(&cfg)
	}
	dir := t.TempDir()
	clock := newClock()
	store, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{NoSync: !cfg.durable, Now: clock.Now, Entropy: cfg.entropy})
	if err != nil {
		t.Fatalf("open store: %v", err)
	}
	jrnl, err := journal.Open(filepath.Join(dir, "journal"), 100, 1000)
	if err != nil {
		t.Fatalf("open journal: %v", err)
	}
	learner := bandit.New(bandit.Config{})
	ctl := &fakeController{store: store, learner: learner, defaults: map[string]queue.Resources{
		"kmeans": {Containers: 4, MemoryMB: 1536, VCores: 1},
	}}
	reg := prometheus.NewRegistry()
	m := telemetry.New(reg, store)
	d := cfg.Deps
	d.Store, d.Learner, d.Journal, d.Controller = store, learner, jrnl, ctl
	d.Tokens, d.Metrics, d.Now = testTokens, m, clock.Now
	if cfg.deps != nil {
		cfg.deps(&d)
	}
	h, err := New(d)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	srv := httptest.NewUnstartedServer(h)
	srv.Listener.Close()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatalf("listen: %v", err)
	}
	srv.Listener = ln
	srv.Start()
	hs := &harness{
		t: t, srv: srv, api: serverOf(h), store: store, learner: learner, journal: jrnl,
		ctl: ctl, metrics: m, clock: clock, client: srv.Client(), dir: dir,
	}
	t.Cleanup(func() {
		srv.Close()
		hs.client.CloseIdleConnections()
		// Invariant: the store's counters agree with its state index.
		counts, err := store.Counts()
		if err == nil {
			for _, st := range queue.States {
				jobs, lerr := store.List(st, 0)
				if lerr == nil && len(jobs) != counts[st] {
					t.Errorf("store invariant: counts[%s] = %d, but %d jobs listed", st, counts[st], len(jobs))
				}
			}
		}
		if err := jrnl.Close(); err != nil {
			t.Errorf("close journal: %v", err)
		}
		if err := store.Close(); err != nil && !errors.Is(err, queue.ErrClosed) { // a test may close it
			t.Errorf("close store: %v", err)
		}
	})
	return hs
}

// serverOf digs the *server out of New's handler (tests set hooks on it).
func serverOf(h http.Handler) *server {
	if o, ok := h.(*observed); ok {
		return o.s
	}
	return nil
}

// response is what a test request got back.
type response struct {
	Code   int
	Header http.Header
	Body   []byte
}

// errBody decodes a JSON error body.
func (r response) errBody(t testing.TB) v1.ErrorBody {
	t.Helper()
	var e v1.ErrorBody
	if err := json.Unmarshal(r.Body, &e); err != nil {
		t.Fatalf("error body is not JSON (%v): %s", err, r.Body)
	}
	if e.Error == "" {
		t.Fatalf("error body has no error message: %s", r.Body)
	}
	return e
}

func (r response) decode(t testing.TB, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decoding %s: %v", r.Body, err)
	}
}

// do sends a request with an optional token and body (JSON content type
// unless headers say otherwise).
func (h *harness) do(method, path, token, body string, headers ...string) response {
	h.t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, h.srv.URL+path, rd)
	if err != nil {
		h.t.Fatalf("new request: %v", err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	res, err := h.client.Do(req)
	if err != nil {
		h.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		h.t.Fatalf("%s %s: reading body: %v", method, path, err)
	}
	return response{Code: res.StatusCode, Header: res.Header, Body: b}
}

// submit posts a job body and requires the wanted status.
func (h *harness) submit(token, body string, want int, headers ...string) v1.Job {
	h.t.Helper()
	r := h.do(http.MethodPost, "/v1/jobs", token, body, headers...)
	if r.Code != want {
		h.t.Fatalf("POST /v1/jobs %s: got %d, want %d: %s", body, r.Code, want, r.Body)
	}
	var v v1.Job
	r.decode(h.t, &v)
	return v
}

func jobBody(kind string, extra ...string) string {
	var b bytes.Buffer
	fmt.Fprintf(&b, `{"kind":%q,"resources":{"containers":2,"memory_mb":1024,"vcores":1}`, kind)
	for _, e := range extra {
		b.WriteString(",")
		b.WriteString(e)
	}
	b.WriteString("}")
	return b.String()
}

// runJob takes a stored job through admitted → running → succeeded with
// the given runtime on the fake clock (builds kind history).
func (h *harness) runJob(id string, runtime time.Duration) {
	h.t.Helper()
	if _, err := h.store.Admit(id, "app-"+id, nil, nil, nil); err != nil {
		h.t.Fatalf("admit %s: %v", id, err)
	}
	if _, err := h.store.Start(id); err != nil {
		h.t.Fatalf("start %s: %v", id, err)
	}
	h.clock.Advance(runtime)
	if _, err := h.store.Finish(id, queue.StateSucceeded, ""); err != nil {
		h.t.Fatalf("finish %s: %v", id, err)
	}
}

// learn feeds the learner observations so preferences are not uniform.
func learn(l *bandit.Learner, kinds []string) {
	for round := range 20 {
		for i, given := range kinds {
			for j, chosen := range kinds {
				g := 3.0 + float64((i*7+j*3+round)%11)
				if i != j && (i+j)%3 == 0 {
					g += 25
				}
				l.Update(chosen, given, g)
			}
		}
	}
}

var errNotReady = errors.New("backend unreachable: connection refused")
