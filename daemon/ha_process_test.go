package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptrace"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

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
	t     testing.TB
	zk    *zktest.Ensemble
	rm    *yarntest.FakeRM
	reps  []*haReplica
	stopF chan struct{}
	wg    sync.WaitGroup

	// mu guards each replica's p, which the test replaces when it
	// restarts one while the submitters' goroutines pick replicas.
	mu sync.Mutex
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
	// session is the replicas' session timeout (0: haSession); zkTick the
	// ZooKeeper servers' tickTime, which bounds it (0: zktest's default).
	session, zkTick time.Duration
	maxRunning      int               // admission.max_running (0: no cap)
	rm              []yarntest.Option // the fake RM's options beyond newTestRM's
}

func startHA(t testing.TB, o haOptions) (*haCluster, []*tcpProxy) {
	t.Helper()
	c := &haCluster{t: t, zk: zktest.Start(t, zktest.Options{Tick: o.zkTick}), rm: newTestRM(t, o.rm...), stopF: make(chan struct{})}
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
		r.cfg = haConfigFile(t, r, c.rm.URL(), o)
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

// haConfigFile writes replica r's config; a replica with no ZooKeeper
// address gets the same config without its ha section: colocd alone, the
// baseline of a benchmark.
func haConfigFile(tb testing.TB, r *haReplica, rmURL string, o haOptions) string {
	session := o.session
	if session == 0 {
		session = haSession
	}
	cfg := fmt.Sprintf(`
listen: %s
data_dir: %s
log_level: debug
tokens: [{token: %s, user: admin, role: admin}]
backend: yarn
yarn: {rm_urls: [%q], user: colocd, timeout: 2s}
influx: {url: "http://127.0.0.1:1", bucket: telegraf/autogen, timeout: 1s}
goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}
admission: {tick: 100ms, max_running: %d}
learning: {schedule: "@every 1h"}
shutdown_timeout: 5s
`, r.addr, r.dir, yarnTestToken, rmURL, o.maxRunning)
	if len(r.zkAddrs) > 0 {
		cfg += fmt.Sprintf(`ha:
  id: %s
  advertise_url: http://%s
  zookeeper: {connect: %q, root: /colocd/test, session_timeout: %s}
  snapshot_every: 200
  keep_entries: 50
`, r.id, r.addr, strings.Join(r.zkAddrs, ","), session)
	}
	p := filepath.Join(tb.TempDir(), r.id+".yaml")
	if err := os.WriteFile(p, []byte(cfg), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func (c *haCluster) start(r *haReplica) {
	p := startServe(c.t, "..", r.cfg, r.addr, yarnTestToken)
	c.mu.Lock()
	r.p = p
	c.mu.Unlock()
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
	c.mu.Lock()
	defer c.mu.Unlock()
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

// aliveProcs are the processes of the live replicas, for a goroutine
// other than the test's (which restarts replicas).
func (c *haCluster) aliveProcs() []*proc {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []*proc
	for _, r := range c.reps {
		select {
		case <-r.p.done:
		default:
			out = append(out, r.p)
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
		live := s.c.aliveProcs()
		if len(live) == 0 {
			time.Sleep(50 * time.Millisecond)
			continue
		}
		p := live[rand.IntN(len(live))]
		req, _ := http.NewRequest(http.MethodPost, p.base+"/v1/jobs", bytes.NewReader(body))
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
// recorded application of exactly one stored job (acknowledged or not: a
// write whose answer was lost in a failover may still have been applied),
// and no job has two. It returns what it counted, for a study's table.
func (c *haCluster) checkExactlyOnce(lead *haReplica, acked map[string]string) exactlyOnce {
	c.t.Helper()
	var n exactlyOnce
	var list struct {
		Jobs []apiJob `json:"jobs"`
	}
	lead.p.getJSON("/v1/jobs?state=all&limit=10000", &list)
	stored := map[string]apiJob{}
	byApp := map[string]string{}
	for _, j := range list.Jobs {
		stored[j.ID] = j
		if j.AppID == "" {
			continue
		}
		if other, ok := byApp[j.AppID]; ok {
			n.shared++
			c.t.Errorf("jobs %s and %s share application %s", j.ID, other, j.AppID)
		}
		byApp[j.AppID] = j.ID
	}
	for key, id := range acked {
		if _, ok := stored[id]; !ok {
			n.lost++
			c.t.Errorf("acknowledged job %s (key %s) lost", id, key)
		}
	}
	perApp := submissionsPerApp(c.rm)
	for app, k := range perApp {
		if k != 1 {
			n.twice++
			c.t.Errorf("application %s accepted %d times", app, k)
		}
		if _, ok := byApp[app]; !ok {
			n.unrecorded++
			c.t.Errorf("the RM runs application %s, which no job records: a job submitted twice, or lost track of", app)
		}
	}
	n.stored, n.acked, n.accepted, n.calls = len(stored), len(acked), len(perApp), c.rm.SubmitCalls()
	c.t.Logf("%d jobs stored (%d acknowledged), %d applications accepted", len(stored), len(acked), len(perApp))
	return n
}

// exactlyOnce is what checkExactlyOnce counted: jobs stored and
// acknowledged, applications the RM accepted and submit calls it got
// (it refuses a duplicate, so calls − accepted were resubmissions or
// refusals), and the violations — acknowledged jobs lost, applications
// shared by two jobs, accepted twice, or recorded by no job.
type exactlyOnce struct {
	stored, acked, accepted, calls  int
	lost, shared, twice, unrecorded int
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

// TestHAPartitionedLeader: the leader's ZooKeeper traffic is dropped (a
// TCP proxy between it and every server). Within its session timeout it
// stops acting as the leader; another replica takes over and admits what
// is submitted meanwhile. Healed, the old leader follows in a new session
// and catches up; nothing ran twice.
func TestHAPartitionedLeader(t *testing.T) {
	c, proxies := startHA(t, haOptions{replicas: 3, proxies: true, finish: true})
	old := c.leader(60 * time.Second)
	s := &submitter{c: c, acked: map[string]string{}}
	for k := range 10 {
		if !s.submit(fmt.Sprintf("before-%d", k), time.Now().Add(30*time.Second)) {
			t.Fatalf("before-%d not acknowledged", k)
		}
	}
	var proxy *tcpProxy
	for i, r := range c.reps {
		if r == old {
			proxy = proxies[i]
		}
	}
	partitioned := time.Now()
	proxy.Partition()
	poll(t, "the cut-off leader to stop leading", 30*time.Second, func() bool {
		return readyzCode(old.p.base, "?role=leader") != http.StatusOK
	})
	t.Logf("the cut-off leader stopped leading %v after the partition (session timeout %v)", time.Since(partitioned).Round(time.Millisecond), haSession)
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
	for k := range 10 {
		key := fmt.Sprintf("during-%d", k)
		body, _ := json.Marshal(yarnJob)
		req, _ := http.NewRequest(http.MethodPost, next.p.base+"/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+yarnTestToken)
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set("Content-Type", "application/json")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var j apiJob
		json.NewDecoder(resp.Body).Decode(&j)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			t.Fatalf("submit %s to the new leader: %d", key, resp.StatusCode)
		}
		s.acked[key] = j.ID
	}
	// Cut off, the old leader takes no write: it has no session.
	code, b := old.p.do(http.MethodPost, "/v1/jobs", yarnJob)
	if code != http.StatusServiceUnavailable {
		t.Errorf("a submit to the cut-off replica: %d %s, want 503", code, b)
	}
	proxy.Heal()
	poll(t, "the old leader to follow again and catch up", 60*time.Second, func() bool {
		code, _ := old.p.do(http.MethodGet, "/v1/jobs/"+s.acked["during-9"], nil)
		return haRole(old) == "follower" && code == http.StatusOK
	})
	lead := c.waitDone(s.acked, 120*time.Second)
	c.checkExactlyOnce(lead, s.acked)
}

// TestHAQuorumLost: two of the three ZooKeeper servers die. Submissions
// get 503 naming ZooKeeper or the election (nothing is stored, nothing
// reaches the RM unrecorded), and once the servers are back a leader is
// elected and admission resumes.
func TestHAQuorumLost(t *testing.T) {
	c, _ := startHA(t, haOptions{replicas: 3, finish: true})
	c.leader(60 * time.Second)
	s := &submitter{c: c, acked: map[string]string{}}
	for k := range 5 {
		if !s.submit(fmt.Sprintf("before-%d", k), time.Now().Add(30*time.Second)) {
			t.Fatalf("before-%d not acknowledged", k)
		}
	}
	c.zk.Server(1).Kill()
	c.zk.Server(2).Kill()
	var refused int
	poll(t, "submissions to be refused with 503 naming ZooKeeper or the election", 60*time.Second, func() bool {
		for _, r := range c.alive() {
			code, b := r.p.do(http.MethodPost, "/v1/jobs", yarnJob)
			switch {
			case code == http.StatusServiceUnavailable && (bytes.Contains(b, []byte("ZooKeeper")) || bytes.Contains(b, []byte("leads"))):
				refused++
			case code == http.StatusCreated:
				var j apiJob
				json.Unmarshal(b, &j)
				s.acked[fmt.Sprintf("late-%d", len(s.acked))] = j.ID // acknowledged before the loss was seen: must not be lost
			default:
				t.Logf("replica %s: %d %s", r.id, code, b)
			}
		}
		return refused >= 6
	})
	for _, id := range []int{1, 2} {
		if err := c.zk.Server(id).Start(); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.zk.WaitServing(); err != nil {
		t.Fatal(err)
	}
	c.leader(90 * time.Second)
	for k := range 5 {
		if !s.submit(fmt.Sprintf("after-%d", k), time.Now().Add(60*time.Second)) {
			t.Fatalf("after-%d not acknowledged once the quorum was back", k)
		}
	}
	lead := c.waitDone(s.acked, 120*time.Second)
	c.checkExactlyOnce(lead, s.acked)
}

// TestHAHandover: SIGTERM to the leader hands over: it finishes its pass,
// exits 0 and ends its session, and a standby leads within moments (the
// study in docs/ha.md measures how many).
func TestHAHandover(t *testing.T) {
	c, _ := startHA(t, haOptions{replicas: 3, finish: true})
	old := c.leader(60 * time.Second)
	id := submitOne(t, old.p)
	t0 := time.Now()
	if _, err := old.p.stop(30 * time.Second); err != nil {
		t.Fatalf("the leader exited with %v after SIGTERM", err)
	}
	lead := c.leader(30 * time.Second)
	t.Logf("%s led %v after SIGTERM to %s", lead.id, time.Since(t0).Round(time.Millisecond), old.id)
	poll(t, "the job to succeed", 60*time.Second, func() bool { return lead.p.job(id).State == "succeeded" })
	c.checkExactlyOnce(lead, map[string]string{"one": id})
}

// TestHAChaos: clients submit and cancel through every replica while
// replicas are killed, stopped, paused and restarted and ZooKeeper servers
// die and come back. Afterwards: 0 acknowledged jobs lost, 0 cancelled
// jobs run, 0 jobs accepted twice by the RM.
func TestHAChaos(t *testing.T) {
	c, _ := startHA(t, haOptions{replicas: 3, finish: true})
	c.leader(60 * time.Second)
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	rng := rand.New(rand.NewPCG(seed, 7))
	s := &submitter{c: c, acked: map[string]string{}}
	var wg sync.WaitGroup
	var next, wanted atomic.Int64
	chaosFor := 30 * time.Second
	until := time.Now().Add(chaosFor)
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for time.Now().Before(until) {
				k := next.Add(1)
				wanted.Add(1)
				if !s.submit(fmt.Sprintf("job-%d", k), until.Add(120*time.Second)) {
					t.Errorf("job-%d never acknowledged", k)
				}
				time.Sleep(20 * time.Millisecond) // a steady stream across the events
			}
		}()
	}
	var events []string
	for time.Now().Before(until) {
		time.Sleep(time.Duration(500+rng.IntN(1500)) * time.Millisecond)
		lead := c.leader(90 * time.Second)
		switch ev := rng.IntN(5); ev {
		case 0:
			lead.p.kill()
			c.start(lead)
			events = append(events, "kill -9 leader")
		case 1:
			r := c.reps[rng.IntN(len(c.reps))]
			r.p.kill()
			c.start(r)
			events = append(events, "kill -9 "+r.id)
		case 2:
			lead.p.stop(30 * time.Second)
			c.start(lead)
			events = append(events, "SIGTERM leader")
		case 3:
			lead.signal(syscall.SIGSTOP)
			time.Sleep(haSession + time.Duration(rng.IntN(1000))*time.Millisecond)
			lead.signal(syscall.SIGCONT)
			events = append(events, "SIGSTOP leader")
		case 4:
			z := c.zk.Server(1 + rng.IntN(3))
			z.Kill()
			if err := z.Start(); err != nil {
				t.Fatal(err)
			}
			events = append(events, fmt.Sprintf("kill ZooKeeper %d", z.ID))
		}
	}
	wg.Wait()
	jobs := int(wanted.Load())
	t.Logf("%d events: %v", len(events), events)
	if len(s.acked) != jobs {
		t.Fatalf("%d of %d jobs acknowledged", len(s.acked), jobs)
	}
	lead := c.waitDone(s.acked, 180*time.Second)
	c.checkExactlyOnce(lead, s.acked)
}

// TestHAKillLeaderAroundTheAppend: the leader is killed with a
// submission in flight — once after ZooKeeper took its append (its
// answers were dropped: it never heard), once before (its traffic to
// ZooKeeper was dropped). The client retries with its key through the new
// leader: after the append it gets the job the log holds (200), before
// it the job is created then (201); either way one job, run once.
func TestHAKillLeaderAroundTheAppend(t *testing.T) {
	for _, after := range []bool{true, false} {
		name := map[bool]string{true: "after", false: "before"}[after]
		t.Run(name, func(t *testing.T) {
			c, proxies := startHA(t, haOptions{replicas: 3, proxies: true, finish: true})
			lead := c.leader(60 * time.Second)
			zc, _, err := zk.Connect(c.zk.Addrs(), 5*time.Second, zk.WithLogInfo(false))
			if err != nil {
				t.Fatal(err)
			}
			defer zc.Close()
			entries := func() int {
				names, _, err := zc.Children("/colocd/test/log")
				if err != nil {
					return -1
				}
				return len(names)
			}
			before := entries()
			proxy := proxies[slices.Index(c.reps, lead)]
			if after {
				proxy.Deafen()
			} else {
				proxy.Partition()
			}
			key := "around-" + name
			wrote := make(chan struct{})
			go func() { // its answer never comes: the leader dies first
				body, _ := json.Marshal(yarnJob)
				trace := &httptrace.ClientTrace{WroteRequest: func(httptrace.WroteRequestInfo) { close(wrote) }}
				req, _ := http.NewRequestWithContext(httptrace.WithClientTrace(context.Background(), trace),
					http.MethodPost, lead.p.base+"/v1/jobs", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+yarnTestToken)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				if resp, err := (&http.Client{Timeout: 30 * time.Second}).Do(req); err == nil {
					resp.Body.Close()
				}
			}()
			select {
			case <-wrote:
			case <-time.After(30 * time.Second):
				t.Fatal("the submission never reached the leader")
			}
			if after {
				poll(t, "ZooKeeper to take the leader's append", 30*time.Second, func() bool { return entries() > before })
			} else if n := entries(); n != before {
				t.Fatalf("the log grew from %d to %d entries through the partition", before, n)
			}
			lead.p.kill()
			proxy.Heal()
			next := c.leader(60 * time.Second)
			var code int
			var j apiJob
			poll(t, "the retry to be answered", 30*time.Second, func() bool {
				body, _ := json.Marshal(yarnJob)
				req, _ := http.NewRequest(http.MethodPost, next.p.base+"/v1/jobs", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+yarnTestToken)
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set("Idempotency-Key", key)
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					return false
				}
				defer resp.Body.Close()
				code = resp.StatusCode
				return (code == http.StatusOK || code == http.StatusCreated) && json.NewDecoder(resp.Body).Decode(&j) == nil
			})
			if want := map[bool]int{true: http.StatusOK, false: http.StatusCreated}[after]; code != want {
				t.Errorf("the retry through the new leader: %d, want %d (the append was %s the kill)", code, want, name)
			}
			c.start(lead)
			poll(t, "the job to succeed", 60*time.Second, func() bool { return next.p.job(j.ID).State == "succeeded" })
			c.checkExactlyOnce(next, map[string]string{key: j.ID})
		})
	}
}
