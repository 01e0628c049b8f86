package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

const yarnTestToken = "yarn-test-admin-token"

// yarnDaemonConfig writes a yarn-backend config for an RM at rmURL; InfluxDB
// is unreachable (learning fails, admission goes on).
func yarnDaemonConfig(tb testing.TB, dataDir, addr, rmURL string) string {
	tb.Helper()
	cfg := fmt.Sprintf(`
listen: %s
data_dir: %s
log_level: debug
tokens: [{token: %s, user: admin, role: admin}]
backend: yarn
yarn: {rm_urls: [%q], user: colocd, timeout: 5s}
influx: {url: "http://127.0.0.1:1", bucket: telegraf/autogen, timeout: 1s}
goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}
admission: {tick: 100ms}
learning: {schedule: "@every 1h"}
shutdown_timeout: 5s
`, addr, dataDir, yarnTestToken, rmURL)
	p := filepath.Join(tb.TempDir(), "colocd.yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func newTestRM(tb testing.TB, opts ...yarntest.Option) *yarntest.FakeRM {
	rm := yarntest.NewFakeRM(tb, append([]yarntest.Option{yarntest.AutoStart()}, opts...)...)
	for _, id := range []string{"worker1:8041", "worker2:8041"} {
		rm.AddNode(yarnclient.Node{ID: id})
	}
	return rm
}

var yarnJob = map[string]any{
	"kind": "wordcount", "queue": "default",
	"resources": map[string]any{"containers": 2, "memory_mb": 1024, "vcores": 1},
	"submit": map[string]any{
		"application-name": "wordcount",
		"application-type": "MAPREDUCE",
		"am-container-spec": map[string]any{
			"commands": map[string]any{"command": "{{JAVA_HOME}}/bin/java -Xmx512m org.example.WordCount"},
		},
		"resource": map[string]any{"memory": 1024, "vCores": 1},
	},
}

// submitOne posts yarnJob and returns its id.
func submitOne(tb testing.TB, p *proc) string {
	tb.Helper()
	code, b := p.do(http.MethodPost, "/v1/jobs", yarnJob)
	if code != http.StatusCreated {
		tb.Fatalf("POST /v1/jobs: %d %s", code, b)
	}
	var j apiJob
	if err := json.Unmarshal(b, &j); err != nil {
		tb.Fatal(err)
	}
	return j.ID
}

// submissionsPerApp counts the fake RM's recorded submissions per app id.
func submissionsPerApp(rm *yarntest.FakeRM) map[string]int {
	n := map[string]int{}
	for _, s := range rm.Submissions() {
		n[s.ApplicationID]++
	}
	return n
}

// TestExactlyOnceKilledBeforeRMRecorded: the RM holds the submit call before
// recording it; the daemon is SIGKILLed while it waits. After a restart the
// RM has exactly one submission, under the id recorded before the crash.
// restartUntilRunning starts the daemon again on cfg, waits until job id
// runs, and checks the RM holds exactly one submission, under the job's app id.
func restartUntilRunning(t *testing.T, cfg, addr, id string, rm *yarntest.FakeRM) (*proc, apiJob) {
	t.Helper()
	p := startServe(t, "..", cfg, addr, yarnTestToken)
	p.waitReady(20 * time.Second)
	var j apiJob
	poll(t, "the job to run after the restart", 20*time.Second, func() bool {
		j = p.job(id)
		return j.State == "running"
	})
	if got := submissionsPerApp(rm); len(got) != 1 || got[j.AppID] != 1 {
		t.Errorf("RM submissions per app %v, want exactly one for %s", got, j.AppID)
	}
	return p, j
}

// serveBlockedAtSubmit starts colocd serve on cfg, submits one job and
// returns once the daemon's submit has reached rm, where it stays blocked
// until the test ends.
func serveBlockedAtSubmit(t *testing.T, rm *yarntest.FakeRM, cfg, addr string) (*proc, string) {
	t.Helper()
	block := make(chan struct{})
	t.Cleanup(func() { close(block) })
	arrived := make(chan struct{}, 1)
	rm.InjectFault(yarnclient.PathApps, yarntest.Fault{Method: http.MethodPost, Block: block, Arrived: arrived, Times: 1})
	p := startServe(t, "..", cfg, addr, yarnTestToken)
	p.waitReady(20 * time.Second)
	id := submitOne(t, p)
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon never called submit")
	}
	return p, id
}

func TestExactlyOnceKilledBeforeRMRecorded(t *testing.T) {
	rm := newTestRM(t)
	dataDir, addr := t.TempDir(), freeAddr(t)
	cfg := yarnDaemonConfig(t, dataDir, addr, rm.URL())
	p, id := serveBlockedAtSubmit(t, rm, cfg, addr)
	if n := len(rm.Submissions()); n != 0 {
		t.Fatalf("RM recorded %d submissions while blocked, want 0", n)
	}
	p.kill()
	// The store recorded the job as admitted under the reserved id.
	p2, j := restartUntilRunning(t, cfg, addr, id, rm)
	a, ok := rm.App(j.AppID)
	if !ok || !a.HasTag(yarnclient.TagJobPrefix+id) {
		t.Errorf("RM app %s = %+v, want it tagged with job %s", j.AppID, a, id)
	}
	if _, err := p2.stop(10 * time.Second); err != nil {
		t.Errorf("SIGTERM exit: %v", err)
	}
}

// TestExactlyOnceKilledAfterRMRecorded: the RM records the submission but
// its answer never reaches the daemon, which is SIGKILLed. After a restart
// the daemon finds the application and does not submit again.
func TestExactlyOnceKilledAfterRMRecorded(t *testing.T) {
	rm := newTestRM(t)
	target, err := url.Parse(rm.URL())
	if err != nil {
		t.Fatal(err)
	}
	release := make(chan struct{})
	var once sync.Once
	t.Cleanup(func() { once.Do(func() { close(release) }) })
	arrived := make(chan struct{}, 1)
	proxy := httputil.NewSingleHostReverseProxy(target)
	proxy.ModifyResponse = func(resp *http.Response) error {
		if resp.Request.Method == http.MethodPost && resp.Request.URL.Path == yarnclient.PathApps {
			select { // the RM has answered: it recorded the submission
			case arrived <- struct{}{}:
			default:
			}
			select {
			case <-release:
			case <-resp.Request.Context().Done():
			}
		}
		return nil
	}
	front := httptest.NewServer(proxy)
	t.Cleanup(front.Close)
	t.Cleanup(func() { once.Do(func() { close(release) }) }) // before front.Close

	dataDir, addr := t.TempDir(), freeAddr(t)
	cfg := yarnDaemonConfig(t, dataDir, addr, front.URL)
	p := startServe(t, "..", cfg, addr, yarnTestToken)
	p.waitReady(20 * time.Second)
	id := submitOne(t, p)
	select {
	case <-arrived:
	case <-time.After(20 * time.Second):
		t.Fatal("the daemon never called submit")
	}
	if n := rm.SubmitCalls(); n != 1 {
		t.Fatalf("RM saw %d submit calls before the kill, want 1", n)
	}
	p.kill()
	once.Do(func() { close(release) })

	p2, j := restartUntilRunning(t, cfg, addr, id, rm)
	if n := rm.SubmitCalls(); n != 1 {
		t.Errorf("RM saw %d submit calls in all, want 1 (no resubmission)", n)
	}
	// The job finishes when the RM says so.
	if err := rm.FinishApp(j.AppID, "SUCCEEDED"); err != nil {
		t.Fatal(err)
	}
	poll(t, "the job to succeed", 20*time.Second, func() bool { return p2.job(id).State == "succeeded" })
	if _, err := p2.stop(10 * time.Second); err != nil {
		t.Errorf("SIGTERM exit: %v", err)
	}
}
