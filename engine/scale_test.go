package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// scaleWorld is a synthetic cluster at scale for the learning benchmarks:
// kinds with true per-container demands and a few preferred partners each
// (the kinds they are co-located with most), and placements of running
// jobs over nodes, one per learning tick.
type scaleWorld struct {
	kinds    []string
	demand   []profile.Vector // per container, utilisation units
	partners [][]int          // kind → the kinds it is usually placed beside
	nodes    []string
	limits   goodness.Limits
	rng      *rand.Rand
	epoch    time.Time
	// parts: the profile model sees each kind's own usage
	// (profile.Observation.Parts), as with a ContainerUsageSource.
	parts bool
}

// scalePartners is how many kinds a kind is usually co-located with.
const scalePartners = 20

func newScaleWorld(kinds, nodes int, seed uint64) *scaleWorld {
	w := &scaleWorld{
		rng:    rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
		limits: goodness.Limits{DiskRead: 200e6, DiskWrite: 200e6, NetRecv: 125e6, NetSent: 125e6},
		epoch:  time.Date(2026, 1, 5, 0, 0, 0, 0, time.UTC),
	}
	for i := range kinds {
		w.kinds = append(w.kinds, fmt.Sprintf("kind-%04d", i))
		var d profile.Vector
		dom := w.rng.IntN(4) // cpu, disk, net in, net out: one dominant resource
		for r := range profile.NumResources {
			d[r] = 0.01 + 0.02*w.rng.Float64()
		}
		d[profile.IOWait] = 0
		switch dom {
		case 0:
			d[profile.CPU] = 0.15 + 0.2*w.rng.Float64()
		case 1:
			d[profile.DiskRead] = 0.1 + 0.2*w.rng.Float64()
			d[profile.DiskWrite] = 0.05 + 0.1*w.rng.Float64()
		case 2:
			d[profile.NetIn] = 0.15 + 0.2*w.rng.Float64()
		case 3:
			d[profile.NetOut] = 0.15 + 0.2*w.rng.Float64()
		}
		w.demand = append(w.demand, d)
	}
	for i := range kinds {
		p := make([]int, 0, scalePartners)
		for len(p) < min(scalePartners, kinds-1) {
			if j := w.rng.IntN(kinds); j != i && !slices.Contains(p, j) {
				p = append(p, j)
			}
		}
		w.partners = append(w.partners, p)
	}
	for i := range nodes {
		w.nodes = append(w.nodes, fmt.Sprintf("node%05d", i))
	}
	return w
}

// scaleLayout is one tick's placement: which jobs ran on which node for
// the whole interval, and each node's mean usage.
type scaleLayout struct {
	presence map[string]map[string]*presence
	usage    map[string]goodness.Usage
	colos    [][2]int // kind pairs (earlier, later) of the co-located nodes
	// parts is each node's applications' own CPU and disk (what a
	// ContainerUsageSource reads): their demand, without noise (drawing
	// none keeps the layouts of the other benchmarks what they were).
	parts map[string]map[string]goodness.Usage
}

// layout places jobs of kinds drawn from pool: colo nodes run two jobs
// (the second usually of a partner kind of the first), single nodes one,
// the rest nothing.
func (w *scaleWorld) layout(pool []int, jobs, colo, single int) scaleLayout {
	l := scaleLayout{presence: map[string]map[string]*presence{}, usage: make(map[string]goodness.Usage, len(w.nodes)),
		parts: map[string]map[string]goodness.Usage{}}
	jobKind := make([]int, jobs)
	byKind := map[int][]int{}
	for j := range jobs {
		jobKind[j] = pool[w.rng.IntN(len(pool))]
		byKind[jobKind[j]] = append(byKind[jobKind[j]], j)
	}
	place := func(node string, js ...int) {
		m := map[string]*presence{}
		var u profile.Vector
		u[profile.CPU] = 0.02
		for _, j := range js {
			c := 1 + w.rng.IntN(3)
			app := "app-" + strconv.Itoa(j)
			m["job-"+strconv.Itoa(j)] = &presence{
				kind: w.kinds[jobKind[j]], app: app, containers: c, seq: uint64(j + 1),
				admitted: w.epoch.Add(time.Duration(j) * time.Second),
				since:    w.epoch, lastSeen: w.epoch.Add(100 * 365 * 24 * time.Hour),
			}
			for r := range profile.NumResources {
				u[r] += float64(c) * w.demand[jobKind[j]][r]
			}
			if l.parts[node] == nil {
				l.parts[node] = map[string]goodness.Usage{}
			}
			d := w.demand[jobKind[j]]
			l.parts[node][app] = profile.Vector{profile.CPU: float64(c) * d[profile.CPU], profile.DiskRead: float64(c) * d[profile.DiskRead],
				profile.DiskWrite: float64(c) * d[profile.DiskWrite]}.Rates(w.limits)
		}
		for r := range profile.NumResources {
			u[r] = min(max(u[r]*(1+0.05*w.rng.NormFloat64()), 0), 0.98)
		}
		u[profile.IOWait] = min(u[profile.IOWait], 1-u[profile.CPU])
		if len(m) > 0 {
			l.presence[node] = m
		}
		l.usage[node] = u.Rates(w.limits)
	}
	for n, node := range w.nodes {
		switch {
		case n < colo:
			a := w.rng.IntN(jobs)
			b := w.rng.IntN(jobs)
			for _, p := range w.partners[jobKind[a]] { // a partner of a's kind, when one runs
				if c := byKind[p]; len(c) > 0 && w.rng.IntN(4) > 0 {
					b = c[w.rng.IntN(len(c))]
					break
				}
			}
			if b == a {
				b = (a + 1) % jobs
			}
			place(node, a, b)
			l.colos = append(l.colos, [2]int{jobKind[min(a, b)], jobKind[max(a, b)]})
		case n < colo+single:
			place(node, w.rng.IntN(jobs))
		default:
			place(node)
		}
	}
	return l
}

// memUsage is an in-memory UsageSource: the usage of the layout in force.
type memUsage struct {
	usage map[string]goodness.Usage
	parts map[string]map[string]goodness.Usage // ContainerUsage's answer
}

func (m *memUsage) ContainerUsage(context.Context, []string, time.Time, time.Time) (map[string]map[string]goodness.Usage, error) {
	return m.parts, nil
}

func (m *memUsage) Usage(_ context.Context, hosts []string, _, _ time.Time) (map[string]goodness.Usage, []string, error) {
	return m.usage, nil, nil
}

// stillClock is a Clock that does not move (the benchmarks pass the
// interval to Learn themselves).
type stillClock struct{ t time.Time }

func (c stillClock) Now() time.Time                       { return c.t }
func (c stillClock) After(time.Duration) <-chan time.Time { return nil }

// scaleEngine is an engine over a real store in dir, no cluster calls, and
// src as its metrics; learner and profile model empty.
func scaleEngine(tb testing.TB, w *scaleWorld, src UsageSource, sync bool) *Engine {
	tb.Helper()
	store, err := queue.Open(filepath.Join(tb.TempDir(), "colocd.db"), queue.Options{NoSync: !sync, SkipCheck: true})
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { store.Close() })
	e, err := New(Options{
		Store: store, Learner: bandit.New(bandit.Config{}), Cluster: noCluster{}, Metrics: src,
		Clock: stillClock{w.epoch}, Queue: testQueueConfig(), Scorer: DefaultScorerConfig(), Limits: w.limits,
	})
	if err != nil {
		tb.Fatal(err)
	}
	e.nodes = slices.Clone(w.nodes)
	return e
}

// noCluster is a Cluster the learning tick never calls.
type noCluster struct{ Cluster }

// pool is kinds [0, n).
func pool(n int) []int {
	p := make([]int, n)
	for i := range p {
		p[i] = i
	}
	return p
}

// applyLayout feeds one layout straight to the learner (an update per
// co-located node, credit to the later kind) and to the profile model,
// without the rest of the learning tick.
func applyLayout(e *Engine, w *scaleWorld, l scaleLayout) {
	for _, c := range l.colos {
		e.learner.Update(w.kinds[c[1]], w.kinds[c[0]], 5+10*w.rng.Float64())
	}
	obs := make([]profile.Observation, 0, len(w.nodes))
	for _, n := range w.nodes {
		var kc []profile.KindCount
		var apps []appKind
		for _, p := range l.presence[n] {
			kc = append(kc, profile.KindCount{Kind: p.kind, Containers: float64(p.containers)})
			apps = append(apps, appKind{p.app, p.kind})
		}
		slices.SortFunc(apps, func(a, b appKind) int { return strings.Compare(a.app, b.app) })
		slices.SortFunc(kc, func(a, b profile.KindCount) int { return strings.Compare(a.Kind, b.Kind) })
		o := profile.Observation{Node: n, Usage: profile.Usage(l.usage[n], w.limits), Containers: kc}
		if w.parts {
			o.Parts = partsOf(kc, apps, l.parts[n], w.limits)
		}
		obs = append(obs, o)
	}
	e.profiles.Observe(obs)
}

// warmScale warms an engine's learner and profile model over ticks
// layouts whose kinds arrive gradually, as recurring kinds do on a new
// cluster: tick t draws from the first (t+1)/ticks of the kinds.
func warmScale(e *Engine, w *scaleWorld, ticks, jobs, colo, single int) {
	for t := range ticks {
		n := max(2, len(w.kinds)*(t+1)/ticks)
		applyLayout(e, w, w.layout(pool(n), jobs, colo, single))
	}
}

// writtenBytes is the bytes this process has passed to write system
// calls so far (/proc/self/io wchar); -1 where that is not available.
func writtenBytes() int64 {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return -1
	}
	for line := range strings.SplitSeq(string(b), "\n") {
		if v, ok := strings.CutPrefix(line, "wchar: "); ok {
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err == nil {
				return n
			}
		}
	}
	return -1
}

// BenchmarkPersist times one learning tick's persistence of the pair
// preferences and of the profile model, at 100, 1,000 and 3,000 kinds on
// 10,000 nodes (400 jobs running, 3,000 nodes co-located): a warm state
// (40 ticks with kinds arriving gradually), then per op one tick's updates
// (untimed) and the save (timed). It reports the bytes passed to write(2)
// per save.
func BenchmarkPersist(b *testing.B) {
	for _, k := range []int{100, 1000, 3000} {
		w := newScaleWorld(k, 10000, 1)
		e := scaleEngine(b, w, &memUsage{}, false)
		warmScale(e, w, 40, 400, 3000, 4000)
		if err := e.persistPreferences(); err != nil {
			b.Fatal(err)
		}
		if err := e.persistLearned(false, true); err != nil {
			b.Fatal(err)
		}
		layouts := make([]scaleLayout, 4)
		for i := range layouts {
			layouts[i] = w.layout(pool(k), 400, 3000, 4000)
		}
		for _, what := range []string{"preferences", "profiles"} {
			save := e.persistPreferences
			if what == "profiles" {
				save = func() error { return e.persistLearned(false, true) }
			}
			b.Run(fmt.Sprintf("%s/kinds=%d", what, k), func(b *testing.B) {
				var written int64
				for i := 0; b.Loop(); i++ {
					b.StopTimer()
					applyLayout(e, w, layouts[i%len(layouts)])
					before := writtenBytes()
					b.StartTimer()
					if err := save(); err != nil {
						b.Fatal(err)
					}
					b.StopTimer()
					written += writtenBytes() - before
					b.StartTimer()
				}
				b.ReportMetric(float64(written)/float64(b.N), "wbytes/op")
			})
		}
	}
}

// BenchmarkLearnTick times one learning tick at scale: 1,000 kinds known,
// 10,000 nodes of which 3,000 ran two jobs (the second usually of a
// partner kind of the first), 4,000 one and 3,000 none, 400 jobs
// running; a warm learner and profile model (40 ticks of history, kinds
// arriving gradually); a real bbolt store (fsync on in "sync", as the
// daemon runs); the usage in memory. Each op is a whole Learn: the
// co-locations and compositions, ReadUsage, the pair updates, the profile
// fit and the persistence of what changed. "journal" adds a real goodness
// journal (one record per co-located pair). "warm-covariance" computes the
// covariance columns of the tick's kinds before timing it, as the
// admission passes between two ticks do when they score nodes running
// those kinds: the rest of the tick.
func BenchmarkLearnTick(b *testing.B) {
	for _, mode := range []string{"nosync", "sync", "sync+journal", "nosync+warm-covariance", "sync+parts"} {
		b.Run(mode, func(b *testing.B) {
			w := newScaleWorld(1000, 10000, 1)
			src := &memUsage{}
			e := scaleEngine(b, w, src, strings.HasPrefix(mode, "sync"))
			if strings.HasSuffix(mode, "+parts") {
				w.parts, e.parts = true, src
			}
			if mode == "sync+journal" {
				j, err := journal.Open(filepath.Join(b.TempDir(), "journal"), 1000, 100000)
				if err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { j.Close() })
				e.journal = j
			}
			warmScale(e, w, 40, 400, 3000, 4000)
			layouts := make([]scaleLayout, 4)
			for i := range layouts {
				layouts[i] = w.layout(pool(len(w.kinds)), 400, 3000, 4000)
			}
			from := w.epoch.Add(time.Hour)
			tick := func(i int) LearnReport {
				l := layouts[i%len(layouts)]
				e.presence, src.usage, src.parts = l.presence, l.usage, l.parts
				to := from.Add(time.Minute)
				rep, err := e.Learn(context.Background(), from, to)
				if err != nil {
					b.Fatal(err)
				}
				from = to
				return rep
			}
			rep := tick(0) // also saves the warm state whole
			if rep.Colocations != 3000 || rep.Observed != 3000 || rep.Profile.Observations != 10000 || rep.Updates == 0 {
				b.Fatalf("the tick saw %d co-locations, scored %d, updated %d, fitted %d nodes; want 3000, 3000, some, 10000",
					rep.Colocations, rep.Observed, rep.Updates, rep.Profile.Observations)
			}
			if busy := 3000 + 4000; w.parts && rep.Parts != busy || !w.parts && rep.Parts != 0 {
				b.Fatalf("the tick fitted %d nodes in parts; want %d", rep.Parts, map[bool]int{true: busy}[w.parts])
			}
			var written, sweeps int64
			for i := 1; b.Loop(); i++ {
				if strings.HasSuffix(mode, "warm-covariance") {
					b.StopTimer()
					for _, c := range layouts[i%len(layouts)].colos {
						e.profiles.Covariance(w.kinds[c[0]], w.kinds[c[0]])
						e.profiles.Covariance(w.kinds[c[1]], w.kinds[c[1]])
					}
					b.StartTimer()
				}
				before := writtenBytes()
				sweeps += int64(tick(i).Profile.Sweeps)
				written += writtenBytes() - before
			}
			b.ReportMetric(float64(written)/float64(b.N), "wbytes/op")
			b.ReportMetric(float64(sweeps)/float64(b.N), "sweeps/op")
		})
	}
}
