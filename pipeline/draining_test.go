package pipeline_test

import (
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// drainCase is a 100-vcore cluster with four pending jobs of 10 vcores,
// kind "k" (10 min), submitted every gap: their work is 4·10·10/100 = 4
// minutes of the whole cluster.
func drainCase(gap time.Duration) pipeline.Snapshot {
	capa := pipeline.Capacity{MemoryMB: 1 << 20, VCores: 100}
	var pending []queue.Job
	for i := range 4 {
		j := pj(uint64(i+1), "k", containers(10))
		j.CreatedAt = t0.Add(time.Duration(i) * gap)
		pending = append(pending, j)
	}
	return pipeline.Snapshot{
		Now: t0.Add(time.Hour), Capacity: capa, Free: capa, Pending: pending, PendingTotal: len(pending),
		History: map[string]queue.KindHistory{"k": {Kind: "k", Runs: 3, EWMARuntime: 10 * time.Minute}},
	}
}

// TestDraining: the queue drains when its pending work is more than ratio
// times the span over which it arrived; a batch submitted at one instant
// drains whatever its runtimes; a kind without history counts at the mean
// of the known kinds'; one pending job, or no capacity, is no queue.
func TestDraining(t *testing.T) {
	for _, tc := range []struct {
		name  string
		snap  func() pipeline.Snapshot
		ratio float64
		want  bool
	}{
		{"a batch", func() pipeline.Snapshot { return drainCase(0) }, 1, true},
		{"a batch, nothing known", func() pipeline.Snapshot {
			s := drainCase(0)
			s.History = nil
			return s
		}, 1, true},
		// 4 min of work over 3 gaps of 1 min: 4 > 3
		{"arrivals faster than service", func() pipeline.Snapshot { return drainCase(time.Minute) }, 1, true},
		{"the same at ratio 2", func() pipeline.Snapshot { return drainCase(time.Minute) }, 2, false},
		// 4 min of work over 3 gaps of 2 min: 4 < 6
		{"a flow the cluster keeps up with", func() pipeline.Snapshot { return drainCase(2 * time.Minute) }, 1, false},
		{"a flow, nothing known", func() pipeline.Snapshot {
			s := drainCase(time.Second)
			s.History = nil
			return s
		}, 1, false},
		// a kind with no history at the mean of the known (10 and 50 min: 30):
		// (3·10 + 30)·10/100 = 6 min of work over 3 min
		{"an unknown kind at the known mean", func() pipeline.Snapshot {
			s := drainCase(time.Minute)
			s.History["long"] = queue.KindHistory{Kind: "long", Runs: 1, EWMARuntime: 50 * time.Minute}
			s.Pending[3].Kind = "new"
			return s
		}, 1.9, true},
		{"one job", func() pipeline.Snapshot {
			s := drainCase(0)
			s.Pending = s.Pending[:1]
			return s
		}, 1, false},
		{"no capacity", func() pipeline.Snapshot {
			s := drainCase(0)
			s.Capacity.VCores = 0
			return s
		}, 1, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := tc.snap()
			if got := s.Draining(tc.ratio); got != tc.want {
				t.Errorf("Draining(%v) = %v, want %v", tc.ratio, got, tc.want)
			}
		})
	}
}
