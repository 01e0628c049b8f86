package sim

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"slices"
	"strconv"
	"time"

	"github.com/colocd/colocd/goodness"
)

// DefaultStart is the virtual start time when Options.Start is zero.
var DefaultStart = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// Options configure a Sim. Zero fields take the documented defaults.
type Options struct {
	// Seed seeds the PCG that drives placement: the same seed and the same
	// calls give the same run.
	Seed uint64
	// Start is the virtual time of the start (default DefaultStart); app
	// ids carry it in milliseconds, as YARN's carry the RM start time.
	Start time.Time
	// MetricsInterval is the sampling period of node usage (default 10 s).
	MetricsInterval time.Duration
	// GroupSize is how many containers of a job go onto one node at a time
	// (default 3, the paper's triplets).
	GroupSize int
	// Jitter, in [0, 1), varies work: each container group's work in each
	// phase is the phase's seconds times a factor drawn uniformly from
	// [1−Jitter, 1+Jitter] (stragglers; desynchronised iterations). 0, the
	// default, makes every duration exact; Workload.NewSim replaces 0 with
	// the workload's Variability.Jitter.
	Jitter float64
	// Retention drops samples that ended more than Retention before now
	// (0 keeps every sample). Set it for long-running `colocd serve`.
	Retention time.Duration
}

// AppSpec is what a submitter gives for an application.
type AppSpec struct {
	JobID, Kind, User, Queue string
	Tags                     []string
}

// AppState is an application's state.
type AppState string

// Application states. A submitted application runs at once (placement is
// part of Submit), so there is no accepted state.
const (
	AppRunning  AppState = "running"
	AppFinished AppState = "finished"
	AppKilled   AppState = "killed"
)

// Resources are an amount of schedulable resources.
type Resources struct {
	MemoryMB int64
	VCores   int64
}

// AppInfo describes an application. Slices and maps are copies.
type AppInfo struct {
	ID, JobID, Kind, User, Queue string
	Tags                         []string
	State                        AppState
	Started                      time.Time
	Finished                     time.Time // zero while running
	// Nodes are the nodes that hold (or held) its containers, sorted, and
	// Placement how many containers each.
	Nodes      []string
	Placement  map[string]int
	Containers int
	// Alloc is what it holds now: zero once finished or killed.
	Alloc Resources
	// Progress is the fraction of its solo work done, in [0, 1].
	Progress float64
	// Speed is how fast its slowest working container progresses now,
	// relative to running alone (1 = no interference), CPU cache
	// interference included; 0 when not running.
	Speed float64
}

// NodeInfo describes a node's reservations.
type NodeInfo struct {
	Name         string
	Cores        float64 // physical cores (shared at run time)
	VCores       int     // advertised vcores (the placement capacity)
	MemoryMB     int64
	UsedMemoryMB int64
	UsedVCores   int
	Apps         []string // running apps with containers here, in submission order
}

// EventKind is what happened to an application.
type EventKind int

// Event kinds.
const (
	EventFinished EventKind = iota + 1 // the last phase of its last container ended
)

func (k EventKind) String() string {
	if k == EventFinished {
		return "finished"
	}
	return "EventKind(" + strconv.Itoa(int(k)) + ")"
}

// Event is a change of an application's state that Advance reports.
type Event struct {
	At    time.Time
	AppID string
	Kind  EventKind
}

// Resource indices of the sharing model.
const (
	resCPU = iota
	resDisk
	resNetIn
	resNetOut
	nres
)

// phaseRT is a compiled phase: the demand of one container at full speed.
type phaseRT struct {
	seconds     float64
	d           [nres]float64 // cores, disk MB/s (read+write), net in, net out
	read, write float64       // the disk split, for metrics
}

type kindRT struct {
	spec                   KindSpec
	setup, body, teardown  []phaseRT
	repeat, total          int
	solo                   float64
	vcores, memMB, perNode int64
}

func (k *kindRT) phase(i int) *phaseRT {
	if i < len(k.setup) {
		return &k.setup[i]
	}
	i -= len(k.setup)
	if n := k.repeat * len(k.body); i < n {
		return &k.body[i%len(k.body)]
	} else {
		return &k.teardown[i-n]
	}
}

func compile(ps []Phase) []phaseRT {
	out := make([]phaseRT, len(ps))
	for i, p := range ps {
		out[i] = phaseRT{
			seconds: p.Seconds,
			d:       [nres]float64{p.CPU, p.DiskReadMBps + p.DiskWriteMBps, p.NetInMBps, p.NetOutMBps},
			read:    p.DiskReadMBps, write: p.DiskWriteMBps,
		}
	}
	return out
}

// group is the containers of one app on one node: they are identical, so
// they share a rate and a remaining amount of work.
type group struct {
	app       *app
	node      int
	count     int
	remaining float64 // solo seconds of work left in the current phase; 0 = waiting at the barrier
	rate      float64 // progress per second (solo seconds of work), in (0, 1]
	bound     int     // resource that limits it, -1 when it runs at full speed
}

type app struct {
	id                string
	seq               int
	spec              AppSpec
	kind              *kindRT
	state             AppState
	started, finished float64
	phase             int     // index into the kind's phase sequence
	doneSolo          float64 // solo seconds of the phases already completed
	phaseWork         float64 // largest work of a group in the current phase
	groups            []*group
	placement         []int // containers per node index
	containers        int
}

// usage is a node's consumption: CPU and iowait in cores, the rest in MB/s.
type usage struct {
	cpu, iowait, read, write, in, out float64
}

func (u *usage) addScaled(v usage, f float64) {
	u.cpu += v.cpu * f
	u.iowait += v.iowait * f
	u.read += v.read * f
	u.write += v.write * f
	u.in += v.in * f
	u.out += v.out * f
}

type sample struct {
	k    int64 // interval index: [k·I, (k+1)·I)
	u    goodness.Usage
	apps []string // immutable, may be shared between samples
}

type node struct {
	name    string
	usedMem int64
	usedVC  int
	groups  []*group // groups of running apps, in placement order
	apps    []string // ids of running apps here, immutable (replaced on change)
	dirty   bool
	rate    usage    // current rates
	acc     usage    // integral over the current metrics interval
	present []string // apps here at some time in the current interval, immutable
	samples []sample
}

// Sim is a discrete-event simulator of a shared cluster. It is not safe for
// concurrent use; Realtime serialises access for `colocd serve`.
type Sim struct {
	cluster  ClusterSpec
	kindList []KindSpec
	kinds    map[string]*kindRT
	opts     Options
	start    time.Time
	interval float64 // seconds
	pcg      *rand.PCG
	rng      *rand.Rand
	now      float64 // seconds since start
	tick     int64   // index of the current metrics interval
	nodes    []*node
	nodeIdx  map[string]int
	apps     []*app // submitted apps in submission order
	byID     map[string]*app
	reserved map[string]bool // ids from NewApplication not yet submitted
	seq      int
	running  []*app
}

// New returns a simulator of cluster running kinds. It validates both;
// errors are *FieldError naming the key as in a workload file.
func New(cluster ClusterSpec, kinds []KindSpec, opts Options) (*Sim, error) {
	if err := cluster.validate("cluster"); err != nil {
		return nil, err
	}
	cluster.Node.VCores = cluster.Node.vcores()
	if err := validateKinds(kinds, cluster); err != nil {
		return nil, err
	}
	if opts.Start.IsZero() {
		opts.Start = DefaultStart
	}
	if opts.MetricsInterval == 0 {
		opts.MetricsInterval = 10 * time.Second
	}
	if opts.MetricsInterval < time.Millisecond {
		return nil, &FieldError{Path: "options.metrics_interval", Reason: "must be >= 1ms"}
	}
	if opts.GroupSize <= 0 {
		opts.GroupSize = 3
	}
	if !(opts.Jitter >= 0 && opts.Jitter < 1) {
		return nil, &FieldError{Path: "options.jitter", Reason: "must be in [0, 1)"}
	}
	if opts.Retention < 0 {
		return nil, &FieldError{Path: "options.retention", Reason: "must be >= 0"}
	}
	s := &Sim{
		cluster:  cluster,
		kinds:    make(map[string]*kindRT, len(kinds)),
		opts:     opts,
		start:    opts.Start,
		interval: opts.MetricsInterval.Seconds(),
		pcg:      rand.NewPCG(opts.Seed, opts.Seed^0x9e3779b97f4a7c15),
		nodeIdx:  make(map[string]int, cluster.Nodes),
		byID:     make(map[string]*app),
		reserved: make(map[string]bool),
	}
	s.rng = rand.New(s.pcg)
	for _, k := range kinds {
		k.Repeat = max(k.Repeat, 1)
		k.Setup, k.Phases, k.Teardown = slices.Clone(k.Setup), slices.Clone(k.Phases), slices.Clone(k.Teardown)
		rt := &kindRT{spec: k, setup: compile(k.Setup), body: compile(k.Phases), teardown: compile(k.Teardown),
			repeat: k.Repeat, solo: k.soloSeconds(), vcores: int64(k.Container.VCores), memMB: k.Container.MemoryMB,
			perNode: k.Container.perNode(cluster.Node)}
		rt.total = len(rt.setup) + rt.repeat*len(rt.body) + len(rt.teardown)
		s.kinds[k.Name] = rt
		s.kindList = append(s.kindList, k)
	}
	width := max(2, len(strconv.Itoa(cluster.Nodes)))
	for i := range cluster.Nodes {
		name := fmt.Sprintf("node%0*d", width, i+1)
		s.nodeIdx[name] = i
		s.nodes = append(s.nodes, &node{name: name})
	}
	return s, nil
}

// Now is the current virtual time.
func (s *Sim) Now() time.Time { return s.at(s.now) }

// Cluster is the simulated cluster (with defaults filled in).
func (s *Sim) Cluster() ClusterSpec { return s.cluster }

// Kinds are the kinds the simulator runs, in the order given to New.
func (s *Sim) Kinds() []KindSpec { return slices.Clone(s.kindList) }

// Kind returns the kind named name.
func (s *Sim) Kind(name string) (KindSpec, bool) {
	k, ok := s.kinds[name]
	if !ok {
		return KindSpec{}, false
	}
	return k.spec, true
}

func (s *Sim) at(x float64) time.Time { return s.start.Add(seconds(x)) }

func (s *Sim) secs(t time.Time) float64 { return t.Sub(s.start).Seconds() }

// NewApplication reserves an application id, like YARN's new-application:
// "application_<start unix ms>_<sequence, at least 4 digits>".
func (s *Sim) NewApplication() string {
	id := s.NextApplicationID()
	s.seq++
	s.reserved[id] = true
	return id
}

// NextApplicationID is the id the next NewApplication returns; it changes
// nothing (a caller that logs ahead writes the id before reserving it).
func (s *Sim) NextApplicationID() string {
	return fmt.Sprintf("application_%d_%04d", s.start.UnixMilli(), s.seq+1)
}

// CheckSubmit returns the error Submit would return before it places
// anything: ErrDuplicate, ErrUnknownApp or ErrUnknownKind. nil means Submit
// either starts the job or fails with ErrNoFit. It changes nothing and
// draws no random numbers (Submit's placement does, even when the job does
// not fit).
func (s *Sim) CheckSubmit(appID string, a AppSpec) error {
	if _, done := s.byID[appID]; done {
		return fmt.Errorf("submit %s: %w", appID, ErrDuplicate)
	}
	if !s.reserved[appID] {
		return fmt.Errorf("submit %s: %w (not reserved by NewApplication)", appID, ErrUnknownApp)
	}
	if _, ok := s.kinds[a.Kind]; !ok {
		return fmt.Errorf("submit %s: kind %q: %w", appID, a.Kind, ErrUnknownKind)
	}
	return nil
}

// Fits reports whether a job of kind would fit the free resources now, i.e.
// whether Submit would place it rather than fail with ErrNoFit. It changes
// nothing and draws no random numbers (Submit's placement draws them even
// when the job turns out not to fit). Placement ends with single containers
// on any node with room for one, so a job fits exactly when the free room
// of all nodes together holds its containers.
func (s *Sim) Fits(kind string) bool {
	k, ok := s.kinds[kind]
	if !ok {
		return false
	}
	room := 0
	for _, nd := range s.nodes {
		vc := int64(s.cluster.Node.VCores-nd.usedVC) / k.vcores
		mem := (s.cluster.Node.MemoryMB - nd.usedMem) / k.memMB
		room += int(max(min(vc, mem), 0))
		if room >= k.spec.Containers {
			return true
		}
	}
	return false
}

// Submit places the containers of a job of kind a.Kind and starts it under
// a reserved id. It fails with ErrUnknownApp for an id NewApplication did
// not return, ErrDuplicate for an id already submitted, ErrUnknownKind, or
// ErrNoFit when the whole job does not fit the free resources now (then
// nothing is placed and the id stays reserved).
//
// Placement (paper §6.1): one group of GroupSize containers on each empty
// node, in random order; then groups on random nodes with room for a whole
// group; then single containers on random nodes with room for one. Fit is
// YARN's: advertised vcores and memory.
func (s *Sim) Submit(appID string, a AppSpec) error {
	if err := s.CheckSubmit(appID, a); err != nil {
		return err
	}
	k := s.kinds[a.Kind]
	counts, ok := s.place(k)
	if !ok {
		return fmt.Errorf("submit %s: %d containers of %d vcores, %d MB: %w", appID, k.spec.Containers, k.vcores, k.memMB, ErrNoFit)
	}
	s.start1(appID, a, k, counts)
	return nil
}

// place computes a placement without changing anything; counts[i] is the
// number of containers on node i.
func (s *Sim) place(k *kindRT) ([]int, bool) {
	n := len(s.nodes)
	freeVC := make([]int64, n)
	freeMem := make([]int64, n)
	for i, nd := range s.nodes {
		freeVC[i] = int64(s.cluster.Node.VCores - nd.usedVC)
		freeMem[i] = s.cluster.Node.MemoryMB - nd.usedMem
	}
	room := func(i int) int64 { return min(freeVC[i]/k.vcores, freeMem[i]/k.memMB) }
	counts := make([]int, n)
	put := func(i int, c int) {
		counts[i] += c
		freeVC[i] -= int64(c) * k.vcores
		freeMem[i] -= int64(c) * k.memMB
	}
	left := k.spec.Containers
	g := s.opts.GroupSize
	// 1. One group per empty node, empty nodes in random order.
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
	// 2. Whole groups on random nodes with room for one; 3. then singles.
	// cand holds the nodes with room for a group of want; a node leaves it
	// when it fills up, so each group costs O(1) after an O(n) scan (one
	// more scan when the last, partial group is smaller).
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

// start1 starts an app with the given placement (validated by the caller).
func (s *Sim) start1(appID string, spec AppSpec, k *kindRT, counts []int) {
	delete(s.reserved, appID)
	spec.Tags = slices.Clone(spec.Tags)
	a := &app{id: appID, seq: s.seqOf(appID), spec: spec, kind: k, state: AppRunning, started: s.now,
		placement: counts, containers: k.spec.Containers}
	first := k.phase(0)
	for i, c := range counts {
		if c == 0 {
			continue
		}
		g := &group{app: a, node: i, count: c, remaining: s.work(first.seconds), rate: 1, bound: -1}
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
	a.phaseWork = maxRemaining(a)
	s.apps = append(s.apps, a)
	s.byID[appID] = a
	s.running = append(s.running, a)
}

func (s *Sim) seqOf(id string) int {
	i := len(id) - 1
	for i >= 0 && id[i] != '_' {
		i--
	}
	n, _ := strconv.Atoi(id[i+1:])
	return n
}

func (s *Sim) refreshApps(nd *node) {
	var ids []string
	for _, g := range nd.groups {
		if !slices.Contains(ids, g.app.id) {
			ids = append(ids, g.app.id)
		}
	}
	nd.apps = ids
}

// Kill stops a running application and frees its containers. Killing an
// application that already ended is a no-op.
func (s *Sim) Kill(appID string) error {
	a, ok := s.byID[appID]
	if !ok {
		return fmt.Errorf("kill %s: %w", appID, ErrUnknownApp)
	}
	if a.state != AppRunning {
		return nil
	}
	s.end(a, AppKilled)
	return nil
}

// end releases a's containers and records its end at the current time.
func (s *Sim) end(a *app, state AppState) {
	a.state = state
	a.finished = s.now
	for _, g := range a.groups {
		nd := s.nodes[g.node]
		nd.usedVC -= g.count * int(a.kind.vcores)
		nd.usedMem -= int64(g.count) * a.kind.memMB
		nd.groups = slices.DeleteFunc(nd.groups, func(x *group) bool { return x == g })
		nd.dirty = true
		s.refreshApps(nd)
	}
	s.running = slices.DeleteFunc(s.running, func(x *app) bool { return x == a })
}

// App describes an application that was submitted.
func (s *Sim) App(appID string) (AppInfo, bool) {
	a, ok := s.byID[appID]
	if !ok {
		return AppInfo{}, false
	}
	return s.info(a), true
}

// Apps describes every submitted application, in submission order (the
// order of their sequence numbers).
func (s *Sim) Apps() []AppInfo {
	out := make([]AppInfo, 0, len(s.apps))
	for _, a := range s.apps {
		out = append(out, s.info(a))
	}
	slices.SortStableFunc(out, func(x, y AppInfo) int { return cmp.Compare(s.byID[x.ID].seq, s.byID[y.ID].seq) })
	return out
}

func (s *Sim) info(a *app) AppInfo {
	inf := AppInfo{ID: a.id, JobID: a.spec.JobID, Kind: a.spec.Kind, User: a.spec.User, Queue: a.spec.Queue,
		Tags: slices.Clone(a.spec.Tags), State: a.state, Started: s.at(a.started), Containers: a.containers,
		Placement: make(map[string]int)}
	for i, c := range a.placement {
		if c > 0 {
			inf.Nodes = append(inf.Nodes, s.nodes[i].name)
			inf.Placement[s.nodes[i].name] = c
		}
	}
	if a.state != AppRunning {
		inf.Finished = s.at(a.finished)
		if a.state == AppFinished {
			inf.Progress = 1
		} else {
			inf.Progress = a.progress()
		}
		return inf
	}
	inf.Alloc = Resources{MemoryMB: int64(a.containers) * a.kind.memMB, VCores: int64(a.containers) * a.kind.vcores}
	inf.Progress = a.progress()
	inf.Speed = math.Inf(1)
	for _, g := range a.groups {
		if g.remaining > 0 {
			inf.Speed = min(inf.Speed, s.rateOf(g))
		}
	}
	if math.IsInf(inf.Speed, 1) {
		inf.Speed = 1
	}
	return inf
}

// rateOf is g's current rate, computing its node's shares if stale.
func (s *Sim) rateOf(g *group) float64 {
	if nd := s.nodes[g.node]; nd.dirty {
		s.share(nd)
	}
	return g.rate
}

// progress counts the current phase as done in the proportion its
// slowest group is.
func (a *app) progress() float64 {
	if a.phase >= a.kind.total {
		return 1
	}
	ph := a.kind.phase(a.phase)
	frac := 0.0
	if a.phaseWork > 0 {
		frac = 1 - maxRemaining(a)/a.phaseWork
	}
	return min(1, (a.doneSolo+ph.seconds*frac)/a.kind.solo)
}

func maxRemaining(a *app) float64 {
	var rem float64
	for _, g := range a.groups {
		rem = max(rem, g.remaining)
	}
	return rem
}

// work draws a group's work for a phase of sec solo seconds.
func (s *Sim) work(sec float64) float64 {
	if s.opts.Jitter == 0 {
		return sec
	}
	return sec * (1 + s.opts.Jitter*(2*s.rng.Float64()-1))
}

// Nodes describes every node, in name order.
func (s *Sim) Nodes() []NodeInfo {
	out := make([]NodeInfo, len(s.nodes))
	for i, nd := range s.nodes {
		out[i] = NodeInfo{Name: nd.name, Cores: s.cluster.Node.Cores, VCores: s.cluster.Node.VCores,
			MemoryMB: s.cluster.Node.MemoryMB, UsedMemoryMB: nd.usedMem, UsedVCores: nd.usedVC, Apps: slices.Clone(nd.apps)}
	}
	return out
}

// NextEvent is the time of the next state change: a container finishing
// its phase, an application finishing, or a metrics sample. It is false
// when no application runs (then nothing but empty samples would happen).
func (s *Sim) NextEvent() (time.Time, bool) {
	if len(s.running) == 0 {
		return time.Time{}, false
	}
	s.refresh()
	return s.at(s.next()), true
}

// next is the earliest of the next group completion and the next sample.
func (s *Sim) next() float64 {
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

// refresh recomputes the shares of nodes whose set of working groups changed.
func (s *Sim) refresh() {
	for _, nd := range s.nodes {
		if nd.dirty {
			s.share(nd)
		}
	}
}

// Advance runs the simulation up to until (no-op if until is not after
// Now) and returns the applications that finished, in time order.
func (s *Sim) Advance(until time.Time) []Event {
	u := s.secs(until)
	var evs []Event
	for {
		s.refresh()
		next := s.next()
		// Compare on the nanosecond grid of time.Time, so that Advance to
		// the (rounded) time NextEvent returned processes that event.
		if s.at(next).After(until) {
			if u > s.now {
				s.step(u, false)
			}
			return evs
		}
		evs = s.step(next, true, evs...)
	}
}

// step integrates from now to t at the current rates. When event is true,
// t is an event time: groups that complete by t complete, the apps whose
// containers all completed move to their next phase or finish, and a
// sample is taken if t ends a metrics interval.
func (s *Sim) step(t float64, event bool, evs ...Event) []Event {
	dt := t - s.now
	for _, nd := range s.nodes {
		nd.acc.addScaled(nd.rate, dt)
	}
	var touched []*app
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
		if slices.ContainsFunc(a.groups, func(g *group) bool { return g.remaining > 0 }) {
			continue // the barrier: wait for the slowest container
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
			g.remaining = s.work(sec)
			s.nodes[g.node].dirty = true
		}
		a.phaseWork = maxRemaining(a)
	}
	if event && t >= float64(s.tick+1)*s.interval {
		s.sample()
	}
	return evs
}

// sample closes the current metrics interval on every node.
func (s *Sim) sample() {
	cores := s.cluster.Node.Cores
	f := 1 / s.interval
	k := s.tick
	for _, nd := range s.nodes {
		a := nd.acc
		u := goodness.Usage{
			CPU: clamp01(a.cpu * f / cores), IOWait: clamp01(a.iowait * f / cores),
			DiskRead: a.read * f * mb, DiskWrite: a.write * f * mb, NetRecv: a.in * f * mb, NetSent: a.out * f * mb,
		}
		if u.CPU+u.IOWait > 1 {
			u.IOWait = 1 - u.CPU
		}
		nd.samples = append(nd.samples, sample{k: k, u: u, apps: nd.present})
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

func clamp01(x float64) float64 { return min(max(x, 0), 1) }

// Clone returns an independent deep copy (random source included): the
// copy and the original evolve identically under the same calls.
func (s *Sim) Clone() *Sim {
	c := *s
	pcg := *s.pcg
	c.pcg = &pcg
	c.rng = rand.New(c.pcg)
	c.byID = make(map[string]*app, len(s.byID))
	c.reserved = maps.Clone(s.reserved)
	c.nodeIdx = s.nodeIdx // never written after New
	gmap := make(map[*group]*group)
	c.apps = make([]*app, len(s.apps))
	for i, a := range s.apps {
		na := *a
		na.groups = make([]*group, len(a.groups))
		for j, g := range a.groups {
			ng := *g
			ng.app = &na
			na.groups[j] = &ng
			gmap[g] = &ng
		}
		c.apps[i] = &na
		c.byID[na.id] = &na
	}
	c.running = make([]*app, len(s.running))
	for i, a := range s.running {
		c.running[i] = c.byID[a.id]
	}
	c.nodes = make([]*node, len(s.nodes))
	for i, nd := range s.nodes {
		nn := *nd
		nn.groups = make([]*group, len(nd.groups))
		for j, g := range nd.groups {
			nn.groups[j] = gmap[g]
		}
		nn.samples = slices.Clip(nd.samples) // samples are immutable: share, copy on append
		nn.present = slices.Clip(nd.present)
		c.nodes[i] = &nn
	}
	return &c
}
