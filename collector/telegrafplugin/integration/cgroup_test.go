package integration

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
)

// TestTelegrafCgroupToInfluxDB runs the plugin under the real Telegraf
// (the shipped configs/telegraf.conf, as TestTelegrafToInfluxDB) with
// cgroup_dir at a fake cgroup v2 tree, and reads its cgroup fields back
// from the real InfluxDB with InfluxQL: each application's sums over its
// containers, integers, with this host's online CPUs; none for an
// application without a cgroup. Then one container goes (off the
// NodeManager's list and its directory removed) while another runs on:
// its application's counters keep its last values, in the long-running
// plugin process Telegraf's execd keeps.
func TestTelegrafCgroupToInfluxDB(t *testing.T) {
	const (
		c1 = "container_1700000000000_0001_01_000001"
		c2 = "container_1700000000000_0001_01_000002"
		c3 = "container_1700000000000_0002_01_000001"
		c4 = "container_1700000000000_0003_01_000001" // no cgroup
	)
	root := filepath.Join(t.TempDir(), "hadoop-yarn")
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(c1, 2048, 1), nmtest.Running(c2, 2048, 1), nmtest.Running(c3, 1024, 2),
		nmtest.Running(c4, 512, 1))
	fake.SetApp("application_1700000000000_0001", "colocd-kind-terasort")
	fake.SetApp("application_1700000000000_0002", "colocd-kind-pagerank")
	writeCgroup(t, root, c1, "usage_usec 1000000\nuser_usec 800000\nsystem_usec 200000\n",
		"8:0 rbytes=4096 wbytes=1048576 rios=1 wios=256 dbytes=0 dios=0\n")
	writeCgroup(t, root, c2, "usage_usec 500000\n", "8:0 rbytes=0 wbytes=8192 rios=0 wios=2 dbytes=0 dios=0\n")
	writeCgroup(t, root, c3, "usage_usec 42\n",
		"8:0 rbytes=500 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n259:0 rbytes=12 wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n")

	_, influx := runTelegraf(t, pluginConfig(t, fake, fmt.Sprintf("cgroup_dir = %q", root)))
	cpus := onlineCPUs(t)
	want := map[string]cgroupRow{
		"application_1700000000000_0001": {CPUUS: 1_500_000, Read: 4096, Write: 1048576 + 8192, HostCPUs: cpus, Containers: 2},
		"application_1700000000000_0002": {CPUUS: 42, Read: 512, Write: 0, HostCPUs: cpus, Containers: 1},
		"application_1700000000000_0003": {Containers: 1},
	}
	got := waitCgroupRows(t, influx, func(rows map[string]cgroupRow) bool { return len(rows) == len(want) })
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup fields in InfluxDB (-want +got):\n%s", diff)
	}
	types := fieldTypes(t, influx)
	for _, f := range []string{"cpu_usage_us", "io_read_bytes", "io_write_bytes", "host_cpus"} {
		if types[f] != "integer" {
			t.Errorf("field %s has type %q in InfluxDB, want integer (all: %v)", f, types[f], types)
		}
	}

	// c2 finishes: c1's counters go on, c2's last ones stay in the sum.
	writeCgroup(t, root, c1, "usage_usec 2000000\n", "8:0 rbytes=5000 wbytes=2097152 rios=2 wios=512 dbytes=0 dios=0\n")
	fake.SetContainers(nmtest.Running(c1, 2048, 1), nmtest.Running(c3, 1024, 2), nmtest.Running(c4, 512, 1))
	if err := os.RemoveAll(filepath.Join(root, c2)); err != nil {
		t.Fatal(err)
	}
	want["application_1700000000000_0001"] = cgroupRow{CPUUS: 2_500_000, Read: 5000, Write: 2097152 + 8192, HostCPUs: cpus, Containers: 1}
	got = waitCgroupRows(t, influx, func(rows map[string]cgroupRow) bool {
		return rows["application_1700000000000_0001"].Containers == 1 &&
			rows["application_1700000000000_0001"].CPUUS != 1_500_000
	})
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("cgroup fields in InfluxDB after c2 went (-want +got):\n%s", diff)
	}
}

// writeCgroup writes a container's cpu.stat and io.stat under root, each
// by a rename, so that the plugin never reads half a file.
func writeCgroup(t testing.TB, root, id, cpuStat, ioStat string) {
	t.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for name, content := range map[string]string{"cpu.stat": cpuStat, "io.stat": ioStat} {
		tmp := filepath.Join(dir, "."+name+".tmp")
		if err := os.WriteFile(tmp, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Rename(tmp, filepath.Join(dir, name)); err != nil {
			t.Fatal(err)
		}
	}
}

// onlineCPUs is what the plugin reports as host_cpus on this machine: the
// CPUs listed in /sys/devices/system/cpu/online, else runtime.NumCPU().
func onlineCPUs(t testing.TB) int64 {
	b, err := os.ReadFile("/sys/devices/system/cpu/online")
	if err != nil {
		return int64(runtime.NumCPU())
	}
	var n int64
	for part := range strings.SplitSeq(strings.TrimSpace(string(b)), ",") {
		lo, hi, isRange := strings.Cut(part, "-")
		a, err1 := strconv.ParseInt(lo, 10, 64)
		z := a
		var err2 error
		if isRange {
			z, err2 = strconv.ParseInt(hi, 10, 64)
		}
		if err1 != nil || err2 != nil || z < a {
			return int64(runtime.NumCPU())
		}
		n += z - a + 1
	}
	t.Logf("online CPUs: %s (%d)", strings.TrimSpace(string(b)), n)
	return n
}

// cgroupRow is an application's newest values in InfluxDB; a field it
// does not carry is 0.
type cgroupRow struct {
	CPUUS, Read, Write, HostCPUs, Containers int64
}

// waitCgroupRows polls InfluxDB, for up to 90 s, for each application's
// newest yarn_containers values of the last 5 s until done accepts them,
// and returns them.
func waitCgroupRows(t *testing.T, influx *influxtest.Server, done func(map[string]cgroupRow) bool) map[string]cgroupRow {
	t.Helper()
	const q = `SELECT last("cpu_usage_us") AS cpu_usage_us, last("io_read_bytes") AS io_read_bytes,
		last("io_write_bytes") AS io_write_bytes, last("host_cpus") AS host_cpus, last("containers") AS containers
		FROM "yarn_containers" WHERE "host" = '` + host + `' AND time > now() - 5s GROUP BY "application_id"`
	deadline := time.Now().Add(90 * time.Second)
	var (
		rows    map[string]cgroupRow
		lastErr error
	)
	for {
		var series []influxSeries
		series, lastErr = influxQL(t.Context(), influx, q)
		if lastErr == nil {
			rows = map[string]cgroupRow{}
			for _, s := range series {
				r, err := s.row()
				if err != nil {
					lastErr = err
					break
				}
				rows[s.Tags["application_id"]] = r
			}
		}
		if lastErr == nil && done(rows) {
			return rows
		}
		if time.Now().After(deadline) {
			t.Fatalf("no expected cgroup fields in InfluxDB after 90 s: last rows %+v, last error %v", rows, lastErr)
		}
		select {
		case <-t.Context().Done():
			t.Fatal(t.Context().Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// fieldTypes is each yarn_containers field's type in InfluxDB.
func fieldTypes(t *testing.T, influx *influxtest.Server) map[string]string {
	t.Helper()
	series, err := influxQL(t.Context(), influx, `SHOW FIELD KEYS FROM "yarn_containers"`)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]string{}
	for _, s := range series {
		for _, v := range s.Values {
			if len(v) == 2 {
				k, _ := v[0].(string)
				typ, _ := v[1].(string)
				out[k] = typ
			}
		}
	}
	return out
}

// influxSeries is one series of an InfluxQL answer.
type influxSeries struct {
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// row reads a one-row series of the columns waitCgroupRows selects.
func (s influxSeries) row() (cgroupRow, error) {
	var r cgroupRow
	if len(s.Values) != 1 || len(s.Values[0]) != len(s.Columns) {
		return r, fmt.Errorf("series %v: want one row of %d columns, got %v", s.Tags, len(s.Columns), s.Values)
	}
	dst := map[string]*int64{"cpu_usage_us": &r.CPUUS, "io_read_bytes": &r.Read, "io_write_bytes": &r.Write,
		"host_cpus": &r.HostCPUs, "containers": &r.Containers}
	for i, col := range s.Columns {
		p := dst[col]
		if p == nil || s.Values[0][i] == nil {
			continue
		}
		n, ok := s.Values[0][i].(json.Number)
		if !ok {
			return r, fmt.Errorf("series %v: column %s is %T %v, not a number", s.Tags, col, s.Values[0][i], s.Values[0][i])
		}
		v, err := n.Int64()
		if err != nil {
			return r, fmt.Errorf("series %v: column %s: %w", s.Tags, col, err)
		}
		*p = v
	}
	return r, nil
}

// influxQL runs one InfluxQL statement against the database Telegraf
// writes to (InfluxDB 1.8's /query) and returns its series.
func influxQL(ctx context.Context, influx *influxtest.Server, q string) ([]influxSeries, error) {
	db, _, _ := strings.Cut(influx.Bucket(), "/")
	form := url.Values{"db": {db}, "q": {q}}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, influx.URL()+"/query", strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	var body struct {
		Results []struct {
			Series []influxSeries `json:"series"`
			Error  string         `json:"error"`
		} `json:"results"`
		Error string `json:"error"`
	}
	dec := json.NewDecoder(resp.Body)
	dec.UseNumber()
	if err := dec.Decode(&body); err != nil {
		return nil, fmt.Errorf("query %q: status %s: %w", q, resp.Status, err)
	}
	switch {
	case body.Error != "":
		return nil, fmt.Errorf("query %q: %s", q, body.Error)
	case len(body.Results) != 1:
		return nil, fmt.Errorf("query %q: %d results, want 1", q, len(body.Results))
	case body.Results[0].Error != "":
		return nil, fmt.Errorf("query %q: %s", q, body.Results[0].Error)
	}
	return body.Results[0].Series, nil
}
