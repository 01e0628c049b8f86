package sim

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"reflect"
	"regexp"
	"strconv"
	"strings"
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
}

// Variability is the run-to-run variation of a workload's jobs.
type Variability struct {
	// Jitter, in [0, 1), is the default of Options.Jitter for NewSim: each
	// container group's work in each phase is scaled by a factor drawn
	// uniformly from [1−Jitter, 1+Jitter] with the simulator's seeded
	// random source. 0 makes every duration exact.
	Jitter float64
}

// ClusterSpec is a homogeneous cluster of worker nodes.
type ClusterSpec struct {
	Nodes int
	Node  NodeSpec
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

// QueueEntry is Count jobs of Kind, submitted in a row.
type QueueEntry struct {
	Kind  string
	Count int
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
	Seq     int // 0-based position in submission order
	Kind    string
	Arrival time.Duration // offset from the start of the run
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

// Validate checks the workload and fills defaults (repeat 1, vcores =
// floor(cores), batch arrivals). Errors are *FieldError naming the key.
func (w *Workload) Validate() error {
	if w.Repeat == 0 {
		w.Repeat = 1
	}
	if w.Arrivals.Mode == "" {
		w.Arrivals.Mode = ArrivalsBatch
	}
	if err := w.Cluster.validate("cluster"); err != nil {
		return err
	}
	w.Cluster.Node.VCores = w.Cluster.Node.vcores()
	if err := validateKinds(w.Kinds, w.Cluster); err != nil {
		return err
	}
	for i := range w.Kinds {
		if w.Kinds[i].Repeat == 0 {
			w.Kinds[i].Repeat = 1
		}
	}
	if len(w.Queue) == 0 {
		return &FieldError{Path: "queue", Reason: "must list at least one entry"}
	}
	jobs := 0
	for i, q := range w.Queue {
		p := fmt.Sprintf("queue[%d]", i)
		if _, ok := w.Kind(q.Kind); !ok {
			return &FieldError{Path: p + ".kind", Reason: fmt.Sprintf("unknown kind %q (not in kinds)", q.Kind)}
		}
		if q.Count <= 0 {
			return &FieldError{Path: p + ".count", Reason: "must be > 0"}
		}
		if q.Count > MaxJobs {
			return &FieldError{Path: p + ".count", Reason: fmt.Sprintf("must be <= %d", MaxJobs)}
		}
		jobs += q.Count
	}
	if w.Repeat < 0 {
		return &FieldError{Path: "repeat", Reason: "must be > 0"}
	}
	if jobs*w.Repeat > MaxJobs || w.Repeat > MaxJobs {
		return &FieldError{Path: "repeat", Reason: fmt.Sprintf("the queue would hold more than %d jobs", MaxJobs)}
	}
	if j := w.Variability.Jitter; !(j >= 0 && j < 1) {
		return &FieldError{Path: "variability.jitter", Reason: fmt.Sprintf("must be in [0, 1) (got %v)", j)}
	}
	switch w.Arrivals.Mode {
	case ArrivalsBatch:
		if w.Arrivals.RatePerHour != 0 {
			return &FieldError{Path: "arrivals.rate_per_hour", Reason: "only valid with mode poisson"}
		}
	case ArrivalsPoisson:
		if r := w.Arrivals.RatePerHour; !(r > 0) || math.IsInf(r, 0) {
			return &FieldError{Path: "arrivals.rate_per_hour", Reason: "must be a positive number with mode poisson"}
		}
	default:
		return &FieldError{Path: "arrivals.mode", Reason: fmt.Sprintf("unknown mode %q (batch or poisson)", w.Arrivals.Mode)}
	}
	return nil
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

// Jobs expands the queue (entries in order, the block Repeat times) and
// assigns arrival offsets: all zero for batch; for poisson, cumulative
// exponential gaps drawn from rng (nil means a PCG seeded with 0).
func (w *Workload) Jobs(rng *rand.Rand) []JobSpec {
	repeat := max(w.Repeat, 1)
	var out []JobSpec
	var at float64 // seconds
	if w.Arrivals.Mode == ArrivalsPoisson && rng == nil {
		rng = rand.New(rand.NewPCG(0, 0))
	}
	for range repeat {
		for _, q := range w.Queue {
			for range q.Count {
				var arrival time.Duration
				if w.Arrivals.Mode == ArrivalsPoisson && w.Arrivals.RatePerHour > 0 {
					if len(out) > 0 {
						at += rng.ExpFloat64() * 3600 / w.Arrivals.RatePerHour
					}
					arrival = seconds(at)
				}
				out = append(out, JobSpec{Seq: len(out), Kind: q.Kind, Arrival: arrival})
			}
		}
	}
	return out
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

// Limits are the node's maxima in bytes/s for goodness.Score: reads and
// writes each bounded by the shared disk bandwidth, each network direction
// by the NIC bandwidth.
func (c ClusterSpec) Limits() goodness.Limits {
	d, n := c.Node.DiskMBps*mb, c.Node.NetMBps*mb
	return goodness.Limits{DiskRead: d, DiskWrite: d, NetRecv: n, NetSent: n}
}

// Validate checks the cluster; errors name the key under "cluster".
func (c ClusterSpec) Validate() error { return c.validate("cluster") }

func (c ClusterSpec) validate(p string) error {
	if c.Nodes <= 0 {
		return &FieldError{Path: p + ".nodes", Reason: "must be > 0"}
	}
	if c.Nodes > MaxNodes {
		return &FieldError{Path: p + ".nodes", Reason: fmt.Sprintf("must be <= %d", MaxNodes)}
	}
	n := c.Node
	for _, f := range []struct {
		key string
		v   float64
	}{{"cores", n.Cores}, {"memory_mb", float64(n.MemoryMB)}, {"disk_mbps", n.DiskMBps}, {"net_mbps", n.NetMBps}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return &FieldError{Path: p + ".node." + f.key, Reason: "must be > 0"}
		}
	}
	if n.VCores < 0 {
		return &FieldError{Path: p + ".node.vcores", Reason: "must be > 0"}
	}
	if n.vcores() <= 0 {
		return &FieldError{Path: p + ".node.vcores", Reason: fmt.Sprintf("must be > 0 (the default, floor(cores), is %d)", n.vcores())}
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"disk_streams", n.Interference.DiskStreams}, {"cpu_cache", n.Interference.CPUCache}} {
		if !(f.v >= 0 && f.v <= MaxInterference) {
			return &FieldError{Path: p + ".node.interference." + f.key, Reason: fmt.Sprintf("must be a number in [0, %d] (got %v)", MaxInterference, f.v)}
		}
	}
	return nil
}

func (n NodeSpec) vcores() int {
	if n.VCores > 0 {
		return n.VCores
	}
	if n.Cores >= math.MaxInt32 {
		return math.MaxInt32
	}
	return int(math.Floor(n.Cores))
}

var validKindName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

func validateKinds(kinds []KindSpec, c ClusterSpec) error {
	if len(kinds) == 0 {
		return &FieldError{Path: "kinds", Reason: "must define at least one kind"}
	}
	seen := make(map[string]int, len(kinds))
	for i, k := range kinds {
		p := fmt.Sprintf("kinds[%d]", i)
		if !validKindName.MatchString(k.Name) {
			return &FieldError{Path: p + ".name", Reason: fmt.Sprintf("%q must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", k.Name)}
		}
		if j, dup := seen[k.Name]; dup {
			return &FieldError{Path: p + ".name", Reason: fmt.Sprintf("%q already defined by kinds[%d]", k.Name, j)}
		}
		seen[k.Name] = i
		if err := k.validate(p, c); err != nil {
			return err
		}
	}
	return nil
}

func (k KindSpec) validate(p string, c ClusterSpec) error {
	node := c.Node
	if k.Container.VCores <= 0 {
		return &FieldError{Path: p + ".container.vcores", Reason: "must be > 0"}
	}
	if k.Container.MemoryMB <= 0 {
		return &FieldError{Path: p + ".container.memory_mb", Reason: "must be > 0"}
	}
	if k.Container.VCores > node.vcores() {
		return &FieldError{Path: p + ".container.vcores", Reason: fmt.Sprintf("%d is more than a node's %d vcores: no container can ever be placed", k.Container.VCores, node.vcores())}
	}
	if k.Container.MemoryMB > node.MemoryMB {
		return &FieldError{Path: p + ".container.memory_mb", Reason: fmt.Sprintf("%d is more than a node's %d MB: no container can ever be placed", k.Container.MemoryMB, node.MemoryMB)}
	}
	if k.Containers <= 0 {
		return &FieldError{Path: p + ".containers", Reason: "must be > 0"}
	}
	if k.Containers > MaxContainers {
		return &FieldError{Path: p + ".containers", Reason: fmt.Sprintf("must be <= %d", MaxContainers)}
	}
	if fit := int64(c.Nodes) * k.Container.perNode(node); int64(k.Containers) > fit {
		return &FieldError{Path: p + ".containers", Reason: fmt.Sprintf("%d containers never fit the cluster (at most %d of %d vcores, %d MB on %d nodes)",
			k.Containers, fit, k.Container.VCores, k.Container.MemoryMB, c.Nodes)}
	}
	if k.Repeat < 0 {
		return &FieldError{Path: p + ".repeat", Reason: "must be > 0"}
	}
	if k.Repeat > MaxKindRepeat {
		return &FieldError{Path: p + ".repeat", Reason: fmt.Sprintf("must be <= %d", MaxKindRepeat)}
	}
	if len(k.Phases) == 0 {
		return &FieldError{Path: p + ".phases", Reason: "must list at least one phase"}
	}
	for _, l := range []struct {
		key    string
		phases []Phase
	}{{"setup", k.Setup}, {"phases", k.Phases}, {"teardown", k.Teardown}} {
		if len(l.phases) > MaxPhases {
			return &FieldError{Path: p + "." + l.key, Reason: fmt.Sprintf("must list at most %d phases", MaxPhases)}
		}
		for j, ph := range l.phases {
			if err := ph.validate(fmt.Sprintf("%s.%s[%d]", p, l.key, j), node); err != nil {
				return err
			}
		}
	}
	return nil
}

func (c ContainerSpec) perNode(n NodeSpec) int64 {
	return min(int64(n.vcores()/c.VCores), n.MemoryMB/c.MemoryMB)
}

func (ph Phase) validate(p string, n NodeSpec) error {
	if !(ph.Seconds > 0) || ph.Seconds > 1e7 {
		return &FieldError{Path: p + ".seconds", Reason: "must be > 0 (and at most 10^7)"}
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"cpu", ph.CPU}, {"disk_read_mbps", ph.DiskReadMBps}, {"disk_write_mbps", ph.DiskWriteMBps}, {"net_in_mbps", ph.NetInMBps}, {"net_out_mbps", ph.NetOutMBps}} {
		if !(f.v >= 0) || math.IsInf(f.v, 0) {
			return &FieldError{Path: p + "." + f.key, Reason: "must be a number >= 0"}
		}
	}
	// One container alone must be able to run at full speed, so that a
	// phase's seconds are its solo duration.
	switch {
	case ph.CPU > n.Cores:
		return &FieldError{Path: p + ".cpu", Reason: fmt.Sprintf("%v is more than a node's %v cores", ph.CPU, n.Cores)}
	case ph.DiskReadMBps+ph.DiskWriteMBps > n.DiskMBps:
		return &FieldError{Path: p + ".disk_read_mbps", Reason: fmt.Sprintf("read %v + write %v MB/s is more than a node's disk_mbps %v", ph.DiskReadMBps, ph.DiskWriteMBps, n.DiskMBps)}
	case ph.NetInMBps > n.NetMBps:
		return &FieldError{Path: p + ".net_in_mbps", Reason: fmt.Sprintf("%v is more than a node's net_mbps %v", ph.NetInMBps, n.NetMBps)}
	case ph.NetOutMBps > n.NetMBps:
		return &FieldError{Path: p + ".net_out_mbps", Reason: fmt.Sprintf("%v is more than a node's net_mbps %v", ph.NetOutMBps, n.NetMBps)}
	}
	return nil
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

// The YAML shapes. Pointers tell a missing key from an explicit zero.
type rawWorkload struct {
	Cluster     *rawCluster     `yaml:"cluster"`
	Kinds       []rawKind       `yaml:"kinds"`
	Queue       []rawQueue      `yaml:"queue"`
	Repeat      *int            `yaml:"repeat"`
	Arrivals    *rawArrival     `yaml:"arrivals"`
	Variability *rawVariability `yaml:"variability"`
}

type rawCluster struct {
	Nodes *int     `yaml:"nodes"`
	Node  *rawNode `yaml:"node"`
}

type rawNode struct {
	Cores        *float64         `yaml:"cores"`
	VCores       *int             `yaml:"vcores"`
	MemoryMB     *int64           `yaml:"memory_mb"`
	DiskMBps     *float64         `yaml:"disk_mbps"`
	NetMBps      *float64         `yaml:"net_mbps"`
	Interference *rawInterference `yaml:"interference"`
}

type rawInterference struct {
	DiskStreams float64 `yaml:"disk_streams"`
	CPUCache    float64 `yaml:"cpu_cache"`
}

type rawKind struct {
	Name       *string       `yaml:"name"`
	Containers *int          `yaml:"containers"`
	Container  *rawContainer `yaml:"container"`
	Repeat     *int          `yaml:"repeat"`
	Setup      []rawPhase    `yaml:"setup"`
	Phases     []rawPhase    `yaml:"phases"`
	Teardown   []rawPhase    `yaml:"teardown"`
}

type rawContainer struct {
	VCores   *int   `yaml:"vcores"`
	MemoryMB *int64 `yaml:"memory_mb"`
}

type rawPhase struct {
	Name          string   `yaml:"name"`
	Seconds       *float64 `yaml:"seconds"`
	CPU           float64  `yaml:"cpu"`
	DiskReadMBps  float64  `yaml:"disk_read_mbps"`
	DiskWriteMBps float64  `yaml:"disk_write_mbps"`
	NetInMBps     float64  `yaml:"net_in_mbps"`
	NetOutMBps    float64  `yaml:"net_out_mbps"`
}

type rawQueue struct {
	Kind  *string `yaml:"kind"`
	Count *int    `yaml:"count"`
}

type rawArrival struct {
	Mode        *string  `yaml:"mode"`
	RatePerHour *float64 `yaml:"rate_per_hour"`
}

type rawVariability struct {
	Jitter float64 `yaml:"jitter"`
}

func required(path string) error { return &FieldError{Path: path, Reason: "required"} }

func positive(path string, v *int) (int, error) {
	if v == nil {
		return 0, nil
	}
	if *v <= 0 {
		return 0, &FieldError{Path: path, Reason: "must be > 0"}
	}
	return *v, nil
}

// workload converts the YAML shape, reporting missing required keys.
func (r rawWorkload) workload() (*Workload, error) {
	w := &Workload{}
	if r.Cluster == nil {
		return nil, required("cluster")
	}
	if r.Cluster.Nodes == nil {
		return nil, required("cluster.nodes")
	}
	w.Cluster.Nodes = *r.Cluster.Nodes
	n := r.Cluster.Node
	if n == nil {
		return nil, required("cluster.node")
	}
	for _, f := range []struct {
		key string
		ok  bool
	}{{"cores", n.Cores != nil}, {"memory_mb", n.MemoryMB != nil}, {"disk_mbps", n.DiskMBps != nil}, {"net_mbps", n.NetMBps != nil}} {
		if !f.ok {
			return nil, required("cluster.node." + f.key)
		}
	}
	w.Cluster.Node = NodeSpec{Cores: *n.Cores, MemoryMB: *n.MemoryMB, DiskMBps: *n.DiskMBps, NetMBps: *n.NetMBps}
	if i := n.Interference; i != nil {
		w.Cluster.Node.Interference = Interference{DiskStreams: i.DiskStreams, CPUCache: i.CPUCache}
	}
	var err error
	if w.Cluster.Node.VCores, err = positive("cluster.node.vcores", n.VCores); err != nil {
		return nil, err
	}
	if len(r.Kinds) == 0 {
		return nil, required("kinds")
	}
	for i, rk := range r.Kinds {
		p := fmt.Sprintf("kinds[%d]", i)
		k := KindSpec{}
		switch {
		case rk.Name == nil:
			return nil, required(p + ".name")
		case rk.Containers == nil:
			return nil, required(p + ".containers")
		case rk.Container == nil:
			return nil, required(p + ".container")
		case rk.Container.VCores == nil:
			return nil, required(p + ".container.vcores")
		case rk.Container.MemoryMB == nil:
			return nil, required(p + ".container.memory_mb")
		case len(rk.Phases) == 0:
			return nil, required(p + ".phases")
		}
		k.Name, k.Containers = *rk.Name, *rk.Containers
		k.Container = ContainerSpec{VCores: *rk.Container.VCores, MemoryMB: *rk.Container.MemoryMB}
		if k.Repeat, err = positive(p+".repeat", rk.Repeat); err != nil {
			return nil, err
		}
		for _, l := range []struct {
			key string
			in  []rawPhase
			out *[]Phase
		}{{"setup", rk.Setup, &k.Setup}, {"phases", rk.Phases, &k.Phases}, {"teardown", rk.Teardown, &k.Teardown}} {
			for j, rp := range l.in {
				if rp.Seconds == nil {
					return nil, required(fmt.Sprintf("%s.%s[%d].seconds", p, l.key, j))
				}
				*l.out = append(*l.out, Phase{Name: rp.Name, Seconds: *rp.Seconds, CPU: rp.CPU,
					DiskReadMBps: rp.DiskReadMBps, DiskWriteMBps: rp.DiskWriteMBps, NetInMBps: rp.NetInMBps, NetOutMBps: rp.NetOutMBps})
			}
		}
		w.Kinds = append(w.Kinds, k)
	}
	if len(r.Queue) == 0 {
		return nil, required("queue")
	}
	for i, rq := range r.Queue {
		p := fmt.Sprintf("queue[%d]", i)
		if rq.Kind == nil {
			return nil, required(p + ".kind")
		}
		if rq.Count == nil {
			return nil, required(p + ".count")
		}
		w.Queue = append(w.Queue, QueueEntry{Kind: *rq.Kind, Count: *rq.Count})
	}
	if w.Repeat, err = positive("repeat", r.Repeat); err != nil {
		return nil, err
	}
	if a := r.Arrivals; a != nil {
		if a.Mode != nil {
			w.Arrivals.Mode = ArrivalMode(*a.Mode)
			if w.Arrivals.Mode == "" {
				return nil, &FieldError{Path: "arrivals.mode", Reason: "must be batch or poisson"}
			}
		}
		if a.RatePerHour != nil {
			w.Arrivals.RatePerHour = *a.RatePerHour
			if w.Arrivals.RatePerHour == 0 {
				return nil, &FieldError{Path: "arrivals.rate_per_hour", Reason: "must be > 0"}
			}
		}
	}
	if v := r.Variability; v != nil {
		w.Variability.Jitter = v.Jitter
	}
	return w, nil
}

// lineOf finds the line of the node at path ("kinds[2].phases[0].seconds")
// in the document, or of its deepest existing ancestor; 0 if none.
func lineOf(doc *yaml.Node, path string) int {
	n, line := doc, 0
	for seg := range strings.SplitSeq(path, ".") {
		key, rest, _ := strings.Cut(seg, "[")
		if n == nil || n.Kind != yaml.MappingNode {
			return line
		}
		var next *yaml.Node
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == key {
				line, next = n.Content[i].Line, n.Content[i+1]
				break
			}
		}
		n = next
		for rest != "" && n != nil {
			idx, after, _ := strings.Cut(rest, "]")
			i, err := strconv.Atoi(idx)
			if err != nil || n.Kind != yaml.SequenceNode || i < 0 || i >= len(n.Content) {
				return line
			}
			n = n.Content[i]
			line = n.Line
			rest = strings.TrimPrefix(after, "[")
		}
	}
	return line
}

const mb = 1e6 // bytes per MB

// seconds converts float seconds to a Duration, rounding to the nanosecond.
func seconds(s float64) time.Duration {
	return time.Duration(math.Round(s * 1e9))
}
