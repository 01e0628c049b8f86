package bench

import (
	"context"
	"testing"
)

// TestClassesUnderCurves: on bursty-tenants, the per-class figures exist
// for every class and add up, and the service curves do what they are for
// against FIFO on the same seed: the interactive queue waits less, and
// adhoc, which FIFO starves behind etl's backlog, gets a share.
func TestClassesUnderCurves(t *testing.T) {
	if testing.Short() {
		t.Skip("two runs of bursty-tenants")
	}
	w := loadShipped(t, "bursty-tenants")
	by := map[Policy]map[string]classResult{}
	for _, p := range []Policy{FIFO, policyCurves} {
		r, err := runOne(context.Background(), RunConfig{Workload: w, Policy: p, Seed: 1})
		if err != nil {
			t.Fatal(err)
		}
		by[p] = map[string]classResult{}
		jobs, share := 0, 0.0
		for _, c := range r.Classes {
			by[p][c.Class] = c
			jobs += c.Jobs
			share += c.ShareVCores
			if c.ContendedS <= 0 || c.ContendedS > r.MakespanS {
				t.Errorf("%s %s: contended span %v s outside (0, makespan %v]", p, c.Class, c.ContendedS, r.MakespanS)
			}
		}
		if len(r.Classes) != 3 || jobs != r.Jobs || share > 1+1e-9 {
			t.Errorf("%s: %d classes, %d jobs of %d, vcore shares sum %v", p, len(r.Classes), jobs, r.Jobs, share)
		}
		if f := by[p]["etl"].FairShare; f < 0.66 || f > 0.67 || by[p]["interactive"].FairShare != 0 {
			t.Errorf("%s: fair shares %+v", p, by[p])
		}
	}
	if c, f := by[policyCurves]["interactive"].MeanWaitS, by[FIFO]["interactive"].MeanWaitS; !(c < f/4) {
		t.Errorf("interactive mean wait: curves %v s, fifo %v s; want curves well below", c, f)
	}
	if a := by[policyCurves]["adhoc"].ShareVCores; !(a > 0.1) || by[FIFO]["adhoc"].ShareVCores != 0 {
		t.Errorf("adhoc's share: curves %v, fifo %v", a, by[FIFO]["adhoc"].ShareVCores)
	}
}
