package daemon

import (
	"log/slog"

	"testing"
	"time"

	"github.com/colocd/colocd/queue"
)

// TestSimContainerUsage: learning.container_usage on the simulator turns
// on its per-application metrics and hands them to the engine; off, the
// backend has no container usage source.
func TestSimContainerUsage(t *testing.T) {
	for _, on := range []bool{false, true} {
		cfg, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
		if err != nil {
			t.Fatal(err)
		}
		cfg.DataDir = t.TempDir()
		cfg.Sim.Workload = "../configs/workloads/paper-queue-a.yaml"
		cfg.Learning.ContainerUsage = on
		b, err := openSimBackend(cfg, slog.New(slog.DiscardHandler), time.Now)
		if err != nil {
			t.Fatal(err)
		}
		if (b.parts != nil) != on {
			t.Errorf("container_usage %v: the backend's container usage source is %v", on, b.parts)
		}
		if on {
			// A job of queue A's first kind runs: once a few simulated
			// metrics intervals have passed (the demo's 60×: a fraction of
			// a wall second each), its application's own usage shows.
			app, err := b.cluster.Reserve(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := b.cluster.Submit(t.Context(), app, queue.Job{ID: "j1", Kind: b.kinds[0]}); err != nil {
				t.Fatal(err)
			}
			start := b.clock.Now()
			seen := false
			for deadline := time.Now().Add(60 * time.Second); !seen && time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
				now := b.clock.Now()
				if now.Sub(start) < time.Minute {
					continue
				}
				got, err := b.parts.ContainerUsage(t.Context(), b.nodesOf(t), start, now)
				if err != nil {
					t.Fatal(err)
				}
				for _, apps := range got {
					seen = seen || apps[app].CPU > 0
				}
			}
			if !seen {
				t.Errorf("the simulator never showed application %s's own CPU", app)
			}
		}
		if b.close != nil {
			b.close()
		}
	}
}

// nodesOf is the backend cluster's node names.
func (b backend) nodesOf(t *testing.T) []string {
	t.Helper()
	st, err := b.cluster.State(t.Context())
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, n := range st.Nodes {
		names = append(names, n.Name)
	}
	return names
}
