package profile_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/colocd/colocd/profile"
)

// plain hides the Model's shortcuts: PredictGoodness over it reads every
// profile whole and every covariance.
type plain struct{ profile.Profiles }

// counting is the Model, shortcuts included, counting Covariance calls.
type counting struct {
	*profile.Model
	calls int
}

func (c *counting) Covariance(a, b string) float64 {
	c.calls++
	return c.Model.Covariance(a, b)
}

// TestPredictGoodnessShortcutExact: on a model with many kinds, light and
// heavy nodes, known and never-observed kinds (and a kind listed twice),
// the prediction that skips covariances where they cannot matter is the
// full one, bit for bit.
func TestPredictGoodnessShortcutExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := profile.New(profile.Config{})
	demand := map[string]profile.Vector{}
	kind := func(i int) string { return fmt.Sprintf("k%02d", i) }
	for i := range 60 {
		var d profile.Vector
		for r := range profile.NumResources {
			d[r] = 0.02 + 0.25*rng.Float64()*rng.Float64()
		}
		d[profile.IOWait] = 0
		demand[kind(i)] = d
	}
	for range 40 {
		var obs []profile.Observation
		for range 80 {
			kc := []profile.KindCount{{Kind: kind(rng.IntN(50)), Containers: float64(1 + rng.IntN(3))}, {Kind: kind(rng.IntN(50)), Containers: 1}}
			var u profile.Vector
			for _, c := range kc {
				for r := range profile.NumResources {
					u[r] += c.Containers * demand[c.Kind][r] * (1 + 0.1*rng.NormFloat64())
				}
			}
			for r := range u {
				u[r] = min(max(u[r], 0), 0.95)
			}
			obs = append(obs, profile.Observation{Node: "n", Usage: u, Containers: kc})
		}
		m.Observe(obs)
	}
	skipped := 0
	for n := range 3000 {
		var jobs []profile.KindCount
		for range 1 + rng.IntN(3) {
			jobs = append(jobs, profile.KindCount{Kind: kind(rng.IntN(60)), Containers: float64(1 + rng.IntN(4))})
		}
		c := &counting{Model: m}
		got, want := profile.PredictGoodness(c, jobs), profile.PredictGoodness(plain{m}, jobs)
		if math.Float64bits(got) != math.Float64bits(want) {
			t.Fatalf("node %d %v: %v with the shortcut, %v without", n, jobs, got, want)
		}
		if c.calls == 0 {
			skipped++
		}
	}
	if skipped < 300 || skipped > 2700 {
		t.Errorf("%d nodes of 3000 skipped the covariances: the test does not exercise both paths", skipped)
	}
	t.Logf("%d nodes of 3000 predicted without covariances", skipped)
}
