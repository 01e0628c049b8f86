package profile_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/profile"
)

// truth is a set of per-container demands the tests generate usage from.
var truth = map[string]profile.Vector{
	"cpu":  {0.15, 0, 0.01, 0.01, 0.02, 0.02},
	"disk": {0.05, 0.004, 0.18, 0.04, 0.03, 0.03},
	"net":  {0.06, 0, 0.02, 0.01, 0.16, 0.14},
}

// node returns an observation of the given containers under truth, plus
// Gaussian noise of sd on every resource (never below 0).
func node(rng *rand.Rand, sd float64, kc ...profile.KindCount) profile.Observation {
	var u profile.Vector
	for _, k := range kc {
		for r := range profile.NumResources {
			u[r] += k.Containers * truth[k.Kind][r]
		}
	}
	for r := range u {
		if sd > 0 {
			u[r] = max(0, u[r]+sd*rng.NormFloat64())
		}
	}
	return profile.Observation{Node: "n", Usage: u, Containers: kc}
}

func kc(kind string, c float64) profile.KindCount {
	return profile.KindCount{Kind: kind, Containers: c}
}

// mixes are node compositions that tell the three kinds apart.
var mixes = [][]profile.KindCount{
	{kc("cpu", 3), kc("disk", 3)},
	{kc("cpu", 3), kc("net", 3)},
	{kc("disk", 3), kc("net", 3)},
	{kc("cpu", 2), kc("disk", 2), kc("net", 2)},
	{kc("cpu", 3)},
}

func near(t *testing.T, what string, got, want profile.Vector, tol float64) {
	t.Helper()
	for r := range profile.NumResources {
		if math.Abs(got[r]-want[r]) > tol {
			t.Errorf("%s %s = %.4f, want %.4f ± %g", what, profile.Resource(r), got[r], want[r], tol)
		}
	}
}

func TestModelRecoversDemands(t *testing.T) {
	for _, tc := range []struct {
		name string
		sd   float64
		tol  float64
	}{
		{"exact", 0, 1e-4},
		{"noisy", 0.02, 0.01},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewPCG(1, 2))
			m := profile.New(profile.Config{})
			for tick := range 200 {
				var obs []profile.Observation
				for _, mix := range mixes {
					obs = append(obs, node(rng, tc.sd, mix...))
				}
				rep := m.Observe(obs)
				if rep.Observations != len(mixes) {
					t.Fatalf("tick %d folded %d observations, want %d", tick, rep.Observations, len(mixes))
				}
			}
			for kind, want := range truth {
				p := m.Profile(kind)
				if !p.Known || p.Ticks != 200 {
					t.Errorf("%s: known %v ticks %d, want true 200", kind, p.Known, p.Ticks)
				}
				near(t, kind, p.Demand, want, tc.tol)
			}
		})
	}
}

func TestDemandsStayNonNegative(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	m := profile.New(profile.Config{})
	for range 100 {
		var obs []profile.Observation
		for _, mix := range mixes {
			obs = append(obs, node(rng, 0.05, mix...)) // noise larger than the small demands
		}
		m.Observe(obs)
	}
	for _, p := range m.Profiles() {
		for r, v := range p.Demand {
			if v < 0 || math.IsNaN(v) {
				t.Errorf("%s %s = %v, want a number >= 0", p.Kind, profile.Resource(r), v)
			}
		}
	}
}

func TestNewKindLearnedBesideKnownOnes(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	m := profile.New(profile.Config{})
	for range 50 { // cpu and disk are known
		m.Observe([]profile.Observation{node(rng, 0.01, kc("cpu", 3), kc("disk", 3)), node(rng, 0.01, kc("cpu", 6))})
	}
	if p := m.Profile("net"); p.Known {
		t.Fatalf("net known before it ran: %+v", p)
	}
	// net appears beside the known kinds: one tick tells it apart.
	m.Observe([]profile.Observation{node(rng, 0.01, kc("cpu", 3), kc("net", 3)), node(rng, 0.01, kc("disk", 3), kc("net", 3))})
	p := m.Profile("net")
	if !p.Known || p.Ticks != 1 {
		t.Fatalf("net after one tick: known %v ticks %d", p.Known, p.Ticks)
	}
	dom, v := p.Dominant()
	want := truth["net"][profile.NetIn]
	if dom != profile.NetIn || math.Abs(v-want)/want > 0.15 {
		t.Errorf("net's dominant resource after one tick: %s %.3f, want net_in within 15%% of %.3f", dom, v, want)
	}
}

func TestConfoundedKindsShareTheirSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := profile.New(profile.Config{})
	for range 100 { // cpu and disk only ever run together, three each
		m.Observe([]profile.Observation{node(rng, 0.005, kc("cpu", 3), kc("disk", 3))})
	}
	a, b := m.Profile("cpu"), m.Profile("disk")
	var sum, want profile.Vector
	for r := range sum {
		sum[r] = a.Demand[r] + b.Demand[r]
		want[r] = truth["cpu"][r] + truth["disk"][r]
	}
	near(t, "cpu+disk", sum, want, 0.005)
	if a.Weight > 3 || b.Weight > 3 {
		t.Errorf("weights %.1f and %.1f: two kinds never seen apart must stay near the prior's %v", a.Weight, b.Weight, profile.DefaultPriorStrength)
	}
	if c := m.Covariance("cpu", "disk"); c >= 0 {
		t.Errorf("Covariance(cpu, disk) = %v, want negative: their split is unknown", c)
	}
	// The variance of the sum (3 each) is far below that of each part.
	vsum := 9 * (m.Covariance("cpu", "cpu") + 2*m.Covariance("cpu", "disk") + m.Covariance("disk", "disk"))
	vcpu := 9 * m.Covariance("cpu", "cpu")
	if !(vsum < vcpu/10) {
		t.Errorf("variance of the known sum %v, of cpu alone %v: want the sum at least 10× more certain", vsum, vcpu)
	}
	// One node running cpu alone separates them.
	for range 5 {
		m.Observe([]profile.Observation{node(rng, 0.005, kc("cpu", 3), kc("disk", 3)), node(rng, 0.005, kc("cpu", 3))})
	}
	near(t, "cpu", m.Profile("cpu").Demand, truth["cpu"], 0.01)
	near(t, "disk", m.Profile("disk").Demand, truth["disk"], 0.01)
}

func TestSaturatedObservationsAreLowerBounds(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	m := profile.New(profile.Config{})
	for range 50 {
		m.Observe([]profile.Observation{node(rng, 0.005, kc("disk", 3), kc("cpu", 3)), node(rng, 0.005, kc("cpu", 3))})
	}
	before := m.Profile("disk").Demand
	// Six disk containers ask 1.08 of the disk: it saturates and every
	// container slows to 1/1.08, so the node shows less than they ask.
	for range 50 {
		o := node(rng, 0, kc("disk", 6))
		for r := range o.Usage {
			o.Usage[r] /= 6 * truth["disk"][profile.DiskRead] / 0.95 // disk read+write at 0.95·… of a node
		}
		m.Observe([]profile.Observation{o})
	}
	after := m.Profile("disk").Demand
	for r := range after {
		if after[r] < before[r]-0.005 {
			t.Errorf("disk %s fell from %.4f to %.4f on saturated nodes, which only bound it from below", profile.Resource(r), before[r], after[r])
		}
	}
}

// A saturated node's usage bounds its containers' demand from above too:
// none runs slower than a tenth of its pace. A kind first seen beside
// another kind's burst of disk writes (its one unsaturated observation
// gives it the burst) and afterwards only on nodes whose CPU it saturates,
// writing nothing, must lose the writes it never does; with saturation
// only a lower bound it would keep them for ever.
func TestSaturatedObservationsBoundFromAbove(t *testing.T) {
	m := profile.New(profile.Config{})
	burst := profile.Vector{profile.CPU: 0.3, profile.DiskWrite: 0.3}
	m.Observe([]profile.Observation{{Node: "a", Usage: burst, Containers: []profile.KindCount{kc("scan", 1)}}})
	if got := m.Profile("scan").Demand[profile.DiskWrite]; got < 0.1 {
		t.Fatalf("after the burst scan writes %.3f per container, want the burst's share (the setup is wrong)", got)
	}
	saturated := profile.Observation{Node: "a", Usage: profile.Vector{profile.CPU: 0.97, profile.DiskRead: 0.4}, Containers: []profile.KindCount{kc("scan", 3)}}
	var rep profile.TickReport
	for range 30 {
		rep = m.Observe([]profile.Observation{saturated})
	}
	if rep.Saturated != 1 {
		t.Fatalf("report %+v, want the node censored", rep)
	}
	d := m.Profile("scan").Demand
	if d[profile.DiskWrite] > 0.02 {
		t.Errorf("scan writes %.4f per container after 30 saturated ticks of no writes, want about 0", d[profile.DiskWrite])
	}
	// The lower bound still holds: the CPU it saturates is at least what it showed.
	if d[profile.CPU] < 0.97/3-0.01 || d[profile.DiskRead] < 0.4/3-0.01 {
		t.Errorf("scan demand %v, want at least the saturated usage per container (cpu %.3f, read %.3f)", d, 0.97/3, 0.4/3)
	}
}

// A kind that saturates a node's CPU whenever it runs (ten containers of
// 0.15 cores ask 1.5 of the node) shows at most the node's CPU: censored,
// its demand is learned low; with its pressure stall (every container got
// 1/1.5 of what it asked: stalled a third of the time) it is learned as
// it is. A network that saturates is still censored: PSI does not cover it.
func TestStallsUncensorSaturatedNodes(t *testing.T) {
	saturated := func(stall profile.Stall) profile.Observation {
		var u profile.Vector
		for r := range profile.NumResources {
			u[r] = 10 * truth["cpu"][r] / 1.5 // every container at 2/3 speed
		}
		return profile.Observation{Node: "n", Usage: u, Containers: []profile.KindCount{kc("cpu", 10)}, Stall: stall}
	}
	for _, tc := range []struct {
		name   string
		stall  profile.Stall
		lo, hi float64 // bounds of the learned CPU demand
	}{
		{"no stall information: censored", profile.Stall{}, 0, 0.11},
		{"stalls read", profile.Stall{Known: true, CPU: 1 - 1/1.5}, 0.149, 0.151},
	} {
		m := profile.New(profile.Config{})
		var rep profile.TickReport
		for range 30 {
			rep = m.Observe([]profile.Observation{saturated(tc.stall)})
		}
		if got := m.Profile("cpu").Demand[profile.CPU]; got < tc.lo || got > tc.hi {
			t.Errorf("%s: cpu demand %.4f, want in [%v, %v] (truth %v)", tc.name, got, tc.lo, tc.hi, truth["cpu"][profile.CPU])
		}
		if tc.stall.Known && (rep.Unstalled != 1 || rep.Saturated != 0) {
			t.Errorf("%s: report %+v, want 1 unstalled and none censored", tc.name, rep)
		}
	}
	// A kind the CPU stall does not touch (no CPU demand) counts in full.
	m := profile.New(profile.Config{})
	idle := profile.Vector{}
	idle[profile.NetIn] = 0.2
	for range 30 {
		m.Observe([]profile.Observation{{Node: "n", Usage: idle, Containers: []profile.KindCount{kc("nic", 1)}, Stall: profile.Stall{Known: true}}})
	}
	o := profile.Observation{Node: "n", Usage: profile.Vector{profile.NetIn: 0.2}, Containers: []profile.KindCount{kc("nic", 1)}, Stall: profile.Stall{Known: true, CPU: 0.5}}
	for range 30 {
		m.Observe([]profile.Observation{o})
	}
	if got := m.Profile("nic").Demand[profile.NetIn]; math.Abs(got-0.2) > 0.01 {
		t.Errorf("a kind without CPU demand beside a CPU stall: net in %.4f, want 0.2", got)
	}
	// A saturated network is censored even with stalls read.
	m = profile.New(profile.Config{})
	for range 30 {
		m.Observe([]profile.Observation{{Node: "n", Usage: profile.Vector{profile.NetIn: 0.95}, Containers: []profile.KindCount{kc("nic", 2)}, Stall: profile.Stall{Known: true}}})
	}
	if rep := m.Observe([]profile.Observation{{Node: "n", Usage: profile.Vector{profile.NetIn: 0.95}, Containers: []profile.KindCount{kc("nic", 2)}, Stall: profile.Stall{Known: true}}}); rep.Saturated != 1 {
		t.Errorf("saturated network with stalls read: report %+v, want it censored", rep)
	}
}

func TestBaselineFromIdleNodes(t *testing.T) {
	m := profile.New(profile.Config{})
	idle := profile.Vector{0.02, 0.001, 0.003, 0.002, 0.001, 0.001}
	for range 20 {
		m.Observe([]profile.Observation{{Node: "idle", Usage: idle}})
	}
	near(t, "baseline", m.Baseline(), idle, 1e-9)
	// Busy nodes are fitted above the baseline.
	rng := rand.New(rand.NewPCG(11, 12))
	for range 100 {
		var obs []profile.Observation
		for _, mix := range mixes {
			o := node(rng, 0, mix...)
			for r := range o.Usage {
				o.Usage[r] += idle[r]
			}
			obs = append(obs, o)
		}
		m.Observe(obs)
	}
	near(t, "cpu", m.Profile("cpu").Demand, truth["cpu"], 1e-3)
	if got := m.Predict([]profile.KindCount{kc("cpu", 2)}); math.Abs(got[profile.CPU]-(idle[profile.CPU]+2*truth["cpu"][profile.CPU])) > 2e-3 {
		t.Errorf("Predict(2 cpu) cpu = %v, want baseline + 2 × demand", got[profile.CPU])
	}
}

func TestForgettingFollowsDrift(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	m := profile.New(profile.Config{HalfLife: 10})
	for range 100 {
		m.Observe([]profile.Observation{node(rng, 0, kc("cpu", 3))})
	}
	// The kind's inputs grew: it now uses twice the CPU.
	for range 100 {
		o := node(rng, 0, kc("cpu", 3))
		o.Usage[profile.CPU] *= 2
		m.Observe([]profile.Observation{o})
	}
	if got, want := m.Profile("cpu").Demand[profile.CPU], 2*truth["cpu"][profile.CPU]; math.Abs(got-want) > 0.01 {
		t.Errorf("cpu demand after the drift = %.4f, want %.4f (half-life 10 ticks)", got, want)
	}
}

func TestUnknownKindGetsThePrior(t *testing.T) {
	m := profile.New(profile.Config{})
	p := m.Profile("never")
	if p.Known || p.Demand != profile.DefaultPrior || p.Weight != profile.DefaultPriorStrength {
		t.Errorf("empty model: %+v, want the default prior with weight %v", p, profile.DefaultPriorStrength)
	}
	rng := rand.New(rand.NewPCG(15, 16))
	for range 20 {
		m.Observe([]profile.Observation{node(rng, 0, kc("disk", 3))})
	}
	q := m.Profile("never")
	if q.Known || q.Demand == profile.DefaultPrior {
		t.Errorf("after disk was learned the prior did not move: %+v", q)
	}
	// It leans toward the known kinds but is not one of them.
	if !(q.Demand[profile.DiskRead] > 0 && q.Demand[profile.DiskRead] < truth["disk"][profile.DiskRead]) {
		t.Errorf("prior disk read %v, want between 0 and disk's %v", q.Demand[profile.DiskRead], truth["disk"][profile.DiskRead])
	}
	if c := m.Covariance("never", "disk"); c != 0 {
		t.Errorf("Covariance(unknown, disk) = %v, want 0", c)
	}
}

func TestInvalidObservationsAreSkipped(t *testing.T) {
	m := profile.New(profile.Config{})
	bad := []profile.Observation{
		{Usage: profile.Vector{math.NaN()}, Containers: []profile.KindCount{kc("a", 1)}},
		{Usage: profile.Vector{-1}, Containers: []profile.KindCount{kc("a", 1)}},
		{Usage: profile.Vector{0.1}, Containers: []profile.KindCount{kc("a", math.Inf(1))}},
		{Usage: profile.Vector{0.1}, Containers: []profile.KindCount{kc("a", -2)}},
		{}, // nothing ran, nothing used
	}
	rep := m.Observe(bad)
	if rep.Observations != 0 || len(m.Kinds()) != 0 {
		t.Errorf("invalid observations folded: %+v, kinds %v", rep, m.Kinds())
	}
}

func TestSnapshotRoundTrip(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 18))
	m := profile.New(profile.Config{HalfLife: 50})
	for range 30 {
		var obs []profile.Observation
		for _, mix := range mixes {
			obs = append(obs, node(rng, 0.01, mix...))
		}
		obs = append(obs, profile.Observation{Usage: profile.Vector{0.01}})
		m.Observe(obs)
	}
	b, err := json.Marshal(m.Snapshot())
	if err != nil {
		t.Fatal(err)
	}
	var s profile.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatal(err)
	}
	n := profile.New(profile.Config{HalfLife: 50})
	if err := n.Restore(s); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(m.Snapshot(), n.Snapshot()); diff != "" {
		t.Errorf("snapshot after JSON round trip (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(m.Profiles(), n.Profiles(), cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("profiles after restore (-want +got):\n%s", diff)
	}
	// Both learn on identically.
	o := []profile.Observation{node(rng, 0, kc("cpu", 3), kc("net", 3))}
	m.Observe(o)
	n.Observe(o)
	if diff := cmp.Diff(m.Snapshot(), n.Snapshot()); diff != "" {
		t.Errorf("after one more tick (-want +got):\n%s", diff)
	}
}

func TestRestoreRejectsBadSnapshots(t *testing.T) {
	m := profile.New(profile.Config{})
	m.Observe([]profile.Observation{node(nil, 0, kc("cpu", 3), kc("disk", 3)), node(nil, 0, kc("net", 2))})
	good := m.Snapshot()
	for _, tc := range []struct {
		field string
		edit  func(*profile.Snapshot)
	}{
		{"version", func(s *profile.Snapshot) { s.Version = 99 }},
		{"kinds[1]", func(s *profile.Snapshot) { s.Kinds[1] = s.Kinds[0] }},
		{"diag", func(s *profile.Snapshot) { s.Diag = s.Diag[:1] }},
		{"diag[0]", func(s *profile.Snapshot) { s.Diag[0] = math.NaN() }},
		{"demand[2][0]", func(s *profile.Snapshot) { s.Demand[2][0] = -1 }},
		{"b[0][3]", func(s *profile.Snapshot) { s.B[0][3] = math.Inf(1) }},
		{"scale", func(s *profile.Snapshot) { s.Scale = 0 }},
		{"off[0]", func(s *profile.Snapshot) { s.Off[0].J = 7 }},
		{"sigma2[1]", func(s *profile.Snapshot) { s.Sigma2[1] = 0 }},
		{"ticks[0]", func(s *profile.Snapshot) { s.Ticks[0] = -1 }},
	} {
		t.Run(tc.field, func(t *testing.T) {
			s := m.Snapshot()
			tc.edit(&s)
			n := profile.New(profile.Config{})
			err := n.Restore(s)
			var fe *profile.FieldError
			if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, profile.ErrInvalidSnapshot) {
				t.Fatalf("Restore = %v, want a FieldError for %s wrapping ErrInvalidSnapshot", err, tc.field)
			}
			if len(n.Kinds()) != 0 {
				t.Errorf("a refused snapshot changed the model: %v", n.Kinds())
			}
		})
	}
	if err := profile.New(profile.Config{}).Restore(good); err != nil {
		t.Errorf("the unedited snapshot: %v", err)
	}
}

func TestConfigValidate(t *testing.T) {
	for _, tc := range []struct {
		c     profile.Config
		field string
	}{
		{profile.Config{HalfLife: -1}, "half_life"},
		{profile.Config{HalfLife: math.Inf(1)}, "half_life"},
		{profile.Config{PriorStrength: math.NaN()}, "prior_strength"},
		{profile.Config{Saturation: 1}, "saturation"},
	} {
		err := tc.c.Validate()
		var fe *profile.FieldError
		if !errors.As(err, &fe) || fe.Field != tc.field || !errors.Is(err, profile.ErrInvalidConfig) {
			t.Errorf("%+v: Validate = %v, want a FieldError for %s", tc.c, err, tc.field)
		}
	}
	if err := (profile.Config{}).Validate(); err != nil {
		t.Errorf("zero config: %v", err)
	}
}

// The covariance the model reports matches a dense inverse of the same
// regularised normal equations.
func TestCovarianceMatchesDenseInverse(t *testing.T) {
	rng := rand.New(rand.NewPCG(19, 20))
	kinds := []string{"a", "b", "c", "d", "e"}
	m := profile.New(profile.Config{HalfLife: 1e9})
	a := make([][]float64, len(kinds))
	for i := range a {
		a[i] = make([]float64, len(kinds))
	}
	for range 40 {
		var c [5]float64
		var cs []profile.KindCount
		for i, k := range kinds[:4] { // e never runs: it stays independent
			if rng.IntN(2) == 0 {
				c[i] = float64(1 + rng.IntN(3))
				cs = append(cs, kc(k, c[i]))
			}
		}
		if len(cs) == 0 {
			continue
		}
		m.Observe([]profile.Observation{{Usage: profile.Vector{0.3, 0, 0.1}, Containers: cs}})
		rho := math.Exp2(-1 / 1e9)
		for i := range a {
			for j := range a[i] {
				a[i][j] = a[i][j]*rho + c[i]*c[j]
			}
		}
	}
	m.Add("e")
	for i := range a {
		a[i][i] += profile.DefaultPriorStrength
	}
	for i := range a {
		a[i] = a[i][:4]
	}
	inv := invert(a[:4:4])
	for i, x := range kinds[:4] {
		for j, y := range kinds[:4] {
			if got := m.Covariance(x, y); math.Abs(got-inv[i][j]) > 1e-6*(1+math.Abs(inv[i][j])) {
				t.Errorf("Covariance(%s, %s) = %.8f, want %.8f", x, y, got, inv[i][j])
			}
		}
	}
	// e was never observed: independent, its uncertainty the spread of kinds.
	for _, x := range kinds {
		if c := m.Covariance("e", x); c != 0 {
			t.Errorf("Covariance(e, %s) = %v, want 0", x, c)
		}
	}
	if p := m.Profile("e"); p.Known || !(p.Std[profile.CPU] > 0) {
		t.Errorf("never-observed e: %+v, want unknown with a positive spread", p)
	}
}

// invert inverts a small symmetric positive definite matrix (Gauss–Jordan).
func invert(a [][]float64) [][]float64 {
	n := len(a)
	m := make([][]float64, n)
	for i := range m {
		m[i] = make([]float64, 2*n)
		copy(m[i], a[i])
		m[i][n+i] = 1
	}
	for c := range n {
		p := m[c][c]
		for k := range m[c] {
			m[c][k] /= p
		}
		for r := range n {
			if r != c {
				f := m[r][c]
				for k := range m[r] {
					m[r][k] -= f * m[c][k]
				}
			}
		}
	}
	out := make([][]float64, n)
	for i := range out {
		out[i] = m[i][n:]
	}
	return out
}

func FuzzObserve(f *testing.F) {
	f.Add(0.5, 0.2, 3.0, 2.0, 0.9, 0.1)
	f.Add(0.0, 0.0, 0.0, 0.0, 0.0, 0.0)
	f.Add(1e300, -1.0, math.Inf(1), 1e-300, 1.0, 0.5)
	f.Fuzz(func(t *testing.T, cpu, disk, ca, cb, iowait, net float64) {
		m := profile.New(profile.Config{})
		for i := range 3 {
			m.Observe([]profile.Observation{
				{Usage: profile.Vector{cpu, iowait, disk, disk / 2, net, net}, Containers: []profile.KindCount{kc("a", ca), kc("b", cb)}},
				{Usage: profile.Vector{cpu / 2, 0, disk, 0, 0, 0}, Containers: []profile.KindCount{kc("a", ca), kc(fmt.Sprint("c", i), 1)}},
			})
		}
		for _, p := range m.Profiles() {
			for r := range profile.NumResources {
				if math.IsNaN(p.Demand[r]) || math.IsInf(p.Demand[r], 0) || p.Demand[r] < 0 || math.IsNaN(p.Std[r]) {
					t.Fatalf("%s: demand %v std %v", p.Kind, p.Demand, p.Std)
				}
			}
		}
		if _, err := json.Marshal(m.Snapshot()); err != nil {
			t.Fatalf("snapshot: %v", err)
		}
	})
}
