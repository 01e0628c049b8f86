package sim

import (
	"fmt"
	"maps"
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
	// Pressure makes samples carry IOPressure and CPUPressure, the
	// simulated Linux pressure stall information (io and cpu "some"; see
	// share.go), with goodness.Usage.Pressure set. Off, both are 0 and
	// Pressure false, as from a metrics source that does not read PSI.
	Pressure bool
	// ContainerMetrics records each application's CPU and disk use per
	// node, as the cgroup of each of its YARN containers shows them
	// (AppUsage): CPU time and block I/O bytes, no network, no I/O wait.
	// Off by default; on, it changes neither the run nor the node samples.
	ContainerMetrics bool
}

// AppSpec is what a submitter gives for an application.
type AppSpec struct {
	JobID, Kind, User, Queue string
	Tags                     []string
	// Containers is how many containers the job runs (a YARN
	// application's container requests): 0 means its kind's.
	Containers int
	// Scale multiplies every container's work in every phase, as a larger
	// input would: 0 means 1. Only the job's runtime and progress show it.
	Scale float64
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
	Group        string  // its NodeGroup's name; "" in a cluster of one type
	Cores        float64 // physical cores (shared at run time)
	VCores       int     // advertised vcores (the placement capacity)
	MemoryMB     int64
	DiskMBps     float64 // disk bandwidth, reads + writes
	NetMBps      float64 // NIC bandwidth per direction
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
	spec                  KindSpec
	setup, body, teardown []phaseRT
	repeat, total         int
	solo                  float64
	vcores, memMB         int64
	idx                   int // in Sim.kindRTs and Sim.room
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
// they share a rate and a remaining amount of work. Its progress is
// integrated lazily: remaining is the work left at time at, when its rate
// was last set, so it completes at at + remaining/rate unless its rate
// changes first (then share settles it and schedules the new completion).
type group struct {
	app, node int32   // indices into Sim.apps and Sim.nodes
	count     int32   // containers
	gen       uint32  // generation: a completion in Sim.events with another one is stale
	remaining float64 // solo seconds of work left in the current phase at time at; 0 = waiting at the barrier
	at        float64 // when remaining was settled
	rate      float64 // progress per second (solo seconds of work), in (0, 1]; 0 until share sets it
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
	groups            []int32 // indices into Sim.groups, in node order; never changed after start
	working           int     // groups that have not finished the current phase
	containers        int
	scale             float64 // AppSpec.Scale, 1 when not set
}

// usage is a node's consumption: CPU and iowait in cores, I/O and CPU
// pressure fractions of time, the rest in MB/s.
type usage struct {
	cpu, iowait, iopress, cpupress, read, write, in, out float64
}

func (u *usage) addScaled(v usage, f float64) {
	u.cpu += v.cpu * f
	u.iowait += v.iowait * f
	u.iopress += v.iopress * f
	u.cpupress += v.cpupress * f
	u.read += v.read * f
	u.write += v.write * f
	u.in += v.in * f
	u.out += v.out * f
}

// run is a node's samples of consecutive metrics intervals with the same
// usage and the same apps, from interval k to the next run's k (the last
// run: to the node's open interval). Runs are immutable once appended.
type run struct {
	k    int64 // first interval: [k·I, (k+1)·I)
	u    goodness.Usage
	apps []string // immutable, may be shared between runs
}

// node is a worker. Its metrics are integrated lazily too (metrics.go): acc
// holds the integral of rate over its open interval up to at, and the
// intervals before open are closed into runs; a node nothing touches costs
// nothing at a metrics tick.
type node struct {
	name    string
	usedMem int64
	usedVC  int
	groups  []int32  // groups of running apps, in placement order; replaced, never changed in place
	apps    []string // ids of running apps here, immutable (replaced on change)
	dirty   bool     // its set of working groups changed: share it again
	spec    int32    // its type: an index into Sim.specs
	rate    usage    // current rates, since at
	at      float64  // acc integrates rate up to here
	open    int64    // the metrics interval acc and present belong to
	acc     usage    // integral over the open interval up to at
	present []string // apps here at some time in the open interval, immutable
	runs    []run    // the closed intervals, run-length encoded
}

// Sim is a discrete-event simulator of a shared cluster. It is not safe for
// concurrent use, reads included (they close metrics intervals lazily);
// Realtime serialises access for `colocd serve`.
//
// Events cost what they touch: group completions wait in a heap (events,
// with stale entries skipped by generation), the nodes whose working groups
// changed in a list (dirty), and stepping to an event touches only the
// groups that complete, their apps and their nodes.
type Sim struct {
	cluster   ClusterSpec
	specs     []NodeSpec // node types, one per group of the cluster; never written after New
	kindList  []KindSpec
	kinds     map[string]*kindRT
	kindRTs   []*kindRT // in the order of kindList
	shapes    []shape   // the kinds' distinct container shapes; never written after New
	opts      Options
	start     time.Time
	interval  float64 // seconds
	pcg       *rand.PCG
	rng       *rand.Rand
	now       float64 // seconds since start
	tick      int64   // index of the current metrics interval
	nodes     []node
	nodeIdx   map[string]int
	groups    []group // every group ever started, referenced by index
	apps      []app   // submitted apps in submission order
	byID      map[string]int32
	reserved  map[string]bool // ids from NewApplication not yet submitted
	seq       int
	running   int         // apps running
	room      []int64     // per kind: how many of its containers the free resources hold, all nodes together
	events    completions // completion times of working groups
	dirty     []int32     // nodes with dirty set, in the order they were marked
	touched   []int32     // scratch of step; not shared by clones
	noMetrics bool        // DiscardMetrics was called: no sample is kept
	// cm is the per-application metrics (appusage.go): nil unless
	// Options.ContainerMetrics, and once DiscardMetrics dropped them.
	cm *containerMetrics
}

// shape is a container shape and the kinds (indices into Sim.room) whose
// containers have it: a node's room for each is the same.
type shape struct {
	vcores, memMB int64
	kinds         []int
}

// addShape counts k under its container shape.
func (s *Sim) addShape(k *kindRT) {
	for i := range s.shapes {
		if sh := &s.shapes[i]; sh.vcores == k.vcores && sh.memMB == k.memMB {
			sh.kinds = append(sh.kinds, k.idx)
			return
		}
	}
	s.shapes = append(s.shapes, shape{vcores: k.vcores, memMB: k.memMB, kinds: []int{k.idx}})
}

// New returns a simulator of cluster running kinds. It validates both;
// errors are *FieldError naming the key as in a workload file.
func New(cluster ClusterSpec, kinds []KindSpec, opts Options) (*Sim, error) {
	if err := cluster.validate("cluster"); err != nil {
		return nil, err
	}
	cluster.fill()
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
		byID:     make(map[string]int32),
		reserved: make(map[string]bool),
	}
	s.rng = rand.New(s.pcg)
	for _, k := range kinds {
		k.Repeat = max(k.Repeat, 1)
		k.Setup, k.Phases, k.Teardown = slices.Clone(k.Setup), slices.Clone(k.Phases), slices.Clone(k.Teardown)
		rt := &kindRT{spec: k, setup: compile(k.Setup), body: compile(k.Phases), teardown: compile(k.Teardown),
			repeat: k.Repeat, solo: k.soloSeconds(), vcores: int64(k.Container.VCores), memMB: k.Container.MemoryMB,
			idx: len(s.kindRTs)}
		rt.total = len(rt.setup) + rt.repeat*len(rt.body) + len(rt.teardown)
		s.kinds[k.Name] = rt
		s.kindRTs = append(s.kindRTs, rt)
		s.kindList = append(s.kindList, k)
		s.room = append(s.room, cluster.holds(k.Container))
		s.addShape(rt)
	}
	width := max(2, len(strconv.Itoa(cluster.Nodes)))
	for gi, g := range cluster.NodeGroups() {
		s.specs = append(s.specs, g.Node)
		for range g.Nodes {
			i := len(s.nodes)
			name := fmt.Sprintf("node%0*d", width, i+1)
			s.nodeIdx[name] = i
			s.nodes = append(s.nodes, node{name: name, spec: int32(gi)})
		}
	}
	if opts.ContainerMetrics {
		s.cm = &containerMetrics{nodes: make([]appMetrics, len(s.nodes))}
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

// spec is node nd's type.
func (s *Sim) spec(nd *node) *NodeSpec { return &s.specs[nd.spec] }

// groupName is the name of node nd's group.
func (s *Sim) groupName(nd *node) string {
	if len(s.cluster.Groups) == 0 {
		return ""
	}
	return s.cluster.Groups[nd.spec].Name
}

func (s *Sim) at(x float64) time.Time { return s.start.Add(seconds(x)) }

func (s *Sim) secs(t time.Time) float64 { return t.Sub(s.start).Seconds() }

// Clone returns an independent deep copy (random source included): the
// copy and the original evolve identically under the same calls. It copies
// the nodes, groups, apps and pending completions as flat slices; what
// never changes in place (an app's groups, a node's apps and runs) is
// shared, and a node's growing slices are clipped so that appending copies.
// With ContainerMetrics, each node's per-application rates and accumulator
// are copied into one array and its per-application runs shared likewise.
func (s *Sim) Clone() *Sim {
	c := *s
	pcg := *s.pcg
	c.pcg = &pcg
	c.rng = rand.New(c.pcg)
	c.byID = maps.Clone(s.byID)
	c.reserved = maps.Clone(s.reserved)
	c.nodeIdx = s.nodeIdx // never written after New (nor specs)
	c.apps = slices.Clone(s.apps)
	c.groups = slices.Clone(s.groups)
	c.events = slices.Clone(s.events)
	c.dirty = slices.Clone(s.dirty)
	c.room = slices.Clone(s.room)
	c.touched = nil
	c.nodes = slices.Clone(s.nodes)
	for i := range c.nodes {
		nd := &c.nodes[i]
		nd.groups = slices.Clip(nd.groups)
		nd.present = slices.Clip(nd.present)
		nd.runs = slices.Clip(nd.runs)
	}
	if s.cm != nil {
		c.cm = s.cm.clone()
	}
	return &c
}

// Reseed replaces the random source that draws placements and jitter with
// a fresh one seeded by seed, as Options.Seed seeds it. A clone keeps the
// original's random state, so a what-if on it draws the placements and
// jitter the original will draw: it foresees them. Reseeded, it is one
// sample of what may happen, as a scheduler that cannot see the future
// would have to plan with.
func (s *Sim) Reseed(seed uint64) {
	s.pcg = rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)
	s.rng = rand.New(s.pcg)
}
