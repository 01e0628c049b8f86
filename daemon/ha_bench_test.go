package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/colocd/colocd/ha"
	"github.com/colocd/colocd/internal/testing/load"
	"github.com/colocd/colocd/yarnclient"
)

// BenchmarkHTTPSubmit32: 32 HTTP clients POST /v1/jobs (a YARN job with
// an idempotency key each), each waiting for its 201, against the real
// daemon: "embedded", one `colocd serve` on its own disk, then
// "replicated", the leader of three replicas on a three-server ZooKeeper
// (the default 10 s session, ZooKeeper's tick 1 s), in the same run, one
// after the other (the first is stopped before the second starts). Both
// use the yarn backend against the same kind of fake RM, whose four nodes
// fill up with the first jobs admitted: the rest wait, as a queue
// building up does. An op is one acknowledged submission; it reports
// submits/s, the acknowledgement's p50 and p99, and the CPU time per
// submission of the daemon that serves (embedded, or the leader), of the
// followers together, and of the ZooKeeper servers together (from
// /proc/<pid>/stat): where a 2-core machine's time goes.
//
//	go test -run '^$' -bench BenchmarkHTTPSubmit32 -benchtime 20000x ./daemon
func BenchmarkHTTPSubmit32(b *testing.B) {
	b.Logf("machine: %s", machine())
	for _, mode := range []string{"embedded", "replicated"} {
		var base string
		var stop func()
		pids := map[string][]int{}
		switch mode {
		case "embedded":
			rm := newTestRM(b)
			for _, id := range []string{"worker3:8041", "worker4:8041"} { // startHA's nodes
				rm.AddNode(yarnclient.Node{ID: id, AvailMemoryMB: 65536, AvailableVirtualCores: 64})
			}
			r := &haReplica{id: "solo", addr: freeAddr(b), dir: b.TempDir()}
			r.cfg = haConfigFile(b, r, rm.URL(), haOptions{})
			p := startServe(b, "..", r.cfg, r.addr, yarnTestToken)
			p.waitReady(60 * time.Second)
			base, stop = p.base, func() { p.stop(30 * time.Second) }
			pids["daemon"] = []int{p.cmd.Process.Pid}
		case "replicated":
			c, _ := startHA(b, haOptions{replicas: 3, session: ha.DefaultSessionTimeout, zkTick: time.Second})
			lead := c.leader(90 * time.Second)
			c.allReady(60 * time.Second)
			base, stop = lead.p.base, func() {
				for _, r := range c.alive() {
					r.p.stop(30 * time.Second)
				}
			}
			for _, r := range c.reps {
				k := "followers"
				if r == lead {
					k = "daemon"
				}
				pids[k] = append(pids[k], r.p.cmd.Process.Pid)
			}
			for _, z := range c.zk.Servers() {
				pids["zk"] = append(pids["zk"], z.Pid())
			}
		}
		b.Run(mode, func(b *testing.B) { submit32(b, base, pids) })
		stop()
	}
}

var benchKeys atomic.Int64

// submit32 submits b.N jobs to base from 32 clients and reports the rate,
// the latency of an acknowledgement and the CPU time per submission of
// each group of pids.
func submit32(b *testing.B, base string, pids map[string][]int) {
	body, _ := json.Marshal(yarnJob)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: 30 * time.Second}
	defer client.CloseIdleConnections()
	post := func(key string) error {
		req, _ := http.NewRequest(http.MethodPost, base+"/v1/jobs", bytes.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+yarnTestToken)
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("submit: %d %.200s", resp.StatusCode, b)
		}
		return nil
	}
	cpu0 := cpuTimes(pids)
	b.ResetTimer()
	res, err := load.Run(32, int64(b.N), func(int64) error { return post(fmt.Sprintf("bench-%d", benchKeys.Add(1))) })
	b.StopTimer()
	if err != nil {
		b.Error(err)
	}
	cpu1 := cpuTimes(pids)
	if len(res.Latencies) == 0 {
		return
	}
	b.ReportMetric(res.Rate(), "submits/s")
	b.ReportMetric(res.Quantile(0.5), "p50-ms")
	b.ReportMetric(res.Quantile(0.99), "p99-ms")
	for _, k := range []string{"daemon", "followers", "zk"} {
		if _, ok := pids[k]; ok {
			b.ReportMetric(float64((cpu1[k]-cpu0[k]).Microseconds())/float64(len(res.Latencies)), k+"-cpu-µs/op")
		}
	}
}

// cpuTimes sums the user and system CPU time of each group of processes
// (/proc/<pid>/stat; Linux's USER_HZ is 100).
func cpuTimes(pids map[string][]int) map[string]time.Duration {
	out := map[string]time.Duration{}
	for k, ps := range pids {
		for _, pid := range ps {
			raw, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
			if err != nil {
				continue
			}
			_, rest, _ := strings.Cut(string(raw), ") ") // the command may hold spaces
			f := strings.Fields(rest)
			if len(f) < 13 {
				continue
			}
			utime, _ := strconv.ParseInt(f[11], 10, 64)
			stime, _ := strconv.ParseInt(f[12], 10, 64)
			out[k] += time.Duration(utime+stime) * 10 * time.Millisecond
		}
	}
	return out
}
