package yarncluster_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"testing"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// BenchmarkAdmitPassYARN times one engine.AdmitPass that admits passJobs
// jobs on a YARN cluster of n nodes — engine → yarncluster → yarnclient →
// a fake RM over loopback HTTP — and reports the bytes the RM answered per
// pass (bytes/pass) and its requests (requests/pass). The cluster: n
// NodeManagers of 32 vcores, n/5 running applications of other tenants
// holding 60 % of it (yarntest.Populate), and colocdRunning of colocd's
// own jobs running. Between passes (not timed) the admitted applications
// are killed and a Sync finishes their jobs, so every pass meets the
// same cluster. The admitted applications stay ACCEPTED, as YARN leaves
// them until the scheduler allocates their containers.
func BenchmarkAdmitPassYARN(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchAdmitPass(b, n, yarncluster.DefaultNodesRefresh) })
	}
}

// BenchmarkAdmitPassYARNNodesRefresh is BenchmarkAdmitPassYARN with
// yarn.nodes_refresh 0: every pass reads the nodes, as the one pass in
// each nodes_refresh that does under the default.
func BenchmarkAdmitPassYARNNodesRefresh(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("nodes=%d", n), func(b *testing.B) { benchAdmitPass(b, n, 0) })
	}
}

const (
	passJobs      = 10
	colocdRunning = 20
)

func benchAdmitPass(b *testing.B, nodes int, refresh time.Duration) {
	ctx := context.Background()
	rm := yarntest.NewFakeRM(b, yarntest.Populate(yarntest.Population{Nodes: nodes, Apps: nodes / 5, Seed: 1}))
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User, cfg.NodesRefresh = []string{rm.URL()}, "colocd", refresh
	c, err := yarnclient.New(cfg.ClientConfig(nil))
	if err != nil {
		b.Fatal(err)
	}
	e, store := benchEngine(b, yarncluster.New(c, cfg, nil))
	if _, err := e.Reconcile(ctx); err != nil {
		b.Fatal(err)
	}
	// colocd's own running jobs, with containers on the nodes.
	submitJobs(b, e, store, colocdRunning)
	rep, err := e.AdmitPass(ctx)
	if err != nil || len(rep.Admitted) != colocdRunning {
		b.Fatalf("admit colocd's running jobs: %+v, %v", rep, err)
	}
	hosts := rm.Nodes()
	for i, a := range rm.Apps() {
		if a.State != "ACCEPTED" {
			continue
		}
		if err := rm.StartApp(a.ID); err != nil {
			b.Fatal(err)
		}
		var on []string
		for k := range 7 { // an AM and 7 executors over 7 nodes
			on = append(on, hosts[(i*131+k*17)%len(hosts)].ID)
		}
		if err := rm.PlaceContainers(a.ID, on...); err != nil {
			b.Fatal(err)
		}
	}
	if _, err := e.Sync(ctx); err != nil {
		b.Fatal(err)
	}
	var bytes int64
	var requests int
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		submitJobs(b, e, store, passJobs)
		before := rm.Traffic()
		b.StartTimer()
		rep, err := e.AdmitPass(ctx)
		b.StopTimer()
		after := rm.Traffic()
		if err != nil || len(rep.Admitted) != passJobs {
			b.Fatalf("pass %d admitted %d of %d jobs (%s): %v", i, len(rep.Admitted), passJobs, rep.Stopped, err)
		}
		bytes += after.Bytes - before.Bytes
		requests += after.Requests - before.Requests
		for _, id := range rep.Admitted {
			j, err := store.Get(id)
			if err != nil {
				b.Fatal(err)
			}
			if err := rm.FinishApp(j.AppID, "KILLED"); err != nil {
				b.Fatal(err)
			}
		}
		if _, err := e.Sync(ctx); err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(bytes)/float64(b.N), "bytes/pass")
	b.ReportMetric(float64(requests)/float64(b.N), "requests/pass")
}

// benchEngine is colocd's default engine (the profile model deciding by
// argmax) over cluster c, on a store in a temporary directory.
func benchEngine(b *testing.B, c engine.Cluster) (*engine.Engine, *queue.Store) {
	b.Helper()
	store, err := queue.Open(filepath.Join(b.TempDir(), "colocd.db"), queue.Options{NoSync: true})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { store.Close() })
	q := pipeline.DefaultConfig()
	q.Preference.Mode, q.Select.Mode = pipeline.PreferenceModel, pipeline.SelectArgmax
	q.Preference.ObserveWait = 0
	e, err := engine.New(engine.Options{
		Store: store, Learner: bandit.New(bandit.Config{StepSize: 0.1}), Cluster: c, Clock: engine.WallClock{},
		Rand: rand.New(rand.NewPCG(1, 2)), Queue: q, Scorer: engine.DefaultScorerConfig(),
		Profile: profile.Config{HalfLife: profile.DefaultHalfLife, PriorStrength: profile.DefaultPriorStrength,
			Saturation: profile.DefaultSaturation},
	})
	if err != nil {
		b.Fatal(err)
	}
	return e, store
}

// submitJobs queues n jobs of three kinds: 8 containers of 4 GB and 1
// vcore each, REST submission.
func submitJobs(b *testing.B, e *engine.Engine, store *queue.Store, n int) {
	b.Helper()
	for i := range n {
		j := queue.Job{Kind: fmt.Sprintf("etl-%d", i%3), User: "ana", Queue: "default",
			Resources: queue.Resources{Containers: 8, MemoryMB: 4096, VCores: 1},
			Submit:    []byte(`{"am-container-spec":{"commands":{"command":"true"}}}`)}
		if err := e.Prepare(&j); err != nil {
			b.Fatal(err)
		}
		got, _, err := store.Submit(context.Background(), j)
		if err != nil {
			b.Fatal(err)
		}
		e.AddKind(got.Kind)
	}
}
