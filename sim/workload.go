package sim

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"slices"
	"time"

	"gopkg.in/yaml.v3"

	"github.com/colocd/colocd/goodness"
)

// Bounds that keep a workload (and a fuzzed one) cheap to validate and run.
const (
	MaxNodes       = 10000
	MaxContainers  = 100000 // per job
	MaxJobs        = 100000
	MaxPhases      = 1000    // per phase list of one kind
	MaxKindRepeat  = 1000000 // iterations of one kind
	MaxWorkloadLen = 1 << 20 // bytes of YAML

	MaxArrival    = 365 * 24 * time.Hour // offset of a timed entry's last burst
	MaxClassLevel = 16                   // lowest priority level of a class
)

// Workload is a cluster, the job kinds that run on it, and a queue of jobs.
// ParseWorkload and LoadWorkload return it validated with defaults filled in.
type Workload struct {
	Cluster     ClusterSpec
	Kinds       []KindSpec
	Queue       []QueueEntry
	Repeat      int // the queue block repeated; 0 means 1
	Arrivals    Arrivals
	Variability Variability
	Classes     []ClassSpec // service contracts of queues; optional
}

// Variability is the run-to-run variation of a workload's jobs.
type Variability struct {
	// Jitter, in [0, 1), is the default of Options.Jitter for NewSim: each
	// container group's work in each phase is scaled by a factor drawn
	// uniformly from [1−Jitter, 1+Jitter] with the simulator's seeded
	// random source. 0 makes every duration exact.
	Jitter float64
}

// ClusterSpec is a cluster of worker nodes: Nodes nodes of one type, or,
// when Groups is set, node groups of different types (a heterogeneous
// cluster).
type ClusterSpec struct {
	// Nodes is the number of worker nodes; with Groups, Validate sets it to
	// their total.
	Nodes int
	// Node is every node's type; with Groups, Validate sets it to the first
	// group's: the reference node of Limits and of Pairwise.
	Node NodeSpec
	// Groups are the node groups, in order: nodes are numbered through the
	// first group's, then the second's, and so on. nil: one type, Node.
	Groups []NodeGroup
}

// NodeGroup is Nodes worker nodes of one type.
type NodeGroup struct {
	Name  string // unique within the cluster; a label for reports
	Nodes int
	Node  NodeSpec
}

// NodeGroups are the cluster's groups: Groups, or one unnamed group of
// Nodes nodes of type Node.
func (c ClusterSpec) NodeGroups() []NodeGroup {
	if len(c.Groups) > 0 {
		return c.Groups
	}
	return []NodeGroup{{Nodes: c.Nodes, Node: c.Node}}
}

// NodeAt is the type of node i (0-based, in the order of NodeGroups) and
// the index of its group.
func (c ClusterSpec) NodeAt(i int) (NodeSpec, int) {
	for g, ng := range c.NodeGroups() {
		if i < ng.Nodes {
			return ng.Node, g
		}
		i -= ng.Nodes
	}
	return NodeSpec{}, -1
}

// NodeSpec describes one worker node.
type NodeSpec struct {
	// Cores is the physical CPU capacity in cores: the resource containers
	// share at run time.
	Cores float64
	// VCores is what the node advertises to the scheduler for placement
	// (YARN's yarn.nodemanager.resource.cpu-vcores); 0 means floor(Cores).
	// It may exceed Cores (over-subscription), as on the paper's cluster.
	VCores int
	// MemoryMB is the memory the node advertises for containers.
	MemoryMB int64
	// DiskMBps is the disk bandwidth, shared by reads and writes, in MB/s
	// (1 MB = 10^6 bytes).
	DiskMBps float64
	// NetMBps is the NIC bandwidth per direction (full duplex), in MB/s.
	NetMBps float64
	// Interference is the contention the sharing model does not capture:
	// zero, the default, is none.
	Interference Interference
}

// Interference is contention between co-located jobs beyond their shares of
// capacity: disk seeks between concurrent streams and shared CPU caches.
// Neither touches a job alone on a node, so solo durations stay exact, and
// nothing a scheduler observes names them: Limits ignores them, samples show
// only their effects. Each is a finite penalty in [0, MaxInterference]; see
// the package documentation, "The model", for the exact rules.
type Interference struct {
	// DiskStreams is the seek penalty per extra disk stream: while the
	// working groups of n ≥ 2 different jobs on a node read or write its
	// disk, its bandwidth is DiskMBps / (1 + DiskStreams·(n−1)).
	DiskStreams float64
	// CPUCache is the cache penalty per extra CPU-bound job: a CPU-bound
	// group (a phase using ≥ 0.5 cores per container) beside CPU-bound
	// groups of m other jobs progresses 1 + CPUCache·m times slower than its
	// CPU share allows, while burning that whole share: the loss does not
	// show in CPU usage.
	CPUCache float64
}

// MaxInterference bounds each Interference penalty.
const MaxInterference = 10

// KindSpec is a recurring job kind: its containers and its phase profile.
// A job runs Setup once, then Phases Repeat times, then Teardown once.
type KindSpec struct {
	Name       string
	Containers int
	Container  ContainerSpec
	Repeat     int // 0 means 1
	Setup      []Phase
	Phases     []Phase
	Teardown   []Phase
}

// ContainerSpec is the reservation of one container.
type ContainerSpec struct {
	VCores   int
	MemoryMB int64
}

// Phase is one stage of a job as one container runs it alone on an
// otherwise idle node: it lasts Seconds and, while it runs at full speed,
// uses CPU cores and the given disk and network rates (MB/s). Under
// contention a container's progress slows down and its usage scales with it.
type Phase struct {
	Name                        string
	Seconds                     float64
	CPU                         float64
	DiskReadMBps, DiskWriteMBps float64
	NetInMBps, NetOutMBps       float64
}

// QueueEntry is Count jobs of Kind, submitted in a row by User to Queue.
//
// Its jobs may differ in size from the kind's: Containers, when set,
// replaces the kind's container count (the job asks for it: the scheduler
// sees it in the job's resources), and Scale, when set, multiplies every
// container's work in every phase (the job's input grew or shrank: only its
// runtime shows it, as with a recurring job on a growing table).
//
// An untimed entry's jobs arrive as Workload.Arrivals says. A timed entry
// (Timed, or At or Every non-zero) submits its Count jobs at offset At, then
// again at At+Every, At+2·Every, …: Bursts bursts in all.
type QueueEntry struct {
	Kind  string
	Count int
	User  string // "" means DefaultUser
	Queue string // "" means Class, or DefaultQueue when Class is "" too
	Class string // a label for reports; "" means Queue

	Containers int     // containers per job; 0 means the kind's
	Scale      float64 // work per container, as a multiple of the kind's; 0 means 1

	Timed  bool          // set by the parser for at or every, by Validate for At or Every ≠ 0
	At     time.Duration // timed: offset of the first burst
	Every  time.Duration // timed: gap between bursts; required when Bursts > 1
	Bursts int           // timed: number of bursts; 0 means 1, required with Every
}

// Defaults of QueueEntry.
const (
	DefaultUser  = "bench"
	DefaultQueue = "default"
)

// timed reports whether the entry's jobs arrive at fixed offsets.
func (q QueueEntry) timed() bool { return q.Timed || q.At != 0 || q.Every != 0 }

// ClassSpec is the service contract of the queue named Name (the
// daemon's pipeline.fairness.queues entry, see pipeline.ServiceQueue).
type ClassSpec struct {
	Name  string // a queue name; required, unique
	Level int    // priority level, 1 highest; 0 means 1; at most MaxClassLevel
	// Alpha is the burst rate, as a fraction of the cluster's capacity per
	// resource; zero: no curve (elastic).
	Alpha Rate
	// Beta is the sustained rate, at most Alpha in each resource; zero
	// means Alpha (a batch queue, α = β).
	Beta Rate
	// Burst is T′, how long Alpha lasts: required (> 0) when Beta is below
	// Alpha in some resource, 0 when they are equal.
	Burst  time.Duration
	Weight float64 // DRF weight; 0 means 1; > 0 and finite
}

// Rate is a share of the cluster's capacity per resource, each in [0, 1].
type Rate struct {
	VCores, Memory float64
}

// ArrivalMode says when the queue's jobs are submitted.
type ArrivalMode string

// Arrival modes.
const (
	ArrivalsBatch   ArrivalMode = "batch"   // all at time 0, in queue order
	ArrivalsPoisson ArrivalMode = "poisson" // exponential inter-arrival times
)

// Arrivals configures when the queue's jobs arrive.
type Arrivals struct {
	Mode        ArrivalMode // "" means batch
	RatePerHour float64     // poisson only: mean arrivals per hour
}

// JobSpec is one job of the expanded queue.
type JobSpec struct {
	Seq                int // 0-based position in submission order
	Kind               string
	User, Queue, Class string        // of its QueueEntry
	Arrival            time.Duration // offset from the start of the run
	// Containers and Scale are its QueueEntry's: 0 means the kind's
	// containers and its work (scale 1). Containers is declared to the
	// scheduler with the job; Scale is not.
	Containers int
	Scale      float64
}

// LoadWorkload reads and parses a workload file.
func LoadWorkload(path string) (*Workload, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("load workload: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxWorkloadLen+1))
	if err != nil {
		return nil, fmt.Errorf("load workload %s: %w", path, err)
	}
	w, err := ParseWorkload(b)
	if err != nil {
		return nil, fmt.Errorf("load workload %s: %w", path, err)
	}
	return w, nil
}

// ParseWorkload decodes a workload document strictly and validates it.
// Errors are *FieldError (errors.Is(err, ErrInvalid)) naming the key path,
// e.g. "kinds[2].phases[0].seconds: must be > 0".
func ParseWorkload(b []byte) (*Workload, error) {
	if len(b) > MaxWorkloadLen {
		return nil, &FieldError{Path: "(document)", Reason: fmt.Sprintf("larger than %d bytes", MaxWorkloadLen)}
	}
	var root yaml.Node
	dec := yaml.NewDecoder(bytes.NewReader(b))
	if err := dec.Decode(&root); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, &FieldError{Path: "(document)", Reason: "empty"}
		}
		return nil, &FieldError{Path: "(document)", Reason: "not valid YAML: " + err.Error()}
	}
	var extra yaml.Node
	if err := dec.Decode(&extra); !errors.Is(err, io.EOF) {
		return nil, &FieldError{Path: "(document)", Reason: "more than one YAML document"}
	}
	doc := &root
	if doc.Kind == yaml.DocumentNode && len(doc.Content) == 1 {
		doc = doc.Content[0]
	}
	budget := 200000
	if err := checkShape(doc, reflect.TypeFor[rawWorkload](), "", &budget); err != nil {
		return nil, err
	}
	var raw rawWorkload
	strict := yaml.NewDecoder(bytes.NewReader(b))
	strict.KnownFields(true)
	if err := strict.Decode(&raw); err != nil {
		// checkShape accepted the document, so this is a conversion the
		// walk did not foresee; report it without a path rather than hide it.
		return nil, &FieldError{Path: "(document)", Reason: err.Error()}
	}
	w, err := raw.workload()
	if err == nil {
		err = w.Validate()
	}
	if err != nil {
		var fe *FieldError
		if errors.As(err, &fe) && fe.Line == 0 {
			fe.Line = lineOf(doc, fe.Path)
		}
		return nil, err
	}
	return w, nil
}

// Kind returns the kind named name.
func (w *Workload) Kind(name string) (KindSpec, bool) {
	for _, k := range w.Kinds {
		if k.Name == name {
			return k, true
		}
	}
	return KindSpec{}, false
}

// Jobs expands the queue and assigns arrival offsets. Untimed entries
// come first, in order, the block Repeat times: all at zero for batch
// arrivals; for poisson, at cumulative exponential gaps drawn from rng (nil
// means a PCG seeded with 0). Then each timed entry's bursts. All jobs are
// then sorted stably by arrival (ties keep that order) and numbered.
// Without timed entries the order is the queue order.
func (w *Workload) Jobs(rng *rand.Rand) []JobSpec {
	repeat := max(w.Repeat, 1)
	var out []JobSpec
	var at float64 // seconds
	if w.Arrivals.Mode == ArrivalsPoisson && rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	for range repeat {
		for _, q := range w.Queue {
			if q.timed() {
				continue
			}
			for range q.Count {
				var arrival time.Duration
				if w.Arrivals.Mode == ArrivalsPoisson && w.Arrivals.RatePerHour > 0 {
					if len(out) > 0 {
						at += rng.ExpFloat64() * 3600 / w.Arrivals.RatePerHour
					}
					arrival = seconds(at)
				}
				out = append(out, q.job(arrival))
			}
		}
	}
	for _, q := range w.Queue {
		if !q.timed() {
			continue
		}
		for b := range max(q.Bursts, 1) {
			arrival := q.At + time.Duration(b)*q.Every
			for range q.Count {
				out = append(out, q.job(arrival))
			}
		}
	}
	slices.SortStableFunc(out, func(a, b JobSpec) int { return cmp.Compare(a.Arrival, b.Arrival) })
	for i := range out {
		out[i].Seq = i
	}
	return out
}

// job is one job of the entry, numbered by Jobs.
func (q QueueEntry) job(arrival time.Duration) JobSpec {
	return JobSpec{Kind: q.Kind, User: q.User, Queue: q.Queue, Class: q.Class, Arrival: arrival,
		Containers: q.Containers, Scale: q.Scale}
}

// NewSim is New(w.Cluster, w.Kinds, opts), with opts.Jitter set to the
// workload's Variability.Jitter when it is 0: an explicit Options.Jitter
// wins. (To run a jittered workload exactly, clear w.Variability.Jitter.)
func (w *Workload) NewSim(opts Options) (*Sim, error) {
	if opts.Jitter == 0 {
		opts.Jitter = w.Variability.Jitter
	}
	return New(w.Cluster, w.Kinds, opts)
}

// Limits are the reference node's maxima in bytes/s for goodness.Score
// (Node's: in a grouped cluster, the first group's); NodeSpec.Limits gives
// each node's.
func (c ClusterSpec) Limits() goodness.Limits { return c.Node.Limits() }

// Limits are the node's maxima in bytes/s for goodness.Score: reads and
// writes each bounded by the shared disk bandwidth, each network direction
// by the NIC bandwidth.
func (n NodeSpec) Limits() goodness.Limits {
	d, nm := n.DiskMBps*mb, n.NetMBps*mb
	return goodness.Limits{DiskRead: d, DiskWrite: d, NetRecv: nm, NetSent: nm}
}

// SoloDuration is how long a job of this kind takes when nothing it uses
// saturates: Σ setup + repeat × Σ phases + Σ teardown.
func (k KindSpec) SoloDuration() time.Duration {
	return seconds(k.soloSeconds())
}

func (k KindSpec) soloSeconds() float64 {
	sum := func(ps []Phase) float64 {
		var s float64
		for _, p := range ps {
			s += p.Seconds
		}
		return s
	}
	return sum(k.Setup) + float64(max(k.Repeat, 1))*sum(k.Phases) + sum(k.Teardown)
}

const mb = 1e6 // bytes per MB

// seconds converts float seconds to a Duration, rounding to the nanosecond.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * 1e9))
}
