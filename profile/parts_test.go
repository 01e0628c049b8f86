package profile_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/colocd/colocd/profile"
)

// parted is node's observation with each kind's own CPU and disk as parts,
// as cgroups per container would show them.
func parted(rng *rand.Rand, sd float64, kcs ...profile.KindCount) profile.Observation {
	o := node(rng, sd, kcs...)
	for _, k := range kcs {
		var u profile.Vector
		for r := range profile.NumResources {
			if profile.Measured(profile.Resource(r)) {
				u[r] = k.Containers * truth[k.Kind][r]
			}
		}
		o.Parts = append(o.Parts, profile.Part{Kind: k.Kind, Usage: u})
	}
	return o
}

// Two kinds never seen apart: from node sums their split stays unknown
// (TestConfoundedKindsStayUncertain); with each kind's own CPU and disk
// measured apart, both are learned on those resources, and their network,
// which no cgroup shows, still sums to what the nodes show.
func TestPartsSeparateKindsNeverSeenApart(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	whole, parts := profile.New(profile.Config{}), profile.New(profile.Config{})
	for range 30 {
		whole.Observe([]profile.Observation{node(rng, 0.002, kc("cpu", 3), kc("disk", 3))})
		parts.Observe([]profile.Observation{parted(rng, 0.002, kc("cpu", 3), kc("disk", 3))})
	}
	for _, kind := range []string{"cpu", "disk"} {
		got := parts.Profile(kind).Demand
		for _, r := range []profile.Resource{profile.CPU, profile.DiskRead, profile.DiskWrite} {
			if math.Abs(got[r]-truth[kind][r]) > 0.005 {
				t.Errorf("with parts, %s %s = %.4f, want %.4f", kind, r, got[r], truth[kind][r])
			}
		}
	}
	// The node-sum fit cannot tell them apart: the CPU trainer's CPU is
	// far from the truth there (the test shows what parts add).
	if got := whole.Profile("cpu").Demand[profile.CPU]; math.Abs(got-truth["cpu"][profile.CPU]) < 0.02 {
		t.Errorf("without parts, cpu's CPU = %.4f, near its true %.4f: the comparison shows nothing", got, truth["cpu"][profile.CPU])
	}
	a, b := parts.Profile("cpu").Demand, parts.Profile("disk").Demand
	for _, r := range []profile.Resource{profile.NetIn, profile.NetOut} {
		want := 3 * (truth["cpu"][r] + truth["disk"][r])
		if got := 3 * (a[r] + b[r]); math.Abs(got-want) > 0.01 {
			t.Errorf("with parts, the pair's %s = %.4f, want the nodes' %.4f", r, got, want)
		}
	}
}

// Parts that miss a kind of the node, or hold a non-finite amount, are
// ignored: the node is fitted whole, as without them.
func TestIncompletePartsFitTheNodeWhole(t *testing.T) {
	for name, spoil := range map[string]func(*profile.Observation){
		"missing kind": func(o *profile.Observation) { o.Parts = o.Parts[:1] },
		"NaN":          func(o *profile.Observation) { o.Parts[1].Usage[profile.CPU] = math.NaN() },
		"negative":     func(o *profile.Observation) { o.Parts[0].Usage[profile.DiskRead] = -1 },
	} {
		t.Run(name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(5, 6))
			whole, spoilt := profile.New(profile.Config{}), profile.New(profile.Config{})
			for range 10 {
				o := parted(rng, 0.002, kc("cpu", 3), kc("disk", 2))
				spoil(&o)
				spoilt.Observe([]profile.Observation{o})
				o.Parts = nil
				whole.Observe([]profile.Observation{o})
			}
			for _, kind := range []string{"cpu", "disk"} {
				if got, want := spoilt.Profile(kind).Demand, whole.Profile(kind).Demand; got != want {
					t.Errorf("%s = %v, want the whole node's fit %v", kind, got, want)
				}
			}
		})
	}
}

// A saturated node's parts are censored like the node: a disk kind
// slowed by a saturated disk shows less than it asks and must not be
// learned lower than what it showed before, unsaturated.
func TestSaturatedPartsAreCensored(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := profile.New(profile.Config{})
	for range 30 {
		m.Observe([]profile.Observation{parted(rng, 0, kc("disk", 3), kc("cpu", 3))})
	}
	before := m.Profile("disk").Demand[profile.DiskRead]
	for range 30 {
		o := parted(rng, 0, kc("disk", 6), kc("cpu", 1))
		f := 0.95 / (o.Usage[profile.DiskRead] + o.Usage[profile.DiskWrite]) // the disk at 95 %: saturated
		for r := range o.Usage {
			o.Usage[r] *= f
		}
		for i := range o.Parts {
			for r := range o.Parts[i].Usage {
				o.Parts[i].Usage[r] *= f
			}
		}
		m.Observe([]profile.Observation{o})
	}
	if after := m.Profile("disk").Demand[profile.DiskRead]; after < before-0.002 {
		t.Errorf("disk's reads fell from %.4f to %.4f on saturated nodes, which only bound them from below", before, after)
	}
}
