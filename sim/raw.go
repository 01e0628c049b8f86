package sim

import (
	"fmt"
	"strconv"
	"strings"

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

// cluster converts the cluster section, reporting missing required keys.
func (c *rawCluster) cluster() (ClusterSpec, error) {
	var cs ClusterSpec
	if c.Nodes == nil {
		return ClusterSpec{}, required("cluster.nodes")
	}
	cs.Nodes = *c.Nodes
	n := c.Node
	if n == nil {
		return ClusterSpec{}, required("cluster.node")
	}
	for _, f := range []struct {
		key string
		ok  bool
	}{{"cores", n.Cores != nil}, {"memory_mb", n.MemoryMB != nil}, {"disk_mbps", n.DiskMBps != nil}, {"net_mbps", n.NetMBps != nil}} {
		if !f.ok {
			return ClusterSpec{}, required("cluster.node." + f.key)
		}
	}
	cs.Node = NodeSpec{Cores: *n.Cores, MemoryMB: *n.MemoryMB, DiskMBps: *n.DiskMBps, NetMBps: *n.NetMBps}
	if i := n.Interference; i != nil {
		cs.Node.Interference = Interference{DiskStreams: i.DiskStreams, CPUCache: i.CPUCache}
	}
	var err error
	if cs.Node.VCores, err = positive("cluster.node.vcores", n.VCores); err != nil {
		return ClusterSpec{}, err
	}
	return cs, nil
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
