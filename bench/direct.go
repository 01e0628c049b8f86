package bench

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/sim"
)

// pendingJob is a job waiting in a direct policy's queue.
type pendingJob struct {
	seq        int
	kind       sim.KindSpec
	containers int     // what it asks for: its entry's, else its kind's
	scale      float64 // its entry's hidden work scale; 0 means 1
}

// pending is job j of kind k waiting.
func pending(j sim.JobSpec, k sim.KindSpec) pendingJob {
	return pendingJob{seq: j.Seq, kind: k, containers: cmp.Or(j.Containers, k.Containers), scale: j.Scale}
}

// app is the job's submission under job id.
func (j pendingJob) app(id string) sim.AppSpec {
	return sim.AppSpec{JobID: id, Kind: j.kind.Name, Containers: j.containers, Scale: j.scale}
}

// picker chooses the index in window of the job to admit next, or −1 to
// stop admitting until the next admission point. It reads the driver (its
// simulator, pending jobs and future arrivals) and changes nothing.
type picker func(d *driver, window []pendingJob) int

// runDirect plays the direct policies on the simulator. Admission points
// are job arrivals and job completions: nothing else changes what fits.
func runDirect(ctx context.Context, rc RunConfig, cfg daemon.Config, jobs []sim.JobSpec) (Result, error) {
	var pick picker
	switch rc.Policy {
	case FIFO:
		pick = func(d *driver, window []pendingJob) int {
			if d.s.FitsApp(window[0].app("")) {
				return 0
			}
			return -1
		}
	case policyRandom:
		rng := rand.New(rand.NewPCG(rc.Seed, 0x7a6d_0002))
		pick = func(d *driver, window []pendingJob) int {
			var idx []int
			for i, j := range window {
				if d.s.FitsApp(j.app("")) {
					idx = append(idx, i)
				}
			}
			if len(idx) == 0 {
				return -1
			}
			return idx[rng.IntN(len(idx))]
		}
	case policyOracle:
		pick = oraclePicker(rc)
	case policyPairwise:
		gain, err := pairGains(rc.Workload)
		if err != nil {
			return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
		}
		pick = func(d *driver, window []pendingJob) int { return pairwisePick(d.s, window, gain) }
	case policyPackFit:
		pick = packfitPick(trueProfiles(rc.Workload))
	case policyAlternate:
		pick = alternatePick(trueProfiles(rc.Workload))
	case policyTetris:
		pick = tetrisPick(trueProfiles(rc.Workload))
	case policyRollout:
		pick = rolloutPick(ctx, rc, oraclePicker(rc), rc.rolloutSamples())
	case policyRolloutForesight:
		pick = rolloutPick(ctx, rc, oraclePicker(rc), 0)
	default:
		return Result{}, fmt.Errorf("run: %w %q for the direct driver", errUnknownPolicy, rc.Policy)
	}
	return runPicker(ctx, rc, windowSize(cfg), jobs, pick)
}

func oraclePicker(rc RunConfig) picker {
	h := rc.OracleHorizon
	if h == 0 {
		h = defaultOracleHorizon
	}
	if rc.OracleInstant {
		h = 0
	}
	return func(d *driver, window []pendingJob) int { return oraclePick(d.s, window, h) }
}

// driver is the direct policies' event loop state: the simulator, the jobs
// waiting and the arrivals still to come.
type driver struct {
	s       *sim.Sim
	jobs    []sim.JobSpec
	kinds   map[string]sim.KindSpec
	start   time.Time
	pending []pendingJob
	next    int // next arrival
	size    int // window
}

// clone is an independent copy (the simulator cloned, without metrics:
// what-ifs read applications only).
func (d *driver) clone() *driver {
	c := *d
	c.s = d.s.Clone()
	c.s.DiscardMetrics()
	c.pending = slices.Clone(d.pending)
	return &c
}

// runPicker plays the workload with pick: admit at every arrival and
// completion, advance to the next one.
func runPicker(ctx context.Context, rc RunConfig, size int, jobs []sim.JobSpec, pick picker) (Result, error) {
	w := rc.Workload
	s, err := w.NewSim(rc.simOptions())
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
	}
	d := &driver{s: s, jobs: jobs, kinds: map[string]sim.KindSpec{}, start: s.Now(), size: size}
	for _, k := range w.Kinds {
		d.kinds[k.Name] = k
	}
	var res Result
	err = d.run(ctx, pick, func(at time.Duration, j pendingJob) {
		res.Admissions = append(res.Admissions, admission{At: at, Seq: j.seq, Kind: j.kind.Name})
		res.Decisions++
	})
	if err != nil {
		return Result{}, fmt.Errorf("run %s: %w", rc.Policy, err)
	}
	if err := measure(&res, rc.Workload, s, jobs, seqFromID); err != nil {
		return Result{}, err
	}
	return res, nil
}

// run plays until every job finished, calling admitted after each
// admission.
func (d *driver) run(ctx context.Context, pick picker, admitted func(at time.Duration, j pendingJob)) error {
	s := d.s
	for {
		if err := ctx.Err(); err != nil {
			return err
		}
		now := s.Now()
		for d.next < len(d.jobs) && !d.start.Add(d.jobs[d.next].Arrival).After(now) {
			d.pending = append(d.pending, pending(d.jobs[d.next], d.kinds[d.jobs[d.next].Kind]))
			d.next++
		}
		for len(d.pending) > 0 {
			i := pick(d, d.pending[:min(d.size, len(d.pending))])
			if i < 0 {
				break
			}
			j := d.pending[i]
			spec := j.app(strconv.Itoa(j.seq))
			spec.User, spec.Queue = "bench", "default"
			err := s.Submit(s.NewApplication(), spec)
			if errors.Is(err, sim.ErrNoFit) {
				break
			}
			if err != nil {
				return fmt.Errorf("submit job %d: %w", j.seq, err)
			}
			if admitted != nil {
				admitted(now.Sub(d.start), j)
			}
			d.pending = slices.Delete(d.pending, i, i+1)
		}
		_, running := s.NextEvent()
		if !running {
			switch {
			case d.next < len(d.jobs): // idle until the next arrival
				s.Advance(d.start.Add(d.jobs[d.next].Arrival))
				continue
			case len(d.pending) == 0:
				return nil
			default:
				return fmt.Errorf("%w: %d jobs pending, none fits an idle cluster", errStuck, len(d.pending))
			}
		}
		until := time.Unix(math.MaxInt32, 0) // far future: run to the next completion
		if d.next < len(d.jobs) {
			until = d.start.Add(d.jobs[d.next].Arrival)
		}
		advanceUntil(s, until)
	}
}

// rolloutPick is the per-decision rollout, a reference: for the oldest job
// of each kind in the window that fits, admit it on copies of the run and
// finish each copy with complete (the oracle), then keep the candidate whose
// finished copies did best on average on the workload's metric (makespan
// for batch arrivals, mean JCT for Poisson). With samples > 0 each copy is
// a clone with a fresh random stream (sim.Sim.Reseed) and, for Poisson
// arrivals, fresh arrival times for the jobs still to come: it sees what
// may happen, not what will. The same samples' seeds serve every candidate
// of a decision (common random numbers), drawn from the run's seed and the
// decision's number, so a seed gives one run. With samples 0 there is one
// copy per candidate, a plain clone: it draws the placements, jitter and
// arrivals the run itself will draw (foresight no scheduler has). It reads
// the simulator's ground truth and costs a whole run per candidate, sample
// and decision.
func rolloutPick(ctx context.Context, rc RunConfig, complete picker, samples int) picker {
	jct := rc.Workload.Arrivals.Mode == sim.ArrivalsPoisson
	calls := uint64(0)
	return func(d *driver, window []pendingJob) int {
		calls++
		n := max(samples, 1)
		best, bestCost := -1, math.Inf(1)
		seen := map[string]bool{}
		for i, j := range window {
			if seen[j.kind.Name] || !d.s.FitsApp(j.app("")) {
				continue
			}
			seen[j.kind.Name] = true
			var cost float64
			ok := true
			for k := range n {
				c := d.clone()
				if samples > 0 {
					c.forget(rc, sampleSeed(rc.Seed, calls, uint64(k)))
				}
				if err := c.s.Submit(c.s.NewApplication(), j.app(strconv.Itoa(j.seq))); err != nil {
					ok = false
					break
				}
				c.pending = slices.Delete(c.pending, i, i+1)
				if err := c.run(ctx, complete, nil); err != nil {
					ok = false
					break
				}
				cost += c.cost(jct) / float64(n)
			}
			if ok && cost < bestCost-1e-9 {
				best, bestCost = i, cost
			}
		}
		return best
	}
}

// sampleSeed is the seed of a rollout's sample k at its decision call:
// a PCG draw keyed by the three, so samples and decisions do not share
// streams.
func sampleSeed(seed, call, k uint64) uint64 {
	return rand.New(rand.NewPCG(seed^0x726f_6c6c_6f75_7400, call<<16|k)).Uint64()
}

// forget makes d (a clone) one sample of the future instead of the future
// itself: its simulator draws from a fresh stream seeded by seed, and with
// Poisson arrivals the jobs still to come arrive at fresh exponential gaps
// from now (the process is memoryless; their kinds and order are the
// workload's). A workload with timed entries keeps its arrival times.
func (d *driver) forget(rc RunConfig, seed uint64) {
	d.s.Reseed(seed)
	w := rc.Workload
	if w.Arrivals.Mode != sim.ArrivalsPoisson || w.Arrivals.RatePerHour <= 0 || d.next >= len(d.jobs) {
		return
	}
	for _, q := range w.Queue {
		if q.Timed || q.At != 0 || q.Every != 0 {
			return // timed bursts among the arrivals: keep the schedule
		}
	}
	rng := rand.New(rand.NewPCG(seed, 0x6172_7269_7665))
	jobs := slices.Clone(d.jobs)
	at := d.s.Now().Sub(d.start).Seconds()
	for i := d.next; i < len(jobs); i++ {
		at += rng.ExpFloat64() * 3600 / w.Arrivals.RatePerHour
		jobs[i].Arrival = time.Duration(math.Round(at * 1e9))
	}
	d.jobs = jobs
}

// cost is a finished run's makespan, or its total job completion time.
func (d *driver) cost(jct bool) float64 {
	var last, sum float64
	for _, a := range d.s.Apps() {
		end := a.Finished.Sub(d.start).Seconds()
		last = max(last, end)
		if i, ok := seqFromID(a.JobID); ok && i >= 0 && i < len(d.jobs) {
			sum += end - d.jobs[i].Arrival.Seconds()
		}
	}
	if jct {
		return sum
	}
	return last
}

func seqFromID(id string) (int, bool) {
	n, err := strconv.Atoi(id)
	return n, err == nil
}

// oraclePick scores the oldest job of each kind in the window that fits by
// a what-if on a clone of the simulator and returns the best one's index
// (ties: the oldest).
func oraclePick(s *sim.Sim, window []pendingJob, horizon time.Duration) int {
	best, bestScore := -1, math.Inf(-1)
	seen := map[string]bool{}
	for i, j := range window {
		if seen[j.kind.Name] || !s.FitsApp(j.app("")) {
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
	c.DiscardMetrics()
	if err := c.Submit(c.NewApplication(), j.app("what-if")); err != nil {
		return math.Inf(-1)
	}
	if horizon <= 0 {
		var rate float64
		for _, a := range c.Apps() {
			if a.State == sim.AppRunning {
				rate += a.Speed * float64(a.Containers)
			}
		}
		return rate
	}
	before := c.Progresses(nil)
	c.Advance(c.Now().Add(horizon))
	after := c.Progresses(nil)
	var work float64
	for i, a0 := range before {
		if a0.State != sim.AppRunning {
			continue
		}
		k, _ := c.Kind(a0.Kind)
		work += (after[i].Progress - a0.Progress) * k.SoloDuration().Seconds() * float64(a0.Containers) * a0.Scale
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
		if seen[j.kind.Name] || !s.FitsApp(j.app("")) {
			continue
		}
		seen[j.kind.Name] = true
		need := j.containers
		for _, n := range nodes {
			if n.UsedVCores == 0 && n.UsedMemoryMB == 0 {
				need -= min(profile.DefaultGroup, need)
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
