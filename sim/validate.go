package sim

import (
	"fmt"
	"math"
	"regexp"
)

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
