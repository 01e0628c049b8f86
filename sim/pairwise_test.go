package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/sim"
)

var pairKinds = []string{"kmeans", "cc", "tpch-q10", "tpch-q3"}

// The shipped profiles reproduce the paper's Tables 2 and 3 qualitatively.
// Run with -v for the markdown table of bench/README.md.
func TestPairwiseBands(t *testing.T) {
	w := load(t, queueA)
	type band struct{ lo, hi float64 } // DeltaAll, negative = co-located faster
	bands := map[[2]string]band{
		// Complementary: 20-40% faster together (Table 3).
		{"kmeans", "tpch-q10"}: {-0.40, -0.20},
		{"kmeans", "tpch-q3"}:  {-0.40, -0.20},
		// TPC-H with TPC-H: little gain (Table 2: -1%).
		{"tpch-q10", "tpch-q10"}: {-0.05, 0},
		{"tpch-q3", "tpch-q3"}:   {-0.05, 0},
		{"tpch-q10", "tpch-q3"}:  {-0.05, 0},
		// CPU with CPU: little (Table 2: 0 to -13%).
		{"kmeans", "kmeans"}: {-0.15, 0},
		{"cc", "cc"}:         {-0.15, 0},
		{"kmeans", "cc"}:     {-0.15, 0},
		// CC with TPC-H: a gain, smaller than K-Means's (CC's first stage
		// reads the disk; paper §3.3, Figure 4).
		{"cc", "tpch-q10"}: {-0.30, -0.05},
		{"cc", "tpch-q3"}:  {-0.30, -0.05},
	}
	var table strings.Builder
	table.WriteString("| pair | nodes | separated A / B (s) | co-located A / B (s) | A | B | All | First | G separated | G co-located |\n")
	table.WriteString("|---|---|---|---|---|---|---|---|---|---|\n")
	res := map[[2]string]sim.PairResult{}
	for i, a := range pairKinds {
		for _, b := range pairKinds[i:] {
			r, err := sim.Pairwise(w, a, b, 1)
			if err != nil {
				t.Fatal(err)
			}
			res[[2]string{a, b}] = r
			fmt.Fprintf(&table, "| %s + %s | %d | %.0f / %.0f | %.0f / %.0f | %+.0f%% | %+.0f%% | **%+.0f%%** | %+.0f%% | %.1f | %.1f |\n",
				a, b, r.Nodes, r.Separated.A.Seconds(), r.Separated.B.Seconds(), r.Colocated.A.Seconds(), r.Colocated.B.Seconds(),
				100*r.DeltaA(), 100*r.DeltaB(), 100*r.DeltaAll(), 100*r.DeltaFirst(), r.Separated.Goodness, r.Colocated.Goodness)
			bd, ok := bands[[2]string{a, b}]
			if !ok {
				t.Fatalf("no band for %s+%s", a, b)
			}
			if d := r.DeltaAll(); d < bd.lo || d > bd.hi {
				t.Errorf("%s + %s: All %+.1f%%, want within [%+.0f%%, %+.0f%%]", a, b, 100*d, 100*bd.lo, 100*bd.hi)
			}
		}
	}
	t.Logf("pairwise experiment, %s:\n%s", queueA, table.String())

	// The goodness measure sees it too: complementary co-locations score
	// higher than TPC-H with TPC-H, so the bandit has something to learn.
	for _, good := range [][2]string{{"kmeans", "tpch-q10"}, {"kmeans", "tpch-q3"}} {
		for _, bad := range [][2]string{{"tpch-q10", "tpch-q10"}, {"tpch-q10", "tpch-q3"}, {"kmeans", "kmeans"}} {
			if g, b := res[good].Colocated.Goodness, res[bad].Colocated.Goodness; g <= b {
				t.Errorf("goodness %v co-located %.2f <= %v co-located %.2f", good, g, bad, b)
			}
		}
	}
	// Several minutes solo, as in the paper.
	for _, k := range w.Kinds {
		if d := k.SoloDuration(); d < 5*time.Minute || d > 15*time.Minute {
			t.Errorf("%s solo duration %v, want several minutes", k.Name, d)
		}
	}
}

func TestPairwiseSymmetric(t *testing.T) {
	w := load(t, queueA)
	ab, err := sim.Pairwise(w, "kmeans", "tpch-q10", 1)
	if err != nil {
		t.Fatal(err)
	}
	ba, err := sim.Pairwise(w, "tpch-q10", "kmeans", 1)
	if err != nil {
		t.Fatal(err)
	}
	if ab.Separated.A != ba.Separated.B || ab.Colocated.A != ba.Colocated.B || ab.Colocated.All != ba.Colocated.All {
		t.Errorf("swapping the pair changed the result: %+v vs %+v", ab, ba)
	}
	if ab.Nodes != 8 {
		t.Errorf("nodes = %d, want 8 (two jobs of 24 containers on 6-vcore nodes)", ab.Nodes)
	}
}

func TestPairwiseUnknownKind(t *testing.T) {
	if _, err := sim.Pairwise(load(t, queueA), "kmeans", "spark", 1); !errors.Is(err, sim.ErrUnknownKind) {
		t.Errorf("err = %v, want ErrUnknownKind", err)
	}
}

// Each kind's resource profile, alone (a triplet per node) and packed (six
// containers per node, the separated half of the pair experiment), checked
// against the paper's §3.2 descriptions. Run with -v for the table.
func TestKindProfiles(t *testing.T) {
	w := load(t, queueA)
	lim := w.Cluster.Limits()
	var table strings.Builder
	table.WriteString("| kind | solo (s) | solo CPU / iowait / disk / net | packed (s) | packed CPU / iowait / disk / net |\n")
	table.WriteString("|---|---|---|---|---|\n")
	pct := func(u goodness.Usage) string {
		return fmt.Sprintf("%.0f%% / %.0f%% / %.0f%% / %.0f%%", 100*u.CPU, 100*u.IOWait,
			100*(u.DiskRead+u.DiskWrite)/lim.DiskRead, 100*(u.NetRecv+u.NetSent)/(2*lim.NetRecv))
	}
	for _, k := range w.Kinds {
		s := newSim(t, w, sim.Options{Seed: 1})
		id := s.NewApplication()
		if err := s.Submit(id, sim.AppSpec{Kind: k.Name}); err != nil {
			t.Fatal(err)
		}
		s.RunUntilIdle()
		app, _ := s.App(id)
		var solo goodness.Usage
		n := 0.0
		for _, sm := range s.Samples() {
			if app.Placement[sm.Node] > 0 {
				solo = addUsage(solo, sm.Usage)
				n++
			}
		}
		solo = scaleUsage(solo, 1/n)
		r, err := sim.Pairwise(w, k.Name, k.Name, 1)
		if err != nil {
			t.Fatal(err)
		}
		packed := r.Separated.Usage
		fmt.Fprintf(&table, "| %s | %.0f | %s | %.0f | %s |\n", k.Name, k.SoloDuration().Seconds(), pct(solo), r.Separated.A.Seconds(), pct(packed))

		switch k.Name {
		case "tpch-q10", "tpch-q3":
			// I/O-bound: CPU at most about 50%, the disk saturated when packed.
			if packed.CPU > 0.5 || solo.CPU > 0.5 {
				t.Errorf("%s: mean CPU solo %.2f, packed %.2f; want <= 0.5", k.Name, solo.CPU, packed.CPU)
			}
			if packed.IOWait <= 0 {
				t.Errorf("%s: no iowait when packed", k.Name)
			}
		case "kmeans", "cc":
			// CPU-bound: the CPU is the busiest resource.
			if packed.CPU < 0.6 {
				t.Errorf("%s: packed mean CPU %.2f, want >= 0.6", k.Name, packed.CPU)
			}
		}
	}
	// CC's first stage is disk-bound (iowait when packed); K-Means's is not.
	cc, _ := sim.Pairwise(w, "cc", "cc", 1)
	km, _ := sim.Pairwise(w, "kmeans", "kmeans", 1)
	if cc.Separated.Usage.IOWait <= 0 || km.Separated.Usage.IOWait != 0 {
		t.Errorf("packed iowait: cc %v (want > 0), kmeans %v (want 0)", cc.Separated.Usage.IOWait, km.Separated.Usage.IOWait)
	}
	t.Logf("kind profiles, %s (disk: (read+write)/disk_mbps; net: (in+out)/(2·net_mbps)):\n%s", queueA, table.String())
}

func addUsage(a, b goodness.Usage) goodness.Usage {
	return goodness.Usage{CPU: a.CPU + b.CPU, IOWait: a.IOWait + b.IOWait, DiskRead: a.DiskRead + b.DiskRead,
		DiskWrite: a.DiskWrite + b.DiskWrite, NetRecv: a.NetRecv + b.NetRecv, NetSent: a.NetSent + b.NetSent}
}

func scaleUsage(a goodness.Usage, f float64) goodness.Usage {
	return goodness.Usage{CPU: a.CPU * f, IOWait: a.IOWait * f, DiskRead: a.DiskRead * f,
		DiskWrite: a.DiskWrite * f, NetRecv: a.NetRecv * f, NetSent: a.NetSent * f}
}
