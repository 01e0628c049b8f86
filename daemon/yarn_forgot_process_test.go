package daemon

import (
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient/yarntest"
)

// withTimeline adds yarn.timeline_url to a config written by
// yarnDaemonConfig.
func withTimeline(tb testing.TB, cfg, url string) string {
	tb.Helper()
	b, err := os.ReadFile(cfg)
	if err != nil {
		tb.Fatal(err)
	}
	s := strings.Replace(string(b), "timeout: 5s}", "timeout: 5s, timeline_url: \""+url+"\"}", 1)
	if s == string(b) {
		tb.Fatal("yarn section not found in the test config")
	}
	if err := os.WriteFile(cfg, []byte(s), 0o600); err != nil {
		tb.Fatal(err)
	}
	return cfg
}

// TestRMForgotRunningJob: the RM restarts without recovery while colocd's
// job runs. colocd does not submit it again: the job is parked, visible in
// the API and the metrics, until an admin resolves it; requeued, it runs
// under a new application id.
func TestRMForgotRunningJob(t *testing.T) {
	rm := newTestRM(t)
	dataDir, addr := t.TempDir(), freeAddr(t)
	cfg := yarnDaemonConfig(t, dataDir, addr, rm.URL())
	p := startServe(t, "..", cfg, addr, yarnTestToken)
	p.waitReady(20 * time.Second)
	id := submitOne(t, p)
	poll(t, "the job to run", 20*time.Second, func() bool { return p.job(id).State == "running" })
	first := p.job(id).AppID

	rm.Restart(yarntest.DefaultClusterTimestamp+3_600_000, false)
	poll(t, "the job to be parked", 20*time.Second, func() bool { return p.job(id).State == "parked" })
	var j struct {
		apiJob
		Diagnostics string `json:"diagnostics"`
	}
	p.getJSON("/v1/jobs/"+id, &j)
	if !strings.Contains(j.Diagnostics, "running") || !strings.Contains(j.Diagnostics, "restarted") {
		t.Errorf("parked job's diagnostics %q do not say why", j.Diagnostics)
	}
	if n := rm.SubmitCalls(); n != 1 {
		t.Errorf("RM saw %d submit calls, want 1: colocd submitted a job that may have run", n)
	}
	_, metrics := p.do(http.MethodGet, "/metrics", nil)
	if !strings.Contains(string(metrics), `colocd_jobs{state="parked"} 1`) {
		t.Error(`/metrics lacks colocd_jobs{state="parked"} 1`)
	}
	time.Sleep(500 * time.Millisecond) // several admission ticks: still parked, still one submission
	if st := p.job(id).State; st != "parked" || rm.SubmitCalls() != 1 {
		t.Errorf("after a while: %s with %d submit calls, want parked with 1", st, rm.SubmitCalls())
	}

	code, body := p.do(http.MethodPost, "/v1/jobs/"+id+"/resolve", map[string]string{"outcome": "requeue", "reason": "the RM log shows the AM never started"})
	if code != http.StatusOK {
		t.Fatalf("resolve: %d %s", code, body)
	}
	poll(t, "the requeued job to run", 20*time.Second, func() bool { return p.job(id).State == "running" })
	if second := p.job(id).AppID; second == first || rm.SubmitCalls() != 2 {
		t.Errorf("requeued job runs as %s (first %s) after %d submit calls, want a new id and 2 calls", second, first, rm.SubmitCalls())
	}
	if _, err := p.stop(10 * time.Second); err != nil {
		t.Errorf("SIGTERM exit: %v", err)
	}
}

// TestRMForgotReservedJob: colocd is killed after it recorded a job as
// admitted under a reserved id and before it submitted; the RM then
// restarts without recovery. At restart the Timeline Server proves the id
// was never submitted, and the id's RM is gone: the job is requeued and
// runs exactly once, under a new id. The same without a Timeline Server:
// colocd cannot prove it, and parks the job.
func TestRMForgotReservedJob(t *testing.T) {
	for _, timeline := range []bool{true, false} {
		name := map[bool]string{true: "with timeline", false: "without timeline"}[timeline]
		t.Run(name, func(t *testing.T) {
			rm := newTestRM(t)
			dataDir, addr := t.TempDir(), freeAddr(t)
			cfg := yarnDaemonConfig(t, dataDir, addr, rm.URL())
			if timeline {
				tl := yarntest.NewFakeTimeline(t)
				rm.PublishTo(tl)
				withTimeline(t, cfg, tl.URL())
			}
			p, id := serveBlockedAtSubmit(t, rm, cfg, addr)
			reserved := p.job(id).AppID
			p.kill()
			rm.Restart(yarntest.DefaultClusterTimestamp+3_600_000, false)

			p2 := startServe(t, "..", cfg, addr, yarnTestToken)
			p2.waitReady(20 * time.Second)
			if !timeline {
				poll(t, "the job to be parked", 20*time.Second, func() bool { return p2.job(id).State == "parked" })
				if n := len(rm.Submissions()); n != 0 {
					t.Errorf("RM recorded %d submissions, want none", n)
				}
				return
			}
			poll(t, "the job to run", 20*time.Second, func() bool { return p2.job(id).State == "running" })
			j := p2.job(id)
			if j.AppID == reserved {
				t.Errorf("the job runs under the old RM's id %s", reserved)
			}
			if got := submissionsPerApp(rm); len(got) != 1 || got[j.AppID] != 1 {
				t.Errorf("RM submissions per app %v, want exactly one, for %s", got, j.AppID)
			}
			if _, err := p2.stop(10 * time.Second); err != nil {
				t.Errorf("SIGTERM exit: %v", err)
			}
		})
	}
}
