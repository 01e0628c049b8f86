package ha_test

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/internal/testing/load"
	"github.com/colocd/colocd/internal/testing/zktest"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// BenchmarkSubmit32: 32 clients submit through the store's group commit,
// each waiting for its acknowledgement, replicated through a three-server
// ZooKeeper (fsync'd by the servers and by the leader's bbolt) and, in
// the same run, embedded (bbolt alone, fsync'd). Reports jobs/s and the
// p99 latency of an acknowledgement.
func BenchmarkSubmit32(b *testing.B) {
	e := zktest.Start(b, zktest.Options{})
	for _, mode := range []string{"embedded", "replicated"} {
		b.Run(mode, func(b *testing.B) {
			dir := b.TempDir()
			opts := queue.Options{}
			if mode == "replicated" {
				opts.CommitsInFlight, opts.GroupWait = ha.StoreInFlight, ha.StoreGroupWait
			}
			store, err := queue.Open(filepath.Join(dir, "queue.db"), opts)
			if err != nil {
				b.Fatal(err)
			}
			defer store.Close()
			if mode == "replicated" {
				cfg := testConfig(e, "bench")
				cfg.Root = fmt.Sprintf("/colocd/bench-%d", time.Now().UnixNano())
				cfg.SnapshotEvery, cfg.KeepEntries = 5000, 1000
				n := &node{id: "bench", store: store}
				rep := startRep(b, n, cfg, dir)
				eventuallyB(b, rep)
			}
			b.ResetTimer()
			res, err := load.Run(32, int64(b.N), func(int64) error {
				_, _, err := store.Submit(context.Background(), queuetest.Job("k"))
				return err
			})
			b.StopTimer()
			if err != nil {
				b.Error(err)
			}
			if len(res.Latencies) > 0 {
				b.ReportMetric(res.Rate(), "jobs/s")
				b.ReportMetric(res.Quantile(0.99), "p99-ms")
			}
		})
	}
}

// joinJobs is how many pending jobs BenchmarkJoin's leader holds.
var joinJobs = flag.Int("join-jobs", 100_000, "pending jobs the leader holds when BenchmarkJoin's replica joins")

// BenchmarkJoin: a new replica (an empty store) joins a cluster whose
// leader holds -join-jobs (100,000) pending jobs, submitted by 32 clients
// through group commit and shaped like the API's (a YARN submission
// context, an idempotency key, one kind of 50 and one user of 10 each).
// An op is one join: from the replica's Run to its applied index equal
// to the leader's (which no longer writes). Two layouts of the log:
// "snapshot" (SnapshotEvery 1000, KeepEntries 200: the leader has taken
// snapshots and truncated the log behind them, so the replica installs
// one and follows what is left) and "defaults" (the daemon's 5000 and
// 1000). It reports the join time, what ZooKeeper holds for that state
// (the data of every znode under the root, read back, and the servers'
// approximate_data_size), the snapshot's compressed size, the log's
// entries and the snapshots installed per join. The fill's rate is
// logged (ha's BenchmarkSubmit32 is the rate's benchmark).
//
//	go test -run '^$' -bench BenchmarkJoin -benchtime 3x -timeout 30m ./ha
func BenchmarkJoin(b *testing.B) {
	e := zktest.Start(b, zktest.Options{})
	for _, lay := range []struct {
		name        string
		every, keep uint64
	}{
		{"snapshot", 1000, 200},
		{"defaults", ha.DefaultSnapshotEvery, ha.DefaultKeepEntries},
	} {
		cfg := testConfig(e, "leader")
		cfg.Root = fmt.Sprintf("/colocd/join-%s-%d", lay.name, time.Now().UnixNano())
		cfg.SessionTimeout = ha.DefaultSessionTimeout
		cfg.SnapshotEvery, cfg.KeepEntries = lay.every, lay.keep
		approx0 := zkApprox(e)
		lead, filled := fillLeader(b, e, cfg, *joinJobs)
		b.Run(fmt.Sprintf("%s/jobs=%d", lay.name, *joinJobs), func(b *testing.B) {
			want, err := lead.store.Applied()
			if err != nil {
				b.Fatal(err)
			}
			size := zkSize(b, e, cfg.Root)
			size.approx -= approx0
			var installed atomic.Int64
			b.ResetTimer()
			for i := range b.N {
				b.StopTimer()
				dir := b.TempDir()
				store, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{CommitsInFlight: ha.StoreInFlight, GroupWait: ha.StoreGroupWait})
				if err != nil {
					b.Fatal(err)
				}
				jc := cfg
				jc.ID = fmt.Sprintf("joiner-%d", i)
				n := &node{id: jc.ID, store: store}
				b.StartTimer()
				startRepWith(b, n, jc, dir, func(ev ha.Event) {
					if ev == ha.EventSnapshotInstalled {
						installed.Add(1)
					}
				})
				b.Cleanup(n.stop)
				for {
					if got, err := store.Applied(); err == nil && got >= want {
						break
					}
					time.Sleep(5 * time.Millisecond) // the measure's resolution: no hook says "caught up"
				}
				b.StopTimer()
				if _, d0, err := lead.store.Digest(); err != nil {
					b.Fatal(err)
				} else if _, d1, err := store.Digest(); err != nil || d1 != d0 {
					b.Fatalf("the joined replica's store differs from the leader's (%v)", err)
				}
				n.stop()
				b.StartTimer()
			}
			b.StopTimer()
			b.ReportMetric(b.Elapsed().Seconds()/float64(b.N), "join-s")
			b.ReportMetric(float64(size.data)/1e6, "zk-data-MB")
			b.ReportMetric(float64(size.approx)/1e6, "zk-approx-MB")
			b.ReportMetric(float64(size.snapshot)/1e6, "snapshot-MB")
			b.ReportMetric(float64(size.entries), "log-entries")
			b.ReportMetric(float64(installed.Load())/float64(b.N), "installs/join")
			b.Logf("%s: %s", lay.name, filled)
			b.Logf("%s: %d jobs in %d log entries (applied index %d); ZooKeeper holds %d znodes, %.1f MB of data under %s (approximate_data_size grew %.1f MB); snapshot %.1f MB at index %d",
				lay.name, *joinJobs, size.entries, want, size.znodes, float64(size.data)/1e6, cfg.Root, float64(size.approx)/1e6, float64(size.snapshot)/1e6, size.snapIndex)
		})
	}
}

// fillLeader starts a leader on cfg and submits jobs to it from 32
// clients; it returns once the leader has taken every snapshot that is
// due and truncated the log behind the last one.
func fillLeader(b *testing.B, e *zktest.Ensemble, cfg ha.Config, jobs int) (*node, string) {
	b.Helper()
	dir := b.TempDir()
	store, err := queue.Open(filepath.Join(dir, "queue.db"), queue.Options{CommitsInFlight: ha.StoreInFlight, GroupWait: ha.StoreGroupWait})
	if err != nil {
		b.Fatal(err)
	}
	n := &node{id: cfg.ID, store: store}
	startRepWith(b, n, cfg, dir, nil)
	b.Cleanup(n.stop)
	eventuallyB(b, n.rep)
	t0 := time.Now()
	var next atomic.Int64
	var wg sync.WaitGroup
	for range 32 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := next.Add(1); k <= int64(jobs); k = next.Add(1) {
				if _, _, err := store.Submit(context.Background(), yarnShapedJob(int(k))); err != nil {
					b.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	if b.Failed() {
		b.FailNow()
	}
	if got, err := store.Submitted(); err != nil || got != uint64(jobs) {
		b.Fatalf("the leader holds %d jobs (%v), want %d", got, err, jobs)
	}
	applied, _ := store.Applied()
	filled := fmt.Sprintf("filled by 32 clients: %d jobs in %d entries in %v (%.0f jobs/s)", jobs, applied, time.Since(t0).Round(time.Millisecond), float64(jobs)/time.Since(t0).Seconds())
	c := zkClient(b, e)
	defer c.Close()
	deadline := time.Now().Add(5 * time.Minute)
	for { // a snapshot runs in the background: wait for the last due, and its truncation
		var m struct{ Index uint64 }
		data, _, err := c.Get(cfg.Root + "/snapshot")
		if err == nil {
			err = json.Unmarshal(data, &m)
		} else if errors.Is(err, zk.ErrNoNode) {
			err = nil
		}
		names, _, lerr := c.Children(cfg.Root + "/log")
		if err == nil && lerr == nil && applied < m.Index+cfg.SnapshotEvery && uint64(len(names)) <= applied-m.Index+cfg.KeepEntries+1 { // kept: from m.Index − KeepEntries on
			return n, filled
		}
		if time.Now().After(deadline) {
			b.Fatalf("no settled snapshot 5 min after the last submission (manifest at %d, %d log entries, applied %d; %v %v)", m.Index, len(names), applied, err, lerr)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// yarnShapedJob is job k as the API stores a YARN job: a submission
// context of about 500 bytes and an idempotency key.
func yarnShapedJob(k int) queue.Job {
	j := queuetest.Job(fmt.Sprintf("kind-%02d", k%50))
	j.User = fmt.Sprintf("user%d", k%10)
	j.IdempotencyKey = fmt.Sprintf("client-%d-%d", k%32, k)
	j.Submit = json.RawMessage(fmt.Sprintf(`{"application-name":"etl-%d","application-type":"MAPREDUCE","queue":"default",`+
		`"am-container-spec":{"commands":{"command":"{{JAVA_HOME}}/bin/java -Xmx1024m -Dlog4j.configuration=container-log4j.properties org.example.etl.Main --date 2024-06-%02d --partition %d 1><LOG_DIR>/stdout 2><LOG_DIR>/stderr"},`+
		`"environment":{"entry":[{"key":"CLASSPATH","value":"{{CLASSPATH}}<CPS>./*<CPS>{{HADOOP_CONF_DIR}}<CPS>{{HADOOP_COMMON_HOME}}/share/hadoop/common/*"}]}},`+
		`"resource":{"memory":2048,"vCores":1},"max-app-attempts":2}`, k, 1+k%28, k%512))
	return j
}

// zkUsage is what ZooKeeper holds for a cluster.
type zkUsage struct {
	znodes, entries     int
	data, approx        int64 // bytes: znode data under the root; the servers' approximate_data_size
	snapshot, snapIndex uint64
}

// zkSize walks root (every znode's data, read back) and asks the servers
// for their approximate_data_size (zkApprox: every root's).
func zkSize(b *testing.B, e *zktest.Ensemble, root string) zkUsage {
	b.Helper()
	c := zkClient(b, e)
	defer c.Close()
	var u zkUsage
	var walk func(p string)
	walk = func(p string) {
		data, st, err := c.Get(p)
		if err != nil {
			b.Fatalf("get %s: %v", p, err)
		}
		u.znodes++
		u.data += int64(len(data))
		if st.NumChildren == 0 {
			return
		}
		kids, _, err := c.Children(p)
		if err != nil {
			b.Fatalf("children of %s: %v", p, err)
		}
		if p == root+"/log" {
			u.entries = len(kids)
		}
		for _, k := range kids {
			walk(p + "/" + k)
		}
	}
	walk(root)
	if data, _, err := c.Get(root + "/snapshot"); err == nil {
		var m struct {
			Index uint64
			Bytes uint64
		}
		if json.Unmarshal(data, &m) == nil {
			u.snapshot, u.snapIndex = m.Bytes, m.Index
		}
	}
	u.approx = zkApprox(e)
	return u
}

// zkApprox is the largest approximate_data_size (mntr) of e's servers:
// the bytes of data and paths of every znode they hold.
func zkApprox(e *zktest.Ensemble) int64 {
	var most int64
	for _, s := range e.Servers() {
		out, err := zktest.FourLetter(s.ClientAddr, "mntr")
		if err != nil {
			continue
		}
		for _, l := range strings.Split(out, "\n") {
			if v, ok := strings.CutPrefix(l, "zk_approximate_data_size"); ok {
				n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
				most = max(most, n)
			}
		}
	}
	return most
}

// zkClient is a plain client of e.
func zkClient(tb testing.TB, e *zktest.Ensemble) *zk.Conn {
	tb.Helper()
	c, _, err := zk.Connect(e.Addrs(), 10*time.Second, zk.WithLogInfo(false), zk.WithMaxBufferSize(8<<20))
	if err != nil {
		tb.Fatal(err)
	}
	return c
}
