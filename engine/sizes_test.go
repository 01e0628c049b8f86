package engine

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

func TestNodeSizes(t *testing.T) {
	ref := goodness.Limits{DiskRead: 300e6, DiskWrite: 300e6, NetRecv: 117e6, NetSent: 117e6}
	fast := goodness.Limits{DiskRead: 600e6, DiskWrite: 600e6, NetRecv: 1170e6, NetSent: 1170e6}
	s := nodeSizes{refVCores: 12, ref: ref, limits: LimitsByNode(map[string]goodness.Limits{"new1": fast})}
	for _, tc := range []struct {
		name   string
		node   string
		vcores int64
		want   profile.Vector
	}{
		{"the reference node", "old1", 12, profile.Vector{}},
		{"more vcores", "old2", 24, profile.Vector{2, 2, 1, 1, 1, 1}},
		{"configured disk and network", "new1", 12, profile.Vector{1, 1, 2, 2, 10, 10}},
		{"both", "new1", 6, profile.Vector{0.5, 0.5, 2, 2, 10, 10}},
		{"no vcores reported", "old3", 0, profile.Vector{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if diff := cmp.Diff(tc.want, s.size(tc.node, tc.vcores)); diff != "" {
				t.Errorf("size (-want,+got):\n%s", diff)
			}
		})
	}
	if got := s.limitsOf("new1"); got != fast {
		t.Errorf("limitsOf(new1) = %+v, want its own", got)
	}
	if got := s.limitsOf("old1"); got != ref {
		t.Errorf("limitsOf(old1) = %+v, want the reference's", got)
	}
	// No reference vcores: CPU is the reference's everywhere.
	if got := (nodeSizes{ref: ref}).size("x", 48); got != (profile.Vector{}) {
		t.Errorf("size without reference vcores = %v, want zero", got)
	}
}

// The scorer reads each node's size: the same CPU-bound job adds more
// progress on an empty-enough node with twice the vcores than on the
// reference node running the same containers.
func TestModelScorerUsesNodeSize(t *testing.T) {
	truth := profile.Fixed{"cpu": {0.15, 0, 0, 0, 0, 0}}
	sc, err := newModelScorer(DefaultScorerConfig(), 0, truth, nil)
	if err != nil {
		t.Fatal(err)
	}
	sc.size = nodeSizes{refVCores: 8}.size
	score := func(vcores int64) float64 {
		snap := &pipeline.Snapshot{Nodes: []pipeline.NodeFree{{Name: "n", Capacity: pipeline.Capacity{VCores: vcores, MemoryMB: 1 << 20},
			Free: pipeline.Capacity{VCores: vcores - 4, MemoryMB: 1<<20 - 4096}, Jobs: []pipeline.NodeJob{{Kind: "cpu", Containers: 4}}}}}
		out := make([]pipeline.Score, 1)
		sc.Score(snap, []string{"cpu"}, []queue.Resources{{Containers: 4, MemoryMB: 1024, VCores: 1}}, out)
		return out[0].Value
	}
	if small, big := score(8), score(16); !(big > small) {
		t.Errorf("score of 4 more cpu containers: %v on 16 vcores, %v on 8; want more on the larger node", big, small)
	}
}
