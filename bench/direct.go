package bench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/sim"
)

// pendingJob is a job waiting in a direct policy's queue.
type pendingJob struct {
	seq  int
	kind sim.KindSpec
}

// picker chooses the index in window of the job to admit next, or −1 to
// stop admitting until the next admission point.
type picker func(s *sim.Sim, window []pendingJob) int

// runDirect plays fifo, random or oracle on the simulator. Admission points
// are job arrivals and job completions: nothing else changes what fits.
func runDirect(ctx context.Context, rc RunConfig, cfg daemon.Config, jobs []sim.JobSpec) (Result, error) {
	var pick picker
	switch rc.Policy {
	case FIFO:
		pick = func(s *sim.Sim, window []pendingJob) int {
			if fits(s, window[0].kind) {
				return 0
			}
			return -1
		}
	case Random:
		rng := rand.New(rand.NewPCG(rc.Seed, 0x7a6d_0002))
		pick = func(s *sim.Sim, window []pendingJob) int {
			var idx []int
			for i, j := range window {
				if fits(s, j.kind) {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				return -1
			}
			return idx[rng.IntN(len(idx))]
		}
	case Oracle:
		h := rc.OracleHorizon
		if h == 0 {
			h = DefaultOracleHorizon
		}
		if rc.OracleInstant {
			h = 0
		}
		pick = func(s *sim.Sim, window []pendingJob) int { return oraclePick(s, window, h) }
	case Pairwise:
		gain, err := pairGains(rc.Workload)
		if err != nil {
			return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
		}
		pick = func(s *sim.Sim, window []pendingJob) int { return pairwisePick(s, window, gain) }
	default:
		return Result{}, fmt.Errorf("run: %w %q for the direct driver", ErrUnknownPolicy, rc.Policy)
	}
	return runPicker(ctx, rc, windowSize(cfg), jobs, pick)
}

// runPicker is the direct driver's event loop: admit with pick at every
// arrival and completion, advance to the next one.
func runPicker(ctx context.Context, rc RunConfig, size int, jobs []sim.JobSpec, pick picker) (Result, error) {
	w := rc.Workload
	s, err := w.NewSim(rc.simOptions())
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
	}
	kinds := map[string]sim.KindSpec{}
	for _, k := range w.Kinds {
		kinds[k.Name] = k
	}
	start := s.Now()
	var res Result
	var pending []pendingJob
	next := 0 // next arrival
	for {
		if err := ctx.Err(); err != nil {
			return Result{}, err
		}
		now := s.Now()
		for next < len(jobs) && !start.Add(jobs[next].Arrival).After(now) {
			pending = append(pending, pendingJob{seq: jobs[next].Seq, kind: kinds[jobs[next].Kind]})
			next++
		}
		for len(pending) > 0 {
			i := pick(s, pending[:min(size, len(pending))])
			if i < 0 {
				break
			}
			j := pending[i]
			err := s.Submit(s.NewApplication(), sim.AppSpec{JobID: strconv.Itoa(j.seq), Kind: j.kind.Name, User: "bench", Queue: "default"})
			if errors.Is(err, sim.ErrNoFit) {
				break
			}
			if err != nil {
				return Result{}, fmt.Errorf("run %s: submit job %d: %w", rc.Policy, j.seq, err)
			}
			res.Admissions = append(res.Admissions, Admission{At: now.Sub(start), Seq: j.seq, Kind: j.kind.Name})
			res.Decisions++
			pending = slices.Delete(pending, i, i+1)
		}
		_, running := s.NextEvent()
		if !running {
			switch {
			case next < len(jobs): // idle until the next arrival
				s.Advance(start.Add(jobs[next].Arrival))
				continue
			case len(pending) == 0:
				if err := measure(&res, s, jobs, seqFromID); err != nil {
					return Result{}, err
				}
				return res, nil
			default:
				return Result{}, fmt.Errorf("run %s: %w: %d jobs pending, none fits an idle cluster", rc.Policy, ErrStuck, len(pending))
			}
		}
		until := time.Unix(math.MaxInt32, 0) // far future: run to the next completion
		if next < len(jobs) {
			until = start.Add(jobs[next].Arrival)
		}
		advanceUntil(s, until)
	}
}

func seqFromID(id string) (int, bool) {
	n, err := strconv.Atoi(id)
	return n, err == nil
}

// fits reports whether a job of kind k fits the free vcores and memory of
// the nodes, the check sim.Sim.Submit makes (containers go anywhere there
// is room for one).
func fits(s *sim.Sim, k sim.KindSpec) bool {
	room := 0
	for _, n := range s.Nodes() {
		vc := (n.VCores - n.UsedVCores) / k.Container.VCores
		mem := int((n.MemoryMB - n.UsedMemoryMB) / k.Container.MemoryMB)
		room += max(0, min(vc, mem))
		if room >= k.Containers {
			return true
		}
	}
	return false
}

// oraclePick scores the oldest job of each kind in the window that fits by
// a what-if on a clone of the simulator and returns the best one's index
// (ties: the oldest).
func oraclePick(s *sim.Sim, window []pendingJob, horizon time.Duration) int {
	best, bestScore := -1, math.Inf(-1)
	seen := map[string]bool{}
	for i, j := range window {
		if seen[j.kind.Name] || !fits(s, j.kind) {
			continue
		}
		seen[j.kind.Name] = true
		sc := whatIf(s, j, horizon)
		if sc > bestScore+1e-9 {
			best, bestScore = i, sc
		}
	}
	return best
}

// whatIf places j on a clone of s (the clone draws the same placement s
// would) and scores the cluster: with no horizon, the progress rate right
// after placement, Σ over running applications of speed × containers (solo
// container-seconds of work per second); with a horizon, the solo
// container-seconds of work done in that time.
func whatIf(s *sim.Sim, j pendingJob, horizon time.Duration) float64 {
	c := s.Clone()
	if err := c.Submit(c.NewApplication(), sim.AppSpec{JobID: "what-if", Kind: j.kind.Name}); err != nil {
		return math.Inf(-1)
	}
	apps := c.Apps()
	if horizon <= 0 {
		var rate float64
		for _, a := range apps {
			if a.State == sim.AppRunning {
				rate += a.Speed * float64(a.Containers)
			}
		}
		return rate
	}
	c.Advance(c.Now().Add(horizon))
	var work float64
	for _, a0 := range apps {
		if a0.State != sim.AppRunning {
			continue
		}
		a, _ := c.App(a0.ID)
		k, _ := c.Kind(a.Kind)
		work += (a.Progress - a0.Progress) * k.SoloDuration().Seconds() * float64(a.Containers)
	}
	return work
}

// pairGains is the pairwise ground truth: gain[{a, b}] = −DeltaAll of
// sim.Pairwise(a, b), the fraction of time the pair saves when co-located.
func pairGains(w *sim.Workload) (map[[2]string]float64, error) {
	gain := map[[2]string]float64{}
	for i, a := range w.Kinds {
		for _, b := range w.Kinds[i:] {
			r, err := sim.Pairwise(w, a.Name, b.Name, 1)
			if err != nil {
				return nil, err
			}
			gain[[2]string{a.Name, b.Name}] = -r.DeltaAll()
			gain[[2]string{b.Name, a.Name}] = -r.DeltaAll()
		}
	}
	return gain, nil
}

// pairwisePick scores the oldest job of each kind in the window that fits
// by its expected pairwise gain with the partners it will get: the
// simulator fills empty nodes first (one group of 3 each, no partner
// there), then nodes with room, about in proportion to their room; on a
// node the job's partners are the applications already there.
func pairwisePick(s *sim.Sim, window []pendingJob, gain map[[2]string]float64) int {
	nodes := s.Nodes()
	kindOf := map[string]string{}
	var room int
	for _, n := range nodes {
		if n.UsedVCores > 0 {
			room += n.VCores - n.UsedVCores
		}
		for _, id := range n.Apps {
			if _, ok := kindOf[id]; !ok {
				a, _ := s.App(id)
				kindOf[id] = a.Kind
			}
		}
	}
	best, bestScore := -1, math.Inf(-1)
	seen := map[string]bool{}
	for i, j := range window {
		if seen[j.kind.Name] || !fits(s, j.kind) {
			continue
		}
		seen[j.kind.Name] = true
		need := j.kind.Containers
		for _, n := range nodes {
			if n.UsedVCores == 0 && n.UsedMemoryMB == 0 {
				need -= min(3, need)
			}
		}
		var score float64
		for _, n := range nodes {
			if need == 0 || room == 0 || len(n.Apps) == 0 {
				continue
			}
			x := float64(need) * float64(n.VCores-n.UsedVCores) / float64(room)
			for _, id := range n.Apps {
				score += x * gain[[2]string{j.kind.Name, kindOf[id]}] / float64(len(n.Apps))
			}
		}
		if score > bestScore+1e-9 {
			best, bestScore = i, score
		}
	}
	return best
}
