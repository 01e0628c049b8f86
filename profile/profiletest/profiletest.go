// Package profiletest trains profile models on synthetic nodes for tests
// of the packages that serve or print them.
package profiletest

import "github.com/colocd/colocd/profile"

// Demand is the per-container usage of the three synthetic kinds, each
// dominated by another resource; Baseline is an idle node's.
var (
	Demand = map[string]profile.Vector{
		"cpubound":  {0.15, 0, 0.01, 0.01, 0.005, 0.005},
		"diskbound": {0.03, 0.004, 0.12, 0.08, 0.01, 0.01},
		"netbound":  {0.03, 0, 0.01, 0.01, 0.05, 0.14},
	}
	Baseline = profile.Vector{0.02, 0.001, 0.005, 0.005, 0.002, 0.002}
)

// Ticks is how many learning ticks Train feeds; each observes six nodes.
const Ticks = 10

// Train feeds m Ticks ticks of six nodes: each kind alone (2 containers),
// two pairs, and an idle node. No node comes near saturation.
func Train(m *profile.Model) {
	node := func(name string, kcs ...profile.KindCount) profile.Observation {
		u := Baseline
		for _, kc := range kcs {
			for r := range profile.NumResources {
				u[r] += kc.Containers * Demand[kc.Kind][r]
			}
		}
		return profile.Observation{Node: name, Usage: u, Containers: kcs}
	}
	kc := func(kind string, n float64) profile.KindCount { return profile.KindCount{Kind: kind, Containers: n} }
	for range Ticks {
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
