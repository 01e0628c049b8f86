package sim

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Scaled returns a copy of w on a cluster of nodes nodes with about jobs
// jobs, for measuring how runs scale (`colocd sim --scale`):
//
//   - The cluster has nodes nodes, each as before.
//   - Every kind's Containers, and every queue entry's when set, is
//     multiplied by m = round(sqrt(nodes / w.Cluster.Nodes)), at least 1,
//     and capped at what the scaled cluster holds of its containers (and at
//     MaxContainers): jobs grow with the square root of the cluster, so
//     that more of them run at once too.
//   - Every queue entry's Count is scaled to its share of jobs. An entry
//     stands for Count × its multiplicity jobs (Repeat for an untimed
//     entry, Bursts for a timed one), T jobs in all; its share is q =
//     Count × jobs / T. Its count is ⌊q⌋, at least 1. Then, in passes
//     while the total is above jobs, each entry in increasing order of
//     q − ⌊q⌋ loses one job if that keeps the total at jobs or above and
//     its count at 1 or above; in passes while it is below, each entry in
//     decreasing order of q − ⌊q⌋ gains one if that keeps the total at jobs
//     or below (ties: queue order). So the total is jobs whenever the
//     multiplicities allow it (always when they are 1), else as close as
//     these steps get (above jobs only where counts of 1 force it).
//   - Timed entries keep their times (At, Every, Bursts); Poisson arrivals
//     scale their rate with the number of jobs, so the queue arrives over
//     the same span; Repeat, classes and everything else are unchanged.
//
// Scaled(w.Cluster.Nodes, T) returns a copy of w. It refuses, with a
// *FieldError, a cluster outside [1, MaxNodes] nodes ("cluster.nodes"), a
// cluster of node groups ("cluster.groups"), a
// jobs that cannot be scaled to (below one job per entry, or above MaxJobs:
// "queue"), and a result that does not validate.
func (w *Workload) Scaled(nodes, jobs int) (*Workload, error) {
	if nodes < 1 || nodes > MaxNodes {
		return nil, &FieldError{Path: "cluster.nodes", Reason: fmt.Sprintf("cannot scale to %d nodes (1 to %d)", nodes, MaxNodes)}
	}
	if len(w.Cluster.Groups) > 0 {
		return nil, &FieldError{Path: "cluster.groups", Reason: "a cluster of node groups is not scaled (which groups would grow is a choice of the study)"}
	}
	c := w.clone()
	c.Cluster.Nodes = nodes
	m := max(int64(math.Round(math.Sqrt(float64(nodes)/float64(w.Cluster.Nodes)))), 1)
	for i := range c.Kinds {
		k := &c.Kinds[i]
		holds := int64(nodes) * k.Container.perNode(c.Cluster.Node)
		k.Containers = int(min(int64(k.Containers)*m, holds, MaxContainers))
	}
	for i := range c.Queue {
		if q := &c.Queue[i]; q.Containers > 0 {
			k, _ := c.Kind(q.Kind)
			q.Containers = int(min(int64(q.Containers)*m, int64(nodes)*k.Container.perNode(c.Cluster.Node), MaxContainers))
		}
	}
	total, err := c.scaleQueue(jobs)
	if err != nil {
		return nil, err
	}
	if before := w.jobCount(); c.Arrivals.Mode == ArrivalsPoisson && total != before {
		c.Arrivals.RatePerHour *= float64(total) / float64(before)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("scale to %d nodes, %d jobs: %w", nodes, jobs, err)
	}
	return c, nil
}

// clone is a deep copy of w.
func (w *Workload) clone() *Workload {
	c := *w
	c.Kinds = slices.Clone(w.Kinds)
	for i := range c.Kinds {
		k := &c.Kinds[i]
		k.Setup, k.Phases, k.Teardown = slices.Clone(k.Setup), slices.Clone(k.Phases), slices.Clone(k.Teardown)
	}
	c.Cluster.Groups = slices.Clone(w.Cluster.Groups)
	c.Queue = slices.Clone(w.Queue)
	c.Classes = slices.Clone(w.Classes)
	return &c
}

// multiplicity is how many times an entry's Count jobs are submitted.
func (w *Workload) multiplicity(q QueueEntry) int {
	if q.timed() {
		return max(q.Bursts, 1)
	}
	return max(w.Repeat, 1)
}

// jobCount is the number of jobs of the queue.
func (w *Workload) jobCount() int {
	n := 0
	for _, q := range w.Queue {
		n += q.Count * w.multiplicity(q)
	}
	return n
}

// scaleQueue scales the entries' counts to about jobs jobs (see Scaled)
// and returns the new total.
func (w *Workload) scaleQueue(jobs int) (int, error) {
	floor := 0 // the smallest total: one job per entry
	for _, q := range w.Queue {
		floor += w.multiplicity(q)
	}
	if jobs < floor || jobs > MaxJobs {
		return 0, &FieldError{Path: "queue", Reason: fmt.Sprintf("cannot scale to %d jobs (%d entries need at least %d; at most %d)", jobs, len(w.Queue), floor, MaxJobs)}
	}
	T := int64(w.jobCount())
	rem := make([]int64, len(w.Queue)) // q − ⌊q⌋, in units of 1/T
	total := 0
	for i := range w.Queue {
		q := &w.Queue[i]
		share := int64(q.Count) * int64(jobs)
		q.Count, rem[i] = max(int(share/T), 1), share%T
		total += q.Count * w.multiplicity(*q)
	}
	order := make([]int, len(w.Queue))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rem[a], rem[b]) })
	for changed := true; changed && total > jobs; { // smallest remainders lose first
		changed = false
		for _, i := range order {
			q := &w.Queue[i]
			if mult := w.multiplicity(*q); q.Count > 1 && total-mult >= jobs {
				q.Count--
				total -= mult
				changed = true
			}
		}
	}
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(rem[b], rem[a]) })
	for changed := true; changed && total < jobs; { // largest remainders gain first
		changed = false
		for _, i := range order {
			q := &w.Queue[i]
			if mult := w.multiplicity(*q); total+mult <= jobs {
				q.Count++
				total += mult
				changed = true
			}
		}
	}
	return total, nil
}
