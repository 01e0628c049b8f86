package sim

// The reference: the simulator as it was before lazy integration (every
// event integrated every node and every group, next scanned every group,
// every metrics tick sampled every node), kept verbatim but for names and
// trimmed to what equivalence_test.go compares. It shares only the
// immutable compiled kinds (kindRT) and the option defaults of New, so the
// production code cannot make it agree by accident. Do not optimise it.

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"time"

	"github.com/colocd/colocd/goodness"
)

type refGroup struct {
	app       *refApp
	node      int
	count     int
	remaining float64
	rate      float64
	bound     int
}

type refApp struct {
	id                string
	kind              *kindRT
	state             AppState
	started, finished float64
	phase             int
	doneSolo          float64
	phaseWork         float64
	groups            []*refGroup
	placement         []int
	containers        int
	scale             float64
}

type refSample struct {
	k    int64
	u    goodness.Usage
	apps []string
}

type refNode struct {
	name    string
	spec    NodeSpec // its group's node type
	usedMem int64
	usedVC  int
	groups  []*refGroup
	apps    []string
	dirty   bool
	rate    usage
	acc     usage
	present []string
	samples []refSample
}

// refSim is the reference simulator.
type refSim struct {
	cluster  ClusterSpec
	kinds    map[string]*kindRT
	opts     Options
	start    time.Time
	interval float64
	rng      *rand.Rand
	now      float64
	tick     int64
	nodes    []*refNode
	nodeIdx  map[string]int
	apps     []*refApp
	byID     map[string]*refApp
	seq      int
	running  []*refApp
}

// newRef is the reference twin of a fresh s (same cluster, kinds, options
// and seed).
func newRef(s *Sim) *refSim {
	r := &refSim{cluster: s.cluster, kinds: s.kinds, opts: s.opts, start: s.start, interval: s.interval,
		rng: rand.New(rand.NewPCG(s.opts.Seed, s.opts.Seed^0x9e3779b97f4a7c15)), nodeIdx: map[string]int{}, byID: map[string]*refApp{}}
	for i := range s.nodes {
		r.nodeIdx[s.nodes[i].name] = i
		spec, _ := s.cluster.NodeAt(i)
		r.nodes = append(r.nodes, &refNode{name: s.nodes[i].name, spec: spec})
	}
	return r
}

func (s *refSim) at(x float64) time.Time { return s.start.Add(seconds(x)) }

func (s *refSim) secs(t time.Time) float64 { return t.Sub(s.start).Seconds() }

func (s *refSim) newApplication() string {
	s.seq++
	return fmt.Sprintf("application_%d_%04d", s.start.UnixMilli(), s.seq)
}

func (s *refSim) work(sec float64) float64 {
	if s.opts.Jitter == 0 {
		return sec
	}
	return sec * (1 + s.opts.Jitter*(2*s.rng.Float64()-1))
}

func (s *refSim) nextEvent() (time.Time, bool) {
	if len(s.running) == 0 {
		return time.Time{}, false
	}
	s.refresh()
	return s.at(s.next()), true
}

func (s *refSim) next() float64 {
	t := float64(s.tick+1) * s.interval
	for _, a := range s.running {
		for _, g := range a.groups {
			if g.remaining > 0 {
				t = min(t, s.now+g.remaining/g.rate)
			}
		}
	}
	return t
}

func (s *refSim) refresh() {
	for _, nd := range s.nodes {
		if nd.dirty {
			s.share(nd)
		}
	}
}

func (s *refSim) advance(until time.Time) []Event {
	u := s.secs(until)
	var evs []Event
	for {
		s.refresh()
		next := s.next()
		if s.at(next).After(until) {
			if u > s.now {
				s.step(u, false)
			}
			return evs
		}
		evs = s.step(next, true, evs...)
	}
}

func (s *refSim) step(t float64, event bool, evs ...Event) []Event {
	dt := t - s.now
	for _, nd := range s.nodes {
		nd.acc.addScaled(nd.rate, dt)
	}
	var touched []*refApp
	for _, a := range s.running {
		hit := false
		for _, g := range a.groups {
			if g.remaining <= 0 {
				continue
			}
			if event && s.now+g.remaining/g.rate <= t {
				g.remaining = 0
				s.nodes[g.node].dirty = true
				hit = true
			} else {
				g.remaining = max(g.remaining-g.rate*dt, 1e-12)
			}
		}
		if hit {
			touched = append(touched, a)
		}
	}
	s.now = t
	for _, a := range touched {
		if slices.ContainsFunc(a.groups, func(g *refGroup) bool { return g.remaining > 0 }) {
			continue
		}
		a.doneSolo += a.kind.phase(a.phase).seconds
		a.phase++
		if a.phase == a.kind.total {
			s.end(a, AppFinished)
			evs = append(evs, Event{At: s.at(t), AppID: a.id, Kind: EventFinished})
			continue
		}
		sec := a.kind.phase(a.phase).seconds
		for _, g := range a.groups {
			g.remaining = s.work(sec) * a.scale
			s.nodes[g.node].dirty = true
		}
		a.phaseWork = refMaxRemaining(a)
	}
	if event && t >= float64(s.tick+1)*s.interval {
		s.sample()
	}
	return evs
}

func (s *refSim) sample() {
	f := 1 / s.interval
	k := s.tick
	for _, nd := range s.nodes {
		cores := nd.spec.Cores
		a := nd.acc
		u := goodness.Usage{
			CPU: clamp01(a.cpu * f / cores), IOWait: clamp01(a.iowait * f / cores),
			IOPressure: clamp01(a.iopress * f), CPUPressure: clamp01(a.cpupress * f), Pressure: s.opts.Pressure,
			DiskRead: a.read * f * mb, DiskWrite: a.write * f * mb, NetRecv: a.in * f * mb, NetSent: a.out * f * mb,
		}
		if u.CPU+u.IOWait > 1 {
			u.IOWait = 1 - u.CPU
		}
		if !s.opts.Pressure {
			u.IOPressure, u.CPUPressure = 0, 0
		}
		nd.samples = append(nd.samples, refSample{k: k, u: u, apps: nd.present})
		nd.acc = usage{}
		nd.present = nd.apps
	}
	s.tick++
	if s.opts.Retention > 0 {
		keepFrom := int64(math.Floor((s.now - s.opts.Retention.Seconds()) / s.interval))
		for _, nd := range s.nodes {
			drop := 0
			for drop < len(nd.samples) && nd.samples[drop].k < keepFrom {
				drop++
			}
			nd.samples = nd.samples[drop:]
		}
	}
}

// fits is Sim.FitsApp for containers of kind (0: the kind's).
func (s *refSim) fits(kind string, containers int) bool {
	k := s.kinds[kind]
	if containers == 0 {
		containers = k.spec.Containers
	}
	room := 0
	for _, nd := range s.nodes {
		vc := int64(nd.spec.VCores-nd.usedVC) / k.vcores
		mem := (nd.spec.MemoryMB - nd.usedMem) / k.memMB
		room += int(max(min(vc, mem), 0))
		if room >= containers {
			return true
		}
	}
	return false
}

// submit is Sim.Submit for an id from newApplication: nil, or ErrNoFit.
// containers 0 is the kind's, scale 0 is 1.
func (s *refSim) submit(appID string, kind string, containers int, scale float64) error {
	k := s.kinds[kind]
	if containers == 0 {
		containers = k.spec.Containers
	}
	if scale == 0 {
		scale = 1
	}
	counts, ok := s.place(k, containers)
	if !ok {
		return ErrNoFit
	}
	s.start1(appID, k, counts, containers, scale)
	return nil
}

func (s *refSim) place(k *kindRT, containers int) ([]int, bool) {
	n := len(s.nodes)
	freeVC := make([]int64, n)
	freeMem := make([]int64, n)
	for i, nd := range s.nodes {
		freeVC[i] = int64(nd.spec.VCores - nd.usedVC)
		freeMem[i] = nd.spec.MemoryMB - nd.usedMem
	}
	room := func(i int) int64 { return min(freeVC[i]/k.vcores, freeMem[i]/k.memMB) }
	counts := make([]int, n)
	put := func(i int, c int) {
		counts[i] += c
		freeVC[i] -= int64(c) * k.vcores
		freeMem[i] -= int64(c) * k.memMB
	}
	left := containers
	g := s.opts.GroupSize
	var cand []int
	for i, nd := range s.nodes {
		if nd.usedVC == 0 && nd.usedMem == 0 {
			cand = append(cand, i)
		}
	}
	s.rng.Shuffle(len(cand), func(i, j int) { cand[i], cand[j] = cand[j], cand[i] })
	for _, i := range cand {
		if left == 0 {
			break
		}
		if c := min(g, left, int(room(i))); c > 0 {
			put(i, c)
			left -= c
		}
	}
	for _, size := range []int{g, 1} {
		for left > 0 {
			want := min(size, left)
			cand = cand[:0]
			for i := range n {
				if room(i) >= int64(want) {
					cand = append(cand, i)
				}
			}
			if len(cand) == 0 {
				break
			}
			for left >= want && len(cand) > 0 {
				j := s.rng.IntN(len(cand))
				i := cand[j]
				put(i, want)
				left -= want
				if room(i) < int64(want) {
					cand[j] = cand[len(cand)-1]
					cand = cand[:len(cand)-1]
				}
			}
		}
	}
	return counts, left == 0
}

func (s *refSim) start1(appID string, k *kindRT, counts []int, containers int, scale float64) {
	a := &refApp{id: appID, kind: k, state: AppRunning, started: s.now, placement: counts, containers: containers, scale: scale}
	first := k.phase(0)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		g := &refGroup{app: a, node: i, count: c, remaining: s.work(first.seconds) * scale, rate: 1, bound: -1}
		a.groups = append(a.groups, g)
		nd := s.nodes[i]
		nd.usedVC += c * int(k.vcores)
		nd.usedMem += int64(c) * k.memMB
		nd.groups = append(nd.groups, g)
		nd.dirty = true
		s.refreshApps(nd)
		if !slices.Contains(nd.present, appID) {
			nd.present = append(slices.Clip(nd.present), appID)
		}
	}
	a.phaseWork = refMaxRemaining(a)
	s.apps = append(s.apps, a)
	s.byID[appID] = a
	s.running = append(s.running, a)
}

func (s *refSim) refreshApps(nd *refNode) {
	var ids []string
	for _, g := range nd.groups {
		if !slices.Contains(ids, g.app.id) {
			ids = append(ids, g.app.id)
		}
	}
	nd.apps = ids
}

func (s *refSim) kill(appID string) {
	if a := s.byID[appID]; a.state == AppRunning {
		s.end(a, AppKilled)
	}
}

func (s *refSim) end(a *refApp, state AppState) {
	a.state = state
	a.finished = s.now
	for _, g := range a.groups {
		nd := s.nodes[g.node]
		nd.usedVC -= g.count * int(a.kind.vcores)
		nd.usedMem -= int64(g.count) * a.kind.memMB
		nd.groups = slices.DeleteFunc(nd.groups, func(x *refGroup) bool { return x == g })
		nd.dirty = true
		s.refreshApps(nd)
	}
	s.running = slices.DeleteFunc(s.running, func(x *refApp) bool { return x == a })
}

func (s *refSim) share(nd *refNode) {
	nd.dirty = false
	node := nd.spec
	inf := node.Interference
	interfere := inf.DiskStreams > 0 || inf.CPUCache > 0
	caps := [nres]float64{node.Cores, node.DiskMBps, node.NetMBps, node.NetMBps}
	var used [nres]float64
	var active [16]*refGroup
	act := active[:0]
	var diskGroups, cpuGroups int
	for _, g := range nd.groups {
		if g.remaining > 0 {
			g.rate, g.bound = 0, -1
			act = append(act, g)
			if interfere {
				d := &g.app.kind.phase(g.app.phase).d
				if d[resDisk] > 0 {
					diskGroups++
				}
				if d[resCPU] >= cpuBoundCores {
					cpuGroups++
				}
			}
		}
	}
	if diskGroups >= 2 && inf.DiskStreams > 0 {
		caps[resDisk] /= 1 + inf.DiskStreams*float64(diskGroups-1)
	}
	for len(act) > 0 {
		var demand [nres]float64
		for _, g := range act {
			d := &g.app.kind.phase(g.app.phase).d
			for r := range nres {
				demand[r] += float64(g.count) * d[r]
			}
		}
		level, bott := 1.0, -1
		for r := range nres {
			if demand[r] > 0 {
				if l := (caps[r] - used[r]) / demand[r]; l < level {
					level, bott = l, r
				}
			}
		}
		if bott < 0 {
			for _, g := range act {
				g.rate = 1
			}
			break
		}
		level = max(level, 1e-9)
		keep := act[:0]
		for _, g := range act {
			d := &g.app.kind.phase(g.app.phase).d
			if d[bott] == 0 {
				keep = append(keep, g)
				continue
			}
			g.rate, g.bound = level, bott
			for r := range nres {
				used[r] += level * float64(g.count) * d[r]
			}
		}
		act = keep
	}
	cache := 1.0
	if cpuGroups >= 2 && inf.CPUCache > 0 {
		cache += inf.CPUCache * float64(cpuGroups-1)
	}
	var u usage
	var starved float64
	for _, g := range nd.groups {
		if g.remaining <= 0 {
			continue
		}
		p := g.app.kind.phase(g.app.phase)
		fill := g.rate
		if cache > 1 && p.d[resCPU] >= cpuBoundCores {
			g.rate = fill / cache
		}
		busy, prog := float64(g.count)*fill, float64(g.count)*g.rate
		u.cpu += busy * p.d[resCPU]
		u.read += prog * p.read
		u.write += prog * p.write
		u.in += prog * p.d[resNetIn]
		u.out += prog * p.d[resNetOut]
		switch g.bound {
		case resDisk:
			starved += float64(g.count) * p.d[resCPU] * (1 - fill)
			u.iopress = max(u.iopress, 1-fill)
		case resCPU:
			u.cpupress = max(u.cpupress, 1-fill)
		}
	}
	u.cpu = min(u.cpu, node.Cores)
	u.iowait = max(0, min(node.Cores-u.cpu, starved))
	nd.rate = u
}

func refMaxRemaining(a *refApp) float64 {
	var rem float64
	for _, g := range a.groups {
		rem = max(rem, g.remaining)
	}
	return rem
}

// samples is Sim.Samples.
func (s *refSim) samples() []Sample {
	n := len(s.nodes[0].samples)
	out := make([]Sample, 0, n*len(s.nodes))
	for i := range n {
		for _, nd := range s.nodes {
			sm := nd.samples[i]
			out = append(out, Sample{Node: nd.name, Start: s.at(float64(sm.k) * s.interval),
				End: s.at(float64(sm.k+1) * s.interval), Usage: sm.u, Apps: sm.apps})
		}
	}
	return out
}

// usageOf is Sim.Usage.
func (s *refSim) usageOf(node string, from, to time.Time) (goodness.Usage, bool) {
	i, ok := s.nodeIdx[node]
	if !ok || !to.After(from) {
		return goodness.Usage{}, false
	}
	sm := s.nodes[i].samples
	if len(sm) == 0 {
		return goodness.Usage{}, false
	}
	f, t := s.secs(from), s.secs(to)
	k0 := sm[0].k
	lo := max(int64(math.Floor(f/s.interval))-k0, 0)
	hi := min(int64(math.Ceil(t/s.interval))-k0, int64(len(sm)))
	var sum goodness.Usage
	var wsum float64
	for j := lo; j < hi; j++ {
		start := float64(sm[j].k) * s.interval
		w := min(t, start+s.interval) - max(f, start)
		if w <= 0 {
			continue
		}
		u := sm[j].u
		sum.CPU += w * u.CPU
		sum.IOWait += w * u.IOWait
		sum.IOPressure += w * u.IOPressure
		sum.CPUPressure += w * u.CPUPressure
		sum.DiskRead += w * u.DiskRead
		sum.DiskWrite += w * u.DiskWrite
		sum.NetRecv += w * u.NetRecv
		sum.NetSent += w * u.NetSent
		wsum += w
	}
	if wsum <= 0 {
		return goodness.Usage{}, false
	}
	return goodness.Usage{CPU: sum.CPU / wsum, IOWait: sum.IOWait / wsum, IOPressure: sum.IOPressure / wsum,
		CPUPressure: sum.CPUPressure / wsum, Pressure: s.opts.Pressure, DiskRead: sum.DiskRead / wsum,
		DiskWrite: sum.DiskWrite / wsum, NetRecv: sum.NetRecv / wsum, NetSent: sum.NetSent / wsum}, true
}

// appState is what equivalence_test compares of an application.
type appState struct {
	ID                string
	State             AppState
	Started, Finished float64 // seconds; Finished 0 while running
	Placement         []int   // containers per node index
	Progress, Speed   float64
}

func (s *refSim) appStates(keep func(*refApp) bool) []appState {
	var out []appState
	for _, a := range s.apps {
		if !keep(a) {
			continue
		}
		st := appState{ID: a.id, State: a.state, Started: a.started, Placement: a.placement}
		switch a.state {
		case AppRunning:
			st.Progress = refProgress(a)
			st.Speed = math.Inf(1)
			for _, g := range a.groups {
				if g.remaining > 0 {
					if s.nodes[g.node].dirty {
						s.share(s.nodes[g.node])
					}
					st.Speed = min(st.Speed, g.rate)
				}
			}
			if math.IsInf(st.Speed, 1) {
				st.Speed = 1
			}
		case AppFinished:
			st.Finished, st.Progress = a.finished, 1
		default:
			st.Finished, st.Progress = a.finished, refProgress(a)
		}
		out = append(out, st)
	}
	return out
}

func refProgress(a *refApp) float64 {
	if a.phase >= a.kind.total {
		return 1
	}
	ph := a.kind.phase(a.phase)
	frac := 0.0
	if a.phaseWork > 0 {
		frac = 1 - refMaxRemaining(a)/a.phaseWork
	}
	return min(1, (a.doneSolo+ph.seconds*frac)/a.kind.solo)
}
