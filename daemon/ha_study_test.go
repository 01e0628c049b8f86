package daemon

import (
	"bufio"
	"fmt"
	"math"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"text/tabwriter"
	"time"

	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// The failover study (issue 27): how long the replicated colocd takes to
// admit again once its leader is gone, and whether failovers under load
// keep every job exactly once. It runs real processes for about 8 minutes
// on a 2-core machine (4 for "failover", 3 for "load"), so it runs only
// when asked:
//
//	COLOCD_HA_STUDY=1 go test -run TestHAStudy -v -timeout 60m ./daemon
//
// COLOCD_HA_STUDY_FAILOVERS (default 20) is the number of failovers of
// each kind in "failover", COLOCD_HA_STUDY_LOAD_FAILOVERS (default 50)
// the number in "load". Each subtest prints a table, and the machine and
// its load average before and after.
func TestHAStudy(t *testing.T) {
	if os.Getenv("COLOCD_HA_STUDY") != "1" {
		t.Skip("the HA failover study runs real replicas for about 8 min: COLOCD_HA_STUDY=1 go test -run TestHAStudy -v -timeout 60m ./daemon")
	}
	t.Run("failover", studyFailover)
	t.Run("load", studyLoad)
}

// studyFailover: three replicas with the default 10 s session timeout
// (ZooKeeper's tick 1 s grants 2–20 s), admission.max_running 1 so that
// one job runs and the next waits. Each round kills the leader (SIGKILL)
// or stops it (SIGTERM, a handover), alternately, then finishes the
// running application at the RM — after the old leader is gone, so that
// only the new leader can admit the waiting job — and measures from the
// signal to the moment the waiting job's application reaches the RM. The
// old replica restarts and the cluster is whole again before the next
// round. The phases come from the new leader's log.
func studyFailover(t *testing.T) {
	rounds := studyCount(t, "COLOCD_HA_STUDY_FAILOVERS", 20)
	clock := newRMClock()
	c, _ := startHA(t, haOptions{replicas: 3, session: ha.DefaultSessionTimeout, zkTick: time.Second, maxRunning: 1,
		rm: []yarntest.Option{yarntest.OnSubmit(clock.record)}})
	t.Logf("machine at the start: %s", machine())
	lead := c.leader(90 * time.Second)
	acked := map[string]string{}
	runningID := submitOne(t, lead.p)
	acked["first"] = runningID
	_, runningApp := clock.await(t, 1, 30*time.Second)
	samples := map[string][]time.Duration{}
	add := func(k string, d time.Duration) { samples[k] = append(samples[k], d) }
	for i := range 2 * rounds {
		kind := [2]string{"SIGKILL", "SIGTERM"}[i%2]
		c.allReady(60 * time.Second)
		poll(t, "the admitted job to run", 30*time.Second, func() bool { return lead.p.job(runningID).State == "running" })
		waiting := submitOne(t, lead.p)
		acked[fmt.Sprintf("round-%d", i)] = waiting
		if st := lead.p.job(waiting).State; st != "pending" {
			t.Fatalf("round %d: the job submitted with one running is %s, want pending (max_running 1)", i, st)
		}
		before := clock.count()
		t0 := time.Now()
		if kind == "SIGKILL" {
			lead.p.kill()
		} else {
			lead.signal(syscall.SIGTERM)
			select {
			case <-lead.p.done:
			case <-time.After(30 * time.Second):
				t.Fatalf("round %d: the leader did not exit within 30 s of SIGTERM", i)
			}
			add("SIGTERM → old leader exited", time.Since(t0))
		}
		if err := c.rm.FinishApp(runningApp, "SUCCEEDED"); err != nil {
			t.Fatal(err)
		}
		at, app := clock.await(t, before+1, 90*time.Second)
		next := c.leader(60 * time.Second)
		took := at.Sub(t0)
		add(kind+" → first admission", took)
		out := next.p.out.String()
		elected, ok1 := logTime(out, "elected leader; applying the log to its end", t0)
		looping, ok2 := logTime(out, "leading: reconciling with the cluster, then admitting", t0)
		if expired, ok := c.sessionExpired(t0); ok && kind == "SIGKILL" && ok1 {
			add("SIGKILL → session expired (ZooKeeper's log)", expired.Sub(t0))
			add("  session expired → elected (log)", elected.Sub(expired))
		}
		if ok1 && ok2 {
			add(kind+" → elected (log)", elected.Sub(t0))
			add("  elected → loop started (log)", looping.Sub(elected))
			add("  loop started → admission", at.Sub(looping))
		}
		if j := next.p.job(waiting); j.AppID != app {
			t.Fatalf("round %d: the first application after the %s is %s, the waiting job's is %q (%s)", i, kind, app, j.AppID, j.State)
		}
		t.Logf("round %2d: %s %s → %s led; first admission %v after the signal", i, kind, lead.id, next.id, took.Round(time.Millisecond))
		c.start(lead) // rejoins as a follower
		lead, runningID, runningApp = next, waiting, app
	}
	c.allReady(60 * time.Second)
	eo := c.checkExactlyOnce(lead, acked)
	t.Logf("machine at the end: %s", machine())
	printTable(t, fmt.Sprintf("failover: 3 replicas, session timeout %v, ZooKeeper tick 1 s, admission tick 100 ms; %d rounds of each kind", ha.DefaultSessionTimeout, rounds),
		samples, []string{"SIGKILL → first admission", "SIGKILL → session expired (ZooKeeper's log)", "  session expired → elected (log)", "SIGKILL → elected (log)", "SIGTERM → first admission", "SIGTERM → old leader exited", "SIGTERM → elected (log)",
			"  elected → loop started (log)", "  loop started → admission"})
	t.Logf("exactly once: %d jobs, %d applications accepted (%d submit calls); lost %d, shared %d, accepted twice %d, unrecorded %d",
		eo.stored, eo.accepted, eo.calls, eo.lost, eo.shared, eo.twice, eo.unrecorded)
}

// studyLoad: three replicas with a 2 s session timeout, clients
// submitting through every replica with idempotency keys at a steady rate
// while the leader is killed (SIGKILL) again and again, each time once it
// has admitted 100 jobs, and restarted to rejoin. Afterwards every job
// runs and checkExactlyOnce counts what was lost, shared or submitted
// twice. The rate keeps the jobs under the API's list limit (10,000),
// which checkExactlyOnce reads them through.
func studyLoad(t *testing.T) {
	failovers := studyCount(t, "COLOCD_HA_STUDY_LOAD_FAILOVERS", 50)
	const (
		rate    = 40   // submissions per second, at most
		budget  = 9500 // jobs, at most
		clients = 8
		perTerm = 50 // jobs each leader admits before it is killed
	)
	clock := newRMClock()
	c, _ := startHA(t, haOptions{replicas: 3, finish: true, rm: []yarntest.Option{yarntest.OnSubmit(clock.record)}})
	t.Logf("machine at the start: %s", machine())
	c.leader(60 * time.Second)
	s := &submitter{c: c, acked: map[string]string{}}
	stop := make(chan struct{})
	tokens := time.NewTicker(time.Second / rate)
	defer tokens.Stop()
	var wg sync.WaitGroup
	var issued atomic.Int64
	t0 := time.Now()
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				case <-tokens.C:
				}
				k := issued.Add(1)
				if k > budget {
					return
				}
				if !s.submit(fmt.Sprintf("load-%d", k), time.Now().Add(5*time.Minute)) {
					t.Errorf("load-%d never acknowledged", k)
				}
			}
		}()
	}
	samples := map[string][]time.Duration{}
	for i := range failovers {
		if issued.Load() >= budget {
			t.Fatalf("the load's budget of %d jobs ran out after %d failovers: lower the rate or perTerm", budget, i)
		}
		c.allReady(60 * time.Second)
		lead := c.leader(60 * time.Second)
		base := clock.count()
		poll(t, fmt.Sprintf("the leader to admit %d jobs", perTerm), 120*time.Second, func() bool { return clock.count() >= base+perTerm })
		killed := time.Now()
		atKill := clock.count()
		lead.p.kill()
		next := c.leader(60 * time.Second)
		samples["SIGKILL → new leader ready (/readyz)"] = append(samples["SIGKILL → new leader ready (/readyz)"], time.Since(killed))
		at, _ := clock.await(t, atKill+1, 60*time.Second)
		samples["SIGKILL → next RM submission"] = append(samples["SIGKILL → next RM submission"], at.Sub(killed))
		t.Logf("failover %2d: %s killed, %s leads after %v; %d jobs submitted so far", i, lead.id, next.id, time.Since(killed).Round(time.Millisecond), issued.Load())
		c.start(lead)
	}
	close(stop)
	wg.Wait()
	loadFor := time.Since(t0)
	s.mu.Lock()
	acked := len(s.acked)
	s.mu.Unlock()
	if want := int(min(issued.Load(), budget)); acked < want-clients {
		t.Errorf("%d jobs acknowledged of about %d submitted", acked, want)
	}
	lead, counts := c.settle(10 * time.Minute)
	eo := c.checkExactlyOnce(lead, s.acked)
	c.explainParked(lead, clock)
	t.Logf("machine at the end: %s", machine())
	printTable(t, fmt.Sprintf("load: 3 replicas, session timeout %v, %d SIGKILLs of the leader while %d clients submitted through every replica (%d jobs in %v, %.0f/s; %d attempts refused or unanswered, retried with their key)",
		haSession, failovers, clients, acked, loadFor.Round(time.Second), float64(acked)/loadFor.Seconds(), s.fails.Load()),
		samples, []string{"SIGKILL → new leader ready (/readyz)", "SIGKILL → next RM submission"})
	t.Logf("exactly once: %d jobs stored, %d acknowledged, %d applications accepted (%d submit calls); lost %d, shared %d, accepted twice %d, unrecorded %d; by state %v",
		eo.stored, eo.acked, eo.accepted, eo.calls, eo.lost, eo.shared, eo.twice, eo.unrecorded, counts)
	if n := counts["succeeded"] + counts["parked"]; n != eo.stored {
		t.Errorf("%d jobs stored, %d succeeded and %d parked: want every job to end one or the other", eo.stored, counts["succeeded"], counts["parked"])
	}
}

// settle waits until no job is pending, admitted or running, as the
// leader of the moment says, and returns it and its counts by state.
func (c *haCluster) settle(deadline time.Duration) (*haReplica, map[string]int) {
	c.t.Helper()
	var lead *haReplica
	var counts map[string]int
	poll(c.t, "every job to end or park", deadline, func() bool {
		lead = c.leader(deadline)
		counts = lead.p.counts()
		return counts["pending"]+counts["admitted"]+counts["running"] == 0
	})
	return lead, counts
}

// explainParked logs each parked job (the cluster forgot its application,
// or never had it: package engine parks what it cannot tell apart) and
// whether its application ever reached the RM.
func (c *haCluster) explainParked(lead *haReplica, clock *rmClock) {
	c.t.Helper()
	var list struct {
		Jobs []struct {
			apiJob
			Key        string `json:"idempotency_key"`
			AdmitEpoch uint64 `json:"admit_epoch"`
			Diag       string `json:"diagnostics"`
		} `json:"jobs"`
	}
	lead.p.getJSON("/v1/jobs?state=parked&limit=1000", &list)
	clock.mu.Lock()
	reached := map[string]bool{}
	for _, a := range clock.apps {
		reached[a] = true
	}
	clock.mu.Unlock()
	for _, j := range list.Jobs {
		c.t.Logf("parked: job %s (key %s) admitted in epoch %d as %s, which reached the RM: %v; %s", j.ID, j.Key, j.AdmitEpoch, j.AppID, reached[j.AppID], j.Diag)
	}
}

// allReady waits until every live replica answers /readyz with 200 and
// one of them leads: the cluster is whole again.
func (c *haCluster) allReady(deadline time.Duration) {
	c.t.Helper()
	poll(c.t, "every replica ready, one leading", deadline, func() bool {
		leaders := 0
		for _, r := range c.alive() {
			if readyzCode(r.p.base, "") != 200 {
				return false
			}
			if readyzCode(r.p.base, "?role=leader") == 200 {
				leaders++
			}
		}
		return leaders == 1
	})
}

// sessionExpired is when a ZooKeeper server of c first logged that it
// expired a session (its leader's "Expiring session 0x…, timeout of …
// exceeded") at or after after; log4j writes local time to the
// millisecond.
func (c *haCluster) sessionExpired(after time.Time) (time.Time, bool) {
	after = after.Truncate(time.Millisecond)
	var first time.Time
	for _, s := range c.zk.Servers() {
		b, err := s.Log()
		if err != nil {
			continue
		}
		for _, l := range strings.Split(string(b), "\n") {
			if !strings.Contains(l, "Expiring session 0x") || len(l) < 23 {
				continue
			}
			ts, err := time.ParseInLocation("2006-01-02 15:04:05,000", l[:23], time.Local)
			if err == nil && !ts.Before(after) && (first.IsZero() || ts.Before(first)) {
				first = ts
			}
		}
	}
	return first, !first.IsZero()
}

// rmClock records when each application reached the fake RM
// (yarntest.OnSubmit), in order.
type rmClock struct {
	mu   sync.Mutex
	at   []time.Time
	apps []string
	more chan struct{}
}

func newRMClock() *rmClock { return &rmClock{more: make(chan struct{}, 1)} }

func (c *rmClock) record(s yarnclient.SubmissionContext) {
	c.mu.Lock()
	c.at = append(c.at, time.Now())
	c.apps = append(c.apps, s.ApplicationID)
	c.mu.Unlock()
	select {
	case c.more <- struct{}{}:
	default:
	}
}

func (c *rmClock) count() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.at)
}

// await waits for the n-th submission (from 1) and returns when it landed
// and its application.
func (c *rmClock) await(tb testing.TB, n int, deadline time.Duration) (time.Time, string) {
	tb.Helper()
	timeout := time.After(deadline)
	for {
		c.mu.Lock()
		if len(c.at) >= n {
			defer c.mu.Unlock()
			return c.at[n-1], c.apps[n-1]
		}
		c.mu.Unlock()
		select {
		case <-c.more:
		case <-timeout:
			tb.Fatalf("no application %d at the RM after %v", n, deadline)
		}
	}
}

// logTime is the time of the first line of a colocd log (slog's text
// format) whose message is msg, at or after after.
func logTime(out, msg string, after time.Time) (time.Time, bool) {
	after = after.Truncate(time.Millisecond) // the log's resolution
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 0, 64<<10), 1<<20)
	for sc.Scan() {
		l := sc.Text()
		if !strings.Contains(l, `msg="`+msg+`"`) {
			continue
		}
		v, ok := strings.CutPrefix(l, "time=")
		if !ok {
			continue
		}
		v, _, _ = strings.Cut(v, " ")
		ts, err := time.Parse(time.RFC3339Nano, v)
		if err == nil && !ts.Before(after) {
			return ts, true
		}
	}
	return time.Time{}, false
}

// printTable logs count, p50, p90, p99 and max of each series in order
// (nearest rank: with 20 samples p99 is the largest).
func printTable(t *testing.T, title string, samples map[string][]time.Duration, order []string) {
	t.Helper()
	var b strings.Builder
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "%s\tn\tp50\tp90\tp99\tmax\n", "")
	for _, k := range order {
		d := slices.Clone(samples[k])
		if len(d) == 0 {
			continue
		}
		slices.Sort(d)
		q := func(p float64) string {
			return d[max(0, int(math.Ceil(p*float64(len(d))))-1)].Round(10 * time.Millisecond).String()
		}
		fmt.Fprintf(tw, "%s\t%d\t%s\t%s\t%s\t%s\n", k, len(d), q(0.5), q(0.9), q(0.99), d[len(d)-1].Round(10*time.Millisecond))
	}
	tw.Flush()
	t.Logf("%s\n%s", title, b.String())
}

func studyCount(t *testing.T, env string, def int) int {
	t.Helper()
	v := os.Getenv(env)
	if v == "" {
		return def
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		t.Fatalf("%s=%q is not a positive count", env, v)
	}
	return n
}

// machine describes this machine and its load now, for a figure's record.
func machine() string {
	model := "unknown CPU"
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		for _, l := range strings.Split(string(b), "\n") {
			if k, v, ok := strings.Cut(l, ":"); ok && strings.TrimSpace(k) == "model name" {
				model = strings.TrimSpace(v)
				break
			}
		}
	}
	var mem string
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if f := strings.Fields(string(b)); len(f) > 1 {
			kb, _ := strconv.ParseFloat(f[1], 64)
			mem = fmt.Sprintf(", %.0f GB", kb/1024/1024)
		}
	}
	var kernel string
	var u syscall.Utsname
	if syscall.Uname(&u) == nil {
		var sb strings.Builder
		for _, c := range u.Release {
			if c == 0 {
				break
			}
			sb.WriteByte(byte(c))
		}
		kernel = ", Linux " + sb.String()
	}
	load, _ := os.ReadFile("/proc/loadavg")
	return fmt.Sprintf("%s, %d vCPU%s%s, %s; load average %s", model, runtime.NumCPU(), mem, kernel, runtime.Version(),
		strings.Join(strings.Fields(string(load))[:min(3, len(strings.Fields(string(load))))], " "))
}
