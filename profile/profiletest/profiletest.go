// Package profiletest trains profile models on synthetic nodes for tests
// of the packages that serve or print them.
package profiletest

import "github.com/colocd/colocd/profile"

// demand is the per-container usage of the three synthetic kinds, each
// dominated by another resource; baseline is an idle node's.
var (
	demand = map[string]profile.Vector{
		"cpubound":  {0.15, 0, 0.01, 0.01, 0.005, 0.005},
		"diskbound": {0.03, 0.004, 0.12, 0.08, 0.01, 0.01},
		"netbound":  {0.03, 0, 0.01, 0.01, 0.05, 0.14},
	}
	baseline = profile.Vector{0.02, 0.001, 0.005, 0.005, 0.002, 0.002}
)

// ticks is how many learning ticks Train feeds; each observes six nodes.
const ticks = 10

// Train feeds m the ticks, six nodes each: each kind alone (2 containers),
// two pairs, and an idle node. No node comes near saturation.
func Train(m *profile.Model) {
	node := func(name string, kcs ...profile.KindCount) profile.Observation {
		u := baseline
		for _, kc := range kcs {
			for r := range profile.NumResources {
				u[r] += kc.Containers * demand[kc.Kind][r]
			}
		}
		return profile.Observation{Node: name, Usage: u, Containers: kcs}
	}
	kc := func(kind string, n float64) profile.KindCount { return profile.KindCount{Kind: kind, Containers: n} }
	for range ticks {
		m.Observe([]profile.Observation{
			node("n1", kc("cpubound", 2)),
			node("n2", kc("diskbound", 2)),
			node("n3", kc("netbound", 2)),
			node("n4", kc("cpubound", 1), kc("diskbound", 1)),
			node("n5", kc("diskbound", 1), kc("netbound", 2)),
			node("n6"),
		})
	}
}
