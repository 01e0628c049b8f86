package bandit_test

import (
	"encoding/json"
	"fmt"

	"github.com/colocd/colocd/bandit"
)

// A learner starts with uniform preferences and moves them towards partners
// that co-locate well. Here tpch-q10 (disk-heavy) runs; starting kmeans
// (CPU-heavy) beside it scores well, starting another disk-heavy query badly.
func Example() {
	l := bandit.New(bandit.Config{StepSize: 0.05})
	for _, k := range []string{"tpch-q10", "kmeans", "tpch-q3"} {
		l.Add(k)
	}
	fmt.Printf("before: π(kmeans|tpch-q10) = %.3f\n", l.Prob("kmeans", "tpch-q10"))
	for range 5 {
		l.Update("kmeans", "tpch-q10", 30)  // goodness of the co-location (goodness.Score)
		l.Update("tpch-q3", "tpch-q10", 6)  // two disk-heavy jobs interfere
		l.Update("tpch-q10", "tpch-q10", 8) // another copy of itself
	}
	fmt.Printf("after:  π(kmeans|tpch-q10) = %.3f, H = %.3f\n", l.Prob("kmeans", "tpch-q10"), l.Pref("kmeans", "tpch-q10"))
	fmt.Printf("after:  π(tpch-q3|tpch-q10) = %.3f\n", l.Prob("tpch-q3", "tpch-q10"))
	// Output:
	// before: π(kmeans|tpch-q10) = 0.333
	// after:  π(kmeans|tpch-q10) = 0.990, H = 3.579
	// after:  π(tpch-q3|tpch-q10) = 0.003
}

// Mix scores the candidates of a queue window against everything that runs,
// weighting each running kind (here by the free capacity of its nodes). The
// queue's select stage then draws the next job from these probabilities
// (the paper) or takes the best.
func ExampleLearner_Mix() {
	l := bandit.New(bandit.Config{})
	l.Update("kmeans", "tpch-q10", 20)
	l.Update("kmeans", "tpch-q10", 40) // Ḡ = 30: kmeans beside tpch-q10 is good
	l.Update("cc", "kmeans", 10)
	l.Update("cc", "kmeans", 4) // Ḡ = 18.5: cc beside kmeans is bad

	window := []string{"cc", "kmeans", "tpch-q3"} // tpch-q3 is new: H = 0
	running := []string{"tpch-q10", "kmeans"}
	weights := []float64{0.7, 0.3}
	p := make([]float64, len(window))
	l.Mix(window, running, weights, p)
	for i, k := range window {
		fmt.Printf("%-8s %.3f\n", k, p[i])
	}
	// Output:
	// cc       0.257
	// kmeans   0.432
	// tpch-q3  0.311
}

// A new recurring kind that resembles known ones starts from their
// preferences instead of from zero.
func ExampleLearner_AddSimilar() {
	l := bandit.New(bandit.Config{StepSize: 0.5})
	l.Update("kmeans", "tpch-q10", 10)
	l.Update("kmeans", "tpch-q10", 30)
	l.AddSimilar("tpch-q11", map[string]float64{"tpch-q10": 1})
	fmt.Printf("H(kmeans|tpch-q10) = %.2f\n", l.Pref("kmeans", "tpch-q10"))
	fmt.Printf("H(kmeans|tpch-q11) = %.2f\n", l.Pref("kmeans", "tpch-q11"))
	// Output:
	// H(kmeans|tpch-q10) = 2.50
	// H(kmeans|tpch-q11) = 2.50
}

// Snapshot and Restore persist what was learned, as JSON.
func ExampleLearner_Snapshot() {
	l := bandit.New(bandit.Config{Baseline: bandit.RowMean})
	l.Update("kmeans", "tpch-q10", 12)
	b, _ := json.Marshal(l.Snapshot())
	fmt.Println(string(b))

	var s bandit.Snapshot
	if err := json.Unmarshal(b, &s); err != nil {
		fmt.Println(err)
		return
	}
	restored := bandit.New(s.Config)
	fmt.Println(restored.Restore(s), restored.Kinds())

	s.H[0] = s.H[0][:1]
	fmt.Println(restored.Restore(s))
	// Output:
	// {"version":1,"config":{"step_size":0.05,"baseline":"row","recency_alpha":0.1},"kinds":["kmeans","tpch-q10"],"h":[[0,0],[0,0]],"baseline":12,"row_baseline":[0,12],"observations":1,"row_observations":[0,1],"pair_observations":[[0,0],[1,0]],"rejected":0}
	// <nil> [kmeans tpch-q10]
	// bandit: invalid snapshot: h[0]: has 1 entries, want 2 (one per kind)
}

func ExampleParseBaselineMode() {
	m, err := bandit.ParseBaselineMode("recency")
	fmt.Println(m, err)
	_, err = bandit.ParseBaselineMode("median")
	fmt.Println(err)
	// Output:
	// recency <nil>
	// bandit: unknown baseline mode "median" (want global, row or recency)
}
