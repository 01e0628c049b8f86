package sim

import (
	"fmt"
	"time"

	"github.com/colocd/colocd/goodness"
)

// PairRun is one placement of a pair experiment.
type PairRun struct {
	A, B  time.Duration // each job's duration (both start at 0)
	All   time.Duration // until both finished
	First time.Duration // until the first finished
	// Usage is the mean node usage, and Goodness the mean of goodness.Score
	// over node samples, while both jobs ran (the intervals before First).
	Usage    goodness.Usage
	Goodness float64
}

// PairResult compares two jobs run on disjoint halves of a cluster
// (Separated) with the same two jobs sharing every node (Colocated), the
// experiment of the paper's §3.1.
type PairResult struct {
	A, B                 string
	Nodes                int
	Separated, Colocated PairRun
}

// Relative changes, co-located against separated: negative is faster.
func (r PairResult) DeltaA() float64     { return delta(r.Separated.A, r.Colocated.A) }
func (r PairResult) DeltaB() float64     { return delta(r.Separated.B, r.Colocated.B) }
func (r PairResult) DeltaAll() float64   { return delta(r.Separated.All, r.Colocated.All) }
func (r PairResult) DeltaFirst() float64 { return delta(r.Separated.First, r.Colocated.First) }

func delta(sep, co time.Duration) float64 { return float64(co-sep) / float64(sep) }

// Pairwise runs the §3.1 experiment for kinds a and b of w (a may equal b):
// the cluster is w's node type, as many nodes as the two jobs fill when
// packed (for 24 containers on 6-vcore nodes: 4 + 4). Separated, each job
// packs its own nodes; co-located, each job spreads its containers evenly
// over all the nodes, half of each node. Container counts are the kinds'
// own in both placements, and both jobs start at time 0.
func Pairwise(w *Workload, a, b string, seed uint64) (PairResult, error) {
	ka, ok := w.Kind(a)
	if !ok {
		return PairResult{}, fmt.Errorf("pairwise: kind %q: %w", a, ErrUnknownKind)
	}
	kb, ok := w.Kind(b)
	if !ok {
		return PairResult{}, fmt.Errorf("pairwise: kind %q: %w", b, ErrUnknownKind)
	}
	node := w.Cluster.Node
	node.VCores = node.vcores()
	na := ceilDiv(ka.Containers, int(ka.Container.perNode(node)))
	nb := ceilDiv(kb.Containers, int(kb.Container.perNode(node)))
	n := na + nb
	cluster := ClusterSpec{Nodes: n, Node: node}
	kinds := []KindSpec{ka}
	if a != b {
		kinds = append(kinds, kb)
	}
	res := PairResult{A: a, B: b, Nodes: n}
	sepA := spread(ka.Containers, na, 0, n, false)
	sepB := spread(kb.Containers, nb, na, n, false)
	coA := spread(ka.Containers, n, 0, n, false)
	coB := spread(kb.Containers, n, 0, n, true)
	var err error
	if res.Separated, err = runPair(cluster, kinds, seed, a, b, sepA, sepB); err != nil {
		return res, fmt.Errorf("pairwise %s+%s separated: %w", a, b, err)
	}
	if res.Colocated, err = runPair(cluster, kinds, seed, a, b, coA, coB); err != nil {
		return res, fmt.Errorf("pairwise %s+%s co-located: %w", a, b, err)
	}
	return res, nil
}

func ceilDiv(a, b int) int { return (a + b - 1) / b }

// spread puts c containers as evenly as possible on nodes [off, off+k) of
// n; the remainder goes to the first nodes, or the last when fromEnd.
func spread(c, k, off, n int, fromEnd bool) []int {
	out := make([]int, n)
	for i := range k {
		out[off+i] = c / k
		r := i
		if fromEnd {
			r = k - 1 - i
		}
		if r < c%k {
			out[off+i]++
		}
	}
	return out
}

func runPair(cluster ClusterSpec, kinds []KindSpec, seed uint64, a, b string, pa, pb []int) (PairRun, error) {
	s, err := New(cluster, kinds, Options{Seed: seed})
	if err != nil {
		return PairRun{}, err
	}
	ids := [2]string{}
	for i, p := range []struct {
		kind   string
		counts []int
	}{{a, pa}, {b, pb}} {
		k := s.kinds[p.kind]
		if err := s.fits(k, p.counts); err != nil {
			return PairRun{}, err
		}
		ids[i] = s.NewApplication()
		s.start1(ids[i], AppSpec{JobID: fmt.Sprint(i), Kind: p.kind}, k, p.counts)
	}
	s.RunUntilIdle()
	var r PairRun
	ia, _ := s.App(ids[0])
	ib, _ := s.App(ids[1])
	r.A, r.B = ia.Finished.Sub(ia.Started), ib.Finished.Sub(ib.Started)
	r.All, r.First = max(r.A, r.B), min(r.A, r.B)
	lim := cluster.Limits()
	var nsm int
	for _, sm := range s.Samples() {
		if sm.End.Sub(s.start) > r.First {
			break
		}
		u := sm.Usage
		r.Usage.CPU += u.CPU
		r.Usage.IOWait += u.IOWait
		r.Usage.DiskRead += u.DiskRead
		r.Usage.DiskWrite += u.DiskWrite
		r.Usage.NetRecv += u.NetRecv
		r.Usage.NetSent += u.NetSent
		r.Goodness += goodness.Score(u, lim)
		nsm++
	}
	if nsm > 0 {
		f := 1 / float64(nsm)
		r.Usage = goodness.Usage{CPU: r.Usage.CPU * f, IOWait: r.Usage.IOWait * f, DiskRead: r.Usage.DiskRead * f,
			DiskWrite: r.Usage.DiskWrite * f, NetRecv: r.Usage.NetRecv * f, NetSent: r.Usage.NetSent * f}
		r.Goodness *= f
	}
	return r, nil
}

// fits reports whether adding counts[i] containers of k to every node i
// respects its vcores and memory.
func (s *Sim) fits(k *kindRT, counts []int) error {
	for i, c := range counts {
		nd := &s.nodes[i]
		if int64(nd.usedVC)+int64(c)*k.vcores > int64(s.cluster.Node.VCores) ||
			nd.usedMem+int64(c)*k.memMB > s.cluster.Node.MemoryMB {
			return fmt.Errorf("%d containers of %s on %s: %w", c, k.spec.Name, nd.name, ErrNoFit)
		}
	}
	return nil
}

// RunUntilIdle advances until no application runs and returns the
// finish events.
func (s *Sim) RunUntilIdle() []Event {
	var evs []Event
	for {
		t, ok := s.NextEvent()
		if !ok {
			return evs
		}
		evs = append(evs, s.Advance(t)...)
	}
}
