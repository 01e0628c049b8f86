package sim_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

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
