package engine

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

func TestModelScorerTranslatesTheSnapshot(t *testing.T) {
	truth := profile.Fixed{"cpu": {0.18, 0, 0.01, 0, 0.02, 0.02}, "disk": {0.09, 0, 0.17, 0.02, 0.04, 0.04}}
	sc, err := newModelScorer(DefaultScorerConfig(), 0, truth, nil)
	if err != nil {
		t.Fatal(err)
	}
	capa := pipeline.Capacity{MemoryMB: 12288, VCores: 6}
	snap := &pipeline.Snapshot{Nodes: []pipeline.NodeFree{
		// Two jobs of one kind on a node count together.
		{Name: "n1", Capacity: capa, Free: pipeline.Capacity{MemoryMB: 12288 - 3*1536, VCores: 3},
			Jobs: []pipeline.NodeJob{{JobID: "a", Kind: "disk", Containers: 2}, {JobID: "b", Kind: "disk", Containers: 1}}},
		{Name: "n2", Capacity: capa, Free: pipeline.Capacity{VCores: 0}},
	}}
	res := queue.Resources{Containers: 3, MemoryMB: 1536, VCores: 1}
	out := make([]pipeline.Score, 3)
	sc.Score(snap, []string{"cpu", "disk", "big"}, []queue.Resources{res, res, {Containers: 9, MemoryMB: 1536, VCores: 1}}, out)
	// The same nodes through profile directly.
	nodes := []profile.Node{
		{Capacity: profile.Room{VCores: 6, MemoryMB: 12288}, Free: profile.Room{VCores: 3, MemoryMB: 12288 - 3*1536},
			Jobs: []profile.KindCount{{Kind: "disk", Containers: 3}}},
		{Capacity: profile.Room{VCores: 6, MemoryMB: 12288}},
	}
	v := (&profile.Scorer{Profiles: truth, Explore: defaultExplore}).NewView(nodes)
	shape := profile.Shape{Containers: 3, Each: profile.Room{VCores: 1, MemoryMB: 1536}}
	want := []pipeline.Score{
		{Value: v.Score("cpu", shape).Value, Model: v.Score("cpu", shape).Model, Beside: []pipeline.ContextKind{{Kind: "disk", Weight: 1}}, Known: true},
		{Value: v.Score("disk", shape).Value, Model: v.Score("disk", shape).Model, Beside: []pipeline.ContextKind{{Kind: "disk", Weight: 1}}, Known: true},
		{Value: -1e9}, // nine containers do not fit: last
	}
	if diff := cmp.Diff(want, out, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("scores (-want +got):\n%s", diff)
	}
	if !(out[0].Value > out[1].Value) {
		t.Errorf("beside disk, cpu %.3f should beat disk %.3f", out[0].Value, out[1].Value)
	}
}

// TestModelScorerSizeWhileDraining: with a size weight the scorer counts
// a job's size while the queue drains (two jobs submitted at one instant)
// and scores per container under a flow (the same jobs arriving an hour
// apart, their work a few minutes); with drain_ratio 0 always.
func TestModelScorerSizeWhileDraining(t *testing.T) {
	truth := profile.Fixed{"cpu": {0.18, 0, 0.01, 0, 0.02, 0.02}}
	capa := pipeline.Capacity{MemoryMB: 1 << 20, VCores: 64}
	snap := func(gap time.Duration) *pipeline.Snapshot {
		s := &pipeline.Snapshot{Now: time.Unix(1e6, 0), Capacity: capa, Free: capa,
			Nodes:   []pipeline.NodeFree{{Name: "n1", Capacity: capa, Free: capa}},
			History: map[string]queue.KindHistory{"cpu": {Kind: "cpu", Runs: 2, EWMARuntime: 5 * time.Minute}}}
		for i := range 2 {
			s.Pending = append(s.Pending, queue.Job{ID: fmt.Sprint(i), Kind: "cpu", CreatedAt: s.Now.Add(time.Duration(i-2) * gap),
				Resources: queue.Resources{Containers: 4, MemoryMB: 1024, VCores: 1}})
		}
		return s
	}
	res := []queue.Resources{{Containers: 4, MemoryMB: 1024, VCores: 1}}
	score := func(cfg ScorerConfig, ratio float64, s *pipeline.Snapshot) pipeline.Score {
		sc, err := newModelScorer(cfg, ratio, truth, nil)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]pipeline.Score, 1)
		sc.Score(s, []string{"cpu"}, res, out)
		return out[0]
	}
	cfg := DefaultScorerConfig()
	ratio := pipeline.DefaultConfig().Preference.DrainRatio
	per := score(cfg, ratio, snap(0))
	cfg.SizeWeight = 1
	batch, flow := score(cfg, ratio, snap(0)), score(cfg, ratio, snap(time.Hour))
	if batch.Size != 4 || batch.Model != 4*per.Model || per.Size != 0 {
		t.Errorf("draining: size %v, model %v; want 4 and 4 × %v (per container, size %v)", batch.Size, batch.Model, per.Model, per.Size)
	}
	if flow.Size != 0 || flow.Model != per.Model {
		t.Errorf("flowing: size %v, model %v; want no size and %v", flow.Size, flow.Model, per.Model)
	}
	if always := score(cfg, 0, snap(time.Hour)); always.Size != 4 {
		t.Errorf("drain_ratio 0 under a flow: size %v, want 4", always.Size)
	}
}

// timeDecisions times p's decisions on snap, each of which must choose.
func timeDecisions(b *testing.B, p *pipeline.Pipeline, snap pipeline.Snapshot, rng *rand.Rand) {
	b.ReportAllocs()
	b.ResetTimer()
	var d pipeline.Decision
	for b.Loop() {
		d = p.Decide(snap, rng)
	}
	b.StopTimer()
	if d.Chosen == "" {
		b.Fatal("no decision")
	}
}

// BenchmarkDecideModel is one admission decision with the co-location
// model over a window of 8 and of 10,000 pending jobs of 20 kinds on 16
// nodes running 3 kinds, the profiles learned, with the pipeline choices
// of colocd's preset (daemon.PresetColocd: the tail stage, the largest job
// of a kind while the queue drains — the snapshot's jobs are a batch).
func BenchmarkDecideModel(b *testing.B) {
	rng, m, kinds := benchProfiles()
	learner := bandit.New(bandit.Config{})
	for _, window := range []int{8, 10000} {
		b.Run(fmt.Sprintf("window=%d", window), func(b *testing.B) {
			qc := testQueueConfig()
			qc.Window.Size = window
			qc.Tail.Enabled = true
			qc.Preference.WithinKind = pipeline.WithinKindLargest
			sc, err := newModelScorer(DefaultScorerConfig(), qc.Preference.DrainRatio, m, learner)
			if err != nil {
				b.Fatal(err)
			}
			p, err := pipeline.New(qc, learner, pipeline.WithScorer(sc))
			if err != nil {
				b.Fatal(err)
			}
			snap := modelSnapshot(rng, kinds, 10000)
			d := p.Decide(snap, rng)
			if d.Chosen == "" || len(d.Candidates) == 0 || d.Candidates[0].Score == nil {
				b.Fatalf("no model decision: %s", d.Note)
			}
			timeDecisions(b, p, snap, rng)
		})
	}
}

// benchProfiles is a profile model of 20 kinds learned from 50 ticks of 16
// nodes each running two of them, with the random source that drew them
// (the benchmarks go on drawing from it).
func benchProfiles() (*rand.Rand, *profile.Model, []string) {
	rng := rand.New(rand.NewPCG(9, 9))
	m := profile.New(profile.Config{})
	kinds := make([]string, 20)
	for k := range kinds {
		kinds[k] = fmt.Sprintf("kind-%02d", k)
	}
	for range 50 {
		var obs []profile.Observation
		for range 16 {
			a, c := kinds[rng.IntN(20)], kinds[rng.IntN(20)]
			obs = append(obs, profile.Observation{Usage: profile.Vector{0.2 + 0.6*rng.Float64(), 0.01, 0.3 * rng.Float64(), 0.1, 0.2, 0.2},
				Containers: []profile.KindCount{{Kind: a, Containers: 3}, {Kind: c, Containers: 3}}})
		}
		m.Observe(obs)
	}
	return rng, m, kinds
}

// modelSnapshot is 16 nodes of 32 vcores and 128 GB, each half full with
// containers of the 3 running kinds, and n pending jobs of the kinds.
func modelSnapshot(rng *rand.Rand, kinds []string, n int) pipeline.Snapshot {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	capa := pipeline.Capacity{MemoryMB: 128 * 1024, VCores: 32}
	snap := pipeline.Snapshot{Now: now, Capacity: pipeline.Capacity{MemoryMB: 16 * capa.MemoryMB, VCores: 16 * capa.VCores},
		Free: pipeline.Capacity{MemoryMB: 8 * capa.MemoryMB, VCores: 8 * capa.VCores}, History: map[string]queue.KindHistory{}}
	for i := range 3 {
		snap.Running = append(snap.Running, pipeline.Running{JobID: fmt.Sprintf("r%d", i), Kind: kinds[i], User: "alice",
			Alloc: pipeline.Capacity{MemoryMB: 16 * 32 * 1024, VCores: 16 * 8}, Weight: 1})
	}
	for i := range 16 {
		nf := pipeline.NodeFree{Name: fmt.Sprintf("node-%02d", i), Capacity: capa,
			Free: pipeline.Capacity{MemoryMB: capa.MemoryMB / 2, VCores: capa.VCores / 2}}
		for r := range 2 {
			k := (i + r) % 3
			nf.Jobs = append(nf.Jobs, pipeline.NodeJob{JobID: fmt.Sprintf("r%d", k), Kind: kinds[k], Containers: 8})
		}
		snap.Nodes = append(snap.Nodes, nf)
	}
	for i := range n {
		j := queue.Job{ID: fmt.Sprintf("01J%023d", i), Seq: uint64(i + 1), Kind: kinds[rng.IntN(len(kinds))], User: "bob",
			State: queue.StatePending, CreatedAt: now.Add(-time.Hour),
			Resources: queue.Resources{Containers: 1 + rng.IntN(40), MemoryMB: int64(1024 * (1 + rng.IntN(4))), VCores: 1 + rng.IntN(2)}}
		snap.Pending = append(snap.Pending, j)
	}
	return snap
}

// BenchmarkDecideLookahead is one admission decision with the lookahead
// (pipeline.lookahead at its defaults, as ra-plan runs it: the top 3
// candidates, 4 sampled futures each, the flow objective to a 3-hour
// horizon, at most 128 nodes simulated) over a window of 64 pending jobs
// of 20 kinds, on 16 and on 10,000 nodes half full with 3 running kinds,
// the profiles learned and every kind's runtime known.
func BenchmarkDecideLookahead(b *testing.B) {
	rng, m, kinds := benchProfiles()
	learner := bandit.New(bandit.Config{})
	for _, nodes := range []int{16, 10000} {
		b.Run(fmt.Sprintf("nodes=%d/window=64", nodes), func(b *testing.B) {
			qc := testQueueConfig()
			qc.Window.Size = 64
			qc.Lookahead = pipeline.LookaheadConfig{Enabled: true, TopK: pipeline.DefaultLookaheadTopK, Margin: pipeline.DefaultLookaheadMargin}
			sc, err := newModelScorer(DefaultScorerConfig(), 0, m, learner)
			if err != nil {
				b.Fatal(err)
			}
			mp := &modelPlanner{cfg: plan.Config{}.WithDefaults(), profiles: m, runtimes: newRuntimes()}
			p, err := pipeline.New(qc, learner, pipeline.WithScorer(sc), pipeline.WithPlanner(mp))
			if err != nil {
				b.Fatal(err)
			}
			snap := lookaheadSnapshot(rng, kinds, nodes, 64)
			d := p.Decide(snap, rng)
			if d.Chosen == "" || len(d.Lookahead) != pipeline.DefaultLookaheadTopK {
				b.Fatalf("no lookahead decision: %s; lookahead %+v; stages %+v", d.Note, d.Lookahead, d.Stages)
			}
			timeDecisions(b, p, snap, rng)
		})
	}
}

// lookaheadSnapshot is n nodes of 32 vcores and 128 GB, each half full
// with 8 containers of two of 3 running kinds (a job per kind and 256
// nodes), started 5 minutes ago, and a window of w pending jobs of the
// kinds, each kind's runtime 10 minutes.
func lookaheadSnapshot(rng *rand.Rand, kinds []string, n, w int) pipeline.Snapshot {
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	capa := pipeline.Capacity{MemoryMB: 128 * 1024, VCores: 32}
	snap := pipeline.Snapshot{Now: now, Capacity: pipeline.Capacity{MemoryMB: int64(n) * capa.MemoryMB, VCores: int64(n) * capa.VCores},
		Free: pipeline.Capacity{MemoryMB: int64(n) * capa.MemoryMB / 2, VCores: int64(n) * capa.VCores / 2}, History: map[string]queue.KindHistory{}}
	for _, k := range kinds {
		snap.History[k] = queue.KindHistory{Kind: k, Runs: 3, EWMARuntime: 10 * time.Minute}
	}
	alloc := map[string]int{}
	for i := range n {
		nf := pipeline.NodeFree{Name: fmt.Sprintf("node-%05d", i), Capacity: capa,
			Free: pipeline.Capacity{MemoryMB: capa.MemoryMB / 2, VCores: capa.VCores / 2}}
		for r := range 2 {
			k := (i + r) % 3
			id := fmt.Sprintf("r%d-%d", k, i/256)
			nf.Jobs = append(nf.Jobs, pipeline.NodeJob{JobID: id, Kind: kinds[k], Containers: 8})
			alloc[id] += 8
		}
		snap.Nodes = append(snap.Nodes, nf)
	}
	for id, c := range alloc {
		var k int
		fmt.Sscanf(id, "r%d-", &k)
		snap.Running = append(snap.Running, pipeline.Running{JobID: id, Kind: kinds[k], User: "alice",
			Alloc: pipeline.Capacity{MemoryMB: int64(c) * 2048, VCores: int64(c)}, Weight: 1, Started: now.Add(-5 * time.Minute)})
	}
	slices.SortFunc(snap.Running, func(a, b pipeline.Running) int { return strings.Compare(a.JobID, b.JobID) })
	for i := range w {
		j := queue.Job{ID: fmt.Sprintf("01J%023d", i), Seq: uint64(i + 1), Kind: kinds[rng.IntN(len(kinds))], User: "bob",
			State: queue.StatePending, CreatedAt: now.Add(-time.Hour),
			Resources: queue.Resources{Containers: 1 + rng.IntN(40), MemoryMB: int64(1024 * (1 + rng.IntN(4))), VCores: 1 + rng.IntN(2)}}
		snap.Pending = append(snap.Pending, j)
	}
	snap.PendingTotal = w
	return snap
}
