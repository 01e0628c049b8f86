package integration

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
)

// pluginBin is colocd-telegraf-yarn, built once by TestMain.
var pluginBin string

func TestMain(m *testing.M) {
	os.Exit(run(m))
}

func run(m *testing.M) int {
	dir, err := os.MkdirTemp("", "colocd-telegraf-yarn-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	pluginBin = filepath.Join(dir, "colocd-telegraf-yarn")
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-o", pluginBin, "./cmd/colocd-telegraf-yarn")
	build.Dir = ".." // the module root
	if out, err := build.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "building colocd-telegraf-yarn: %v\n%s", err, out)
		return 1
	}
	return m.Run()
}

const host = "colocd-e2e"

// fakeYARN is a NodeManager with three applications on it, two of them
// submitted by colocd, the third another tenant's Spark application.
func fakeYARN(t testing.TB) *nmtest.Server {
	fake := nmtest.New(t)
	fake.SetContainers(
		nmtest.Running("container_1700000000000_0001_01_000001", 2048, 1),
		nmtest.Running("container_1700000000000_0001_01_000002", 2048, 1),
		nmtest.Running("container_1700000000000_0002_01_000001", 1024, 2),
		nmtest.Running("container_1700000000000_0003_01_000001", 512, 1),
	)
	fake.SetApp("application_1700000000000_0001", "colocd-job-01j0", "colocd-kind-terasort")
	fake.SetApp("application_1700000000000_0002", "colocd-kind-pagerank")
	fake.SetAppInfo("application_1700000000000_0003", nmtest.App{Name: "nightly etl", Queue: "etl", Type: "SPARK", Tags: []string{"not-colocd"}})
	return fake
}

// pluginConfig writes the plugin's config, reading fake, with the extra
// lines (settings of [[inputs.yarn_containers]]) at its end.
func pluginConfig(t testing.TB, fake *nmtest.Server, extra ...string) string {
	path := filepath.Join(t.TempDir(), "colocd-telegraf-yarn.conf")
	conf := fmt.Sprintf("[[inputs.yarn_containers]]\n  node_manager_url = %q\n  resource_manager_urls = [%q]\n  timeout = \"2s\"\n",
		fake.URL(), fake.URL())
	for _, line := range extra {
		conf += "  " + line + "\n"
	}
	if err := os.WriteFile(path, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestPluginBinary runs the built program the way execd does: a newline on
// stdin asks for a gather, line protocol comes out on stdout.
func TestPluginBinary(t *testing.T) {
	fake := fakeYARN(t)
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, pluginBin, "-config", pluginConfig(t, fake))
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := io.WriteString(stdin, "\n"); err != nil {
		t.Fatal(err)
	}
	var lines []string
	sc := bufio.NewScanner(stdout)
	for len(lines) < 3 && sc.Scan() {
		lines = append(lines, normalize(sc.Text()))
	}
	_ = stdin.Close() // end of stdin stops the shim
	if err := cmd.Wait(); err != nil {
		t.Errorf("plugin exited with %v; stderr:\n%s", err, stderr.String())
	}
	want := []string{
		"yarn_containers,application_id=application_1700000000000_0001,application_type=MAPREDUCE,kind=terasort,queue=default containers=2i,memory_mb=4096i,vcores=2i",
		"yarn_containers,application_id=application_1700000000000_0002,application_type=MAPREDUCE,kind=pagerank,queue=default containers=1i,memory_mb=1024i,vcores=2i",
		"yarn_containers,application_id=application_1700000000000_0003,application_type=SPARK,queue=etl containers=1i,memory_mb=512i,vcores=1i",
	}
	if diff := cmp.Diff(want, lines); diff != "" {
		t.Errorf("plugin output (-want +got):\n%s\nstderr:\n%s", diff, stderr.String())
	}

	t.Run("bad config", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "bad.conf")
		if err := os.WriteFile(path, []byte("[[inputs.yarn_containers]]\n  node_manager_url = \"ftp://x\"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		out, err := exec.CommandContext(ctx, pluginBin, "-config", path).CombinedOutput()
		var exit *exec.ExitError
		if !errors.As(err, &exit) || !strings.Contains(string(out), "node_manager_url") {
			t.Errorf("bad config: err %v, output %q; want a non-zero exit naming node_manager_url", err, out)
		}
	})
}

// normalize drops a line's timestamp (the gather's wall-clock time) and
// sorts its fields, whose order the serializer does not fix.
func normalize(line string) string {
	parts := strings.Split(line, " ") // no spaces in these names or values
	if len(parts) != 3 {
		return line
	}
	fields := strings.Split(parts[1], ",")
	slices.Sort(fields)
	return parts[0] + " " + strings.Join(fields, ",")
}

// TestTelegrafToInfluxDB runs the shipped configs/telegraf.conf (interval
// and addresses changed for the test) with the real Telegraf into the real
// InfluxDB, and reads it back with the collector.
func TestTelegrafToInfluxDB(t *testing.T) {
	c := telegrafToInfluxDB(t, fakeYARN(t))

	// Poll until Telegraf's samples and the plugin's points are in, with a
	// bounded deadline; each round asks about the last few seconds.
	ctx := t.Context()
	deadline := time.Now().Add(90 * time.Second)
	var (
		usage   collector.Result
		kinds   map[string][]string
		lastErr error
	)
	wantKinds := map[string][]string{host: {"pagerank", "terasort"}}
	for {
		now := time.Now()
		usage, lastErr = c.Usage(ctx, []string{host}, now.Add(-6*time.Second), now)
		if lastErr == nil {
			kinds, lastErr = c.Colocations(ctx, now.Add(-30*time.Second), now)
		}
		_, haveUsage := usage.Usage[host]
		if lastErr == nil && haveUsage && cmp.Equal(wantKinds, kinds) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no usage and colocations for %s after 90 s: usage %+v, kinds %v, last error %v",
				host, usage, kinds, lastErr)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}

	u := usage.Usage[host]
	t.Logf("usage of this machine: %+v", u)
	if err := u.Validate(); err != nil {
		t.Errorf("usage %+v: %v", u, err)
	}
	// Telegraf, InfluxDB and this test all run here: the CPU is not idle.
	if !(u.CPU > 0 && u.CPU <= 1) || u.IOWait < 0 || u.IOWait > 1 {
		t.Errorf("CPU %v, IOWait %v: want CPU in (0, 1] and IOWait in [0, 1]", u.CPU, u.IOWait)
	}
	for name, rate := range map[string]float64{"disk read": u.DiskRead, "disk write": u.DiskWrite,
		"net recv": u.NetRecv, "net sent": u.NetSent} {
		// A 2-core test machine cannot move 100 GB/s.
		if rate < 0 || rate > 100e9 {
			t.Errorf("%s rate %v B/s is not plausible", name, rate)
		}
	}
}

// telegrafToInfluxDB starts a real InfluxDB and the real Telegraf with the
// shipped configs/telegraf.conf (every second, host name host, the plugin
// built by TestMain asking fake), and returns a collector reading that
// InfluxDB; all stop when the test ends.
func telegrafToInfluxDB(t *testing.T, fake *nmtest.Server) *collector.Collector {
	t.Helper()
	c, _ := runTelegraf(t, pluginConfig(t, fake))
	return c
}

// runTelegraf is telegrafToInfluxDB with the plugin's config file
// pluginConf; it returns the InfluxDB too.
func runTelegraf(t *testing.T, pluginConf string) (*collector.Collector, *influxtest.Server) {
	t.Helper()
	telegrafBin := influxtest.Tool(t, "telegraf")
	influx := influxtest.Start(t)
	dir := t.TempDir()

	shipped, err := os.ReadFile(filepath.Join("..", "..", "..", "configs", "telegraf.conf"))
	if err != nil {
		t.Fatal(err)
	}
	conf := string(shipped)
	for _, r := range []struct{ old, new string }{
		{"\n  interval = \"10s\"", "\n  interval = \"1s\""},
		{"\n  flush_interval = \"10s\"", "\n  flush_interval = \"1s\""},
		{`hostname = ""`, fmt.Sprintf("hostname = %q", host)},
		{`urls = ["http://influxdb.example.com:8086"]`, fmt.Sprintf("urls = [%q]", influx.URL())},
		{`command = ["/usr/local/bin/colocd-telegraf-yarn", "-config", "/etc/telegraf/colocd-telegraf-yarn.conf"]`,
			fmt.Sprintf("command = [%q, \"-config\", %q]", pluginBin, pluginConf)},
	} {
		if n := strings.Count(conf, r.old); n != 1 {
			t.Fatalf("configs/telegraf.conf has %d of %s, want 1: update this test with the config", n, r.old)
		}
		conf = strings.Replace(conf, r.old, r.new, 1)
	}
	confPath := filepath.Join(dir, "telegraf.conf")
	if err := os.WriteFile(confPath, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	startTelegraf(t, telegrafBin, confPath, filepath.Join(dir, "telegraf.log"))

	cfg := collector.DefaultConfig()
	cfg.URL, cfg.Bucket, cfg.Token = influx.URL(), influx.Bucket(), influx.Token()
	cfg.StaleAfter = 5 * time.Second // Telegraf runs every second here
	c, err := collector.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return c, influx
}

// startTelegraf runs Telegraf until the test ends.
func startTelegraf(t testing.TB, bin, conf, logPath string) {
	t.Helper()
	logf, err := os.Create(logPath)
	if err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "--config", conf)
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.Env = append(os.Environ(), "INFLUX_TOKEN=", "INFLUX_ORG=")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	_ = logf.Close()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			select {
			case <-exited:
			case <-time.After(5 * time.Second):
				t.Errorf("telegraf (pid %d) did not exit after SIGKILL", cmd.Process.Pid)
			}
			t.Errorf("telegraf ignored SIGTERM for 15 s")
		}
		if t.Failed() {
			b, _ := os.ReadFile(logPath)
			if len(b) > 8<<10 {
				b = b[len(b)-8<<10:]
			}
			t.Logf("telegraf log tail:\n%s", b)
		}
	})
}
