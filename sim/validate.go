package sim

import (
	"cmp"
	"fmt"
	"math"
	"regexp"
	"slices"
	"time"
)

// Validate checks the workload and fills defaults (repeat 1, vcores =
// floor(cores), batch arrivals, and those of QueueEntry and ClassSpec).
// Errors are *FieldError naming the key.
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
	w.Cluster.fill()
	if err := validateKinds(w.Kinds, w.Cluster); err != nil {
		return err
	}
	for i := range w.Kinds {
		if w.Kinds[i].Repeat == 0 {
			w.Kinds[i].Repeat = 1
		}
	}
	if err := w.validateQueue(); err != nil {
		return err
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
	return validateClasses(w.Classes)
}

// validateQueue checks the queue entries and fills their defaults, then
// bounds the number of jobs: untimed entries times repeat, plus every burst
// of the timed ones.
func (w *Workload) validateQueue() error {
	if len(w.Queue) == 0 {
		return &FieldError{Path: "queue", Reason: "must list at least one entry"}
	}
	untimed, timed := 0, 0
	for i := range w.Queue {
		q := &w.Queue[i]
		if err := q.validate(fmt.Sprintf("queue[%d]", i), w); err != nil {
			return err
		}
		if q.Timed {
			timed += q.Count * q.Bursts
		} else {
			untimed += q.Count
		}
	}
	if w.Repeat < 0 {
		return &FieldError{Path: "repeat", Reason: "must be > 0"}
	}
	if w.Repeat > 1 && timed > 0 {
		return &FieldError{Path: "repeat", Reason: "timed entries repeat with every/bursts, not repeat"}
	}
	if untimed*w.Repeat > MaxJobs || w.Repeat > MaxJobs {
		return &FieldError{Path: "repeat", Reason: fmt.Sprintf("the queue would hold more than %d jobs", MaxJobs)}
	}
	if untimed*w.Repeat+timed > MaxJobs {
		return &FieldError{Path: "queue", Reason: fmt.Sprintf("the queue would hold more than %d jobs (each burst counts)", MaxJobs)}
	}
	return nil
}

// validate checks the entry at path p ("queue[2]") and fills its defaults:
// user, queue and class names, Timed, and one burst.
func (q *QueueEntry) validate(p string, w *Workload) error {
	k, ok := w.Kind(q.Kind)
	if !ok {
		return &FieldError{Path: p + ".kind", Reason: fmt.Sprintf("unknown kind %q (not in kinds)", q.Kind)}
	}
	if err := q.validateSize(p, k, w.Cluster); err != nil {
		return err
	}
	if q.Count <= 0 {
		return &FieldError{Path: p + ".count", Reason: "must be > 0"}
	}
	if q.Count > MaxJobs {
		return &FieldError{Path: p + ".count", Reason: fmt.Sprintf("must be <= %d", MaxJobs)}
	}
	for _, f := range []struct{ key, v string }{{"user", q.User}, {"queue", q.Queue}, {"class", q.Class}} {
		if f.v != "" && !validName.MatchString(f.v) {
			return badName(p+"."+f.key, f.v)
		}
	}
	q.User = cmp.Or(q.User, DefaultUser)
	q.Queue = cmp.Or(q.Queue, q.Class, DefaultQueue)
	q.Class = cmp.Or(q.Class, q.Queue)
	q.Timed = q.timed()
	if !q.Timed {
		if q.Bursts != 0 {
			return &FieldError{Path: p + ".bursts", Reason: "only valid with at or every"}
		}
		return nil
	}
	return q.validateTimes(p)
}

// MaxScale bounds QueueEntry.Scale.
const MaxScale = 100

// validateSize checks the entry's job size at path p: Containers of kind
// k's containers fit the idle cluster, Scale is in (0, MaxScale].
func (q *QueueEntry) validateSize(p string, k KindSpec, c ClusterSpec) error {
	switch {
	case q.Containers < 0:
		return &FieldError{Path: p + ".containers", Reason: "must be > 0"}
	case q.Containers > MaxContainers:
		return &FieldError{Path: p + ".containers", Reason: fmt.Sprintf("must be <= %d", MaxContainers)}
	}
	if fit := c.holds(k.Container); int64(q.Containers) > fit {
		return &FieldError{Path: p + ".containers", Reason: fmt.Sprintf("%d containers of kind %s never fit the cluster (at most %d of %d vcores, %d MB on %d nodes)",
			q.Containers, k.Name, fit, k.Container.VCores, k.Container.MemoryMB, c.Nodes)}
	}
	if q.Scale != 0 && !(q.Scale > 0 && q.Scale <= MaxScale) {
		return scaleErr(p+".scale", q.Scale)
	}
	return nil
}

func scaleErr(p string, v float64) *FieldError {
	return &FieldError{Path: p, Reason: fmt.Sprintf("must be a number in (0, %d] (got %v)", MaxScale, v)}
}

// validateTimes checks a timed entry's offsets and bursts; the last burst
// starts by MaxArrival.
func (q *QueueEntry) validateTimes(p string) error {
	switch {
	case q.At < 0:
		return &FieldError{Path: p + ".at", Reason: fmt.Sprintf("must be >= 0 (got %v)", q.At)}
	case q.At > MaxArrival:
		return &FieldError{Path: p + ".at", Reason: fmt.Sprintf("must be <= %v (got %v)", MaxArrival, q.At)}
	case q.Every < 0:
		return &FieldError{Path: p + ".every", Reason: fmt.Sprintf("must be >= 0 (got %v)", q.Every)}
	case q.Bursts < 0:
		return &FieldError{Path: p + ".bursts", Reason: "must be > 0"}
	case q.Bursts == 0 && q.Every > 0:
		return &FieldError{Path: p + ".bursts", Reason: "required with every"}
	}
	q.Bursts = max(q.Bursts, 1)
	switch {
	case q.Bursts > 1 && q.Every == 0:
		return &FieldError{Path: p + ".bursts", Reason: fmt.Sprintf("%d bursts need every > 0", q.Bursts)}
	case q.Bursts > MaxJobs:
		return &FieldError{Path: p + ".bursts", Reason: fmt.Sprintf("must be <= %d", MaxJobs)}
	case q.Every > 0 && time.Duration(q.Bursts-1) > (MaxArrival-q.At)/q.Every:
		return &FieldError{Path: p + ".bursts", Reason: fmt.Sprintf("the last burst, at + (bursts-1)·every, would start after %v", MaxArrival)}
	}
	return nil
}

// validateClasses checks the classes and fills their defaults.
func validateClasses(cs []ClassSpec) error {
	seen := make(map[string]int, len(cs))
	for i := range cs {
		c, p := &cs[i], fmt.Sprintf("classes[%d]", i)
		if !validName.MatchString(c.Name) {
			return badName(p+".name", c.Name)
		}
		if j, dup := seen[c.Name]; dup {
			return &FieldError{Path: p + ".name", Reason: fmt.Sprintf("%q already defined by classes[%d]", c.Name, j)}
		}
		seen[c.Name] = i
		if err := c.validate(p); err != nil {
			return err
		}
	}
	return nil
}

func levelErr(p string) *FieldError {
	return &FieldError{Path: p, Reason: fmt.Sprintf("must be in 1..%d (1 is the highest priority)", MaxClassLevel)}
}

func weightErr(p string) *FieldError {
	return &FieldError{Path: p, Reason: "must be a finite number > 0"}
}

// validate checks the class at path p ("classes[1]") and fills its
// defaults: level 1, weight 1, beta = alpha.
func (c *ClassSpec) validate(p string) error {
	if c.Level == 0 {
		c.Level = 1
	}
	if c.Level < 1 || c.Level > MaxClassLevel {
		return levelErr(p + ".level")
	}
	if c.Weight == 0 {
		c.Weight = 1
	}
	if !(c.Weight > 0) || math.IsInf(c.Weight, 0) {
		return weightErr(p + ".weight")
	}
	if err := c.Alpha.validate(p + ".alpha"); err != nil {
		return err
	}
	if err := c.Beta.validate(p + ".beta"); err != nil {
		return err
	}
	if c.Beta == (Rate{}) {
		c.Beta = c.Alpha
	}
	for _, f := range []struct {
		key         string
		alpha, beta float64
	}{{"vcores", c.Alpha.VCores, c.Beta.VCores}, {"memory", c.Alpha.Memory, c.Beta.Memory}} {
		if f.beta > f.alpha {
			return &FieldError{Path: p + ".beta." + f.key, Reason: fmt.Sprintf("%v is above alpha's %v (the sustained rate cannot exceed the burst rate)", f.beta, f.alpha)}
		}
	}
	switch {
	case c.Burst < 0:
		return &FieldError{Path: p + ".burst", Reason: fmt.Sprintf("must be >= 0 (got %v)", c.Burst)}
	case c.Beta != c.Alpha && c.Burst == 0:
		return &FieldError{Path: p + ".burst", Reason: "required (> 0) when beta is below alpha"}
	case c.Beta == c.Alpha && c.Burst != 0:
		return &FieldError{Path: p + ".burst", Reason: "must be 0 when beta equals alpha (no burst to last)"}
	}
	return nil
}

// validate checks that each share is in [0, 1]; p is the rate's path.
func (r Rate) validate(p string) error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"vcores", r.VCores}, {"memory", r.Memory}} {
		if !(f.v >= 0 && f.v <= 1) {
			return &FieldError{Path: p + "." + f.key, Reason: fmt.Sprintf("must be a number in [0, 1] (got %v)", f.v)}
		}
	}
	return nil
}

// Validate checks the cluster; errors name the key under "cluster".
func (c ClusterSpec) Validate() error { return c.validate("cluster") }

func (c ClusterSpec) validate(p string) error {
	if len(c.Groups) > 0 {
		return c.validateGroups(p)
	}
	if c.Nodes <= 0 {
		return &FieldError{Path: p + ".nodes", Reason: "must be > 0"}
	}
	if c.Nodes > MaxNodes {
		return &FieldError{Path: p + ".nodes", Reason: fmt.Sprintf("must be <= %d", MaxNodes)}
	}
	return c.Node.validate(p + ".node")
}

// validateGroups checks a grouped cluster at path p: unique names, nodes
// in each group, at most MaxNodes in all, and each group's node type.
func (c ClusterSpec) validateGroups(p string) error {
	seen := map[string]int{}
	total := 0
	for i, g := range c.Groups {
		gp := fmt.Sprintf("%s.groups[%d]", p, i)
		if !validName.MatchString(g.Name) {
			return badName(gp+".name", g.Name)
		}
		if j, dup := seen[g.Name]; dup {
			return &FieldError{Path: gp + ".name", Reason: fmt.Sprintf("%q already names groups[%d]", g.Name, j)}
		}
		seen[g.Name] = i
		if g.Nodes <= 0 {
			return &FieldError{Path: gp + ".nodes", Reason: "must be > 0"}
		}
		if total += g.Nodes; g.Nodes > MaxNodes || total > MaxNodes {
			return &FieldError{Path: gp + ".nodes", Reason: fmt.Sprintf("the groups must hold <= %d nodes in all", MaxNodes)}
		}
		if err := g.Node.validate(gp + ".node"); err != nil {
			return err
		}
	}
	return nil
}

// fill sets the defaults of a validated cluster: each node type's vcores,
// and with groups, Nodes (their total) and Node (the first group's type).
func (c *ClusterSpec) fill() {
	if len(c.Groups) == 0 {
		c.Node.VCores = c.Node.vcores()
		return
	}
	c.Groups = slices.Clone(c.Groups)
	c.Nodes = 0
	for i := range c.Groups {
		c.Groups[i].Node.VCores = c.Groups[i].Node.vcores()
		c.Nodes += c.Groups[i].Nodes
	}
	c.Node = c.Groups[0].Node
}

// validate checks the node type at path p ("cluster.node").
func (n NodeSpec) validate(p string) error {
	for _, f := range []struct {
		key string
		v   float64
	}{{"cores", n.Cores}, {"memory_mb", float64(n.MemoryMB)}, {"disk_mbps", n.DiskMBps}, {"net_mbps", n.NetMBps}} {
		if !(f.v > 0) || math.IsInf(f.v, 0) {
			return &FieldError{Path: p + "." + f.key, Reason: "must be > 0"}
		}
	}
	if n.VCores < 0 {
		return &FieldError{Path: p + ".vcores", Reason: "must be > 0"}
	}
	if n.vcores() <= 0 {
		return &FieldError{Path: p + ".vcores", Reason: fmt.Sprintf("must be > 0 (the default, floor(cores), is %d)", n.vcores())}
	}
	for _, f := range []struct {
		key string
		v   float64
	}{{"disk_streams", n.Interference.DiskStreams}, {"cpu_cache", n.Interference.CPUCache}} {
		if !(f.v >= 0 && f.v <= MaxInterference) {
			return &FieldError{Path: p + ".interference." + f.key, Reason: fmt.Sprintf("must be a number in [0, %d] (got %v)", MaxInterference, f.v)}
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

var validName = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$`)

// badName is the error for a kind, user, queue, class or class name v at
// path p that validName refuses.
func badName(p, v string) *FieldError {
	return &FieldError{Path: p, Reason: fmt.Sprintf("%q must be 1-64 letters, digits, '.', '_' or '-', starting with a letter or digit", v)}
}

func validateKinds(kinds []KindSpec, c ClusterSpec) error {
	if len(kinds) == 0 {
		return &FieldError{Path: "kinds", Reason: "must define at least one kind"}
	}
	seen := make(map[string]int, len(kinds))
	for i, k := range kinds {
		p := fmt.Sprintf("kinds[%d]", i)
		if !validName.MatchString(k.Name) {
			return badName(p+".name", k.Name)
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

// validate checks the kind at path p against cluster c: its containers fit
// some node and the cluster, and each of its phases, one container alone,
// runs at full speed on every node that can hold one.
func (k KindSpec) validate(p string, c ClusterSpec) error {
	node := c.Node
	if k.Container.VCores <= 0 {
		return &FieldError{Path: p + ".container.vcores", Reason: "must be > 0"}
	}
	if k.Container.MemoryMB <= 0 {
		return &FieldError{Path: p + ".container.memory_mb", Reason: "must be > 0"}
	}
	if len(c.Groups) > 0 {
		if c.holds(k.Container) == 0 {
			return &FieldError{Path: p + ".container", Reason: fmt.Sprintf("%d vcores, %d MB fit no node group: no container can ever be placed", k.Container.VCores, k.Container.MemoryMB)}
		}
	} else if k.Container.VCores > node.vcores() {
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
	if fit := c.holds(k.Container); int64(k.Containers) > fit {
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
			for _, g := range c.NodeGroups() {
				if k.Container.perNode(g.Node) == 0 {
					continue
				}
				if err := ph.validate(fmt.Sprintf("%s.%s[%d]", p, l.key, j), g.Node); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// holds is how many containers of c the idle cluster holds.
func (cl ClusterSpec) holds(c ContainerSpec) int64 {
	var n int64
	for _, g := range cl.NodeGroups() {
		n += int64(g.Nodes) * c.perNode(g.Node)
	}
	return n
}

// perNode is how many containers of c an idle node n holds.
func (c ContainerSpec) perNode(n NodeSpec) int64 {
	return holds(&n, 0, 0, int64(c.VCores), c.MemoryMB)
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
