package sim

import "unsafe"

// Sizes of the simulator's state, for BenchmarkScale: computed from the
// structs, without what their strings and slices point to.
const (
	NodeBytes = int(unsafe.Sizeof(node{}))
	// GroupBytes is a group, its index in its app's and its node's lists,
	// and one completion in the heap.
	GroupBytes = int(unsafe.Sizeof(group{})) + 2*int(unsafe.Sizeof(int32(0))) + int(unsafe.Sizeof(completion{}))
	RunBytes   = int(unsafe.Sizeof(run{}))
)

// Counts are how many groups s started and sample runs it holds.
func Counts(s *Sim) (groups, runs int) {
	for i := range s.nodes {
		s.closeIntervals(&s.nodes[i])
		runs += len(s.nodes[i].runs)
	}
	return len(s.groups), runs
}

// AppRuns is how many per-application runs s holds for node (with
// Options.ContainerMetrics), its intervals closed first.
func AppRuns(s *Sim, node string) int {
	i := int32(s.nodeIdx[node])
	s.closeApps(i)
	return len(s.cm.nodes[i].runs)
}
