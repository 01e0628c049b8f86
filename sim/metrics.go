package sim

import (
	"cmp"
	"iter"
	"math"
	"slices"
	"time"

	"github.com/colocd/colocd/goodness"
)

// Metrics are integrated lazily, node by node. A node's open interval is
// the one its accumulator belongs to; it stays open past its end until the
// node is touched (its rate or its apps change) or read. Closing it then
// adds the rest of the interval at the node's unchanged rate, and every
// interval after it up to the current one is a whole interval at that same
// rate with the same apps: one run. So a metrics tick costs nothing per
// node, and a node whose rates and apps do not change costs nothing at all.

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

// SampleRun is Intervals consecutive samples of one node with the same
// Usage and the same Apps, from Start to End: the simulator stores samples
// this way, and a node that nothing changes adds none.
type SampleRun struct {
	Node       string
	Start, End time.Time
	Intervals  int
	Usage      goodness.Usage
	Apps       []string // shared: do not modify
}

// MetricsInterval is the sampling period (Options.MetricsInterval).
func (s *Sim) MetricsInterval() time.Duration { return s.opts.MetricsInterval }

// Samples returns every retained sample, ordered by time, then node. It
// expands the runs: nodes × intervals samples, for small runs and tests;
// SampleRuns reads the same samples without expanding them.
func (s *Sim) Samples() []Sample {
	if s.noMetrics {
		return nil
	}
	first := s.keepFrom()
	n := max(s.tick-first, 0)
	out := make([]Sample, 0, int(n)*len(s.nodes))
	cur := make([]int, len(s.nodes)) // each node's run holding interval k
	for i := range s.nodes {
		s.closeIntervals(&s.nodes[i])
		cur[i] = runAt(s.nodes[i].runs, first)
	}
	for k := first; k < s.tick; k++ {
		start, end := s.at(float64(k)*s.interval), s.at(float64(k+1)*s.interval)
		for i := range s.nodes {
			nd := &s.nodes[i]
			for cur[i]+1 < len(nd.runs) && nd.runs[cur[i]+1].k <= k {
				cur[i]++
			}
			r := &nd.runs[cur[i]]
			out = append(out, Sample{Node: nd.name, Start: start, End: end, Usage: r.u, Apps: r.apps})
		}
	}
	return out
}

// SampleRuns iterates over every retained sample, run-length encoded:
// node by node in name order, each node's runs in time order, consecutive
// runs of a node differing in Usage or Apps. Expanding each run into its
// intervals gives Samples (in another order). The Sim must not be used
// during the iteration.
func (s *Sim) SampleRuns() iter.Seq[SampleRun] {
	return func(yield func(SampleRun) bool) {
		first := s.keepFrom()
		for i := range s.nodes {
			nd := &s.nodes[i]
			s.closeIntervals(nd)
			for j, r := range nd.runs {
				k0, k1 := max(r.k, first), nd.open
				if j+1 < len(nd.runs) {
					k1 = nd.runs[j+1].k
				}
				if k1 <= k0 {
					continue
				}
				if !yield(SampleRun{Node: nd.name, Start: s.at(float64(k0) * s.interval), End: s.at(float64(k1) * s.interval),
					Intervals: int(k1 - k0), Usage: r.u, Apps: r.apps}) {
					return
				}
			}
		}
	}
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
	if !ok || !to.After(from) || s.noMetrics {
		return goodness.Usage{}, false
	}
	nd := &s.nodes[i]
	s.closeIntervals(nd)
	var sum goodness.Usage
	wsum := windowed(s, nd.runs, func(r *run) int64 { return r.k }, from, to, func(r *run, w float64) {
		u := r.u
		sum.CPU += w * u.CPU
		sum.IOWait += w * u.IOWait
		sum.IOPressure += w * u.IOPressure
		sum.CPUPressure += w * u.CPUPressure
		sum.DiskRead += w * u.DiskRead
		sum.DiskWrite += w * u.DiskWrite
		sum.NetRecv += w * u.NetRecv
		sum.NetSent += w * u.NetSent
	})
	if wsum <= 0 {
		return goodness.Usage{}, false
	}
	return goodness.Usage{CPU: sum.CPU / wsum, IOWait: sum.IOWait / wsum, IOPressure: sum.IOPressure / wsum,
		CPUPressure: sum.CPUPressure / wsum, Pressure: s.opts.Pressure, DiskRead: sum.DiskRead / wsum,
		DiskWrite: sum.DiskWrite / wsum, NetRecv: sum.NetRecv / wsum, NetSent: sum.NetSent / wsum}, true
}

// runAt is the index of the run holding interval k (0 when k precedes
// them all).
func runAt(runs []run, k int64) int { return runIndex(runs, func(r *run) int64 { return r.k }, k) }

// runIndex is the index of the run of runs (ascending by first interval,
// startOf) holding interval k (0 when k precedes them all).
func runIndex[R any](runs []R, startOf func(*R) int64, k int64) int {
	j, found := slices.BinarySearchFunc(runs, k, func(r R, k int64) int { return cmp.Compare(startOf(&r), k) })
	if !found {
		j--
	}
	return max(j, 0)
}

// windowed visits, for each retained metrics interval overlapping
// [from, to), the run of runs holding it with the overlap w in seconds,
// and returns Σ w: a window's time weights, as Usage and AppUsage read
// them. Only completed intervals count.
func windowed[R any](s *Sim, runs []R, startOf func(*R) int64, from, to time.Time, visit func(r *R, w float64)) float64 {
	f, t := s.secs(from), s.secs(to)
	lo := max(int64(math.Floor(f/s.interval)), s.keepFrom())
	hi := min(int64(math.Ceil(t/s.interval)), s.tick)
	var wsum float64
	for j, k := runIndex(runs, startOf, lo), lo; k < hi; k++ {
		for j+1 < len(runs) && startOf(&runs[j+1]) <= k {
			j++
		}
		start := float64(k) * s.interval
		w := min(t, start+s.interval) - max(f, start)
		if w <= 0 {
			continue
		}
		visit(&runs[j], w)
		wsum += w
	}
	return wsum
}

// keepFrom is the first interval Retention keeps: as of the last metrics
// tick, those that ended more than Retention before it are dropped.
func (s *Sim) keepFrom() int64 {
	if s.opts.Retention <= 0 || s.tick == 0 {
		return 0
	}
	return max(int64(math.Floor((float64(s.tick)*s.interval-s.opts.Retention.Seconds())/s.interval)), 0)
}

// DiscardMetrics stops the simulator's metrics: every sample is dropped,
// and none is kept from now on (Samples and SampleRuns are empty, Usage
// and AppUsage find nothing). A what-if on a clone that reads only applications (Apps,
// App, Progresses) calls it first: a clone shares its original's samples
// and copies a node's on its first change there, so a long history, and
// the samples the what-if would add, make every what-if pay for them.
func (s *Sim) DiscardMetrics() {
	s.noMetrics = true
	for i := range s.nodes {
		s.nodes[i].runs = nil
	}
	s.cm = nil
}

// closeIntervals closes nd's intervals before the current one: the open
// interval gets the rest of its integral at nd's rate, and the whole
// intervals after it, at that rate with nd's current apps, are one run.
// Call it before changing nd's apps; settle before changing its rate.
func (s *Sim) closeIntervals(nd *node) {
	if nd.open >= s.tick {
		return
	}
	nd.acc.addScaled(nd.rate, float64(nd.open+1)*s.interval-nd.at)
	s.appendRun(nd, nd.open, nd.acc, nd.present)
	nd.present = nd.apps
	if nd.open+1 < s.tick && !s.noMetrics {
		var whole usage
		whole.addScaled(nd.rate, s.interval)
		s.appendRun(nd, nd.open+1, whole, nd.apps)
	}
	nd.open, nd.acc, nd.at = s.tick, usage{}, float64(s.tick)*s.interval
	if kf := s.keepFrom(); kf > 0 {
		drop := 0
		for drop+1 < len(nd.runs) && nd.runs[drop+1].k <= kf {
			drop++
		}
		nd.runs = nd.runs[drop:]
	}
}

// settle integrates nd's rate up to now (its intervals closed first).
func (s *Sim) settle(nd *node) {
	s.closeIntervals(nd)
	nd.acc.addScaled(nd.rate, s.now-nd.at)
	nd.at = s.now
}

// appendRun records interval k with integral acc and apps: a new run,
// unless the last one has the same usage and apps (then it just extends).
func (s *Sim) appendRun(nd *node, k int64, acc usage, apps []string) {
	if s.noMetrics {
		return
	}
	u := s.mean(acc, s.spec(nd).Cores)
	if n := len(nd.runs); n > 0 && nd.runs[n-1].u == u && slices.Equal(nd.runs[n-1].apps, apps) {
		return
	}
	nd.runs = append(nd.runs, run{k: k, u: u, apps: apps})
}

// mean is the usage of an interval from its integral on a node of cores.
func (s *Sim) mean(a usage, cores float64) goodness.Usage {
	f := 1 / s.interval
	u := goodness.Usage{
		CPU: clamp01(a.cpu * f / cores), IOWait: clamp01(a.iowait * f / cores),
		IOPressure: clamp01(a.iopress * f), CPUPressure: clamp01(a.cpupress * f), Pressure: s.opts.Pressure,
		DiskRead: a.read * f * mb, DiskWrite: a.write * f * mb, NetRecv: a.in * f * mb, NetSent: a.out * f * mb,
	}
	if u.CPU+u.IOWait > 1 {
		u.IOWait = 1 - u.CPU
	}
	if !s.opts.Pressure {
		u.IOPressure, u.CPUPressure = 0, 0
	}
	return u
}

func clamp01(x float64) float64 { return min(max(x, 0), 1) }
