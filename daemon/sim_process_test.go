package daemon

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/sim"
)

// The end-to-end tests run `colocd serve --config configs/demo.yaml` from
// the repository root, overriding only the listen address, the data
// directory and the speed through the environment, as an operator would.
const (
	demoConfig  = "configs/demo.yaml"
	demoAdmin   = "demo-admin"
	demoSubmit  = "demo-submitter"
	demoSpeed   = "3000" // 48 jobs of paper-queue-a take ~2.5 h virtual: a few seconds
	demoJobs    = 48
	e2eDeadline = 90 * time.Second
)

func startDemo(tb testing.TB, dataDir, addr string, env ...string) *proc {
	tb.Helper()
	p := startServe(tb, "..", demoConfig, addr, demoAdmin, append([]string{
		"COLOCD_LISTEN=" + addr, "COLOCD_DATA_DIR=" + dataDir, "COLOCD_SIM_SPEED=" + demoSpeed, "COLOCD_LOG_FORMAT=json"}, env...)...)
	p.waitReady(30 * time.Second)
	return p
}

// paperQueueA is the 48 kinds of configs/workloads/paper-queue-a.yaml in
// submission order.
func paperQueueA(tb testing.TB) []string {
	tb.Helper()
	wl, err := sim.LoadWorkload("../configs/workloads/paper-queue-a.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	var kinds []string
	for _, j := range wl.Jobs(rand.New(rand.NewPCG(1, 1))) {
		kinds = append(kinds, j.Kind)
	}
	if len(kinds) != demoJobs {
		tb.Fatalf("paper-queue-a has %d jobs, want %d", len(kinds), demoJobs)
	}
	return kinds
}

// submitQueue submits kinds as the demo submitter with idempotency keys
// e2e-<i>; it returns the job ids and the status codes.
func submitQueue(tb testing.TB, p *proc, kinds []string) (ids []string, codes []int) {
	tb.Helper()
	for i, k := range kinds {
		req, err := http.NewRequest(http.MethodPost, p.base+"/v1/jobs", strings.NewReader(fmt.Sprintf(`{"kind":%q}`, k)))
		if err != nil {
			tb.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+demoSubmit)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", fmt.Sprintf("e2e-%d", i))
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			tb.Fatalf("submit %d: %v", i, err)
		}
		var j apiJob
		err = json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if err != nil || (resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK) {
			tb.Fatalf("submit %d (%s): %d, %v", i, k, resp.StatusCode, err)
		}
		ids = append(ids, j.ID)
		codes = append(codes, resp.StatusCode)
	}
	return ids, codes
}

func waitFinished(tb testing.TB, p *proc, n int) {
	tb.Helper()
	poll(tb, fmt.Sprintf("%d jobs to succeed", n), e2eDeadline, func() bool { return p.counts()["succeeded"] >= n })
}

// checkRanOnce checks every job succeeded, once, under the application id
// the simulator's submission log has for it.
func checkRanOnce(tb testing.TB, p *proc, dataDir string, ids []string, kinds []string) {
	tb.Helper()
	log, err := simcluster.ReadLog(filepath.Join(dataDir, "sim", "submissions.jsonl"))
	if err != nil {
		tb.Fatal(err)
	}
	submitted := map[string][]string{} // job id → app ids
	for _, e := range log {
		if e.Op == simcluster.OpSubmit {
			submitted[e.JobID] = append(submitted[e.JobID], e.AppID)
		}
	}
	if len(submitted) != len(ids) {
		tb.Errorf("submission log names %d jobs, want %d", len(submitted), len(ids))
	}
	apps := map[string]bool{}
	for i, id := range ids {
		j := p.job(id)
		if j.State != "succeeded" || j.Kind != kinds[i] {
			tb.Errorf("job %d %s: %s %s, want succeeded %s", i, id, j.State, j.Kind, kinds[i])
		}
		if got := submitted[id]; len(got) != 1 || got[0] != j.AppID {
			tb.Errorf("job %s: submitted as %v, want exactly once as %s", id, got, j.AppID)
		}
		if apps[j.AppID] {
			tb.Errorf("application %s runs two jobs", j.AppID)
		}
		apps[j.AppID] = true
	}
	if c := p.counts(); c["succeeded"] != len(ids) || c["pending"]+c["admitted"]+c["running"]+c["failed"]+c["killed"] != 0 {
		tb.Errorf("counts %v, want %d succeeded and nothing else", c, len(ids))
	}
}

func checkLearned(tb testing.TB, p *proc) {
	tb.Helper()
	var prefs struct {
		bandit.Snapshot
	}
	p.getJSON("/v1/preferences", &prefs)
	if prefs.Observations == 0 {
		tb.Errorf("no learning observations: %+v", prefs.Snapshot)
	}
	nonzero := false
	for _, row := range prefs.H {
		for _, h := range row {
			nonzero = nonzero || h != 0
		}
	}
	if !nonzero || len(prefs.Kinds) != 4 {
		tb.Errorf("preferences uniform or kinds %v: H %v", prefs.Kinds, prefs.H)
	}
}

func TestEndToEndSim(t *testing.T) {
	kinds := paperQueueA(t)
	dataDir, addr := t.TempDir(), freeAddr(t)
	p := startDemo(t, dataDir, addr)
	t0 := time.Now()
	ids, codes := submitQueue(t, p, kinds)
	for i, c := range codes {
		if c != http.StatusCreated {
			t.Errorf("submit %d: %d, want 201", i, c)
		}
	}
	waitFinished(t, p, demoJobs)
	t.Logf("48 jobs finished in %v of wall time", time.Since(t0).Round(time.Millisecond))
	checkRanOnce(t, p, dataDir, ids, kinds)
	checkLearned(t, p)

	code, body := p.do(http.MethodGet, "/metrics", nil)
	admitted := 0.0 // over the queue and kind labels
	for l := range strings.Lines(string(body)) {
		if rest, ok := strings.CutPrefix(l, "colocd_admissions_total{"); ok {
			if _, v, ok := strings.Cut(rest, "} "); ok {
				n, _ := strconv.ParseFloat(strings.TrimSpace(v), 64)
				admitted += n
			}
		}
	}
	if code != http.StatusOK || admitted != demoJobs || !strings.Contains(string(body), `colocd_admissions_total{kind="kmeans",queue="default"}`) {
		t.Errorf("/metrics: %d, colocd_admissions_total sums to %v over queues and kinds, want %d:\n%.2000s", code, admitted, demoJobs, body)
	}
	resp, err := http.Get(p.base + "/")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("status page: %d %s", resp.StatusCode, resp.Header.Get("Content-Type"))
	}
	var decisions struct {
		Decisions []struct {
			Chosen     string `json:"chosen"`
			AppID      string `json:"app_id"`
			Candidates []struct {
				Kind string `json:"kind"`
			} `json:"candidates"`
		} `json:"decisions"`
	}
	p.getJSON("/v1/decisions?limit=100", &decisions)
	if len(decisions.Decisions) != demoJobs {
		t.Errorf("%d decisions, want %d", len(decisions.Decisions), demoJobs)
	}
	// The queue arrives in blocks of one kind, faster than it runs: once
	// the first blocks are in, a decision chooses between kinds (the demo's
	// premise; 41 of 48 in the README's run at 60×).
	choice := 0
	for _, d := range decisions.Decisions {
		kinds := map[string]bool{}
		for _, c := range d.Candidates {
			kinds[c.Kind] = true
		}
		if len(kinds) >= 2 {
			choice++
		}
	}
	t.Logf("%d of %d decisions chose between kinds", choice, len(decisions.Decisions))
	if choice < demoJobs/2 {
		t.Errorf("only %d of %d decisions had a choice between kinds, want at least half", choice, len(decisions.Decisions))
	}
	took, err := p.stop(15 * time.Second)
	if err != nil {
		t.Errorf("SIGTERM: exit %v, want 0", err)
	}
	t.Logf("SIGTERM to exit: %v", took.Round(time.Millisecond))
}

// TestCrashSafetySim SIGKILLs the daemon in the middle of the run, restarts
// it on the same data directory and checks that no acknowledged job is lost
// or run twice — also when the client retries every submission after the
// restart with the same idempotency keys.
func TestCrashSafetySim(t *testing.T) {
	kinds := paperQueueA(t)
	dataDir, addr := t.TempDir(), freeAddr(t)
	p := startDemo(t, dataDir, addr)
	ids, _ := submitQueue(t, p, kinds)
	poll(t, "the run to be under way", e2eDeadline, func() bool {
		c := p.counts()
		return c["succeeded"] >= 8 && c["running"] > 0
	})
	before := p.counts()
	p.kill()
	t.Logf("killed at %v", before)

	p2 := startDemo(t, dataDir, addr)
	ids2, codes := submitQueue(t, p2, kinds) // client retries: same keys, same jobs
	for i := range ids {
		if ids2[i] != ids[i] || codes[i] != http.StatusOK {
			t.Errorf("retry %d: %s (%d), want the acknowledged %s (200)", i, ids2[i], codes[i], ids[i])
		}
	}
	after := p2.counts()
	if after["succeeded"] < before["succeeded"] {
		t.Errorf("succeeded went from %d to %d across the crash", before["succeeded"], after["succeeded"])
	}
	waitFinished(t, p2, demoJobs)
	checkRanOnce(t, p2, dataDir, ids, kinds)
	checkLearned(t, p2)
	checkClockRuns(t, p2)
	if _, err := p2.stop(15 * time.Second); err != nil {
		t.Errorf("SIGTERM: exit %v, want 0", err)
	}
}

// checkClockRuns: after one restart GET /v1/clock describes the simulated
// clock with both starts, the second resuming the virtual clock at or
// after where the first began, and the wall-clock time of every stored
// job's creation falls between the first start and now.
func checkClockRuns(t *testing.T, p *proc) {
	t.Helper()
	var c apiclient.Clock
	p.getJSON("/v1/clock", &c)
	if !c.Simulated || c.Speed != 3000 || len(c.Runs) != 2 {
		t.Fatalf("GET /v1/clock after a restart: %+v; want simulated at %s× (COLOCD_SIM_SPEED) with 2 runs", c, demoSpeed)
	}
	if !c.Runs[1].From.After(c.Runs[0].From) || !c.Runs[1].WallFrom.After(c.Runs[0].WallFrom) || !c.Started.Equal(c.Runs[1].From) {
		t.Errorf("runs %+v, started %s: want the second after the first, and the daemon started at the second", c.Runs, c.Started)
	}
	var all struct {
		Jobs []apiclient.Job `json:"jobs"`
	}
	p.getJSON("/v1/jobs?state=all&limit=1000", &all)
	for _, j := range all.Jobs {
		w, ok := c.Wall(j.CreatedAt)
		if !ok || w.Before(c.Runs[0].WallFrom) || w.After(c.WallNow) {
			t.Errorf("job %s created at %s (simulated) maps to wall %s, %v; want within [%s, %s]",
				j.ID, j.CreatedAt, w, ok, c.Runs[0].WallFrom, c.WallNow)
		}
	}
}
