package pipeline_test

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// clusterSim is a cluster whose free capacity follows what was admitted:
// each admitted job holds its reservation for a random duration of at
// most maxRun, then frees it. Small jobs arrive often, big ones (a third
// to two thirds of the cluster) now and then, so that big jobs rarely fit
// while small ones keep arriving: the case a reservation is for.
type clusterSim struct {
	rng     *rand.Rand
	p       *pipeline.Pipeline
	capa    pipeline.Capacity
	free    pipeline.Capacity
	now     time.Time
	seq     uint64
	pending []queue.Job
	running []heldJob
	maxRun  time.Duration
	huge    bool // also submit jobs larger than the cluster, at most 3:
	hugeN   int  // they never leave the window, so more would clog it
}

type heldJob struct {
	job queue.Job
	end time.Time
}

func (c *clusterSim) arrive() {
	c.seq++
	kinds := []string{"k0", "k1", "k2", "k3", "k4"}
	j := pj(c.seq, kinds[c.rng.IntN(len(kinds))], user([]string{"alice", "bob"}[c.rng.IntN(2)]))
	j.ID = fmt.Sprintf("j%06d", c.seq)
	j.CreatedAt = c.now
	j.Resources = queue.Resources{Containers: 1 + c.rng.IntN(4), MemoryMB: 512 + c.rng.Int64N(2048), VCores: 1}
	switch r := c.rng.Float64(); {
	case c.huge && c.hugeN < 3 && r < 0.01:
		c.hugeN++
		j.Resources = queue.Resources{Containers: 2, MemoryMB: c.capa.MemoryMB, VCores: 1} // twice the cluster
	case r < 0.1:
		j.Resources = queue.Resources{Containers: 4, MemoryMB: c.capa.MemoryMB/12 + c.rng.Int64N(c.capa.MemoryMB/12), VCores: 2}
	}
	c.pending = append(c.pending, j)
}

// step advances time, frees finished jobs, lets jobs arrive, decides and
// applies the decision as the engine does through Store.Admit.
func (c *clusterSim) step() pipeline.Decision {
	c.now = c.now.Add(time.Duration(1 + c.rng.Int64N(int64(20*time.Second))))
	kept := c.running[:0]
	for _, h := range c.running {
		if h.end.After(c.now) {
			kept = append(kept, h)
			continue
		}
		c.free.MemoryMB += h.job.Resources.TotalMemoryMB()
		c.free.VCores += h.job.Resources.TotalVCores()
	}
	c.running = kept
	for len(c.pending) < 4 || (len(c.pending) < 40 && c.rng.Float64() < 0.6) {
		c.arrive()
	}
	run := make([]pipeline.Running, len(c.running))
	for i, h := range c.running {
		run[i] = pipeline.Running{JobID: h.job.ID, Kind: h.job.Kind, User: h.job.User,
			Alloc: pipeline.Capacity{MemoryMB: h.job.Resources.TotalMemoryMB(), VCores: h.job.Resources.TotalVCores()}}
	}
	d := c.p.Decide(pipeline.Snapshot{Now: c.now, Capacity: c.capa, Free: c.free, Running: run, Pending: c.pending}, c.rng)
	if d.Chosen == "" {
		return d
	}
	next := c.pending[:0]
	for _, j := range c.pending {
		switch {
		case j.ID == d.Chosen:
			c.free.MemoryMB -= j.Resources.TotalMemoryMB()
			c.free.VCores -= j.Resources.TotalVCores()
			if c.free.MemoryMB < 0 || c.free.VCores < 0 {
				panic(fmt.Sprintf("admitted %s beyond the free capacity", j.ID))
			}
			c.running = append(c.running, heldJob{job: j, end: c.now.Add(time.Duration(1 + c.rng.Int64N(int64(c.maxRun))))})
			continue
		case slices.Contains(d.Passed, j.ID):
			j.Skips++
		case slices.Contains(d.Blocked, j.ID):
			j.Blocked++
		}
		next = append(next, j)
	}
	c.pending = next
	return d
}

// Over random arrival sequences, with every default stage on: no job is
// blocked more than after_blocked times; while a job holds the reservation
// no other job is admitted; and the held job is admitted within maxRun (the
// longest a running job holds room) plus one decision of taking it.
func TestPropertyReservationBound(t *testing.T) {
	t.Parallel()
	for _, mode := range modes {
		t.Run(string(mode), func(t *testing.T) { t.Parallel(); propertyReservationBound(t, mode, nil) })
	}
	t.Run("jobs larger than the cluster", func(t *testing.T) {
		t.Parallel()
		propertyReservationBound(t, pipeline.PreferenceBandit, func(c *clusterSim, _ *pipeline.Config) { c.huge = true })
	})
	// Fairness drops every group but the most owed one; the reservation
	// must still go through, or the queue stalls (instantaneous deficits
	// move only when something is admitted).
	t.Run("fairness", func(t *testing.T) {
		t.Parallel()
		propertyReservationBound(t, pipeline.PreferenceModel, func(_ *clusterSim, cfg *pipeline.Config) {
			cfg.Fairness.Enabled, cfg.Fairness.Kappa = true, 0.05
		})
	})
	// The same arrivals without reservations: big jobs are overtaken
	// without bound, which is what the reservation is for.
	t.Run("off", func(t *testing.T) {
		t.Parallel()
		cfg := pipeline.DefaultConfig()
		cfg.Fit.PerNode, cfg.Reservation.Enabled = false, false
		qs := newQueueSim(t, cfg, propertySeed(t))
		capa := pipeline.Capacity{MemoryMB: 64 * 1024, VCores: 64}
		c := &clusterSim{rng: qs.rng, p: qs.p, capa: capa, free: capa, now: t0, maxRun: 10 * time.Minute}
		maxBlocked := 0
		for range propertyDecisions / 4 {
			c.step()
			for _, j := range c.pending {
				maxBlocked = max(maxBlocked, j.Blocked)
			}
		}
		if maxBlocked <= 4*cfg.Starvation.MaxSkips {
			t.Errorf("without reservations the most a job was blocked is %d: the arrivals do not show starvation", maxBlocked)
		}
		t.Logf("without reservations: max blocked %d", maxBlocked)
	})
}

func propertyReservationBound(t *testing.T, mode pipeline.PreferenceMode, mod func(*clusterSim, *pipeline.Config)) {
	cfg := pipeline.DefaultConfig()
	cfg.Preference.Mode = mode
	cfg.Fit.PerNode = false // the model holds no nodes: the total decides
	capa := pipeline.Capacity{MemoryMB: 64 * 1024, VCores: 64}
	c := &clusterSim{capa: capa, free: capa, now: t0, maxRun: 10 * time.Minute}
	if mod != nil {
		mod(c, &cfg)
	}
	qs := newQueueSim(t, cfg, propertySeed(t))
	c.rng, c.p = qs.rng, qs.p
	after := cfg.Reservation.AfterBlocked
	var (
		held                     string
		heldSince                time.Time
		reservations, maxBlocked int
		longestHold              time.Duration
	)
	for i := 0; i < propertyDecisions/4; i++ {
		d := c.step()
		if d.Reserved != "" && d.Reserved != held {
			if held != "" {
				t.Fatalf("decision %d: reservation moved from %s to %s before %s was admitted", i, held, d.Reserved, held)
			}
			held, heldSince = d.Reserved, c.now
			reservations++
		}
		switch {
		case held != "" && d.Chosen == held:
			longestHold = max(longestHold, c.now.Sub(heldSince))
			held = ""
		case held != "" && d.Chosen != "":
			t.Fatalf("decision %d: admitted %s while %s holds the reservation\n%s", i, d.Chosen, held, stagesOf(d))
		case held != "" && c.now.Sub(heldSince) > c.maxRun+time.Minute:
			t.Fatalf("decision %d: %s has held the reservation for %v, beyond the %v any running job holds room", i, held, c.now.Sub(heldSince), c.maxRun)
		}
		for _, j := range c.pending {
			if j.Resources.TotalMemoryMB() > capa.MemoryMB {
				continue // never fits: never held, blocked without bound
			}
			maxBlocked = max(maxBlocked, j.Blocked)
			if j.Blocked > after {
				t.Fatalf("decision %d: job %s blocked %d times (after_blocked %d)\n%s", i, j.ID, j.Blocked, after, stagesOf(d))
			}
		}
		if d.Reserved != "" && slices.ContainsFunc(c.pending, func(j queue.Job) bool {
			return j.ID == d.Reserved && j.Resources.TotalMemoryMB() > capa.MemoryMB
		}) {
			t.Fatalf("decision %d: job %s, larger than the cluster, holds a reservation", i, d.Reserved)
		}
	}
	t.Logf("%d decisions, %d reservations, longest held %v, max blocked %d", propertyDecisions/4, reservations, longestHold, maxBlocked)
	if reservations == 0 || maxBlocked != after {
		t.Errorf("no reservation was taken (%d, max blocked %d): the property was not exercised", reservations, maxBlocked)
	}
}

// stagesOf is a decision's stages, one line each, for failure messages.
func stagesOf(d pipeline.Decision) string {
	var b strings.Builder
	fmt.Fprintf(&b, "chosen %s, reserved %s, forced %q, blocked %v\n", d.Chosen, d.Reserved, d.Forced, d.Blocked)
	for _, s := range d.Stages {
		fmt.Fprintf(&b, "  %-11s %d → %d %s %v\n", s.Name, s.In, s.Out, s.Note, s.Dropped)
	}
	return b.String()
}
