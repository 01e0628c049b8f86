package yarncontainers

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/BurntSushi/toml"
	"github.com/google/go-cmp/cmp"
	"github.com/influxdata/telegraf/config"
	"github.com/influxdata/telegraf/testutil"

	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
	"github.com/colocd/colocd/internal/testing/deadaddr"
)

var gatherTime = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

// point is a metric as the tests compare it.
type point struct {
	Tags   map[string]string
	Fields map[string]any
}

func points(t testing.TB, acc *testutil.Accumulator) []point {
	t.Helper()
	var out []point
	for _, m := range acc.Metrics {
		if m.Measurement != measurement {
			t.Errorf("measurement %q, want %q", m.Measurement, measurement)
		}
		if !m.Time.Equal(gatherTime) {
			t.Errorf("time %v, want the gather's %v", m.Time, gatherTime)
		}
		out = append(out, point{Tags: m.Tags, Fields: m.Fields})
	}
	return out
}

func fields(containers, memoryMB, vcores int64) map[string]any {
	return map[string]any{"containers": containers, "memory_mb": memoryMB, "vcores": vcores}
}

func newPlugin(t testing.TB, nm string, rm ...string) *YarnContainers {
	t.Helper()
	y := newYarnContainers()
	y.NodeManagerURL, y.ResourceManagerURLs = nm, rm
	y.now = func() time.Time { return gatherTime }
	if err := y.Init(); err != nil {
		t.Fatalf("Init: %v", err)
	}
	return y
}

func TestGather(t *testing.T) {
	fake := nmtest.New(t)
	done := nmtest.Running("container_1700000000000_0001_01_000003", 9999, 9)
	done.State = "DONE" // finished: holds nothing
	fake.SetContainers(
		nmtest.Running("container_1700000000000_0001_01_000001", 2048, 1),
		nmtest.Running("container_1700000000000_0001_01_000002", 4096, 2),
		done,
		nmtest.Running("container_e17_1700000000000_0002_01_000001", 1024, 1), // epoch prefix
		nmtest.Running("container_1700000000000_0003_01_000001", 512, 1),
		nmtest.Running("container_1700000000000_0004_02_000001", 512, 1),
	)
	fake.SetApp("application_1700000000000_0001", "colocd-job-01hx", "colocd-kind-terasort")
	fake.SetApp("application_1700000000000_0002", "colocd-kind-pagerank", "team-a")
	// Another tenant's: no kind, its type and queue.
	fake.SetAppInfo("application_1700000000000_0003", nmtest.App{Name: "nightly etl 2024-03-01", Queue: "root.etl", Type: "SPARK",
		Tags: []string{"someone-elses"}})
	// application_..._0004 is unknown to the RM: its id alone.

	y := newPlugin(t, fake.URL(), fake.URL())
	var acc testutil.Accumulator
	if err := acc.GatherError(y.Gather); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	mr := func(id, kind string) map[string]string {
		return map[string]string{"application_id": id, "kind": kind, "application_type": "MAPREDUCE", "queue": "default"}
	}
	want := []point{
		{mr("application_1700000000000_0001", "terasort"), fields(2, 6144, 3)},
		{mr("application_1700000000000_0002", "pagerank"), fields(1, 1024, 1)},
		{map[string]string{"application_id": "application_1700000000000_0003", "application_type": "SPARK", "queue": "root.etl"},
			fields(1, 512, 1)},
		{map[string]string{"application_id": "application_1700000000000_0004"}, fields(1, 512, 1)},
	}
	if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
		t.Errorf("first gather (-want +got):\n%s", diff)
	}

	// Tags are looked up once per application while it stays; an
	// application that leaves is forgotten.
	fake.SetContainers(nmtest.Running("container_1700000000000_0002_01_000009", 1024, 1))
	acc.ClearMetrics()
	if err := acc.GatherError(y.Gather); err != nil {
		t.Fatalf("second Gather: %v", err)
	}
	if diff := cmp.Diff(want[1:2], points(t, &acc)); diff != "" {
		t.Errorf("second gather (-want +got):\n%s", diff)
	}
	wantLookups := map[string]int{
		"application_1700000000000_0001": 1, "application_1700000000000_0002": 1,
		"application_1700000000000_0003": 1, "application_1700000000000_0004": 1,
	}
	if diff := cmp.Diff(wantLookups, fake.RMRequests()); diff != "" {
		t.Errorf("RM lookups (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]string{"application_1700000000000_0002"}, cachedApps(y)); diff != "" {
		t.Errorf("cached applications (-want +got):\n%s", diff)
	}
}

func cachedApps(y *YarnContainers) []string {
	var out []string
	for app := range y.apps {
		out = append(out, app)
	}
	slices.Sort(out)
	return out
}

func TestGatherResourceManagerDown(t *testing.T) {
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running("container_1700000000000_0001_01_000001", 2048, 1))
	fake.SetApp("application_1700000000000_0001", "colocd-kind-terasort")
	fake.FailRM(http.StatusServiceUnavailable)

	// The first RM is not listening at all; the second answers 503.
	y := newPlugin(t, fake.URL(), deadaddr.URL(t), fake.URL())
	var acc testutil.Accumulator
	if err := y.Gather(&acc); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	want := []point{{map[string]string{"application_id": "application_1700000000000_0001"}, fields(1, 2048, 1)}}
	if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
		t.Errorf("points without the RM (-want +got):\n%s", diff)
	}
	if len(acc.Errors) != 1 || !strings.Contains(acc.Errors[0].Error(), "503") {
		t.Errorf("errors = %v, want one naming the RM's 503", acc.Errors)
	}

	// The RM comes back: the kind appears, since failures are not cached.
	fake.FailRM(0)
	acc = testutil.Accumulator{}
	if err := y.Gather(&acc); err != nil {
		t.Fatalf("Gather: %v", err)
	}
	want[0].Tags["kind"], want[0].Tags["application_type"], want[0].Tags["queue"] = "terasort", "MAPREDUCE", "default"
	if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
		t.Errorf("points after the RM recovered (-want +got):\n%s", diff)
	}
	if y.rm != 1 {
		t.Errorf("last good RM index = %d, want 1", y.rm)
	}
}

func TestGatherNodeManagerErrors(t *testing.T) {
	fake := nmtest.New(t)
	fake.FailNM(http.StatusInternalServerError)
	y := newPlugin(t, fake.URL())
	var acc testutil.Accumulator
	if err := y.Gather(&acc); err == nil || !strings.Contains(err.Error(), "node manager") {
		t.Errorf("Gather with a failing NM = %v, want a node manager error", err)
	}
	if len(acc.Metrics) != 0 {
		t.Errorf("emitted %d points from a failing NM", len(acc.Metrics))
	}

	hung := make(chan struct{})
	slow := httptest.NewServer(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { <-hung }))
	defer slow.Close()
	defer close(hung)
	y = newYarnContainers()
	y.NodeManagerURL, y.Timeout = slow.URL, config.Duration(100*time.Millisecond)
	if err := y.Init(); err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	if err := y.Gather(&acc); err == nil {
		t.Error("Gather against a hung NM returned no error")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("Gather against a hung NM took %v, want about the 100ms timeout", d)
	}
}

// TestDocumentedShapes replays the NodeManager's documented response and
// the one-element and empty variants YARN's JSON writer produces.
func TestDocumentedShapes(t *testing.T) {
	for file, want := range map[string][]point{
		"containers_doc.json":    {{map[string]string{"application_id": "application_1326121700862_0006"}, fields(2, 4096, 3)}},
		"containers_single.json": {{map[string]string{"application_id": "application_1410901177871_0001"}, fields(1, 1024, 1)}},
		"containers_empty.json":  nil,
		"containers_null.json":   nil,
	} {
		t.Run(file, func(t *testing.T) {
			body, err := os.ReadFile(filepath.Join("testdata", file))
			if err != nil {
				t.Fatal(err)
			}
			nm := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.URL.Path != "/ws/v1/node/containers" || r.Header.Get("Accept") != "application/json" {
					http.Error(w, "unexpected request "+r.URL.String(), http.StatusBadRequest)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				_, _ = w.Write(body)
			}))
			defer nm.Close()
			y := newPlugin(t, nm.URL)
			var acc testutil.Accumulator
			if err := acc.GatherError(y.Gather); err != nil {
				t.Fatalf("Gather: %v", err)
			}
			if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
		})
	}
}

func TestUserName(t *testing.T) {
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		got = append(got, r.URL.Query().Get("user.name"))
		_, _ = w.Write([]byte(`{"containers":null}`))
	}))
	defer srv.Close()
	y := newYarnContainers()
	y.NodeManagerURL, y.UserName = srv.URL+"/", "yarn"
	if err := y.Init(); err != nil {
		t.Fatal(err)
	}
	if err := y.Gather(&testutil.Accumulator{}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"yarn"}, got); diff != "" {
		t.Errorf("user.name (-want +got):\n%s", diff)
	}
}

func TestKindFromTags(t *testing.T) {
	for tags, want := range map[string]string{
		"colocd-job-1,colocd-kind-tpch-q10": "tpch-q10",
		" colocd-kind-sort , x":             "sort",
		"colocd-kind-,colocd-kind-b":        "b",
		"other":                             "",
		"":                                  "",
	} {
		if got := kindFromTags(tags, defaultKindTagPrefix); got != want {
			t.Errorf("kindFromTags(%q) = %q, want %q", tags, got, want)
		}
	}
}

func TestInit(t *testing.T) {
	for name, tc := range map[string]struct {
		mod     func(*YarnContainers)
		wantErr string
	}{
		"defaults":      {func(*YarnContainers) {}, ""},
		"https with rm": {func(y *YarnContainers) { y.ResourceManagerURLs = []string{"https://rm1:8090", "https://rm2:8090"} }, ""},
		"empty nm":      {func(y *YarnContainers) { y.NodeManagerURL = "" }, "node_manager_url"},
		"nm scheme":     {func(y *YarnContainers) { y.NodeManagerURL = "ftp://x" }, "node_manager_url"},
		"nm no host":    {func(y *YarnContainers) { y.NodeManagerURL = "http://" }, "node_manager_url"},
		"bad rm":        {func(y *YarnContainers) { y.ResourceManagerURLs = []string{"http://rm", "::"} }, "resource_manager_urls[1]"},
		"empty prefix":  {func(y *YarnContainers) { y.KindTagPrefix = "" }, "kind_tag_prefix"},
		"name field":    {func(y *YarnContainers) { y.ApplicationName = nameField }, ""},
		"name unset":    {func(y *YarnContainers) { y.ApplicationName = "" }, ""},
		"name as tag":   {func(y *YarnContainers) { y.ApplicationName = "tag" }, "application_name"},
		"zero timeout":  {func(y *YarnContainers) { y.Timeout = 0 }, "timeout"},
		"bad tls":       {func(y *YarnContainers) { y.TLSCA = "/nonexistent/ca.pem" }, "tls"},
		"kerberos half": {func(y *YarnContainers) { y.KerberosPrincipal = "telegraf@EXAMPLE.ORG" }, "kerberos_keytab"},
		"kerberos and user": {func(y *YarnContainers) {
			y.KerberosPrincipal, y.KerberosKeytab, y.UserName = "telegraf@EXAMPLE.ORG", "/etc/telegraf/telegraf.keytab", "yarn"
		}, "user_name"},
		"kerberos keytab missing": {func(y *YarnContainers) {
			y.KerberosPrincipal, y.KerberosKeytab = "telegraf@EXAMPLE.ORG", filepath.Join(t.TempDir(), "none.keytab")
		}, "kerberos"},
	} {
		t.Run(name, func(t *testing.T) {
			y := newYarnContainers()
			tc.mod(y)
			err := y.Init()
			switch {
			case tc.wantErr == "" && err != nil:
				t.Fatalf("Init: %v", err)
			case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
				t.Fatalf("Init = %v, want an error naming %s", err, tc.wantErr)
			}
		})
	}
}

// TestSampleConfig decodes sample.conf, uncommented, the way the shim
// does, and checks every key lands in a field.
func TestSampleConfig(t *testing.T) {
	var uncommented strings.Builder
	for _, line := range strings.Split(sampleConfig, "\n") {
		trimmed := strings.TrimSpace(line)
		if strings.HasPrefix(trimmed, "# ") && strings.Contains(trimmed, " = ") {
			line = strings.TrimPrefix(trimmed, "# ")
		}
		uncommented.WriteString(line + "\n")
	}
	var conf struct {
		Inputs map[string][]toml.Primitive
	}
	md, err := toml.Decode(uncommented.String(), &conf)
	if err != nil {
		t.Fatalf("sample.conf: %v", err)
	}
	prims := conf.Inputs[measurement]
	if len(prims) != 1 {
		t.Fatalf("sample.conf has %d [[inputs.%s]] tables, want 1", len(prims), measurement)
	}
	y := newYarnContainers()
	if err := md.PrimitiveDecode(prims[0], y); err != nil {
		t.Fatalf("decode: %v", err)
	}
	if undecoded := md.Undecoded(); len(undecoded) != 0 {
		t.Errorf("keys without a field: %v", undecoded)
	}
	if y.TLSCA == "" || y.KindTagPrefix != defaultKindTagPrefix || time.Duration(y.Timeout) != defaultTimeout ||
		y.ApplicationName != nameNone {
		t.Errorf("decoded %+v, want the sample's values", y)
	}
}

// TestHoldsResources pins the one state where the plugin departs from
// yarnclient.NMContainer.Live: a KILLING container still occupies the node.
func TestHoldsResources(t *testing.T) {
	for state, want := range map[string]bool{
		"NEW": true, "LOCALIZING": true, "LOCALIZED": true, "RUNNING": true, "KILLING": true,
		"LOCALIZATION_FAILED": false, "EXITED_WITH_SUCCESS": false, "EXITED_WITH_FAILURE": false,
		"CONTAINER_CLEANEDUP_AFTER_KILL": false, "CONTAINER_RESOURCES_CLEANINGUP": false, "DONE": false,
	} {
		c := nmtest.Running("container_1700000000000_0001_01_000001", 1024, 1)
		c.State = state
		if got := holdsResources(c); got != want {
			t.Errorf("holdsResources(%s) = %v, want %v", state, got, want)
		}
	}
}

// TestApplicationName: with application_name = "field" every application
// the RM names carries its name as a string field, never as a tag; by
// default no point carries it.
func TestApplicationName(t *testing.T) {
	fake := nmtest.New(t)
	fake.SetContainers(
		nmtest.Running("container_1700000000000_0001_01_000001", 1024, 1),
		nmtest.Running("container_1700000000000_0002_01_000001", 1024, 1),
	)
	fake.SetAppInfo("application_1700000000000_0001", nmtest.App{Name: "word count", Queue: "default", Type: "MAPREDUCE",
		Tags: []string{"colocd-kind-wordcount"}})
	// application_..._0002 is unknown to the RM: no name to give.
	for mode, wantName := range map[string]bool{nameNone: false, nameField: true} {
		t.Run(mode, func(t *testing.T) {
			y := newYarnContainers()
			y.NodeManagerURL, y.ResourceManagerURLs, y.ApplicationName = fake.URL(), []string{fake.URL()}, mode
			y.now = func() time.Time { return gatherTime }
			if err := y.Init(); err != nil {
				t.Fatal(err)
			}
			var acc testutil.Accumulator
			if err := acc.GatherError(y.Gather); err != nil {
				t.Fatal(err)
			}
			f := fields(1, 1024, 1)
			if wantName {
				f["application_name"] = "word count"
			}
			want := []point{
				{map[string]string{"application_id": "application_1700000000000_0001", "kind": "wordcount",
					"application_type": "MAPREDUCE", "queue": "default"}, f},
				{map[string]string{"application_id": "application_1700000000000_0002"}, fields(1, 1024, 1)},
			}
			if diff := cmp.Diff(want, points(t, &acc)); diff != "" {
				t.Errorf("points (-want +got):\n%s", diff)
			}
		})
	}
}
