package daemon

import (
	"log/slog"
	"testing"
	"time"
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
			// The simulator answers for its nodes (nothing ran yet: no
			// application, but a read that works).
			got, err := b.parts.ContainerUsage(t.Context(), []string{"node01"}, b.clock.Now().Add(-time.Minute), b.clock.Now())
			if err != nil || got == nil {
				t.Errorf("ContainerUsage = %v, %v; want an answer", got, err)
			}
		}
		if b.close != nil {
			b.close()
		}
	}
}
