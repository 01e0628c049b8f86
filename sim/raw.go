package sim

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"gopkg.in/yaml.v3"
)

// The YAML shapes. Pointers tell a missing key from an explicit zero.
type rawWorkload struct {
	Cluster     *rawCluster     `yaml:"cluster"`
	Kinds       []rawKind       `yaml:"kinds"`
	Queue       []rawQueue      `yaml:"queue"`
	Repeat      *int            `yaml:"repeat"`
	Arrivals    *rawArrival     `yaml:"arrivals"`
	Variability *rawVariability `yaml:"variability"`
	Classes     []rawClass      `yaml:"classes"`
}

type rawCluster struct {
	Nodes  *int       `yaml:"nodes"`
	Node   *rawNode   `yaml:"node"`
	Groups []rawGroup `yaml:"groups"`
}

type rawGroup struct {
	Name  *string  `yaml:"name"`
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
	Kind   *string      `yaml:"kind"`
	Count  *int         `yaml:"count"`
	User   *string      `yaml:"user"`
	Queue  *string      `yaml:"queue"`
	Class  *string      `yaml:"class"`
	At     *rawDuration `yaml:"at"`
	Every  *rawDuration `yaml:"every"`
	Bursts *int         `yaml:"bursts"`

	Containers *int     `yaml:"containers"`
	Scale      *float64 `yaml:"scale"`
}

type rawClass struct {
	Name   *string      `yaml:"name"`
	Level  *int         `yaml:"level"`
	Alpha  *rawRate     `yaml:"alpha"`
	Beta   *rawRate     `yaml:"beta"`
	Burst  *rawDuration `yaml:"burst"`
	Weight *float64     `yaml:"weight"`
}

type rawRate struct {
	VCores float64 `yaml:"vcores"`
	Memory float64 `yaml:"memory"`
}

// rawDuration is a duration written as Go's time.ParseDuration reads it
// ("10m", "1h30m") or as a number of seconds, like a phase's seconds.
type rawDuration time.Duration

// maxSeconds keeps a number of seconds inside time.Duration's range.
const maxSeconds = 9e9

// UnmarshalYAML reads a duration string or a number of seconds.
func (d *rawDuration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("a duration must be a single value")
	}
	switch n.ShortTag() {
	case "!!int", "!!float":
		var s float64
		if err := n.Decode(&s); err != nil {
			return err
		}
		if !(s >= -maxSeconds && s <= maxSeconds) {
			return fmt.Errorf("%v seconds is out of range", s)
		}
		*d = rawDuration(seconds(s))
	case "!!str":
		v, err := time.ParseDuration(n.Value)
		if err != nil {
			return err
		}
		*d = rawDuration(v)
	default:
		return fmt.Errorf("%q is not a duration", n.Value)
	}
	return nil
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
	var err error
	if w.Cluster, err = r.Cluster.cluster(); err != nil {
		return nil, err
	}
	if len(r.Kinds) == 0 {
		return nil, required("kinds")
	}
	for i, rk := range r.Kinds {
		k, err := rk.kind(fmt.Sprintf("kinds[%d]", i))
		if err != nil {
			return nil, err
		}
		w.Kinds = append(w.Kinds, k)
	}
	if len(r.Queue) == 0 {
		return nil, required("queue")
	}
	for i, rq := range r.Queue {
		q, err := rq.entry(fmt.Sprintf("queue[%d]", i))
		if err != nil {
			return nil, err
		}
		w.Queue = append(w.Queue, q)
	}
	for i, rc := range r.Classes {
		c, err := rc.class(fmt.Sprintf("classes[%d]", i))
		if err != nil {
			return nil, err
		}
		w.Classes = append(w.Classes, c)
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

// entry converts the queue entry at path p ("queue[2]"), reporting missing
// required keys and explicitly empty names. Setting at or every makes it
// timed.
func (rq rawQueue) entry(p string) (QueueEntry, error) {
	if rq.Kind == nil {
		return QueueEntry{}, required(p + ".kind")
	}
	if rq.Count == nil {
		return QueueEntry{}, required(p + ".count")
	}
	q := QueueEntry{Kind: *rq.Kind, Count: *rq.Count, Timed: rq.At != nil || rq.Every != nil}
	for _, f := range []struct {
		key string
		in  *string
		out *string
	}{{"user", rq.User, &q.User}, {"queue", rq.Queue, &q.Queue}, {"class", rq.Class, &q.Class}} {
		if f.in == nil {
			continue
		}
		if *f.in == "" {
			return QueueEntry{}, badName(p+"."+f.key, "")
		}
		*f.out = *f.in
	}
	if rq.At != nil {
		q.At = time.Duration(*rq.At)
	}
	if rq.Every != nil {
		q.Every = time.Duration(*rq.Every)
	}
	var err error
	if q.Bursts, err = positive(p+".bursts", rq.Bursts); err != nil {
		return QueueEntry{}, err
	}
	if q.Containers, err = positive(p+".containers", rq.Containers); err != nil {
		return QueueEntry{}, err
	}
	if rq.Scale != nil {
		if q.Scale = *rq.Scale; q.Scale == 0 {
			return QueueEntry{}, scaleErr(p+".scale", 0)
		}
	}
	return q, nil
}

// class converts the class at path p ("classes[1]"): a missing beta is
// alpha; an explicit zero level or weight is refused, not defaulted.
func (rc rawClass) class(p string) (ClassSpec, error) {
	if rc.Name == nil {
		return ClassSpec{}, required(p + ".name")
	}
	c := ClassSpec{Name: *rc.Name}
	if rc.Level != nil {
		if c.Level = *rc.Level; c.Level == 0 {
			return ClassSpec{}, levelErr(p + ".level")
		}
	}
	if rc.Alpha != nil {
		c.Alpha = Rate(*rc.Alpha)
	}
	c.Beta = c.Alpha
	if rc.Beta != nil {
		c.Beta = Rate(*rc.Beta)
	}
	if rc.Burst != nil {
		c.Burst = time.Duration(*rc.Burst)
	}
	if rc.Weight != nil {
		if c.Weight = *rc.Weight; c.Weight == 0 {
			return ClassSpec{}, weightErr(p + ".weight")
		}
	}
	return c, nil
}

// cluster converts the cluster section, reporting missing required keys:
// nodes and node, or groups, not both.
func (c *rawCluster) cluster() (ClusterSpec, error) {
	if c.Groups != nil {
		if c.Nodes != nil || c.Node != nil {
			return ClusterSpec{}, &FieldError{Path: "cluster.groups", Reason: "give nodes and node, or groups, not both"}
		}
		if len(c.Groups) == 0 {
			return ClusterSpec{}, &FieldError{Path: "cluster.groups", Reason: "must list at least one group"}
		}
		var cs ClusterSpec
		for i, g := range c.Groups {
			p := fmt.Sprintf("cluster.groups[%d]", i)
			switch {
			case g.Name == nil:
				return ClusterSpec{}, required(p + ".name")
			case g.Nodes == nil:
				return ClusterSpec{}, required(p + ".nodes")
			}
			n, err := g.Node.node(p + ".node")
			if err != nil {
				return ClusterSpec{}, err
			}
			cs.Groups = append(cs.Groups, NodeGroup{Name: *g.Name, Nodes: *g.Nodes, Node: n})
		}
		return cs, nil
	}
	if c.Nodes == nil {
		return ClusterSpec{}, required("cluster.nodes")
	}
	n, err := c.Node.node("cluster.node")
	if err != nil {
		return ClusterSpec{}, err
	}
	return ClusterSpec{Nodes: *c.Nodes, Node: n}, nil
}

// node converts the node type at path p ("cluster.node"), reporting
// missing required keys.
func (n *rawNode) node(p string) (NodeSpec, error) {
	if n == nil {
		return NodeSpec{}, required(p)
	}
	for _, f := range []struct {
		key string
		ok  bool
	}{{"cores", n.Cores != nil}, {"memory_mb", n.MemoryMB != nil}, {"disk_mbps", n.DiskMBps != nil}, {"net_mbps", n.NetMBps != nil}} {
		if !f.ok {
			return NodeSpec{}, required(p + "." + f.key)
		}
	}
	ns := NodeSpec{Cores: *n.Cores, MemoryMB: *n.MemoryMB, DiskMBps: *n.DiskMBps, NetMBps: *n.NetMBps}
	if i := n.Interference; i != nil {
		ns.Interference = Interference{DiskStreams: i.DiskStreams, CPUCache: i.CPUCache}
	}
	var err error
	if ns.VCores, err = positive(p+".vcores", n.VCores); err != nil {
		return NodeSpec{}, err
	}
	return ns, nil
}

// kind converts the kind at path p ("kinds[2]"), reporting missing required
// keys.
func (rk rawKind) kind(p string) (KindSpec, error) {
	k := KindSpec{}
	switch {
	case rk.Name == nil:
		return KindSpec{}, required(p + ".name")
	case rk.Containers == nil:
		return KindSpec{}, required(p + ".containers")
	case rk.Container == nil:
		return KindSpec{}, required(p + ".container")
	case rk.Container.VCores == nil:
		return KindSpec{}, required(p + ".container.vcores")
	case rk.Container.MemoryMB == nil:
		return KindSpec{}, required(p + ".container.memory_mb")
	case len(rk.Phases) == 0:
		return KindSpec{}, required(p + ".phases")
	}
	k.Name, k.Containers = *rk.Name, *rk.Containers
	k.Container = ContainerSpec{VCores: *rk.Container.VCores, MemoryMB: *rk.Container.MemoryMB}
	var err error
	if k.Repeat, err = positive(p+".repeat", rk.Repeat); err != nil {
		return KindSpec{}, err
	}
	for _, l := range []struct {
		key string
		in  []rawPhase
		out *[]Phase
	}{{"setup", rk.Setup, &k.Setup}, {"phases", rk.Phases, &k.Phases}, {"teardown", rk.Teardown, &k.Teardown}} {
		for j, rp := range l.in {
			if rp.Seconds == nil {
				return KindSpec{}, required(fmt.Sprintf("%s.%s[%d].seconds", p, l.key, j))
			}
			*l.out = append(*l.out, Phase{Name: rp.Name, Seconds: *rp.Seconds, CPU: rp.CPU,
				DiskReadMBps: rp.DiskReadMBps, DiskWriteMBps: rp.DiskWriteMBps, NetInMBps: rp.NetInMBps, NetOutMBps: rp.NetOutMBps})
		}
	}
	return k, nil
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
