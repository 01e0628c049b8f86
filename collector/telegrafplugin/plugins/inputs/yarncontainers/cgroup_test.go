package yarncontainers

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/influxdata/telegraf/testutil"

	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
)

// The applications of the cgroup tests and their containers.
const (
	app1 = "application_1700000000000_0001"
	app2 = "application_1700000000000_0002"
	app3 = "application_1700000000000_0003"

	cA1 = "container_1700000000000_0001_01_000001"
	cA2 = "container_1700000000000_0001_01_000002"
	cA3 = "container_1700000000000_0001_01_000003"
	cB1 = "container_1700000000000_0002_01_000001"
	cC1 = "container_1700000000000_0003_01_000001"
)

// writeCgroup makes (or updates) a container's cgroup v2 directory under
// root, as the kernel writes cpu.stat and io.stat; the I/O is split over
// two devices.
func writeCgroup(t testing.TB, root, id string, cpuUS, rbytes, wbytes int64) {
	t.Helper()
	dir := filepath.Join(root, id)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cpu := fmt.Sprintf("usage_usec %d\nuser_usec %d\nsystem_usec %d\nnr_periods 0\nnr_throttled 0\nthrottled_usec 0\n",
		cpuUS, cpuUS/2, cpuUS-cpuUS/2)
	io := fmt.Sprintf("8:0 rbytes=%d wbytes=%d rios=192 wios=353 dbytes=0 dios=0\n259:0 rbytes=%d wbytes=%d rios=1 wios=2 dbytes=0 dios=0\n",
		rbytes-rbytes/3, wbytes-wbytes/3, rbytes/3, wbytes/3)
	writeFile(t, filepath.Join(dir, "cpu.stat"), cpu)
	writeFile(t, filepath.Join(dir, "io.stat"), io)
}

func writeFile(t testing.TB, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func removeCgroup(t testing.TB, root, id string) {
	t.Helper()
	if err := os.RemoveAll(filepath.Join(root, id)); err != nil {
		t.Fatal(err)
	}
}

// newCgroupPlugin is the plugin reading fake's NodeManager (no RM) with
// cgroup_dir root, on a host with 8 online CPUs.
func newCgroupPlugin(t testing.TB, fake *nmtest.Server, root string) *YarnContainers {
	t.Helper()
	y := newYarnContainers()
	y.NodeManagerURL, y.CgroupDir = fake.URL(), root
	y.cpuOnline = filepath.Join(t.TempDir(), "online")
	writeFile(t, y.cpuOnline, "0-3,8-11\n")
	y.now = func() time.Time { return gatherTime }
	if err := y.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return y
}

// gatherByApp gathers once, failing on any error, and returns each
// application's fields.
func gatherByApp(t testing.TB, y *YarnContainers) map[string]map[string]any {
	t.Helper()
	var acc testutil.Accumulator
	if err := acc.GatherError(y.Gather); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	return byApp(t, &acc)
}

func byApp(t testing.TB, acc *testutil.Accumulator) map[string]map[string]any {
	t.Helper()
	out := map[string]map[string]any{}
	for _, p := range points(t, acc) {
		out[p.Tags["application_id"]] = p.Fields
	}
	return out
}

// withCgroup is fields(...) plus the cgroup fields, on a host with 8 CPUs.
func withCgroup(containers, memoryMB, vcores, cpuUS, rbytes, wbytes int64) map[string]any {
	f := withCPU(containers, memoryMB, vcores, cpuUS)
	f["io_read_bytes"], f["io_write_bytes"] = rbytes, wbytes
	return f
}

// withCPU is fields(...) plus the CPU fields alone, on a host with 8 CPUs:
// an application whose I/O is not known.
func withCPU(containers, memoryMB, vcores, cpuUS int64) map[string]any {
	f := fields(containers, memoryMB, vcores)
	f["cpu_usage_us"], f["host_cpus"] = cpuUS, int64(8)
	return f
}

// TestCgroupFields: each application's point sums its live containers'
// cgroup counters; a finished container does not count, a KILLING one
// does; an application none of whose containers has a cgroup (yet) gets
// no cgroup fields; one with a container without io.stat (no io
// controller) gets its CPU fields alone, with one warning, and keeps
// them alone while it runs here; an empty io.stat is no I/O.
func TestCgroupFields(t *testing.T) {
	root := t.TempDir()
	fake := nmtest.New(t)
	killing := nmtest.Running(cA2, 2048, 1)
	killing.State = "KILLING"
	done := nmtest.Running(cA3, 1024, 1)
	done.State = "EXITED_WITH_SUCCESS"
	fake.SetContainers(nmtest.Running(cA1, 2048, 1), killing, done, nmtest.Running(cB1, 1024, 2), nmtest.Running(cC1, 512, 1))
	writeCgroup(t, root, cA1, 1_000_000, 3_000, 30_000)
	writeCgroup(t, root, cA2, 250_000, 600, 9_000)
	writeCgroup(t, root, cA3, 7_000_000, 7_000, 70_000) // finished: not counted
	writeCgroup(t, root, cB1, 42, 0, 0)
	if err := os.Remove(filepath.Join(root, cB1, "io.stat")); err != nil { // no io controller
		t.Fatal(err)
	}
	// application 3's container has no cgroup directory yet.

	y := newCgroupPlugin(t, fake, root)
	logs := &testutil.CaptureLogger{}
	y.Log = logs
	want := map[string]map[string]any{
		app1: withCgroup(2, 4096, 2, 1_250_000, 3_600, 39_000),
		app2: withCPU(1, 1024, 2, 42),
		app3: fields(1, 512, 1),
	}
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if msgs := logs.Messages(); len(msgs) != 1 || !strings.Contains(msgs[0].Text, cB1) || !strings.Contains(msgs[0].Text, "io controller") {
		t.Errorf("logged %v, want one warning naming %s and the io controller", msgs, cB1)
	}

	// An io.stat that appears later does not make application 2's I/O
	// known (its earlier I/O was not counted); an empty io.stat is no
	// I/O; a later cgroup of application 3 brings its fields.
	writeFile(t, filepath.Join(root, cB1, "io.stat"), "")
	writeCgroup(t, root, cC1, 5, 6, 7)
	want[app3] = withCgroup(1, 512, 1, 5, 6, 7)
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("second gather (-want +got):\n%s", diff)
	}
	fake.SetContainers(nmtest.Running(cA1, 2048, 1), nmtest.Running(cC1, 512, 1))
	writeFile(t, filepath.Join(root, cC1, "io.stat"), "")
	want = map[string]map[string]any{
		app1: withCgroup(1, 2048, 1, 1_250_000, 3_600, 39_000),
		app3: withCgroup(1, 512, 1, 5, 6, 7),
	}
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("third gather (-want +got):\n%s", diff)
	}
	if n := logs.NMessages(); n != 1 {
		t.Errorf("%d messages logged, want the one warning", n)
	}
}

// TestCgroupNoIOController: on a node whose YARN cgroups have no io
// controller (no io.stat anywhere), every point carries the CPU fields
// alone, never a zero I/O; the warning is logged once.
func TestCgroupNoIOController(t *testing.T) {
	root := t.TempDir()
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cB1, 1024, 1))
	for _, id := range []string{cA1, cB1} {
		writeCgroup(t, root, id, 100, 10, 10)
		if err := os.Remove(filepath.Join(root, id, "io.stat")); err != nil {
			t.Fatal(err)
		}
	}
	y := newCgroupPlugin(t, fake, root)
	logs := &testutil.CaptureLogger{}
	y.Log = logs
	want := map[string]map[string]any{app1: withCPU(1, 1024, 1, 100), app2: withCPU(1, 1024, 1, 100)}
	for i := range 3 {
		if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
			t.Errorf("gather %d (-want +got):\n%s", i, diff)
		}
	}
	if n := logs.NMessages(); n != 1 {
		t.Errorf("%d messages logged, want one warning: %v", n, logs.Messages())
	}
}

// TestCgroupMonotone: an application's counters never go down while the
// plugin runs: a container that leaves the NodeManager's list, or whose
// cgroup directory vanishes, keeps its last counters in the sum. An
// application with no live container here is forgotten.
func TestCgroupMonotone(t *testing.T) {
	root := t.TempDir()
	fake := nmtest.New(t)
	y := newCgroupPlugin(t, fake, root)
	cpuOf := func(step string) any {
		t.Helper()
		got := gatherByApp(t, y)
		f, ok := got[app1]
		if !ok {
			t.Fatalf("%s: no point for %s: %v", step, app1, got)
		}
		return [3]any{f["cpu_usage_us"], f["io_read_bytes"], f["io_write_bytes"]}
	}
	want := func(cpu, r, w int64) any { return [3]any{cpu, r, w} }

	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cA2, 1024, 1))
	writeCgroup(t, root, cA1, 100, 10, 1000)
	writeCgroup(t, root, cA2, 50, 5, 500)
	if got := cpuOf("both"); got != want(150, 15, 1500) {
		t.Fatalf("both containers: %v, want %v", got, want(150, 15, 1500))
	}

	// cA2 leaves the list (its directory stays a while): its last
	// counters stay in the sum, its later ones are not read.
	fake.SetContainers(nmtest.Running(cA1, 1024, 1))
	writeCgroup(t, root, cA1, 200, 20, 2000)
	writeCgroup(t, root, cA2, 9_999, 9_999, 9_999)
	if got := cpuOf("cA2 left"); got != want(250, 25, 2500) {
		t.Errorf("after cA2 left: %v, want %v (cA1's 200 + cA2's last 50)", got, want(250, 25, 2500))
	}

	// A new container cA3; then cA1's cgroup directory vanishes while the
	// NodeManager still lists it.
	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cA3, 1024, 1))
	writeCgroup(t, root, cA3, 7, 0, 0)
	if got := cpuOf("cA3 came"); got != want(257, 25, 2500) {
		t.Errorf("with cA3: %v, want %v", got, want(257, 25, 2500))
	}
	removeCgroup(t, root, cA1)
	writeCgroup(t, root, cA3, 8, 1, 1)
	if got := cpuOf("cA1's cgroup gone"); got != want(258, 26, 2501) {
		t.Errorf("after cA1's cgroup vanished: %v, want %v (cA1's last 200 kept)", got, want(258, 26, 2501))
	}
	// Were it to come back, it is not counted twice.
	writeCgroup(t, root, cA1, 300, 30, 3000)
	if got := cpuOf("cA1's cgroup back"); got != want(258, 26, 2501) {
		t.Errorf("after cA1's cgroup came back: %v, want %v", got, want(258, 26, 2501))
	}

	// cA3's io.stat goes before its cpu.stat (a removal under way): its
	// I/O as last read stays.
	if err := os.Remove(filepath.Join(root, cA3, "io.stat")); err != nil {
		t.Fatal(err)
	}
	if got := cpuOf("cA3's io.stat gone"); got != want(258, 26, 2501) {
		t.Errorf("after cA3's io.stat vanished: %v, want %v", got, want(258, 26, 2501))
	}

	// The application leaves the node: forgotten. It comes back: its sum
	// starts over from its live containers (readers see a reset).
	fake.SetContainers(nmtest.Running(cB1, 1024, 1))
	writeCgroup(t, root, cB1, 1, 1, 1)
	gatherByApp(t, y)
	if _, ok := y.cgroups[app1]; ok || len(y.cgroups) != 1 {
		t.Errorf("cgroup state of %v after %s left, want %s's alone", keys(y.cgroups), app1, app2)
	}
	fake.SetContainers(nmtest.Running(cA3, 1024, 1))
	writeCgroup(t, root, cA3, 9, 2, 2)
	if got := cpuOf("back"); got != want(9, 2, 2) {
		t.Errorf("after %s came back: %v, want %v", app1, got, want(9, 2, 2))
	}
	if _, ok := y.cgroups[app2]; ok {
		t.Errorf("%s's cgroup state kept after it left", app2)
	}
}

func keys[V any](m map[string]V) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	return out
}

// TestCgroupNoneReadable: without any readable cgroup (the directory
// does not exist yet, or its containers' are gone), points carry their
// other fields alone, and that is no error.
func TestCgroupNoneReadable(t *testing.T) {
	root := filepath.Join(t.TempDir(), "hadoop-yarn") // not made yet
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cB1, 2048, 2))
	y := newCgroupPlugin(t, fake, root)
	want := map[string]map[string]any{app1: fields(1, 1024, 1), app2: fields(1, 2048, 2)}
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("without the directory (-want +got):\n%s", diff)
	}

	// A container read once whose directory (or cpu.stat) then vanishes.
	writeCgroup(t, root, cA1, 10, 10, 10)
	writeCgroup(t, root, cB1, 10, 10, 10)
	want[app1], want[app2] = withCgroup(1, 1024, 1, 10, 10, 10), withCgroup(1, 2048, 2, 10, 10, 10)
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("with the cgroups (-want +got):\n%s", diff)
	}
	removeCgroup(t, root, cA1)
	if err := os.Remove(filepath.Join(root, cB1, "cpu.stat")); err != nil {
		t.Fatal(err)
	}
	want[app1], want[app2] = fields(1, 1024, 1), fields(1, 2048, 2)
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("after the cgroups vanished (-want +got):\n%s", diff)
	}
}

// TestCgroupMalformed: a cpu.stat or io.stat that does not parse is an
// error naming the file; its container is skipped and the application's
// other container still counted. No content makes the plugin panic.
func TestCgroupMalformed(t *testing.T) {
	for name, tc := range map[string]struct{ file, content string }{
		"cpu not a number":   {"cpu.stat", "usage_usec 12x\nuser_usec 1\n"},
		"cpu negative":       {"cpu.stat", "usage_usec -1\n"},
		"cpu overflow":       {"cpu.stat", "usage_usec 9223372036854775808\n"},
		"cpu two values":     {"cpu.stat", "usage_usec 1 2\n"},
		"cpu no usage_usec":  {"cpu.stat", "user_usec 1\nsystem_usec 2\n"},
		"cpu empty":          {"cpu.stat", ""},
		"cpu binary":         {"cpu.stat", "\x00\xff\xfeusage_usec\x00 \xff\n=\n"},
		"cpu too large":      {"cpu.stat", "usage_usec 1\n" + strings.Repeat("x", maxCgroupFile)},
		"io not a number":    {"io.stat", "8:0 rbytes=1 wbytes=2\n8:16 rbytes=abc wbytes=2\n"},
		"io negative":        {"io.stat", "8:0 rbytes=1 wbytes=-2\n"},
		"io float":           {"io.stat", "8:0 rbytes=1e3 wbytes=2\n"},
		"io empty value":     {"io.stat", "8:0 rbytes= wbytes=2\n"},
		"io too large":       {"io.stat", strings.Repeat("8:0 rbytes=1 wbytes=1\n", maxCgroupFile/20)},
		"io only the device": {"io.stat", "8:0 rbytes\n"},
	} {
		t.Run(name, func(t *testing.T) {
			root := t.TempDir()
			fake := nmtest.New(t)
			fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cA2, 1024, 1))
			writeCgroup(t, root, cA1, 100, 10, 1000)
			writeCgroup(t, root, cA2, 50, 5, 500)
			bad := filepath.Join(root, cA2, tc.file)
			writeFile(t, bad, tc.content)
			y := newCgroupPlugin(t, fake, root)
			var acc testutil.Accumulator
			if err := y.Gather(&acc); err != nil {
				t.Fatalf("Gather: %v", err)
			}
			if len(acc.Errors) != 1 || !strings.Contains(acc.Errors[0].Error(), bad) {
				t.Errorf("errors %v, want one naming %s", acc.Errors, bad)
			}
			want := map[string]map[string]any{app1: withCgroup(2, 2048, 2, 100, 10, 1000)}
			if diff := cmp.Diff(want, byApp(t, &acc)); diff != "" {
				t.Errorf("fields (-want +got):\n%s", diff)
			}
		})
	}

	// Lines the kernel does not write but that hold no bad number are
	// read around: other keys, blank lines, a key without a value.
	for content, want := range map[string][2]int64{
		"\n\n8:0  rbytes=3 wbytes=4 \n\n":            {3, 4},
		"8:0 rios=x dbytes=y\n8:16 wbytes=9":         {0, 9},
		"8:0 rbytes=1 rbytes=2 foo bar=baz wbytes=0": {3, 0},
	} {
		r, w, err := parseIOStat([]byte(content))
		if err != nil || [2]int64{r, w} != want {
			t.Errorf("parseIOStat(%q) = %d, %d, %v; want %v", content, r, w, err, want)
		}
	}
	for content, want := range map[string]int64{
		"usage_usec 7":                        7,
		"user_usec 1\n  usage_usec   8  \r\n": 8,
	} {
		if got, err := parseCPUStat([]byte(content)); err != nil || got != want {
			t.Errorf("parseCPUStat(%q) = %d, %v; want %d", content, got, err, want)
		}
	}
}

// TestCgroupMalformedKeepsLast: a container whose file turns malformed
// after it was read keeps its last counters in the sum.
func TestCgroupMalformedKeepsLast(t *testing.T) {
	root := t.TempDir()
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cA2, 1024, 1))
	writeCgroup(t, root, cA1, 100, 10, 1000)
	writeCgroup(t, root, cA2, 50, 5, 500)
	y := newCgroupPlugin(t, fake, root)
	gatherByApp(t, y)
	writeFile(t, filepath.Join(root, cA2, "cpu.stat"), "usage_usec ?\n")
	writeCgroup(t, root, cA1, 101, 11, 1001)
	var acc testutil.Accumulator
	if err := y.Gather(&acc); err != nil {
		t.Fatal(err)
	}
	if len(acc.Errors) != 1 {
		t.Errorf("errors %v, want one", acc.Errors)
	}
	want := map[string]map[string]any{app1: withCgroup(2, 2048, 2, 151, 16, 1501)}
	if diff := cmp.Diff(want, byApp(t, &acc)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	// Readable again: its new counters replace its last ones.
	writeCgroup(t, root, cA2, 60, 6, 600)
	want[app1] = withCgroup(2, 2048, 2, 161, 17, 1601)
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("fields once readable again (-want +got):\n%s", diff)
	}
}

func TestHostCPUs(t *testing.T) {
	for content, want := range map[string]int64{
		"0-3,8-11\n": 8,
		"0":          1,
		"0\n":        1,
		"0-127":      128,
		"1,3,5-6":    4,
		"garbage":    int64(runtime.NumCPU()),
		"":           int64(runtime.NumCPU()),
		"3-1":        int64(runtime.NumCPU()),
		"0-3,":       int64(runtime.NumCPU()),
		"-1":         int64(runtime.NumCPU()),
		"0-99999999": int64(runtime.NumCPU()),
	} {
		y := &YarnContainers{cpuOnline: filepath.Join(t.TempDir(), "online")}
		writeFile(t, y.cpuOnline, content)
		if got := y.hostCPUs(); got != want {
			t.Errorf("host_cpus from %q = %d, want %d", content, got, want)
		}
	}
	y := &YarnContainers{cpuOnline: filepath.Join(t.TempDir(), "none")}
	if got := y.hostCPUs(); got != int64(runtime.NumCPU()) {
		t.Errorf("host_cpus without the file = %d, want runtime.NumCPU() %d", got, runtime.NumCPU())
	}
	if y := newPlugin(t, "http://127.0.0.1:8042"); y.cpuOnline != defaultCPUOnline {
		t.Errorf("default online CPU list %q, want %q", y.cpuOnline, defaultCPUOnline)
	}
}

func TestCgroupInit(t *testing.T) {
	for dir, wantErr := range map[string]bool{
		"":                                  false,
		"/sys/fs/cgroup/hadoop-yarn":        false,
		"/nonexistent/not/made/yet/":        false,
		"sys/fs/cgroup/hadoop-yarn":         true,
		"./hadoop-yarn":                     true,
		"hadoop-yarn/../../etc":             true,
		filepath.Join(t.TempDir(), "later"): false,
	} {
		y := newYarnContainers()
		y.CgroupDir = dir
		err := y.Init()
		if gotErr := err != nil; gotErr != wantErr || (err != nil && !strings.Contains(err.Error(), "cgroup_dir")) {
			t.Errorf("Init with cgroup_dir %q = %v, want error %v naming cgroup_dir", dir, err, wantErr)
		}
	}
}

// TestCgroupOff: without cgroup_dir no point carries a cgroup field, and
// nothing is kept.
func TestCgroupOff(t *testing.T) {
	root := t.TempDir()
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(cA1, 1024, 1), nmtest.Running(cB1, 2048, 2))
	writeCgroup(t, root, cA1, 100, 10, 1000)
	writeCgroup(t, root, cB1, 100, 10, 1000)
	y := newPlugin(t, fake.URL())
	want := map[string]map[string]any{app1: fields(1, 1024, 1), app2: fields(1, 2048, 2)}
	if diff := cmp.Diff(want, gatherByApp(t, y)); diff != "" {
		t.Errorf("fields without cgroup_dir (-want +got):\n%s", diff)
	}
	if len(y.cgroups) != 0 {
		t.Errorf("cgroup state %v without cgroup_dir", keys(y.cgroups))
	}
}

// FuzzCgroupParsers: no file content makes the parsers panic, and what
// they accept is never negative.
func FuzzCgroupParsers(f *testing.F) {
	for _, s := range []string{"usage_usec 1\n", "8:0 rbytes=1 wbytes=2 rios=3\n", "0-3,8-11\n", "", "usage_usec", "8:0 rbytes=", "-", ",", "0-"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if n, err := parseCPUStat(b); err == nil && n < 0 {
			t.Errorf("parseCPUStat(%q) = %d", b, n)
		}
		if r, w, err := parseIOStat(b); err == nil && (r < 0 || w < 0) {
			t.Errorf("parseIOStat(%q) = %d, %d", b, r, w)
		}
		if n, err := parseCPUList(string(b)); err == nil && (n < 1 || n > maxCPUs) {
			t.Errorf("parseCPUList(%q) = %d", b, n)
		}
	})
}
