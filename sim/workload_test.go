package sim_test

import (
	"errors"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

const (
	queueA = "../configs/workloads/paper-queue-a.yaml"
	queueB = "../configs/workloads/paper-queue-b.yaml"
)

func load(tb testing.TB, path string) *sim.Workload {
	tb.Helper()
	w, err := sim.LoadWorkload(path)
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func kindsOf(jobs []sim.JobSpec) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.Kind
	}
	return out
}

func block(m int, kinds ...string) []string {
	var out []string
	for _, k := range kinds {
		for range m {
			out = append(out, k)
		}
	}
	return out
}

func TestShippedWorkloads(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string
		m, n int
	}{
		{"queue A (m=4, n=3)", queueA, 4, 3},
		{"queue B (m=3, n=4)", queueB, 3, 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w := load(t, tc.path)
			wantCluster := sim.ClusterSpec{Nodes: 16, Node: sim.NodeSpec{Cores: 4, VCores: 6, MemoryMB: 12288, DiskMBps: 300, NetMBps: 117}}
			if diff := cmp.Diff(wantCluster, w.Cluster); diff != "" {
				t.Errorf("cluster (-want +got):\n%s", diff)
			}
			var names []string
			for _, k := range w.Kinds {
				names = append(names, k.Name)
				// Each job a quarter of the cluster's containers.
				if got := k.Containers * k.Container.VCores; got != 16*6/4 {
					t.Errorf("kind %s reserves %d vcores, want a quarter of 96", k.Name, got)
				}
			}
			if diff := cmp.Diff([]string{"tpch-q10", "kmeans", "tpch-q3", "cc"}, names); diff != "" {
				t.Errorf("kinds (-want +got):\n%s", diff)
			}
			var want []string
			for range tc.n {
				want = append(want, block(tc.m, "tpch-q10", "kmeans", "tpch-q3", "cc")...)
			}
			jobs := w.Jobs(nil)
			if diff := cmp.Diff(want, kindsOf(jobs)); diff != "" {
				t.Errorf("queue (-want +got):\n%s", diff)
			}
			for i, j := range jobs {
				if j.Seq != i || j.Arrival != 0 {
					t.Errorf("job %d = %+v, want seq %d arriving at 0 (batch)", i, j, i)
				}
			}
		})
	}
}

// Both queue files describe the same cluster and kinds: only the queue differs.
func TestQueuesShareKinds(t *testing.T) {
	a, b := load(t, queueA), load(t, queueB)
	if diff := cmp.Diff(a.Kinds, b.Kinds); diff != "" {
		t.Errorf("kinds of A and B differ (-A +B):\n%s", diff)
	}
	if diff := cmp.Diff(a.Cluster, b.Cluster); diff != "" {
		t.Errorf("clusters of A and B differ (-A +B):\n%s", diff)
	}
}

func TestParseDefaults(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(`
cluster: {nodes: 2, node: {cores: 4.5, memory_mb: 4096, disk_mbps: 100, net_mbps: 100}}
kinds:
  - name: k
    containers: 2
    container: {vcores: 1, memory_mb: 1024}
    phases: [{seconds: 10}]
queue: [{kind: k, count: 1}]
`))
	if err != nil {
		t.Fatal(err)
	}
	if w.Cluster.Node.VCores != 4 || w.Kinds[0].Repeat != 1 || w.Repeat != 1 || w.Arrivals.Mode != sim.ArrivalsBatch {
		t.Errorf("defaults: vcores %d (want 4), kind repeat %d, repeat %d (want 1), arrivals %q (want batch)",
			w.Cluster.Node.VCores, w.Kinds[0].Repeat, w.Repeat, w.Arrivals.Mode)
	}
	if got, want := w.Kinds[0].SoloDuration(), 10*time.Second; got != want {
		t.Errorf("SoloDuration = %v, want %v", got, want)
	}
	if w.Cluster.Node.Interference != (sim.Interference{}) || w.Variability != (sim.Variability{}) {
		t.Errorf("defaults: interference %+v, variability %+v, want zero", w.Cluster.Node.Interference, w.Variability)
	}
}

func TestParseVariabilityAndInterference(t *testing.T) {
	for _, tc := range []struct {
		name, node, top string // edits: keys added to cluster.node and at the top level
		inf             sim.Interference
		vary            sim.Variability
	}{
		{"both", ", interference: {disk_streams: 0.15, cpu_cache: 0.05}", "variability: {jitter: 0.1}",
			sim.Interference{DiskStreams: 0.15, CPUCache: 0.05}, sim.Variability{Jitter: 0.1}},
		{"one key at the bound, empty variability", ", interference: {cpu_cache: 10}", "variability: {}",
			sim.Interference{CPUCache: 10}, sim.Variability{}},
		{"explicit zeros", ", interference: {disk_streams: 0, cpu_cache: 0}", "variability: {jitter: 0}",
			sim.Interference{}, sim.Variability{}},
		{"null blocks", ", interference: null", "variability: null", sim.Interference{}, sim.Variability{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := strings.Replace(base, "net_mbps: 100}", "net_mbps: 100"+tc.node+"}", 1) + tc.top + "\n"
			w, err := sim.ParseWorkload([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.inf, w.Cluster.Node.Interference); diff != "" {
				t.Errorf("interference (-want +got):\n%s", diff)
			}
			if diff := cmp.Diff(tc.vary, w.Variability); diff != "" {
				t.Errorf("variability (-want +got):\n%s", diff)
			}
		})
	}
}

// base is a valid workload; each bad case edits one spot of it.
const base = `
cluster:
  nodes: 2
  node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}
kinds:
  - name: a
    containers: 6
    container: {vcores: 1, memory_mb: 1024}
    setup:
      - {seconds: 5, cpu: 0.5}
    repeat: 2
    phases:
      - {seconds: 10, cpu: 1, disk_read_mbps: 10, disk_write_mbps: 10, net_in_mbps: 5, net_out_mbps: 5}
  - name: b
    containers: 3
    container: {vcores: 2, memory_mb: 2048}
    phases:
      - {seconds: 20, cpu: 0.5}
  - name: c
    containers: 1
    container: {vcores: 1, memory_mb: 1024}
    phases:
      - {seconds: 30, cpu: 0.1}
queue:
  - {kind: a, count: 2}
  - {kind: b, count: 1}
repeat: 2
arrivals: {mode: batch}
`

func TestParseBase(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := w.Kinds[0].SoloDuration(), 25*time.Second; got != want {
		t.Errorf("kind a SoloDuration = %v, want %v (5 + 2×10)", got, want)
	}
	if got := len(w.Jobs(nil)); got != 6 {
		t.Errorf("jobs = %d, want 6", got)
	}
}

func TestParseErrors(t *testing.T) {
	for _, tc := range []struct {
		name     string
		old, new string // edit of base; old == "" replaces the whole document with new
		path     string
	}{
		{"unknown top-level key", "\nrepeat: 2", "\nrepeat: 2\nrepeats: 3", "repeats"},
		{"unknown node key", "net_mbps: 100}", "net_mbps: 100, gpus: 1}", "cluster.node.gpus"},
		{"unknown phase key", "{seconds: 20, cpu: 0.5}", "{sekonds: 20, cpu: 0.5}", "kinds[1].phases[0].sekonds"},
		{"unknown arrivals key", "{mode: batch}", "{mode: batch, burst: 2}", "arrivals.burst"},
		{"repeated key", "nodes: 2", "nodes: 2\n  nodes: 3", "cluster.nodes"},
		{"zero seconds", "{seconds: 30, cpu: 0.1}", "{seconds: 0, cpu: 0.1}", "kinds[2].phases[0].seconds"},
		{"negative seconds", "{seconds: 30, cpu: 0.1}", "{seconds: -1, cpu: 0.1}", "kinds[2].phases[0].seconds"},
		{"missing seconds", "{seconds: 20, cpu: 0.5}", "{cpu: 0.5}", "kinds[1].phases[0].seconds"},
		{"bad setup phase", "{seconds: 5, cpu: 0.5}", "{seconds: 5, cpu: -0.5}", "kinds[0].setup[0].cpu"},
		{"cpu above node cores", "{seconds: 20, cpu: 0.5}", "{seconds: 20, cpu: 5}", "kinds[1].phases[0].cpu"},
		{"disk above node", "disk_read_mbps: 10, disk_write_mbps: 10", "disk_read_mbps: 60, disk_write_mbps: 50", "kinds[0].phases[0].disk_read_mbps"},
		{"net in above node", "net_in_mbps: 5,", "net_in_mbps: 101,", "kinds[0].phases[0].net_in_mbps"},
		{"net out above node", "net_out_mbps: 5}", "net_out_mbps: 200}", "kinds[0].phases[0].net_out_mbps"},
		{"NaN demand", "net_out_mbps: 5}", "net_out_mbps: .nan}", "kinds[0].phases[0].net_out_mbps"},
		{"string for a number", "cores: 4,", "cores: four,", "cluster.node.cores"},
		{"list for a number", "nodes: 2", "nodes: [2]", "cluster.nodes"},
		{"mapping for a number", "{kind: b, count: 1}", "{kind: b, count: {n: 1}}", "queue[1].count"},
		{"phases not a list", "    phases:\n      - {seconds: 30, cpu: 0.1}", "    phases: {seconds: 30}", "kinds[2].phases"},
		{"no phases", "    phases:\n      - {seconds: 30, cpu: 0.1}", "", "kinds[2].phases"},
		{"zero nodes", "nodes: 2", "nodes: 0", "cluster.nodes"},
		{"too many nodes", "nodes: 2", "nodes: 100000", "cluster.nodes"},
		{"negative disk", "disk_mbps: 100", "disk_mbps: -1", "cluster.node.disk_mbps"},
		{"zero vcores", "vcores: 6,", "vcores: 0,", "cluster.node.vcores"},
		{"missing memory", "memory_mb: 8192, ", "", "cluster.node.memory_mb"},
		{"missing cluster", "cluster:\n  nodes: 2\n  node: {cores: 4, vcores: 6, memory_mb: 8192, disk_mbps: 100, net_mbps: 100}\n", "", "cluster"},
		{"zero containers", "containers: 3", "containers: 0", "kinds[1].containers"},
		{"never fits the cluster", "containers: 3", "containers: 7", "kinds[1].containers"},
		{"container vcores above node", "{vcores: 2, memory_mb: 2048}", "{vcores: 7, memory_mb: 2048}", "kinds[1].container.vcores"},
		{"container memory above node", "{vcores: 2, memory_mb: 2048}", "{vcores: 2, memory_mb: 9000}", "kinds[1].container.memory_mb"},
		{"missing container", "    container: {vcores: 2, memory_mb: 2048}\n", "", "kinds[1].container"},
		{"zero kind repeat", "repeat: 2\n    phases", "repeat: 0\n    phases", "kinds[0].repeat"},
		{"zero queue repeat", "\nrepeat: 2", "\nrepeat: 0", "repeat"},
		{"duplicate kind", "name: b", "name: a", "kinds[1].name"},
		{"bad kind name", "name: b", "name: 'b b'", "kinds[1].name"},
		{"missing kind name", "  - name: c\n    containers: 1", "  - containers: 1", "kinds[2].name"},
		{"unknown kind in queue", "{kind: b, count: 1}", "{kind: bb, count: 1}", "queue[1].kind"},
		{"zero count", "{kind: b, count: 1}", "{kind: b, count: 0}", "queue[1].count"},
		{"missing count", "{kind: b, count: 1}", "{kind: b}", "queue[1].count"},
		{"empty queue", "queue:\n  - {kind: a, count: 2}\n  - {kind: b, count: 1}\n", "queue: []\n", "queue"},
		{"too many jobs", "\nrepeat: 2", "\nrepeat: 1000000", "repeat"},
		{"bad arrival mode", "{mode: batch}", "{mode: burst}", "arrivals.mode"},
		{"poisson without rate", "{mode: batch}", "{mode: poisson}", "arrivals.rate_per_hour"},
		{"poisson negative rate", "{mode: batch}", "{mode: poisson, rate_per_hour: -2}", "arrivals.rate_per_hour"},
		{"batch with rate", "{mode: batch}", "{mode: batch, rate_per_hour: 2}", "arrivals.rate_per_hour"},
		{"no kinds", "", "cluster: {nodes: 1, node: {cores: 1, memory_mb: 1, disk_mbps: 1, net_mbps: 1}}\nqueue: [{kind: a, count: 1}]", "kinds"},
		{"empty document", "", "", "(document)"},
		{"two documents", "", base + "---\n" + base, "(document)"},
		{"not YAML", "", "cluster: [", "(document)"},
		{"scalar document", "", "42", "(document)"},
		{"merge key", "cluster:\n  nodes: 2", "cluster:\n  <<: {nodes: 2}", "cluster.<<"},
		{"unknown variability key", "\nrepeat: 2", "\nrepeat: 2\nvariability: {jiter: 0.1}", "variability.jiter"},
		{"variability not a mapping", "\nrepeat: 2", "\nrepeat: 2\nvariability: 0.1", "variability"},
		{"negative jitter", "\nrepeat: 2", "\nrepeat: 2\nvariability: {jitter: -0.1}", "variability.jitter"},
		{"jitter of 1", "\nrepeat: 2", "\nrepeat: 2\nvariability: {jitter: 1}", "variability.jitter"},
		{"NaN jitter", "\nrepeat: 2", "\nrepeat: 2\nvariability: {jitter: .nan}", "variability.jitter"},
		{"string for jitter", "\nrepeat: 2", "\nrepeat: 2\nvariability: {jitter: some}", "variability.jitter"},
		{"unknown interference key", "net_mbps: 100}", "net_mbps: 100, interference: {disk_seeks: 1}}", "cluster.node.interference.disk_seeks"},
		{"interference not a mapping", "net_mbps: 100}", "net_mbps: 100, interference: 0.5}", "cluster.node.interference"},
		{"negative disk_streams", "net_mbps: 100}", "net_mbps: 100, interference: {disk_streams: -0.1}}", "cluster.node.interference.disk_streams"},
		{"disk_streams above 10", "net_mbps: 100}", "net_mbps: 100, interference: {disk_streams: 10.5}}", "cluster.node.interference.disk_streams"},
		{"NaN disk_streams", "net_mbps: 100}", "net_mbps: 100, interference: {disk_streams: .nan}}", "cluster.node.interference.disk_streams"},
		{"infinite cpu_cache", "net_mbps: 100}", "net_mbps: 100, interference: {cpu_cache: .inf}}", "cluster.node.interference.cpu_cache"},
		{"negative cpu_cache", "net_mbps: 100}", "net_mbps: 100, interference: {cpu_cache: -1}}", "cluster.node.interference.cpu_cache"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := tc.new
			if tc.old != "" {
				doc = edit(t, base, tc.old, tc.new)
			}
			wantFieldError(t, doc, tc.path)
		})
	}
}

// edit replaces the first old in doc with new, failing if doc lacks old.
func edit(tb testing.TB, doc, old, new string) string {
	tb.Helper()
	if !strings.Contains(doc, old) {
		tb.Fatalf("test edit %q not found in the document", old)
	}
	return strings.Replace(doc, old, new, 1)
}

// wantFieldError checks that doc is refused with a *FieldError at path.
func wantFieldError(tb testing.TB, doc, path string) {
	tb.Helper()
	_, err := sim.ParseWorkload([]byte(doc))
	if err == nil {
		tb.Fatalf("ParseWorkload accepted:\n%s", doc)
	}
	if !errors.Is(err, sim.ErrInvalid) {
		tb.Errorf("error %v is not ErrInvalid", err)
	}
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		tb.Fatalf("error %T %v is not a *FieldError", err, err)
	}
	if fe.Path != path {
		tb.Errorf("path = %q, want %q (error: %v)", fe.Path, path, err)
	}
	if !strings.HasPrefix(err.Error(), path+": ") {
		tb.Errorf("message %q does not start with the key path", err)
	}
}

func TestParseAliases(t *testing.T) {
	ok := strings.Replace(strings.Replace(base, "{kind: a, count: 2}", "{kind: a, count: &n 2}", 1), "{kind: b, count: 1}", "{kind: b, count: *n}", 1)
	w, err := sim.ParseWorkload([]byte(ok))
	if err != nil {
		t.Fatalf("alias to a number: %v", err)
	}
	if got := w.Queue[1].Count; got != 2 {
		t.Errorf("aliased count = %d, want 2", got)
	}
	bad := strings.Replace(strings.Replace(base, "node: {cores", "node: &nd {cores", 1), "{kind: b, count: 1}", "{kind: b, count: *nd}", 1)
	_, err = sim.ParseWorkload([]byte(bad))
	var fe *sim.FieldError
	if !errors.As(err, &fe) || fe.Path != "queue[1].count" {
		t.Errorf("alias to a mapping as a count: err = %v, want a FieldError at queue[1].count", err)
	}
}

func TestErrorNamesLine(t *testing.T) {
	doc := strings.Replace(base, "{seconds: 30, cpu: 0.1}", "{seconds: 0, cpu: 0.1}", 1)
	_, err := sim.ParseWorkload([]byte(doc))
	var fe *sim.FieldError
	if !errors.As(err, &fe) {
		t.Fatalf("err = %v", err)
	}
	wantLine := 0
	for i, l := range strings.Split(doc, "\n") {
		if strings.Contains(l, "seconds: 0") {
			wantLine = i + 1
		}
	}
	if fe.Line != wantLine {
		t.Errorf("line = %d, want %d (%v)", fe.Line, wantLine, err)
	}
}

func TestLoadWorkloadErrors(t *testing.T) {
	dir := t.TempDir()
	if _, err := sim.LoadWorkload(dir + "/missing.yaml"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
	bad := dir + "/bad.yaml"
	if err := os.WriteFile(bad, []byte("cluster: {nodes: -1}"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := sim.LoadWorkload(bad)
	if !errors.Is(err, sim.ErrInvalid) || !strings.Contains(err.Error(), bad) {
		t.Errorf("bad file: err = %v, want ErrInvalid naming the file", err)
	}
}

func TestJobsPoisson(t *testing.T) {
	w := simtest.Tiny(t)
	w.Arrivals = sim.Arrivals{Mode: sim.ArrivalsPoisson, RatePerHour: 60}
	w.Repeat = 250 // 1000 jobs
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	a := w.Jobs(rand.New(rand.NewPCG(3, 4)))
	b := w.Jobs(rand.New(rand.NewPCG(3, 4)))
	if diff := cmp.Diff(a, b); diff != "" {
		t.Fatalf("same seed, different arrivals (-a +b):\n%s", diff)
	}
	if a[0].Arrival != 0 {
		t.Errorf("first arrival = %v, want 0", a[0].Arrival)
	}
	for i := 1; i < len(a); i++ {
		if a[i].Arrival < a[i-1].Arrival {
			t.Fatalf("arrivals not sorted at %d: %v < %v", i, a[i].Arrival, a[i-1].Arrival)
		}
	}
	// 60/hour: mean gap one minute; 999 gaps, so the mean is within ±10% w.h.p.
	mean := a[len(a)-1].Arrival / time.Duration(len(a)-1)
	if mean < 54*time.Second || mean > 66*time.Second {
		t.Errorf("mean gap = %v, want about 1m", mean)
	}
	c := w.Jobs(rand.New(rand.NewPCG(5, 6)))
	if cmp.Equal(a, c) {
		t.Errorf("different seeds gave identical arrivals")
	}
}

// tenants is base with one queue block, named and timed entries, and
// classes.
var tenants = strings.Replace(base, "queue:\n  - {kind: a, count: 2}\n  - {kind: b, count: 1}\nrepeat: 2\n", `queue:
  - {kind: a, count: 2, user: alice, queue: etl}
  - {kind: b, count: 1, class: adhoc, at: 10m, every: 5m, bursts: 3}
  - {kind: c, count: 1, at: 90}
repeat: 1
`, 1) + `classes:
  - {name: etl, level: 2, alpha: {vcores: 0.5, memory: 0.5}, weight: 2}
  - {name: adhoc, alpha: {vcores: 0.8, memory: 0.6}, beta: {vcores: 0.2, memory: 0.6}, burst: 15m}
  - {name: unused}
`

func TestParseTenants(t *testing.T) {
	w, err := sim.ParseWorkload([]byte(tenants))
	if err != nil {
		t.Fatal(err)
	}
	wantQueue := []sim.QueueEntry{
		{Kind: "a", Count: 2, User: "alice", Queue: "etl", Class: "etl"},
		{Kind: "b", Count: 1, User: "bench", Queue: "adhoc", Class: "adhoc", Timed: true, At: 10 * time.Minute, Every: 5 * time.Minute, Bursts: 3},
		{Kind: "c", Count: 1, User: "bench", Queue: "default", Class: "default", Timed: true, At: 90 * time.Second, Bursts: 1},
	}
	if diff := cmp.Diff(wantQueue, w.Queue); diff != "" {
		t.Errorf("queue (-want +got):\n%s", diff)
	}
	wantClasses := []sim.ClassSpec{
		{Name: "etl", Level: 2, Alpha: sim.Rate{VCores: 0.5, Memory: 0.5}, Beta: sim.Rate{VCores: 0.5, Memory: 0.5}, Weight: 2},
		{Name: "adhoc", Level: 1, Alpha: sim.Rate{VCores: 0.8, Memory: 0.6}, Beta: sim.Rate{VCores: 0.2, Memory: 0.6}, Burst: 15 * time.Minute, Weight: 1},
		{Name: "unused", Level: 1, Weight: 1},
	}
	if diff := cmp.Diff(wantClasses, w.Classes); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
	// Untimed jobs at 0, then the timed ones by offset, numbered again.
	wantJobs := []sim.JobSpec{
		{Seq: 0, Kind: "a", User: "alice", Queue: "etl", Class: "etl"},
		{Seq: 1, Kind: "a", User: "alice", Queue: "etl", Class: "etl"},
		{Seq: 2, Kind: "c", User: "bench", Queue: "default", Class: "default", Arrival: 90 * time.Second},
		{Seq: 3, Kind: "b", User: "bench", Queue: "adhoc", Class: "adhoc", Arrival: 10 * time.Minute},
		{Seq: 4, Kind: "b", User: "bench", Queue: "adhoc", Class: "adhoc", Arrival: 15 * time.Minute},
		{Seq: 5, Kind: "b", User: "bench", Queue: "adhoc", Class: "adhoc", Arrival: 20 * time.Minute},
	}
	if diff := cmp.Diff(wantJobs, w.Jobs(nil)); diff != "" {
		t.Errorf("jobs (-want +got):\n%s", diff)
	}
}

func TestQueueEntryDefaults(t *testing.T) {
	for _, tc := range []struct {
		name, keys         string // added to the entry {kind: b, count: 1}
		user, queue, class string
	}{
		{"none", "", "bench", "default", "default"},
		{"queue only", ", queue: etl", "bench", "etl", "etl"},
		{"class only", ", class: adhoc", "bench", "adhoc", "adhoc"},
		{"all three", ", user: bob, queue: root.etl, class: nightly", "bob", "root.etl", "nightly"},
		{"null names", ", user: null, queue: null, class: null", "bench", "default", "default"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			w, err := sim.ParseWorkload([]byte(edit(t, base, "{kind: b, count: 1}", "{kind: b, count: 1"+tc.keys+"}")))
			if err != nil {
				t.Fatal(err)
			}
			q := w.Queue[1]
			if got, want := [3]string{q.User, q.Queue, q.Class}, [3]string{tc.user, tc.queue, tc.class}; got != want {
				t.Errorf("user, queue, class = %q, want %q", got, want)
			}
			for _, j := range w.Jobs(nil) {
				if j.Kind == "b" && (j.User != tc.user || j.Queue != tc.queue || j.Class != tc.class) {
					t.Errorf("job %+v does not carry its entry's names %q", j, [3]string{tc.user, tc.queue, tc.class})
				}
			}
		})
	}
}

func TestTimedEntries(t *testing.T) {
	for _, tc := range []struct {
		name, keys string // added to the entry {kind: b, count: 1}
		want       []time.Duration
	}{
		{"at, one burst", ", at: 10m", []time.Duration{10 * time.Minute}},
		{"at in seconds", ", at: 90.5", []time.Duration{90500 * time.Millisecond}},
		{"at zero is timed", ", at: 0", []time.Duration{0}},
		{"every without at", ", every: 1h, bursts: 2", []time.Duration{0, time.Hour}},
		{"at and every", ", at: 1m, every: 2m, bursts: 3", []time.Duration{time.Minute, 3 * time.Minute, 5 * time.Minute}},
		{"every with one burst", ", at: 30, every: 30, bursts: 1", []time.Duration{30 * time.Second}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc := edit(t, edit(t, base, "\nrepeat: 2", "\nrepeat: 1"), "{kind: b, count: 1}", "{kind: b, count: 2"+tc.keys+"}")
			w, err := sim.ParseWorkload([]byte(doc))
			if err != nil {
				t.Fatal(err)
			}
			if !w.Queue[1].Timed {
				t.Errorf("entry %+v not timed", w.Queue[1])
			}
			// Count jobs in every burst, after the two untimed ones at 0.
			want := []sim.JobSpec{{Kind: "a"}, {Kind: "a"}}
			for _, at := range tc.want {
				want = append(want, sim.JobSpec{Kind: "b", Arrival: at}, sim.JobSpec{Kind: "b", Arrival: at})
			}
			for i := range want {
				want[i].Seq = i
				want[i].User, want[i].Queue, want[i].Class = "bench", "default", "default"
			}
			if diff := cmp.Diff(want, w.Jobs(nil)); diff != "" {
				t.Errorf("jobs (-want +got):\n%s", diff)
			}
		})
	}
}

// A struct literal with At or Every set is timed without the parser.
func TestTimedLiteral(t *testing.T) {
	w := simtest.Tiny(t)
	w.Repeat = 1
	w.Queue = []sim.QueueEntry{
		{Kind: "cpu", Count: 1, At: time.Hour},
		{Kind: "disk", Count: 1, Every: time.Minute, Bursts: 2},
		{Kind: "cpu", Count: 1},
	}
	want := []sim.JobSpec{
		{Seq: 0, Kind: "cpu"},
		{Seq: 1, Kind: "disk"},
		{Seq: 2, Kind: "disk", Arrival: time.Minute},
		{Seq: 3, Kind: "cpu", Arrival: time.Hour},
	}
	if diff := cmp.Diff(want, w.Jobs(nil)); diff != "" {
		t.Errorf("jobs before Validate (-want +got):\n%s", diff)
	}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	if !w.Queue[0].Timed || !w.Queue[1].Timed || w.Queue[2].Timed {
		t.Errorf("Timed = %v %v %v, want true true false", w.Queue[0].Timed, w.Queue[1].Timed, w.Queue[2].Timed)
	}
	w.Repeat = 2
	var fe *sim.FieldError
	if err := w.Validate(); !errors.As(err, &fe) || fe.Path != "repeat" {
		t.Errorf("repeat 2 with timed entries: err = %v, want a FieldError at repeat", err)
	}
}

// legacyJobs is Workload.Jobs as it was before timed entries, with the
// entries' names copied: the reference that untimed workloads must match.
func legacyJobs(w *sim.Workload, rng *rand.Rand) []sim.JobSpec {
	var out []sim.JobSpec
	var at float64
	if w.Arrivals.Mode == sim.ArrivalsPoisson && rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	for range max(w.Repeat, 1) {
		for _, q := range w.Queue {
			for range q.Count {
				var arrival time.Duration
				if w.Arrivals.Mode == sim.ArrivalsPoisson && w.Arrivals.RatePerHour > 0 {
					if len(out) > 0 {
						at += rng.ExpFloat64() * 3600 / w.Arrivals.RatePerHour
					}
					arrival = time.Duration(math.Round(at * 1e9))
				}
				out = append(out, sim.JobSpec{Seq: len(out), Kind: q.Kind, User: q.User, Queue: q.Queue, Class: q.Class, Arrival: arrival,
					Containers: q.Containers, Scale: q.Scale})
			}
		}
	}
	return out
}

// Without timed entries, Jobs is the old expansion: same order, same draws.
func TestJobsUntimedUnchanged(t *testing.T) {
	paths, err := filepath.Glob("../configs/workloads/*.yaml")
	if err != nil || len(paths) == 0 {
		t.Fatalf("no shipped workloads: %v", err)
	}
	for _, p := range paths {
		t.Run(filepath.Base(p), func(t *testing.T) {
			w := load(t, p)
			if slices.ContainsFunc(w.Queue, func(q sim.QueueEntry) bool { return q.Timed }) {
				t.Skip("has timed entries: the old expansion did not have them")
			}
			named := load(t, p)
			for i := range named.Queue {
				q := &named.Queue[i]
				q.User, q.Queue, q.Class = "u"+strconv.Itoa(i%3), "q"+strconv.Itoa(i%2), "c"+strconv.Itoa(i)
			}
			if err := named.Validate(); err != nil {
				t.Fatal(err)
			}
			for seed := range uint64(3) {
				for _, w := range []*sim.Workload{w, named} {
					want := legacyJobs(w, rand.New(rand.NewPCG(seed, 1)))
					if diff := cmp.Diff(want, w.Jobs(rand.New(rand.NewPCG(seed, 1)))); diff != "" {
						t.Fatalf("seed %d: jobs differ from the old expansion (-want +got):\n%s", seed, diff)
					}
				}
			}
		})
	}
}

// Timed entries draw nothing from rng: the untimed jobs of a poisson
// workload keep their arrivals when timed entries join them.
func TestJobsTimedKeepsPoissonDraws(t *testing.T) {
	w := simtest.Tiny(t)
	w.Repeat = 1
	w.Arrivals = sim.Arrivals{Mode: sim.ArrivalsPoisson, RatePerHour: 60}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	untimed := w.Jobs(rand.New(rand.NewPCG(7, 8)))
	w.Queue = append(w.Queue, sim.QueueEntry{Kind: "cpu", Count: 2, Queue: "bursty", At: 30 * time.Second, Every: 2 * time.Minute, Bursts: 3})
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	jobs := w.Jobs(rand.New(rand.NewPCG(7, 8)))
	if len(jobs) != len(untimed)+6 {
		t.Fatalf("%d jobs, want %d", len(jobs), len(untimed)+6)
	}
	var rest []sim.JobSpec
	for i, j := range jobs {
		if j.Seq != i || (i > 0 && j.Arrival < jobs[i-1].Arrival) {
			t.Fatalf("job %d = %+v: not numbered in arrival order", i, j)
		}
		if j.Queue != "bursty" {
			rest = append(rest, j)
		}
	}
	ignoreSeq := cmpopts.IgnoreFields(sim.JobSpec{}, "Seq")
	if diff := cmp.Diff(untimed, rest, ignoreSeq); diff != "" {
		t.Errorf("untimed jobs changed (-want +got):\n%s", diff)
	}
}

// A ClassSpec literal gets its defaults from Validate.
func TestClassDefaults(t *testing.T) {
	w := simtest.Tiny(t)
	w.Classes = []sim.ClassSpec{{Name: "batch", Alpha: sim.Rate{VCores: 0.3, Memory: 0.2}}, {Name: "elastic"}}
	if err := w.Validate(); err != nil {
		t.Fatal(err)
	}
	want := []sim.ClassSpec{
		{Name: "batch", Level: 1, Alpha: sim.Rate{VCores: 0.3, Memory: 0.2}, Beta: sim.Rate{VCores: 0.3, Memory: 0.2}, Weight: 1},
		{Name: "elastic", Level: 1, Weight: 1},
	}
	if diff := cmp.Diff(want, w.Classes); diff != "" {
		t.Errorf("classes (-want +got):\n%s", diff)
	}
}

func TestParseTenantErrors(t *testing.T) {
	for _, tc := range []struct {
		name, old, new string // edit of tenants
		path           string
	}{
		{"bad user", "user: alice", "user: 'al ice'", "queue[0].user"},
		{"empty user", "user: alice", "user: ''", "queue[0].user"},
		{"empty queue", "queue: etl}", "queue: ''}", "queue[0].queue"},
		{"long queue", "queue: etl}", "queue: " + strings.Repeat("q", 65) + "}", "queue[0].queue"},
		{"bad class", "class: adhoc", "class: -adhoc", "queue[1].class"},
		{"unknown entry key", "at: 90}", "at: 90, tenant: x}", "queue[2].tenant"},
		{"negative at", "at: 90}", "at: -90}", "queue[2].at"},
		{"negative at string", "at: 90}", "at: -1m}", "queue[2].at"},
		{"at not a duration", "at: 90}", "at: soon}", "queue[2].at"},
		{"at without unit", "at: 90}", "at: '90'}", "queue[2].at"},
		{"infinite at", "at: 90}", "at: .inf}", "queue[2].at"},
		{"at a list", "at: 90}", "at: [90]}", "queue[2].at"},
		{"at beyond a year", "at: 90}", "at: 9000h}", "queue[2].at"},
		{"negative every", "every: 5m", "every: -5m", "queue[1].every"},
		{"every without bursts", ", bursts: 3}", "}", "queue[1].bursts"},
		{"bursts without every", "at: 90}", "at: 90, bursts: 2}", "queue[2].bursts"},
		{"bursts on an untimed entry", "queue: etl}", "queue: etl, bursts: 1}", "queue[0].bursts"},
		{"zero bursts", "bursts: 3", "bursts: 0", "queue[1].bursts"},
		{"last burst beyond a year", "every: 5m", "every: 5000h", "queue[1].bursts"},
		{"too many jobs in bursts", "bursts: 3", "bursts: 100000", "queue"},
		{"repeat with timed", "\nrepeat: 1", "\nrepeat: 2", "repeat"},
		{"classes not a list", tenants[strings.Index(tenants, "classes:"):], "classes: {name: etl}\n", "classes"},
		{"unknown class key", "weight: 2}", "weight: 2, wieght: 1}", "classes[0].wieght"},
		{"unknown rate key", "{vcores: 0.5, memory: 0.5}", "{vcores: 0.5, mem: 0.5}", "classes[0].alpha.mem"},
		{"missing class name", "{name: unused}", "{level: 3}", "classes[2].name"},
		{"bad class name", "{name: unused}", "{name: 'un used'}", "classes[2].name"},
		{"duplicate class name", "name: adhoc", "name: etl", "classes[1].name"},
		{"level 0", "level: 2", "level: 0", "classes[0].level"},
		{"level 17", "level: 2", "level: 17", "classes[0].level"},
		{"weight 0", "weight: 2", "weight: 0", "classes[0].weight"},
		{"negative weight", "weight: 2", "weight: -1", "classes[0].weight"},
		{"infinite weight", "weight: 2", "weight: .inf", "classes[0].weight"},
		{"rate above 1", "{vcores: 0.5, memory: 0.5}", "{vcores: 1.5, memory: 0.5}", "classes[0].alpha.vcores"},
		{"negative rate", "{vcores: 0.5, memory: 0.5}", "{vcores: 0.5, memory: -0.1}", "classes[0].alpha.memory"},
		{"NaN rate", "beta: {vcores: 0.2", "beta: {vcores: .nan", "classes[1].beta.vcores"},
		{"beta above alpha", "beta: {vcores: 0.2", "beta: {vcores: 0.9", "classes[1].beta.vcores"},
		{"beta above alpha in memory", "memory: 0.6}, burst", "memory: 0.7}, burst", "classes[1].beta.memory"},
		{"burst missing when beta < alpha", ", burst: 15m}", "}", "classes[1].burst"},
		{"negative burst", "burst: 15m", "burst: -15m", "classes[1].burst"},
		{"burst when beta == alpha", "weight: 2}", "weight: 2, burst: 1m}", "classes[0].burst"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			wantFieldError(t, edit(t, tenants, tc.old, tc.new), tc.path)
		})
	}
}

func FuzzParseWorkload(f *testing.F) {
	for _, p := range []string{queueA, queueB} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte(base))
	f.Add([]byte(tenants))
	f.Add([]byte(hetero))
	f.Add([]byte(simtest.TinyYAML))
	f.Add([]byte(strings.Replace(base, "net_mbps: 100}", "net_mbps: 100, interference: {disk_streams: 0.15, cpu_cache: 0.05}}", 1) +
		"variability: {jitter: 0.1}\n"))
	f.Add([]byte("a: &a [*a]"))
	f.Add([]byte("cluster: &c {nodes: 1}\nkinds: [*c]"))
	f.Fuzz(func(t *testing.T, b []byte) {
		w, err := sim.ParseWorkload(b)
		if err != nil {
			if !errors.Is(err, sim.ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
			return
		}
		// Accepted workloads are usable: they validate again, expand,
		// and start a simulator that can place any one of their jobs.
		if err := w.Validate(); err != nil {
			t.Fatalf("accepted workload fails Validate: %v", err)
		}
		jobs := w.Jobs(nil)
		if len(jobs) == 0 {
			t.Fatal("accepted workload has no jobs")
		}
		s, err := w.NewSim(sim.Options{})
		if err != nil {
			t.Fatalf("accepted workload fails New: %v", err)
		}
		if err := s.Submit(s.NewApplication(), sim.AppSpec{Kind: jobs[0].Kind, Containers: jobs[0].Containers, Scale: jobs[0].Scale}); err != nil {
			t.Fatalf("first job does not fit an empty cluster: %v", err)
		}
	})
}
