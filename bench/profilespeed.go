package bench

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"sync"
	"text/tabwriter"

	"github.com/colocd/colocd/profile"
)

// The profile study: how fast the profile model learns a kind it has never
// seen. During ra runs it follows each kind from the first learning tick
// that observed it, and compares the learned demand of the kind's dominant
// resource (from its true mean solo profile, trueProfiles) with the true
// value after each of its first profileTicks ticks.

// profileTicks is how many of a kind's first observed ticks the study
// follows.
const profileTicks = 5

// profileTolerance is the relative error within which a profile predicts
// its dominant resource.
const profileTolerance = 0.15

// profileSpeedResult is one kind on one seed.
type profileSpeedResult struct {
	Seed uint64
	Kind string
	// Dominant is the kind's true dominant resource (cpu, disk, net_in or
	// net_out) and True its demand per container, in utilisation units.
	Dominant string
	True     float64
	// Error[t] is |learned − true| / true after the (t+1)-th tick that
	// observed the kind; NaN when the run ended first. Same[t] says
	// whether the learned dominant resource was the true one.
	Error [profileTicks]float64
	Same  [profileTicks]bool
	// Within is the first observed tick (1-based) from which the error
	// stayed within profileTolerance for the rest of the followed ticks, 0
	// if never.
	Within int
}

// ProfileSpeed runs ra on the seeds and follows every kind's profile.
func ProfileSpeed(ctx context.Context, tmpl RunConfig, seeds []uint64, workers int) ([]profileSpeedResult, error) {
	truth := trueProfiles(tmpl.Workload)
	var mu sync.Mutex
	var out []profileSpeedResult
	err := forEach(ctx, len(seeds), workers, func(i int) error {
		rc := tmpl
		rc.Policy, rc.Seed, rc.Setup = policyRA, seeds[i], nil
		per := map[string]*profileSpeedResult{}
		rc.Observe = func(ev learnEvent) {
			for _, p := range ev.Profiles.Profiles() {
				t, ok := truth[p.Kind]
				if !ok || p.Ticks < 1 || p.Ticks > profileTicks {
					continue
				}
				r := per[p.Kind]
				if r == nil {
					dom, v := capDominant(t)
					r = &profileSpeedResult{Seed: seeds[i], Kind: p.Kind, Dominant: dom, True: v}
					for k := range r.Error {
						r.Error[k] = math.NaN()
					}
					per[p.Kind] = r
				}
				got := capDemand(p.Demand, r.Dominant)
				r.Error[p.Ticks-1] = math.Abs(got-r.True) / r.True
				dom, _ := capDominant(p.Demand)
				r.Same[p.Ticks-1] = dom == r.Dominant
			}
		}
		if _, err := runOne(ctx, rc); err != nil {
			return fmt.Errorf("profile study, seed %d: %w", seeds[i], err)
		}
		mu.Lock()
		defer mu.Unlock()
		for _, r := range per {
			r.Within = 0
			for t := profileTicks - 1; t >= 0 && r.Error[t] <= profileTolerance; t-- {
				r.Within = t + 1
			}
			out = append(out, *r)
		}
		return nil
	})
	slices.SortFunc(out, func(a, b profileSpeedResult) int {
		if a.Kind != b.Kind {
			if a.Kind < b.Kind {
				return -1
			}
			return 1
		}
		return int(a.Seed) - int(b.Seed)
	})
	return out, err
}

// capDominant is the capacity a demand uses most: cpu, disk (reads plus
// writes), net_in or net_out, and how much.
func capDominant(d profile.Vector) (string, float64) {
	best, v := "cpu", d[profile.CPU]
	for _, c := range []string{"disk", "net_in", "net_out"} {
		if x := capDemand(d, c); x > v {
			best, v = c, x
		}
	}
	return best, v
}

func capDemand(d profile.Vector, c string) float64 {
	switch c {
	case "disk":
		return d[profile.DiskRead] + d[profile.DiskWrite]
	case "net_in":
		return d[profile.NetIn]
	case "net_out":
		return d[profile.NetOut]
	}
	return d[profile.CPU]
}

// WriteProfileSpeedTable prints, per kind, the median error of its
// dominant resource after each of its first observed ticks, how often the
// learned dominant resource was right, and the seeds within tolerance by
// the third tick.
func WriteProfileSpeedTable(out io.Writer, rs []profileSpeedResult) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "kind\tdominant\ttrue\t")
	for t := range profileTicks {
		fmt.Fprintf(tw, "err after %d\t", t+1)
	}
	fmt.Fprintf(tw, "right resource after 1/3\twithin %.0f%% by tick 3\n", 100*profileTolerance)
	for i := 0; i < len(rs); {
		j := i
		for j < len(rs) && rs[j].Kind == rs[i].Kind {
			j++
		}
		group := rs[i:j]
		fmt.Fprintf(tw, "%s\t%s\t%.3f\t", group[0].Kind, group[0].Dominant, group[0].True)
		for t := range profileTicks {
			var es []float64
			for _, r := range group {
				if !math.IsNaN(r.Error[t]) {
					es = append(es, r.Error[t])
				}
			}
			if len(es) == 0 {
				fmt.Fprintf(tw, "-\t")
				continue
			}
			fmt.Fprintf(tw, "%.0f%%\t", 100*median(es))
		}
		var same1, same3, within int
		for _, r := range group {
			if r.Same[0] {
				same1++
			}
			if r.Same[2] {
				same3++
			}
			if r.Within >= 1 && r.Within <= 3 {
				within++
			}
		}
		fmt.Fprintf(tw, "%d/%d, %d/%d\t%d/%d\n", same1, len(group), same3, len(group), within, len(group))
		i = j
	}
	return tw.Flush()
}
