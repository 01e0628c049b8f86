package profile_test

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/colocd/colocd/profile"
)

// benchWorld is a model that has seen 20 ticks of nodes each running 2–3
// of kinds kinds, and more such ticks.
func benchWorld(kinds, nodes int) (*profile.Model, []string, func() []profile.Observation) {
	rng := rand.New(rand.NewPCG(1, 2))
	demand := make([]profile.Vector, kinds)
	names := make([]string, kinds)
	for k := range demand {
		names[k] = fmt.Sprintf("kind-%04d", k)
		for r := range demand[k] {
			demand[k][r] = 0.1 * rng.Float64()
		}
	}
	tick := func() []profile.Observation {
		obs := make([]profile.Observation, nodes)
		for n := range obs {
			var o profile.Observation
			for range 2 + rng.IntN(2) {
				k := rng.IntN(kinds)
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
	return m, names, tick
}

// BenchmarkObserve is one learning tick of the profile model: N nodes,
// each running 2–3 of K kinds, folded in and refitted, on a model that has
// already seen 20 such ticks.
func BenchmarkObserve(b *testing.B) {
	for _, tc := range []struct{ kinds, nodes int }{{10, 100}, {100, 1000}, {1000, 10000}} {
		b.Run(fmt.Sprintf("kinds=%d/nodes=%d", tc.kinds, tc.nodes), func(b *testing.B) {
			m, _, tick := benchWorld(tc.kinds, tc.nodes)
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

// BenchmarkColumns solves the covariance columns of 400 of 1,000 kinds
// (one component, the learning tick's prediction at scale: the kinds of
// the jobs running) on a fresh state of the equations: one at a time
// ("alone", Covariance) or read ahead (Predictor.Prepare: in parallel,
// four columns per pass over the matrix).
func BenchmarkColumns(b *testing.B) {
	for _, mode := range []string{"alone", "prepared"} {
		b.Run(mode, func(b *testing.B) {
			m, names, tick := benchWorld(1000, 10000)
			rng := rand.New(rand.NewPCG(3, 4))
			want := make([]profile.KindCount, 400)
			for i, k := range rng.Perm(len(names))[:len(want)] {
				want[i] = profile.KindCount{Kind: names[k], Containers: 1}
			}
			for b.Loop() {
				b.StopTimer()
				m.Observe(tick()) // new equations: no column cached
				b.StartTimer()
				if mode == "prepared" {
					profile.NewPredictor(m).Prepare(want)
				}
				for _, kc := range want {
					if m.Covariance(kc.Kind, kc.Kind) <= 0 {
						b.Fatalf("variance of %s not positive", kc.Kind)
					}
				}
			}
		})
	}
}
