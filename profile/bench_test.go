package profile_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/colocd/colocd/profile"
)

// BenchmarkObserve is one learning tick of the profile model: N nodes,
// each running 2–3 of K kinds, folded in and refitted, on a model that has
// already seen 20 such ticks.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct{ kinds, nodes int }{{10, 100}, {100, 1000}, {1000, 10000}} {
		b.Run(fmt.Sprintf("kinds=%d/nodes=%d", tc.kinds, tc.nodes), func(b *testing.B) {
			rng := rand.New(rand.NewPCG(1, 2))
			demand := make([]profile.Vector, tc.kinds)
			names := make([]string, tc.kinds)
			for k := range demand {
				names[k] = fmt.Sprintf("kind-%04d", k)
				for r := range demand[k] {
					demand[k][r] = 0.1 * rng.Float64()
				}
			}
			tick := func() []profile.Observation {
				obs := make([]profile.Observation, tc.nodes)
				for n := range obs {
					var o profile.Observation
					for range 2 + rng.IntN(2) {
						k := rng.IntN(tc.kinds)
						c := float64(1 + rng.IntN(4))
						o.Containers = append(o.Containers, profile.KindCount{Kind: names[k], Containers: c})
						for r := range o.Usage {
							o.Usage[r] += c * demand[k][r]
						}
					}
					obs[n] = o
				}
				return obs
			}
			m := profile.New(profile.Config{})
			for range 20 {
				m.Observe(tick())
			}
			ticks := make([][]profile.Observation, 8)
			for i := range ticks {
				ticks[i] = tick()
			}
			b.ReportAllocs()
			b.ResetTimer()
			i := 0
			for b.Loop() {
				rep := m.Observe(ticks[i%len(ticks)])
				if rep.Observations != tc.nodes {
					b.Fatalf("folded %d observations, want %d", rep.Observations, tc.nodes)
				}
				i++
			}
		})
	}
}
