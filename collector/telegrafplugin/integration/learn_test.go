package integration

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/collector/telegrafplugin/nmtest"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// oneNode is an engine.Cluster of one idle node, named as Telegraf names
// this machine: the learning tick asks the metrics about the cluster's
// nodes. It admits nothing.
type oneNode struct{}

func (oneNode) State(context.Context) (cluster.State, error) {
	capa := pipeline.Capacity{MemoryMB: 8192, VCores: 8}
	return cluster.State{Capacity: capa, Free: capa, Nodes: []cluster.Node{{Name: host, Capacity: capa, Free: capa}}}, nil
}

var errNoAdmission = errors.New("this cluster admits nothing")

func (oneNode) Reserve(context.Context) (string, error)         { return "", errNoAdmission }
func (oneNode) Submit(context.Context, string, queue.Job) error { return errNoAdmission }
func (oneNode) App(context.Context, string) (cluster.AppStatus, error) {
	return cluster.AppStatus{}, cluster.ErrUnknownApp
}
func (oneNode) Kill(context.Context, string) error { return errNoAdmission }

// TestLearningFromPlugin is learning.placement influx end to end: the real
// Telegraf runs the plugin against a NodeManager holding a colocd job
// (terasort) and another tenant's Spark application in queue etl, and
// writes its samples and this machine's usage into the real InfluxDB; one
// learning tick of the engine then reads placement (internal/metricsource
// Placements over collector.Placements) and usage (metricsource.Source) from that
// InfluxDB. Its report shows terasort and the foreign kind
// foreign.spark.etl co-located on the node, terasort's application
// admitted first, and the learner learns terasort given the foreign kind.
func TestLearningFromPlugin(t *testing.T) {
	fake := nmtest.New(t)
	fake.SetContainers(
		nmtest.Running("container_1700000000000_0001_01_000001", 2048, 1),
		nmtest.Running("container_1700000000000_0001_01_000002", 2048, 1),
		nmtest.Running("container_1700000000000_0002_01_000001", 4096, 2),
	)
	fake.SetApp("application_1700000000000_0001", "colocd-job-01j0", "colocd-kind-terasort")
	fake.SetAppInfo("application_1700000000000_0002", nmtest.App{Name: "nightly etl", Queue: "etl", Type: "SPARK"})
	c := telegrafToInfluxDB(t, fake)
	e, learner, rep := learnOnce(t, c, false)
	t.Logf("learning tick: %+v", rep)
	const foreign = "foreign.spark.etl"
	if len(rep.Goodness) != 1 || rep.Goodness[0].Node != host || !slices.Equal(rep.Goodness[0].Kinds, []string{"terasort", foreign}) {
		t.Fatalf("co-located %+v, want terasort then %s on %s", rep.Goodness, foreign, host)
	}
	if rep.Colocations != 1 || rep.Observed != 1 || rep.Updates != 1 || len(rep.Stale)+len(rep.Invalid)+len(rep.Unplaced) != 0 {
		t.Errorf("report %+v, want one co-location observed and one update, no host skipped", rep)
	}
	s := learner.Snapshot()
	fi, ti := slices.Index(s.Kinds, foreign), slices.Index(s.Kinds, "terasort")
	if fi < 0 || ti < 0 || s.PairObservations[fi][ti] != 1 {
		t.Errorf("pair observations %v over %v, want terasort given %s once", s.PairObservations, s.Kinds, foreign)
	}
	if !slices.Contains(e.Profiles().Kinds(), foreign) || rep.Profile.Observations != 1 {
		t.Errorf("profiled kinds %v after %d observations, want %s among them after 1", e.Profiles().Kinds(), rep.Profile.Observations, foreign)
	}
}

// learnOnce runs one learning tick over what Telegraf wrote to c: an
// engine with oneNode as its cluster reads usage (metricsource.Source),
// placement (metricsource.Placements) and, with parts, each application's
// own usage (metricsource.Containers) from c, over a window both
// applications' samples cover. Telegraf samples and flushes every second:
// a sample within 2 s of each edge of the window covers it.
func learnOnce(t *testing.T, c *collector.Collector, parts bool) (*engine.Engine, *bandit.Learner, engine.LearnReport) {
	t.Helper()
	placements, err := metricsource.NewPlacements(c, metricsource.HostsConfig{}, metricsource.DefaultForeignConfig())
	if err != nil {
		t.Fatal(err)
	}
	src, err := metricsource.New(c, metricsource.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cu engine.ContainerUsageSource
	if parts {
		if cu, err = metricsource.NewContainers(c, metricsource.HostsConfig{}); err != nil {
			t.Fatal(err)
		}
	}
	pc := engine.PlacementConfig{Tolerance: 2 * time.Second, ForeignKinds: true, ForeignPrefix: engine.DefaultForeignPrefix, MaxForeignKinds: engine.DefaultForeignMaxKinds}
	placer, err := engine.NewPlacer(placements, pc)
	if err != nil {
		t.Fatal(err)
	}
	e, learner := newEngine(t, src, placer, cu)
	ctx := t.Context()
	if _, err := e.Reconcile(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Sync(ctx); err != nil { // the engine learns its node
		t.Fatal(err)
	}
	from, to := coveredWindow(t, ctx, placements, pc.Tolerance)
	rep, err := e.Learn(ctx, from, to)
	if err != nil {
		t.Fatalf("Learn [%v, %v): %v", from, to, err)
	}
	return e, learner, rep
}

// newEngine is an engine over a fresh store and learner, with metrics as
// its learning source, parts its container usage source (nil: none) and
// oneNode as its cluster.
func newEngine(t *testing.T, metrics engine.UsageSource, placer *engine.Placer, parts engine.ContainerUsageSource) (*engine.Engine, *bandit.Learner) {
	t.Helper()
	store, err := queue.Open(filepath.Join(t.TempDir(), "colocd.db"), queue.Options{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	learner := bandit.New(bandit.Config{StepSize: 0.1})
	e, err := engine.New(engine.Options{
		Store: store, Learner: learner, Cluster: oneNode{}, Metrics: metrics, Placement: placer, Clock: engine.WallClock{}, ContainerUsage: parts,
		Queue: pipeline.DefaultConfig(), Scorer: engine.DefaultScorerConfig(),
		Limits: goodness.Limits{DiskRead: 500e6, DiskWrite: 500e6, NetRecv: 1250e6, NetSent: 1250e6},
	})
	if err != nil {
		t.Fatal(err)
	}
	return e, learner
}

// coveredWindow waits, with a bounded deadline, for a window of a few
// seconds that both applications' samples cover within tol of each edge
// (Telegraf started moments ago, and flushes every second), and returns
// it. The window ends in the past, so what InfluxDB holds of it is final.
func coveredWindow(t *testing.T, ctx context.Context, p *metricsource.Placements, tol time.Duration) (from, to time.Time) {
	t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		to = time.Now().Add(-2 * time.Second).Truncate(time.Second)
		from = to.Add(-5 * time.Second)
		pls, err := p.Placements(ctx, []string{host}, from, to)
		covered := 0
		for _, pl := range pls {
			if !pl.Unknown { // the plugin had the RM's answer
				if pl.First.Sub(from) <= tol && to.Sub(pl.Last) <= tol {
					covered++
				}
			}
		}
		if err == nil && covered == 2 {
			return from, to
		}
		if time.Now().After(deadline) {
			t.Fatalf("no window covered by both applications' samples after 90 s: last read %+v, err %v", pls, err)
		}
		select {
		case <-ctx.Done():
			t.Fatal(ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

var _ engine.Cluster = oneNode{}

var _ metricsource.PlacementReader = (*collector.Collector)(nil)

// TestLearningFromCgroups is learning.container_usage end to end: the real
// Telegraf runs the plugin with cgroup_dir at a fake cgroup v2 tree whose
// counters a goroutine advances at known rates (terasort's two containers
// half a core each and 20 MB/s of reads, pagerank's one a tenth of a
// core), and writes into the real InfluxDB; one learning tick reads the
// placement, the node's usage and each application's own usage
// (collector.ContainerUsage through metricsource.Containers) from it. The
// two kinds, never observed and only ever together, are learned apart:
// each from its own cgroups, not from this machine's sum.
func TestLearningFromCgroups(t *testing.T) {
	const (
		t1 = "container_1700000000000_0001_01_000001"
		t2 = "container_1700000000000_0001_01_000002"
		p1 = "container_1700000000000_0002_01_000001"
	)
	root := filepath.Join(t.TempDir(), "hadoop-yarn")
	fake := nmtest.New(t)
	fake.SetContainers(nmtest.Running(t1, 2048, 1), nmtest.Running(t2, 2048, 1), nmtest.Running(p1, 1024, 1))
	fake.SetApp("application_1700000000000_0001", "colocd-job-01j1", "colocd-kind-terasort")
	fake.SetApp("application_1700000000000_0002", "colocd-job-01j2", "colocd-kind-pagerank")
	// Cores and read bytes per second of each container.
	rates := map[string][2]float64{t1: {0.5, 20e6}, t2: {0.5, 20e6}, p1: {0.1, 0}}
	start := time.Now()
	advance := func() {
		s := time.Since(start).Seconds()
		for id, r := range rates {
			writeCgroup(t, root, id, fmt.Sprintf("usage_usec %d\n", int64(r[0]*s*1e6)),
				fmt.Sprintf("8:0 rbytes=%d wbytes=0 rios=1 wios=0 dbytes=0 dios=0\n", int64(r[1]*s)))
		}
	}
	advance()
	stop := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				advance()
			}
		}
	}()
	t.Cleanup(func() { close(stop); <-done })

	c, _ := runTelegraf(t, pluginConfig(t, fake, fmt.Sprintf("cgroup_dir = %q", root)))
	e, _, rep := learnOnce(t, c, true)
	if rep.Profile.Observations != 1 {
		t.Fatalf("the profiles observed %d nodes, want this one", rep.Profile.Observations)
	}
	cpus := float64(onlineCPUs(t))
	tera, page := e.Profiles().Profile("terasort").Demand, e.Profiles().Profile("pagerank").Demand
	// One tick of 2 containers: the prior (strength 1 against 2² = 4)
	// holds a fifth of terasort's estimate, and the counters' first sample
	// comes up to a second into the 5-s window.
	if want := 0.5 / cpus; tera[profile.CPU] < 0.5*want || tera[profile.CPU] > 1.2*want {
		t.Errorf("terasort's CPU per container %.4f, want near its cgroups' %.4f", tera[profile.CPU], want)
	}
	if !(tera[profile.CPU] > 2*page[profile.CPU]) {
		t.Errorf("terasort's CPU %.4f per container, pagerank's %.4f: want terasort's clearly larger, as their cgroups show", tera[profile.CPU], page[profile.CPU])
	}
	// Reads, of the engine's 500 MB/s: pagerank reads nothing, but one
	// container's one tick leaves half its estimate to the prior.
	if want := 20e6 / 500e6; tera[profile.DiskRead] < 0.5*want || tera[profile.DiskRead] > 1.2*want || !(page[profile.DiskRead] < tera[profile.DiskRead]) {
		t.Errorf("reads per container: terasort %.4f, pagerank %.4f; want terasort's near its cgroups' %.4f and pagerank's below it",
			tera[profile.DiskRead], page[profile.DiskRead], want)
	}
}
