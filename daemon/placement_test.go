package daemon

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/collector/influxtest"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// yarnBase is a valid yarn configuration without a learning section.
const yarnBase = "backend: yarn\nyarn:\n  rm_urls: [http://127.0.0.1:8088]\n" +
	"influx:\n  url: http://127.0.0.1:8086\n  bucket: telegraf/autogen\n" +
	"goodness:\n  disk_read_mbps: 100\n  disk_write_mbps: 100\n  net_recv_mbps: 100\n  net_sent_mbps: 100\n"

// TestPlacementKeys: the placement keys' defaults, and their values from
// the file and the environment.
func TestPlacementKeys(t *testing.T) {
	d := DefaultConfig().Learning
	if d.Placement != placementRM || d.PlacementTolerance != 30*time.Second || !cmp.Equal(d.Foreign, foreignSection{metricsource.DefaultForeignConfig(), engine.DefaultForeignMaxKinds}) {
		t.Errorf("defaults: placement %q, tolerance %v, foreign %+v", d.Placement, d.PlacementTolerance, d.Foreign)
	}
	file := yarnBase + "learning:\n  placement: influx\n  placement_tolerance: 25s\n  foreign:\n    kind: type\n    prefix: other-\n" +
		"    max_kinds: 4\n    names:\n      - {pattern: '^nightly-', kind: nightly}\n"
	cfg, err := Load(LoadOptions{File: writeFile(t, "colocd.yaml", file), LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	want := engine.PlacementConfig{Tolerance: 25 * time.Second, ForeignKinds: true, ForeignPrefix: "other-", MaxForeignKinds: 4}
	if diff := cmp.Diff(want, cfg.Learning.PlacementConfig()); cfg.Learning.Placement != placementInflux || diff != "" {
		t.Errorf("from the file: placement %q, (-want +got):\n%s", cfg.Learning.Placement, diff)
	}
	wantNames := metricsource.ForeignConfig{Mode: metricsource.ForeignType, Prefix: "other-", Names: []metricsource.ForeignName{{Pattern: "^nightly-", Kind: "nightly"}}}
	if diff := cmp.Diff(wantNames, cfg.Learning.Foreign.ForeignConfig); diff != "" {
		t.Errorf("from the file: the placement read's naming (-want +got):\n%s", diff)
	}

	cfg, err = Load(LoadOptions{File: writeFile(t, "colocd.yaml", yarnBase), Environ: environ(map[string]string{
		"COLOCD_LEARNING_PLACEMENT": "influx", "COLOCD_LEARNING_PLACEMENT_TOLERANCE": "1m",
		"COLOCD_LEARNING_FOREIGN_KIND": "none", "COLOCD_LEARNING_FOREIGN_MAX_KINDS": "3",
	})})
	if err != nil {
		t.Fatal(err)
	}
	if l := cfg.Learning; l.Placement != placementInflux || l.PlacementTolerance != time.Minute || l.Foreign.Mode != metricsource.ForeignNone ||
		l.Foreign.MaxKinds != 3 || l.Foreign.Prefix != engine.DefaultForeignPrefix {
		t.Errorf("from the environment: %+v", l)
	}
}

// TestPlacementRefusals: every bad placement setting is refused naming
// its key.
func TestPlacementRefusals(t *testing.T) {
	for _, tc := range []struct {
		name, file, key string
		mention         string
	}{
		{"unknown source", yarnBase + "learning:\n  placement: prometheus\n", "learning.placement", "rm or influx"},
		{"influx on the simulator", "learning:\n  placement: influx\n", "learning.placement", "backend yarn"},
		{"influx without an InfluxDB", strings.Replace(yarnBase, "influx:\n  url: http://127.0.0.1:8086\n", "influx:\n", 1) +
			"metrics:\n  source: prometheus\nprometheus:\n  url: http://127.0.0.1:9090\nlearning:\n  placement: influx\n", "influx.url", "empty"},
		{"tolerance", yarnBase + "learning:\n  placement_tolerance: 0s\n", "learning.placement_tolerance", "[1s, 1h]"},
		{"foreign kind", yarnBase + "learning:\n  foreign:\n    kind: queue\n", "learning.foreign.kind", "type_queue"},
		{"foreign prefix", yarnBase + "learning:\n  foreign:\n    prefix: Foreign.\n", "learning.foreign.prefix", "Foreign."},
		{"foreign max kinds", yarnBase + "learning:\n  foreign:\n    max_kinds: 0\n", "learning.foreign.max_kinds", "[1, 1000]"},
		{"foreign kinds beyond api.max_kinds", yarnBase + "api:\n  max_kinds: 10\nlearning:\n  foreign:\n    max_kinds: 10\n",
			"learning.foreign.max_kinds", "api.max_kinds"},
		{"foreign name pattern", yarnBase + "learning:\n  foreign:\n    names:\n      - {pattern: '(', kind: x}\n",
			"learning.foreign.names[0].pattern", "RE2"},
		{"foreign name kind", yarnBase + "learning:\n  foreign:\n    names:\n      - {pattern: x, kind: X Y}\n",
			"learning.foreign.names[0].kind", "X Y"},
		{"foreign name key", yarnBase + "learning:\n  foreign:\n    names:\n      - {regex: x, kind: x}\n",
			"learning.foreign.names[0].regex", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Load(LoadOptions{File: writeFile(t, "colocd.yaml", tc.file), LookupEnv: env(nil)})
			var ce *configError
			if !errors.As(err, &ce) || ce.Key != tc.key || !strings.Contains(err.Error(), tc.mention) {
				t.Errorf("err = %v, want a configError on %s mentioning %q", err, tc.key, tc.mention)
			}
		})
	}
}

// TestPlacementWiring: with placement influx the yarn backend reads
// placement from the influx section's InfluxDB, naming the hosts as the
// usage source does (metrics.hosts); with rm it reads none.
func TestPlacementWiring(t *testing.T) {
	t0, cfg := yarnContainersStore(t, func(_ int, at int64) string {
		return fmt.Sprintf("yarn_containers,application_id=application_1_0001,host=node1,kind=sort,application_type=MAPREDUCE,queue=default containers=2i %d\n", at) +
			fmt.Sprintf("yarn_containers,application_id=application_1_0002,host=node1,application_type=SPARK,queue=etl containers=1i %d\n", at) +
			fmt.Sprintf("yarn_containers,application_id=application_1_0003,host=elsewhere,kind=sort containers=1i %d\n", at)
	})
	log := slog.New(slog.DiscardHandler)

	be, err := openYarnBackend(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if be.placement != nil {
		t.Errorf("placement rm: the backend reads placement %T", be.placement)
	}
	be.close()

	cfg.Learning.Placement = placementInflux
	if be, err = openYarnBackend(cfg, log); err != nil {
		t.Fatal(err)
	}
	defer be.close()
	if be.placement == nil {
		t.Fatal("placement influx: no placement source")
	}
	got, err := be.placement.Placements(context.Background(), []string{"node1.dc.example.com"}, t0, t0.Add(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second).UTC() }
	want := []engine.Placement{
		{Node: "node1.dc.example.com", App: "application_1_0001", Kind: "sort",
			First: at(0), Last: at(20), Samples: 3, Containers: 2},
		{Node: "node1.dc.example.com", App: "application_1_0002", Kind: "foreign.spark.etl", Foreign: true,
			First: at(0), Last: at(20), Samples: 3, Containers: 1},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("placements under YARN's names (-want +got):\n%s", diff)
	}
}

// oneNodeCluster is a cluster of one idle node n1 that admits nothing.
type oneNodeCluster struct{ engine.Cluster }

func (oneNodeCluster) State(context.Context) (cluster.State, error) {
	c := pipeline.Capacity{MemoryMB: 8192, VCores: 8}
	return cluster.State{Capacity: c, Free: c, Nodes: []cluster.Node{{Name: "n1", Capacity: c, Free: c}}}, nil
}

// askedPlacement is a placement source that records the hosts it was
// asked about and answers a colocd job and a foreign application on n1.
type askedPlacement struct{ asked [][]string }

func (a *askedPlacement) Placements(_ context.Context, hosts []string, from, to time.Time) ([]engine.Placement, error) {
	a.asked = append(a.asked, slices.Clone(hosts))
	p := engine.Placement{Node: "n1", App: "application_1_0001", Kind: "sort", First: from, Last: to.Add(-time.Second), Samples: 6, Containers: 1}
	q := p
	q.App, q.Kind, q.Foreign = "application_1_0002", "other-spark.etl", true // as the placement read names it
	return []engine.Placement{p, q}, nil
}

type fixedUsage struct{}

func (fixedUsage) Usage(_ context.Context, hosts []string, _, _ time.Time) (map[string]goodness.Usage, []string, error) {
	out := map[string]goodness.Usage{}
	for _, h := range hosts {
		out[h] = goodness.Usage{CPU: 0.5, DiskRead: 10e6}
	}
	return out, nil, nil
}

// TestOpenCorePlacement: openCore hands a backend's placement source to
// the engine with the learning section's placement settings: its learning
// tick asks the source about the cluster's node and learns the foreign
// kind as learning.foreign names it.
func TestOpenCorePlacement(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.Learning.Foreign.Prefix = "other-"
	src := &askedPlacement{}
	b := backend{cluster: oneNodeCluster{}, metrics: fixedUsage{}, placement: src, clock: engine.WallClock{}, seed: 1,
		limits: goodness.Limits{DiskRead: 100e6, DiskWrite: 100e6, NetRecv: 100e6, NetSent: 100e6}}
	store, err := queue.Open(StorePath(cfg), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c, err := openCore(cfg, b, store, nil, slog.New(slog.DiscardHandler))
	if c.journal != nil {
		defer c.journal.Close()
	}
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := c.eng.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := c.eng.Sync(ctx); err != nil {
		t.Fatal(err)
	}
	to := time.Now()
	rep, err := c.eng.Learn(ctx, to.Add(-time.Minute), to)
	if err != nil {
		t.Fatal(err)
	}
	if len(src.asked) != 1 || !slices.Equal(src.asked[0], []string{"n1"}) {
		t.Errorf("placement asked about %v, want n1 once", src.asked)
	}
	if len(rep.Goodness) != 1 || !slices.Equal(rep.Goodness[0].Kinds, []string{"sort", "other-spark.etl"}) {
		t.Errorf("co-located %+v, want sort then other-spark.etl", rep.Goodness)
	}
}

// TestContainerUsageWiring: with learning.container_usage the yarn backend
// reads each application's own usage from the influx section's InfluxDB,
// under YARN's host names (metrics.hosts), with either placement; without
// it, none.
func TestContainerUsageWiring(t *testing.T) {
	t0, cfg := yarnContainersStore(t, func(i int, at int64) string {
		return fmt.Sprintf("yarn_containers,application_id=application_1_0001,host=node1,kind=sort containers=2i,cpu_usage_us=%di,io_read_bytes=%di,io_write_bytes=0i,host_cpus=4i %d\n",
			i*4_000_000, i*1000, at)
	})
	log := slog.New(slog.DiscardHandler)

	be, err := openYarnBackend(cfg, log)
	if err != nil {
		t.Fatal(err)
	}
	if be.parts != nil {
		t.Errorf("container_usage off: the backend reads container usage %T", be.parts)
	}
	be.close()
	for _, placement := range []string{placementRM, placementInflux} {
		cfg.Learning.ContainerUsage, cfg.Learning.Placement = true, placement
		if be, err = openYarnBackend(cfg, log); err != nil {
			t.Fatal(err)
		}
		if be.parts == nil {
			t.Fatalf("container_usage with placement %s: no container usage source", placement)
		}
		got, err := be.parts.ContainerUsage(context.Background(), []string{"node1.dc.example.com"}, t0, t0.Add(30*time.Second))
		be.close()
		if err != nil {
			t.Fatal(err)
		}
		// 8e6 µs over 20 s of samples standing for 30 s (one spacing more),
		// over the 30-s window, on 4 CPUs: 0.1; reads 2000 B the same way.
		want := map[string]map[string]goodness.Usage{"node1.dc.example.com": {"application_1_0001": {CPU: 0.1, DiskRead: 100}}}
		if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); diff != "" {
			t.Errorf("placement %s: container usage under YARN's names (-want +got):\n%s", placement, diff)
		}
	}
}

// yarnContainersStore writes the plugin's points that points gives for
// three samples, 10 s apart from t0 (an hour ago), into a new InfluxDB,
// and returns t0 and a yarn backend's configuration reading it.
func yarnContainersStore(t *testing.T, points func(i int, at int64) string) (time.Time, Config) {
	t.Helper()
	s := influxtest.Start(t)
	t0 := time.Now().Add(-time.Hour).Truncate(time.Second)
	var b strings.Builder
	for i := range 3 {
		b.WriteString(points(i, t0.Add(time.Duration(10*i)*time.Second).UnixNano()))
	}
	s.Write(t, b.String())
	return t0, yarnInfluxConfig(s)
}

// yarnInfluxConfig is a yarn backend's configuration whose influx section
// is s, with short host names in the store (YARN's are qualified).
func yarnInfluxConfig(s *influxtest.Server) Config {
	cfg := DefaultConfig()
	cfg.Backend, cfg.Yarn.RMURLs = backendYarn, []string{"http://127.0.0.1:8088"}
	cfg.Influx.URL, cfg.Influx.Bucket, cfg.Influx.Token = s.URL(), s.Bucket(), s.Token()
	cfg.Metrics.Hosts = metricsource.HostsConfig{Mode: metricsource.HostsShort, Map: map[string]string{}}
	return cfg
}
