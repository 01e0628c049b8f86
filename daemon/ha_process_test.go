package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/zktest"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// The replicated colocd against real processes: three `colocd serve`
// replicas on a real three-server ZooKeeper, in front of one fake RM.
// Every test asserts safety — no acknowledged job lost, none submitted to
// the RM twice — and eventual progress, with deadlines generous enough for
// a busy 2-core CI machine; how fast a failover is, is a study (docs/ha.md).

const haSession = 2 * time.Second // the replicas' session timeout (the servers' tick 250 ms allows 0.5–5 s)

// haCluster is the system under test.
type haCluster struct {
	t     *testing.T
	zk    *zktest.Ensemble
	rm    *yarntest.FakeRM
	reps  []*haReplica
	stopF chan struct{}
	wg    sync.WaitGroup
}

// haReplica is one replica: its config (kept across restarts) and process.
type haReplica struct {
	id, addr, dir, cfg string
	zkAddrs            []string // what it connects to (a proxy, for the partition test)
	p                  *proc
}

type haOptions struct {
	replicas int
	proxies  bool // each replica reaches ZooKeeper through its own tcpProxy
	finish   bool // the test finishes running applications (so admission goes on)
}

func startHA(t *testing.T, o haOptions) (*haCluster, []*tcpProxy) {
	t.Helper()
	c := &haCluster{t: t, zk: zktest.Start(t, zktest.Options{}), rm: newTestRM(t), stopF: make(chan struct{})}
	for _, id := range []string{"worker3:8041", "worker4:8041"} {
		c.rm.AddNode(yarnclient.Node{ID: id, AvailMemoryMB: 65536, AvailableVirtualCores: 64})
	}
	var proxies []*tcpProxy
	for i := range o.replicas {
		r := &haReplica{id: fmt.Sprintf("r%d", i+1), addr: freeAddr(t), dir: t.TempDir(), zkAddrs: c.zk.Addrs()}
		if o.proxies {
			p := newTCPProxy(t, c.zk.Addrs())
			proxies = append(proxies, p)
			r.zkAddrs = p.Addrs()
		}
		r.cfg = haConfigFile(t, r, c.rm.URL())
		c.reps = append(c.reps, r)
	}
	for _, r := range c.reps {
		c.start(r)
	}
	if o.finish {
		c.wg.Add(1)
		go c.finishApps()
	}
	t.Cleanup(func() {
		close(c.stopF)
		c.wg.Wait()
	})
	return c, proxies
}

func haConfigFile(tb testing.TB, r *haReplica, rmURL string) string {
	cfg := fmt.Sprintf(`
listen: %s
data_dir: %s
log_level: debug
tokens: [{token: %s, user: admin, role: admin}]
backend: yarn
yarn: {rm_urls: [%q], user: colocd, timeout: 2s}
influx: {url: "http://127.0.0.1:1", bucket: telegraf/autogen, timeout: 1s}
goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}
admission: {tick: 100ms}
learning: {schedule: "@every 1h"}
shutdown_timeout: 5s
ha:
  id: %s
  advertise_url: http://%s
  zookeeper: {connect: %q, root: /colocd/test, session_timeout: %s}
  snapshot_every: 200
  keep_entries: 50
`, r.addr, r.dir, yarnTestToken, rmURL, r.id, r.addr, strings.Join(r.zkAddrs, ","), haSession)
	p := filepath.Join(tb.TempDir(), r.id+".yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (c *haCluster) start(r *haReplica) {
	r.p = startServe(c.t, "..", r.cfg, r.addr, yarnTestToken)
}

// finishApps ends every running application after a moment, as a
// cluster would: admission needs the room back.
func (c *haCluster) finishApps() {
	defer c.wg.Done()
	tick := time.NewTicker(200 * time.Millisecond)
	defer tick.Stop()
	for {
		select {
		case <-c.stopF:
			return
		case <-tick.C:
		}
		for _, a := range c.rm.Apps() {
			if a.State == "RUNNING" {
				_ = c.rm.FinishApp(a.ID, "SUCCEEDED")
			}
		}
	}
}

// alive are the replicas whose process runs.
func (c *haCluster) alive() []*haReplica {
	var out []*haReplica
	for _, r := range c.reps {
		select {
		case <-r.p.done:
		default:
			out = append(out, r)
		}
	}
	return out
}

// leader waits until exactly one live replica says it leads and is ready.
func (c *haCluster) leader(deadline time.Duration) *haReplica {
	c.t.Helper()
	var lead *haReplica
	poll(c.t, "one replica leads and is ready", deadline, func() bool {
		lead = nil
		n := 0
		for _, r := range c.alive() {
			if readyzCode(r.p.base, "?role=leader") == http.StatusOK {
				lead = r
				n++
			}
		}
		return n == 1
	})
	return lead
}

func readyzCode(base, query string) int {
	resp, err := http.Get(base + "/readyz" + query)
	if err != nil {
		return 0
	}
	resp.Body.Close()
	return resp.StatusCode
}

// submitter submits jobs with idempotency keys through random live
// replicas, retrying each with its key until one acknowledges it.
type submitter struct {
	c     *haCluster
	mu    sync.Mutex
	acked map[string]string // key → job id
	fails atomic.Int64
}

func (s *submitter) submit(key string, deadline time.Time) bool {
	body, _ := json.Marshal(yarnJob)
	hc := &http.Client{Timeout: 5 * time.Second}
	for time.Now().Before(deadline) {
		live := s.c.alive()
		if len(live) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		r := live[rand.IntN(len(live))]
		req, _ := http.NewRequest(http.MethodPost, r.p.base+"/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+yarnTestToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := hc.Do(req)
		if err != nil {
			s.fails.Add(1)
			continue
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated && resp.StatusCode != http.StatusOK {
			s.fails.Add(1)
			if resp.StatusCode/100 == 4 && resp.StatusCode != http.StatusConflict {
				s.c.t.Errorf("submit %s: %d %s", key, resp.StatusCode, b)
				return false
			}
			time.Sleep(50 * time.Millisecond)
			continue
		}
		var j apiJob
		if err := json.Unmarshal(b, &j); err != nil || j.ID == "" {
			s.c.t.Errorf("submit %s: %d %s", key, resp.StatusCode, b)
			return false
		}
		s.mu.Lock()
		if prev, ok := s.acked[key]; ok && prev != j.ID {
			s.c.t.Errorf("key %s acknowledged as job %s and as job %s", key, prev, j.ID)
		}
		s.acked[key] = j.ID
		s.mu.Unlock()
		return true
	}
	return false
}

// checkExactlyOnce asserts, on the leader's store and the RM: every
// acknowledged job is there; every application the RM accepted is the
// recorded application of exactly one job, and no job has two.
func (c *haCluster) checkExactlyOnce(lead *haReplica, acked map[string]string) map[string]apiJob {
	c.t.Helper()
	jobs := map[string]apiJob{}
	for key, id := range acked {
		code, b := lead.p.do(http.MethodGet, "/v1/jobs/"+id, nil)
		if code != http.StatusOK {
			c.t.Errorf("acknowledged job %s (key %s) lost: %d %s", id, key, code, b)
			continue
		}
		var j apiJob
		if err := json.Unmarshal(b, &j); err != nil {
			c.t.Fatal(err)
		}
		jobs[id] = j
	}
	byApp := map[string]string{}
	for id, j := range jobs {
		if j.AppID == "" {
			continue
		}
		if other, ok := byApp[j.AppID]; ok {
			c.t.Errorf("jobs %s and %s share application %s", id, other, j.AppID)
		}
		byApp[j.AppID] = id
	}
	perApp := submissionsPerApp(c.rm)
	for app, n := range perApp {
		if n != 1 {
			c.t.Errorf("application %s accepted %d times", app, n)
		}
		if _, ok := byApp[app]; !ok {
			c.t.Errorf("the RM runs application %s, which no job records: a job submitted twice, or lost track of", app)
		}
	}
	return jobs
}

// waitDone waits until every acknowledged job has finished, as the
// leader of the moment says.
func (c *haCluster) waitDone(acked map[string]string, deadline time.Duration) *haReplica {
	c.t.Helper()
	var lead *haReplica
	poll(c.t, "every acknowledged job to finish", deadline, func() bool {
		lead = c.leader(deadline)
		for _, id := range acked {
			code, b := lead.p.do(http.MethodGet, "/v1/jobs/"+id, nil)
			var j apiJob
			if code != http.StatusOK || json.Unmarshal(b, &j) != nil || j.State != "succeeded" {
				return false
			}
		}
		return true
	})
	return lead
}

// TestHAKillLeaderUnderLoad: while clients submit through every replica,
// the leader is killed with SIGKILL three times (and restarted, to rejoin
// as a follower). Every acknowledged job is on the new leader, every job
// runs, and the RM accepted each job exactly once.
func TestHAKillLeaderUnderLoad(t *testing.T) {
	c, _ := startHA(t, haOptions{replicas: 3, finish: true})
	c.leader(60 * time.Second)
	s := &submitter{c: c, acked: map[string]string{}}
	var wg sync.WaitGroup
	stop := time.Now().Add(90 * time.Second)
	var next atomic.Int64
	const jobs = 150
	for range 6 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := next.Add(1); k <= jobs; k = next.Add(1) {
				if !s.submit(fmt.Sprintf("job-%d", k), stop) {
					t.Errorf("job-%d never acknowledged", k)
				}
			}
		}()
	}
	for range 3 {
		lead := c.leader(60 * time.Second)
		poll(t, "some jobs to be admitted by this leader", 30*time.Second, func() bool { return len(c.rm.Submissions()) > 0 })
		lead.p.kill()
		c.leader(60 * time.Second)
		c.start(lead) // rejoins as a follower
	}
	wg.Wait()
	if len(s.acked) != jobs {
		t.Fatalf("%d of %d jobs acknowledged", len(s.acked), jobs)
	}
	lead := c.waitDone(s.acked, 120*time.Second)
	c.checkExactlyOnce(lead, s.acked)
	t.Logf("%d jobs, %d RM submissions, %d failed attempts (retried)", len(s.acked), len(c.rm.Submissions()), s.fails.Load())
}

// signal sends sig to the replica's process.
func (r *haReplica) signal(sig os.Signal) {
	_ = r.p.cmd.Process.Signal(sig)
}

// haRole is the replica's role as GET /v1/ha says ("" when it does not
// answer).
func haRole(r *haReplica) string {
	req, _ := http.NewRequest(http.MethodGet, r.p.base+"/v1/ha", nil)
	req.Header.Set("Authorization", "Bearer "+yarnTestToken)
	resp, err := (&http.Client{Timeout: 2 * time.Second}).Do(req)
	if err != nil {
		return ""
	}
	defer resp.Body.Close()
	var st struct {
		Role string `json:"role"`
	}
	if json.NewDecoder(resp.Body).Decode(&st) != nil {
		return ""
	}
	return st.Role
}

// TestHAPausedLeader: the leader is stopped (SIGSTOP) for longer than its
// session timeout, once with its submission to the RM in flight and once
// with an application id reserved and not yet recorded. Another replica
// takes over and runs the job; the old leader, continued, submits nothing
// new — its writes are fenced, its submission a duplicate the RM refuses
// — and steps down. Each job is accepted once.
func TestHAPausedLeader(t *testing.T) {
	for _, at := range []string{yarnclient.PathApps, yarnclient.PathNewApplication} {
		t.Run(strings.TrimPrefix(at, "/ws/v1/cluster/"), func(t *testing.T) {
			c, _ := startHA(t, haOptions{replicas: 3, finish: true})
			old := c.leader(60 * time.Second)
			block, arrived := make(chan struct{}), make(chan struct{}, 1)
			c.rm.InjectFault(at, yarntest.Fault{Method: http.MethodPost, Block: block, Arrived: arrived, Times: 1})
			id := submitOne(t, old.p)
			select {
			case <-arrived:
			case <-time.After(30 * time.Second):
				t.Fatal("the leader never reached the RM")
			}
			old.signal(syscall.SIGSTOP)
			paused := true
			defer func() {
				if paused {
					old.signal(syscall.SIGCONT)
				}
			}()
			var next *haReplica
			poll(t, "another replica to lead", 60*time.Second, func() bool {
				for _, r := range c.alive() {
					if r != old && readyzCode(r.p.base, "?role=leader") == http.StatusOK {
						next = r
						return true
					}
				}
				return false
			})
			poll(t, "the job to succeed under the new leader", 60*time.Second, func() bool { return next.p.job(id).State == "succeeded" })
			close(block) // the old leader's request, held at the RM, goes on
			old.signal(syscall.SIGCONT)
			paused = false
			poll(t, "the old leader to step down and stop its loop", 30*time.Second, func() bool {
				return haRole(old) == "follower" && strings.Contains(old.p.out.String(), "the loop stopped: no longer leading")
			})
			for _, l := range strings.Split(old.p.out.String(), "\n") {
				if strings.Contains(l, "fenced") || strings.Contains(l, "leading") || strings.Contains(l, "not submitted") || strings.Contains(l, "admit job") {
					t.Logf("old leader: %.300s", l)
				}
			}
			c.checkExactlyOnce(next, map[string]string{"one": id})
			if n := len(c.rm.Submissions()); n != 1 {
				t.Errorf("the RM accepted %d submissions, want 1", n)
			}
		})
	}
}
