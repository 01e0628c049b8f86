package profile_test

import (
	"math"
	"testing"

	"github.com/colocd/colocd/profile"
)

// big is a node with twice the reference's CPU, 2.5 times its disk and ten
// times its network.
var big = profile.Vector{2, 2, 2.5, 2.5, 10, 10}

// on is node(…) on a node of size: every container's usage a fraction of
// that node, so its demand divided by the size.
func on(size profile.Vector, kcs ...profile.KindCount) profile.Observation {
	o := node(nil, 0, kcs...)
	for r := range o.Usage {
		o.Usage[r] /= size[r]
	}
	o.Size = size
	return o
}

// The same mixes observed half on reference nodes and half on big ones:
// with each node's Size the fit recovers the demands in reference-node
// units; without it, it would mix two different fractions.
func TestModelLearnsAcrossNodeSizes(t *testing.T) {
	withSize, blind := profile.New(profile.Config{}), profile.New(profile.Config{})
	for range 200 {
		var obs, noSize []profile.Observation
		for i, mix := range mixes {
			o := node(nil, 0, mix...)
			if i%2 == 1 {
				o = on(big, mix...)
			}
			obs = append(obs, o)
			o.Size = profile.Vector{}
			noSize = append(noSize, o)
		}
		withSize.Observe(obs)
		blind.Observe(noSize)
	}
	for kind, want := range truth {
		near(t, kind, withSize.Profile(kind).Demand, want, 1e-4)
	}
	off := 0.0
	for kind, want := range truth {
		got := blind.Profile(kind).Demand
		for r := range profile.NumResources {
			off = max(off, math.Abs(got[r]-want[r]))
		}
	}
	if off < 0.01 {
		t.Errorf("without sizes the fit is within %v of the truth: the test does not tell sizes apart", off)
	}
}

// A saturated big node is judged by its own capacity: 9 cpu containers use
// 1.35 of the reference's CPU, 0.675 of a node twice as large, which is
// not saturated and is learned from.
func TestSaturationIsOfTheNodesOwnCapacity(t *testing.T) {
	m := profile.New(profile.Config{})
	for range 50 {
		rep := m.Observe([]profile.Observation{on(big, kc("cpu", 9))})
		if rep.Saturated != 0 {
			t.Fatalf("big node at %v counted saturated", on(big, kc("cpu", 9)).Usage)
		}
	}
	near(t, "cpu", m.Profile("cpu").Demand, truth["cpu"], 1e-4)
}

// Speeds and the scorer read a node's demands as fractions of that node: 8
// containers of 0.15 cores overcommit the reference node's CPU (1.2) and
// not a node twice as large.
func TestScoresUseNodeSize(t *testing.T) {
	p := profile.Fixed{"cpu": truth["cpu"]}
	jobs := []profile.KindCount{kc("cpu", 8)}
	if got := profile.Speeds(p, jobs, nil)[0]; math.Abs(got-1/1.2) > 1e-12 {
		t.Errorf("speed on the reference node = %v, want 1/1.2", got)
	}
	if got := profile.SpeedsOn(p, jobs, big, nil)[0]; got != 1 {
		t.Errorf("speed on a node of twice the CPU = %v, want 1", got)
	}
	sc := &profile.Scorer{Profiles: p, Objective: profile.ObjectiveRate}
	room := profile.Room{VCores: 16, MemoryMB: 1 << 16}
	score := func(size profile.Vector) float64 {
		n := profile.Node{Capacity: room, Free: profile.Room{VCores: 12, MemoryMB: 1<<16 - 4096}, Jobs: []profile.KindCount{kc("cpu", 4)}, Size: size}
		return sc.NewView([]profile.Node{n}).Score("cpu", profile.Shape{Containers: 4, Each: profile.Room{VCores: 1, MemoryMB: 1024}}).Value
	}
	small, large := score(profile.Vector{}), score(big)
	if !(large > small) {
		t.Errorf("rate added by 4 more cpu containers: %v on the big node, %v on the reference; want more on the big one", large, small)
	}
	pr := profile.NewPredictor(p)
	if g, gb := pr.Goodness(jobs), pr.GoodnessOn(jobs, big); g == gb {
		t.Errorf("goodness %v on both nodes, want the node's size to change it", g)
	}
}
