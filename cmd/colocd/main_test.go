package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/collector/promtest"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// runCmd runs the colocd command line in-process.
func runCmd(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	var out, errOut bytes.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = run(ctx, args, &out, &errOut)
	return code, out.String(), errOut.String()
}

// isolate clears the COLOCD_* config variables of the developer's shell.
func isolate(t *testing.T) {
	// The default config file of this machine, if any, is not read.
	old := defaultConfigPath
	defaultConfigPath = filepath.Join(t.TempDir(), "no-default.yaml")
	t.Cleanup(func() { defaultConfigPath = old })
	for _, kv := range os.Environ() {
		if k, _, _ := strings.Cut(kv, "="); strings.HasPrefix(k, "COLOCD_") && k != "COLOCD_INFLUXD" && k != "COLOCD_REQUIRE_TOOLS" {
			t.Setenv(k, "")
			os.Unsetenv(k)
		}
	}
}

func TestExitCodes(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t)
	rm.InjectFault(yarnclient.PathClusterInfo, yarntest.Fault{Status: http.StatusForbidden})
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("learning:\n  stepsize: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args    []string
		code    int
		message string // in stderr
	}{
		{[]string{"version"}, exitOK, ""},
		{[]string{}, exitOK, ""},
		{[]string{"bogus"}, exitUsage, `unknown command "bogus"`},
		{[]string{"serve", "--bogus"}, exitUsage, "unknown flag: --bogus"},
		{[]string{"serve", "extra"}, exitUsage, "unknown command"},
		{[]string{"serve", "--config", "/nonexistent/colocd.yaml"}, exitUsage, "does not exist"},
		{[]string{"serve", "--config", bad}, exitUsage, "learning.stepsize"},
		{[]string{"serve", "--listen", "nope"}, exitUsage, "config key listen"},
		{[]string{"yarn", "app"}, exitUsage, "takes 1 argument"},
		{[]string{"yarn", "info"}, exitUsage, "yarn.rm_urls"},
		{[]string{"yarn", "info", "--rm", rm.URL()}, exitRuntime, "403"},
		{[]string{"metrics"}, exitUsage, "--from is required"},
		{[]string{"metrics", "--from", "2026-01-01T00:01:00Z", "--to", "2026-01-01T00:00:00Z"}, exitUsage, "must be after"},
		{[]string{"metrics", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:01:00Z"}, exitUsage, "influx.url"},
		{[]string{"metrics", "--containers", "--source", "prometheus", "--from", "2026-01-01T00:00:00Z", "--to", "2026-01-01T00:01:00Z"}, exitUsage, "influx.url"},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != tc.code || !strings.Contains(stderr, tc.message) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, tc.code, tc.message)
			}
		})
	}
}

func TestVersion(t *testing.T) {
	code, out, _ := runCmd(t, "version")
	if code != 0 || !strings.HasPrefix(out, "colocd "+version+"\ncommit ") || !strings.Contains(out, "go go1.") {
		t.Errorf("version: %d %q", code, out)
	}
	// The commit stamped with -ldflags shows when the toolchain stamped none
	// (go test never does).
	old := commit
	commit = "0123456789abcdef"
	t.Cleanup(func() { commit = old })
	if _, out, _ := runCmd(t, "version"); !strings.Contains(out, "\ncommit 0123456789abcdef") {
		t.Errorf("version with a stamped commit: %q", out)
	}
}

func TestYarnCommands(t *testing.T) {
	isolate(t)
	rm := yarntest.NewFakeRM(t, yarntest.AutoStart())
	rm.AddNode(yarnclient.Node{ID: "worker1:8041"})
	rm.AddNode(yarnclient.Node{ID: "worker2:8041"})
	app := rm.AddApp(yarnclient.App{Name: "wordcount", User: "ana", Queue: "default", State: "RUNNING",
		ApplicationTags: "colocd-job-01abc,colocd-kind-wordcount"})
	// The config names an RM that does not exist; --rm overrides it.
	cfg := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(cfg, []byte("yarn:\n  rm_urls: [\"http://127.0.0.1:1\"]\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	yarn := func(args ...string) string {
		t.Helper()
		code, out, errOut := runCmd(t, append(append([]string{"yarn"}, args...), "--config", cfg, "--rm", rm.URL())...)
		if code != 0 {
			t.Fatalf("yarn %v: exit %d: %s", args, code, errOut)
		}
		return out
	}
	var info map[string]map[string]any
	if err := json.Unmarshal([]byte(yarn("info", "--json")), &info); err != nil {
		t.Fatal(err)
	}
	if _, ok := info["clusterInfo"]["haState"]; !ok {
		t.Errorf("info --json lacks clusterInfo.haState: %v", info)
	}
	if got := info["clusterMetrics"]["activeNodes"]; got != float64(2) {
		t.Errorf("clusterMetrics.activeNodes = %v, want 2", got)
	}
	if got, _ := info["config"]["yarn.rm_urls"].(map[string]any); got["source"] != "flag --rm" {
		t.Errorf("config.yarn.rm_urls = %v, want the source flag --rm", info["config"]["yarn.rm_urls"])
	}
	var nodes []map[string]any
	if err := json.Unmarshal([]byte(yarn("nodes", "--json")), &nodes); err != nil {
		t.Fatal(err)
	}
	var hosts []string
	for _, n := range nodes {
		hosts = append(hosts, n["nodeHostName"].(string))
	}
	if !slices.Equal(hosts, []string{"worker1", "worker2"}) {
		t.Errorf("nodes --json hosts %v", hosts)
	}
	if out := yarn("nodes"); !strings.Contains(out, "HOST") || !strings.Contains(out, "worker2") {
		t.Errorf("nodes table:\n%s", out)
	}
	var apps []map[string]any
	if err := json.Unmarshal([]byte(yarn("apps", "--json", "--tag", "colocd-kind-wordcount")), &apps); err != nil {
		t.Fatal(err)
	}
	if len(apps) != 1 || apps[0]["id"] != app || apps[0]["applicationTags"] == nil {
		t.Errorf("apps --json: %v", apps)
	}
	if out := yarn("apps"); !strings.Contains(out, app) || !strings.Contains(out, "wordcount") {
		t.Errorf("apps table:\n%s", out)
	}
	var one map[string]map[string]any
	if err := json.Unmarshal([]byte(yarn("app", app, "--json")), &one); err != nil {
		t.Fatal(err)
	}
	if one["app"]["id"] != app || one["app"]["user"] != "ana" {
		t.Errorf("app --json: %v", one)
	}
	if out := yarn("app", app); !strings.Contains(out, "wordcount") || !strings.Contains(out, "colocd-kind-wordcount") {
		t.Errorf("app table:\n%s", out)
	}
}

// TestMetricsCommand reads Telegraf-shaped points from a real InfluxDB 1.8.
func TestMetricsCommand(t *testing.T) {
	isolate(t)
	srv := influxtest.Start(t)
	t0 := time.Now().Add(-3 * time.Minute).Truncate(10 * time.Second)
	var lines strings.Builder
	for i := 0; i <= 18; i++ { // every 10 s for 3 minutes
		ts := t0.Add(time.Duration(i) * 10 * time.Second).UnixNano()
		for h, k := range map[string]int64{"w1": 1, "w2": 3} {
			fmt.Fprintf(&lines, "cpu,cpu=cpu-total,host=%s usage_idle=%d,usage_iowait=%d %d\n", h, 40-5*k, 5*k, ts)
			fmt.Fprintf(&lines, "diskio,host=%s,name=sda read_bytes=%di,write_bytes=%di %d\n", h, int64(i)*k*100e6, int64(i)*k*20e6, ts)
			fmt.Fprintf(&lines, "net,host=%s,interface=eth0 bytes_recv=%di,bytes_sent=%di %d\n", h, int64(i)*k*50e6, int64(i)*k*10e6, ts)
		}
	}
	srv.Write(t, lines.String())
	from, to := t0.Add(30*time.Second), t0.Add(150*time.Second)
	for k, v := range map[string]string{"DISK_READ": "500", "DISK_WRITE": "500", "NET_RECV": "125", "NET_SENT": "125"} {
		t.Setenv("COLOCD_GOODNESS_"+k+"_MBPS", v)
	}
	args := []string{"metrics", "--from", from.UTC().Format(time.RFC3339), "--to", to.UTC().Format(time.RFC3339),
		"--hosts", "w1,w2,ghost", "--influx-url", srv.URL(), "--influx-bucket", srv.Bucket(), "--influx-token", srv.Token()}
	code, out, errOut := runCmd(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("metrics: exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, "ghost") {
		t.Errorf("the host without data is not reported on stderr: %q", errOut)
	}
	var got map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	// The expected values: the collector's own answer, scored with Eq. 1.
	col, err := collector.New(collector.Config{URL: srv.URL(), Bucket: srv.Bucket(), Token: srv.Token(),
		Timeout: 10 * time.Second, StaleAfter: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	res, err := col.Usage(context.Background(), []string{"w1", "w2"}, from, to)
	if err != nil {
		t.Fatal(err)
	}
	lim := goodness.Limits{DiskRead: 500e6, DiskWrite: 500e6, NetRecv: 125e6, NetSent: 125e6}
	want := map[string]map[string]map[string]float64{"hosts": {}}
	for h, u := range res.Usage {
		want["hosts"][h] = map[string]float64{"cpu": u.CPU, "iowait": u.IOWait, "disk_read_bps": u.DiskRead, "disk_write_bps": u.DiskWrite,
			"net_recv_bps": u.NetRecv, "net_sent_bps": u.NetSent, "goodness": goodness.Score(u, lim)}
	}
	if len(want["hosts"]) != 2 {
		t.Fatalf("collector found %v", res)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics --json (-want +got):\n%s", diff)
	}
	if w1 := got["hosts"]["w1"]; w1["cpu"] < 0.5 || w1["disk_read_bps"] < 5e6 {
		t.Errorf("w1 usage implausible: %v", w1)
	}
	code, out, errOut = runCmd(t, args...)
	if code != 0 || !strings.Contains(out, "GOODNESS") || !strings.Contains(out, "w2") {
		t.Errorf("metrics table: exit %d\n%s%s", code, out, errOut)
	}

	// InfluxQL reads the same numbers.
	code, out, errOut = runCmd(t, append(args, "--json", "--influx-language", "influxql")...)
	if code != 0 {
		t.Fatalf("metrics --influx-language influxql: exit %d: %s", code, errOut)
	}
	var gotQL map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &gotQL); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if diff := cmp.Diff(want, gotQL); diff != "" {
		t.Errorf("metrics --influx-language influxql (-want +got):\n%s", diff)
	}

	// A node group gives w2 its own disk-read and receive maxima (the rest
	// stay the reference's): its goodness is scored with them, w1's as before.
	groups := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(groups, []byte("goodness:\n  node_groups:\n    - hosts: \"w[2-9]\"\n      disk_read_mbps: 1000\n      net_recv_mbps: 250\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runCmd(t, append(args, "--json", "--config", groups)...)
	var gotGroups map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &gotGroups); err != nil || code != 0 {
		t.Fatalf("metrics with node groups: exit %d, %v: %s", code, err, errOut)
	}
	w2lim := goodness.Limits{DiskRead: 1000e6, DiskWrite: 500e6, NetRecv: 250e6, NetSent: 125e6}
	w2 := goodness.Score(res.Usage["w2"], w2lim)
	if w2 == want["hosts"]["w2"]["goodness"] {
		t.Fatalf("the node group's maxima do not change w2's goodness (%v): the test tells nothing", w2)
	}
	if g := gotGroups["hosts"]["w2"]["goodness"]; g != w2 {
		t.Errorf("w2's goodness with its node group = %v, want %v (scored with %+v)", g, w2, w2lim)
	}
	if g := gotGroups["hosts"]["w1"]["goodness"]; g != want["hosts"]["w1"]["goodness"] {
		t.Errorf("w1's goodness = %v, want %v: no group matches it", g, want["hosts"]["w1"]["goodness"])
	}

	// Without --hosts and without a ResourceManager: every host with data.
	noHosts := slices.Clone(args)
	i := slices.Index(noHosts, "--hosts")
	noHosts = slices.Delete(noHosts, i, i+2)
	code, out, errOut = runCmd(t, append(noHosts, "--json")...)
	if code != 0 {
		t.Fatalf("metrics without --hosts: exit %d: %s", code, errOut)
	}
	var gotAll map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &gotAll); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	if diff := cmp.Diff(want, gotAll); diff != "" {
		t.Errorf("metrics without --hosts (-want +got):\n%s", diff)
	}
}

// TestMetricsCommandPrometheus reads node_exporter-shaped counters from a
// real Prometheus (backfilled with promtool): --source prometheus with
// --prometheus-url, every host with data when neither --hosts nor a
// ResourceManager names them.
func TestMetricsCommandPrometheus(t *testing.T) {
	isolate(t)
	t0 := time.Date(2026, 3, 1, 10, 0, 0, 0, time.UTC)
	var s promtest.Samples
	for i := 0; i <= 12; i++ { // every 10 s for 2 minutes, off the window's edges
		at := t0.Add(time.Duration(i)*10*time.Second + 5*time.Second)
		sec := float64(i*10 + 5)
		for h, k := range map[string]float64{"w1": 1, "w2": 3} {
			lb := func(kv ...string) map[string]string {
				m := map[string]string{"instance": h + ":9100", "job": "node"}
				for j := 0; j+1 < len(kv); j += 2 {
					m[kv[j]] = kv[j+1]
				}
				return m
			}
			// One CPU: user 0.1·k, iowait 0.05·k, idle the rest of a second.
			s.Add("node_cpu_seconds_total", lb("cpu", "0", "mode", "user"), at, 1e4+0.1*k*sec)
			s.Add("node_cpu_seconds_total", lb("cpu", "0", "mode", "iowait"), at, 1e4+0.05*k*sec)
			s.Add("node_cpu_seconds_total", lb("cpu", "0", "mode", "idle"), at, 1e4+(1-0.15*k)*sec)
			s.Add("node_disk_read_bytes_total", lb("device", "sda"), at, 1e12+k*10e6*sec)
			s.Add("node_disk_written_bytes_total", lb("device", "sda"), at, 1e12+k*2e6*sec)
			s.Add("node_network_receive_bytes_total", lb("device", "eth0"), at, 1e12+k*5e6*sec)
			s.Add("node_network_transmit_bytes_total", lb("device", "eth0"), at, 1e12+k*1e6*sec)
		}
	}
	srv := promtest.Start(t, promtest.WithSamples(&s))
	for k, v := range map[string]string{"DISK_READ": "500", "DISK_WRITE": "500", "NET_RECV": "125", "NET_SENT": "125"} {
		t.Setenv("COLOCD_GOODNESS_"+k+"_MBPS", v)
	}
	from, to := t0.Add(30*time.Second), t0.Add(90*time.Second)
	args := []string{"metrics", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339),
		"--source", "prometheus", "--prometheus-url", srv.URL(), "--json"}
	code, out, errOut := runCmd(t, args...)
	if code != 0 {
		t.Fatalf("metrics: exit %d: %s", code, errOut)
	}
	var got map[string]map[string]map[string]float64
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	lim := goodness.Limits{DiskRead: 500e6, DiskWrite: 500e6, NetRecv: 125e6, NetSent: 125e6}
	want := map[string]map[string]map[string]float64{"hosts": {}}
	for h, k := range map[string]float64{"w1": 1, "w2": 3} {
		u := goodness.Usage{CPU: 0.1 * k, IOWait: 0.05 * k, DiskRead: k * 10e6, DiskWrite: k * 2e6, NetRecv: k * 5e6, NetSent: k * 1e6}
		want["hosts"][h] = map[string]float64{"cpu": u.CPU, "iowait": u.IOWait, "disk_read_bps": u.DiskRead, "disk_write_bps": u.DiskWrite,
			"net_recv_bps": u.NetRecv, "net_sent_bps": u.NetSent, "goodness": goodness.Score(u, lim)}
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
		t.Errorf("metrics --source prometheus (-want +got):\n%s", diff)
	}
	// A Prometheus that is not there: a clear error naming it, exit 1.
	code, _, errOut = runCmd(t, "metrics", "--from", from.Format(time.RFC3339), "--to", to.Format(time.RFC3339),
		"--source", "prometheus", "--prometheus-url", "http://127.0.0.1:1", "--hosts", "w1")
	if code == 0 || !strings.Contains(errOut, "unreachable") {
		t.Errorf("metrics against no Prometheus: exit %d, stderr %q; want a failure saying unreachable", code, errOut)
	}
}

// TestMetricsContainers: `colocd metrics --containers` prints what
// learning.container_usage reads from a real InfluxDB 1.8 — the
// collector's per-application readings of the plugin's cgroup counters —
// as JSON and as a table, filtered by --hosts; a window without counters
// says so on stderr.
func TestMetricsContainers(t *testing.T) {
	isolate(t)
	srv := influxtest.Start(t)
	t0 := time.Now().Add(-3 * time.Minute).Truncate(10 * time.Second)
	var lines strings.Builder
	for i := 0; i <= 18; i++ {
		ts := t0.Add(time.Duration(i) * 10 * time.Second).UnixNano()
		for h, k := range map[string]int64{"w1": 1, "w2": 3} {
			fmt.Fprintf(&lines, "yarn_containers,host=%s,application_id=application_1_000%d,kind=sort containers=2i,cpu_usage_us=%di,io_read_bytes=%di,io_write_bytes=%di,host_cpus=4i %d\n",
				h, k, int64(i)*k*5e6, int64(i)*k*1e6, int64(i)*k*2e5, ts)
		}
	}
	srv.Write(t, lines.String())
	from, to := t0.Add(30*time.Second), t0.Add(150*time.Second)
	args := []string{"metrics", "--containers", "--from", from.UTC().Format(time.RFC3339), "--to", to.UTC().Format(time.RFC3339),
		"--influx-url", srv.URL(), "--influx-bucket", srv.Bucket(), "--influx-token", srv.Token()}
	code, out, errOut := runCmd(t, append(args, "--json")...)
	if code != 0 {
		t.Fatalf("metrics --containers: exit %d: %s", code, errOut)
	}
	var got map[string][]map[string]any
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatalf("%v in %s", err, out)
	}
	col, err := collector.New(collector.Config{URL: srv.URL(), Bucket: srv.Bucket(), Token: srv.Token(), Timeout: 10 * time.Second, StaleAfter: 30 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer col.Close()
	rows, err := col.ContainerUsage(context.Background(), from, to)
	if err != nil || len(rows) != 2 {
		t.Fatalf("collector: %v, %v; want two readings", rows, err)
	}
	want := map[string][]map[string]any{"containers": {}}
	for _, r := range rows {
		want["containers"] = append(want["containers"], map[string]any{"host": r.Host, "application_id": r.AppID,
			"cpu": r.CPU, "disk_read_bps": r.DiskRead, "disk_write_bps": r.DiskWrite})
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("metrics --containers --json (-want +got):\n%s", diff)
	}
	// w1: 5e6 µs per 10 s over 4 CPUs = 12.5 %.
	if c := got["containers"][0]["cpu"].(float64); got["containers"][0]["host"] != "w1" || math.Abs(c-0.125) > 1e-9 {
		t.Errorf("w1's application uses %v of its host, want 0.125", c)
	}
	code, out, errOut = runCmd(t, append(args, "--hosts", "w2")...)
	if code != 0 || !strings.Contains(out, "APPLICATION") || !strings.Contains(out, "application_1_0003") || strings.Contains(out, "w1") {
		t.Errorf("metrics --containers --hosts w2: exit %d\n%s%s", code, out, errOut)
	}
	args[3], args[5] = t0.Add(-time.Hour).UTC().Format(time.RFC3339), t0.Add(-50*time.Minute).UTC().Format(time.RFC3339)
	code, _, errOut = runCmd(t, args...)
	if code != 0 || !strings.Contains(errOut, "cgroup_dir") {
		t.Errorf("a window without counters: exit %d, stderr %q; want 0 and a hint at cgroup_dir", code, errOut)
	}
}
