package sim

import (
	"math"
	"time"

	"github.com/colocd/colocd/goodness"
)

// Sample is one node's mean usage over one metrics interval [Start, End):
// the exact time average of its piecewise-constant rates, the same
// goodness.Usage the InfluxDB collector returns for a real node.
type Sample struct {
	Node       string
	Start, End time.Time
	Usage      goodness.Usage
	// Apps are the applications that had containers on the node at some
	// time during the interval, in submission order. Shared: do not modify.
	Apps []string
}

// Samples returns every retained sample, ordered by time, then node.
func (s *Sim) Samples() []Sample {
	if len(s.nodes) == 0 {
		return nil
	}
	n := len(s.nodes[0].samples) // every node is sampled at every tick
	out := make([]Sample, 0, n*len(s.nodes))
	for i := range n {
		for _, nd := range s.nodes {
			sm := nd.samples[i]
			out = append(out, Sample{Node: nd.name, Start: s.at(float64(sm.k) * s.interval),
				End: s.at(float64(sm.k+1) * s.interval), Usage: sm.u, Apps: sm.apps})
		}
	}
	return out
}

// Usage is node's mean usage over [from, to), from the samples: each
// sample is weighted by how much of its interval lies in the window. When
// from and to fall on interval boundaries (multiples of MetricsInterval
// after the start) this is the exact time average over the window; inside
// an interval, the usage is taken as the interval's mean. Like a real
// collector, it sees only completed intervals. It is false for an unknown
// node or when no retained sample overlaps the window.
func (s *Sim) Usage(node string, from, to time.Time) (goodness.Usage, bool) {
	i, ok := s.nodeIdx[node]
	if !ok || !to.After(from) {
		return goodness.Usage{}, false
	}
	sm := s.nodes[i].samples
	if len(sm) == 0 {
		return goodness.Usage{}, false
	}
	f, t := s.secs(from), s.secs(to)
	k0 := sm[0].k
	lo := max(int64(math.Floor(f/s.interval))-k0, 0)
	hi := min(int64(math.Ceil(t/s.interval))-k0, int64(len(sm)))
	var sum goodness.Usage
	var wsum float64
	for j := lo; j < hi; j++ {
		start := float64(sm[j].k) * s.interval
		w := min(t, start+s.interval) - max(f, start)
		if w <= 0 {
			continue
		}
		u := sm[j].u
		sum.CPU += w * u.CPU
		sum.IOWait += w * u.IOWait
		sum.IOPressure += w * u.IOPressure
		sum.DiskRead += w * u.DiskRead
		sum.DiskWrite += w * u.DiskWrite
		sum.NetRecv += w * u.NetRecv
		sum.NetSent += w * u.NetSent
		wsum += w
	}
	if wsum <= 0 {
		return goodness.Usage{}, false
	}
	return goodness.Usage{CPU: sum.CPU / wsum, IOWait: sum.IOWait / wsum, IOPressure: sum.IOPressure / wsum, DiskRead: sum.DiskRead / wsum,
		DiskWrite: sum.DiskWrite / wsum, NetRecv: sum.NetRecv / wsum, NetSent: sum.NetSent / wsum}, true
}
