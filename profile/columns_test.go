package profile_test

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"testing"

	"github.com/colocd/colocd/profile"
)

// TestPreparedColumnsAreExact: the covariance columns Predictor.Prepare
// solves in parallel are bit for bit those Covariance solves one at a
// time, whatever the number of goroutines, over two components of the
// co-location graph, a kind never observed and a kind unknown to the model.
func TestPreparedColumnsAreExact(t *testing.T) {
	build := func() (*profile.Model, [][]profile.KindCount) {
		rng := rand.New(rand.NewPCG(5, 6))
		m := profile.New(profile.Config{})
		var comps [][]profile.KindCount
		for range 30 {
			var obs []profile.Observation
			for range 60 {
				g := rng.IntN(2) // kinds g0-* run only beside g0-*, g1-* beside g1-*
				a, b := fmt.Sprintf("g%d-%d", g, rng.IntN(40)), fmt.Sprintf("g%d-%d", g, rng.IntN(40))
				cs := []profile.KindCount{kc(a, float64(1+rng.IntN(3))), kc(b, float64(1+rng.IntN(3)))}
				if a == b {
					cs = cs[:1]
				}
				obs = append(obs, profile.Observation{Usage: profile.Vector{rng.Float64() * 0.8, rng.Float64() * 0.3, 0.1}, Containers: cs})
				comps = append(comps, cs)
			}
			m.Observe(obs)
		}
		m.Add("never-observed")
		comps = append(comps, []profile.KindCount{kc("never-observed", 1), kc("unknown", 2)})
		return m, comps
	}
	var kinds []string
	for g := range 2 {
		for i := range 40 {
			kinds = append(kinds, fmt.Sprintf("g%d-%d", g, i))
		}
	}
	kinds = append(kinds, "never-observed", "unknown")

	seq, _ := build()
	want := map[[2]string]float64{}
	for _, a := range kinds {
		for _, b := range kinds {
			want[[2]string{a, b}] = seq.Covariance(a, b)
		}
	}
	for _, procs := range []int{1, 3, 8} {
		t.Run(fmt.Sprintf("GOMAXPROCS=%d", procs), func(t *testing.T) {
			defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(procs))
			m, comps := build()
			profile.NewPredictor(m).Prepare(comps...)
			bad := 0
			for _, a := range kinds {
				for _, b := range kinds {
					if got := m.Covariance(a, b); got != want[[2]string{a, b}] {
						bad++
						if bad <= 5 {
							t.Errorf("Covariance(%s, %s) = %v after Prepare, %v solved alone", a, b, got, want[[2]string{a, b}])
						}
					}
				}
			}
			if c := want[[2]string{"g0-1", "g1-1"}]; c != 0 {
				t.Errorf("Covariance across components = %v, want 0", c)
			}
			if c := want[[2]string{"g0-1", "g0-2"}]; c == 0 {
				t.Errorf("Covariance within a component = 0: the fixture has no co-locations")
			}
		})
	}
}
