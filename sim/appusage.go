package sim

import (
	"cmp"
	"slices"
	"time"
)

// Per-application metrics (Options.ContainerMetrics): what the cgroups of
// an application's YARN containers on a node show, its CPU time and its
// block I/O bytes, and nothing else (no network, no I/O wait). They are
// integrated like the node's (metrics.go) but on their own: each node has
// its own per-application rates, open interval, accumulator and runs, so
// settling them never splits the node's own integral, and turning them on
// changes neither the node's samples nor the run. The accumulator holds one
// entry per application present in the open interval (zero while it has no
// working group), so an interval's list is the applications that had
// containers on the node during it, as Sample.Apps.

// AppUsage is one application's containers' mean use on one node over a
// window: what the cgroups of its YARN containers show.
type AppUsage struct {
	App                 string
	CPU                 float64 // as goodness.Usage.CPU: a fraction of the node's cores
	DiskRead, DiskWrite float64 // as goodness.Usage's: bytes per second
}

// appUse is one application's use on a node: its rates (cores, MB/s), their
// integral over part of an interval, or an interval's mean (AppUsage's
// units), by the context.
type appUse struct {
	app              int32 // index into Sim.apps
	cpu, read, write float64
}

// appRun is a node's per-application means over consecutive metrics
// intervals, from interval k to the next run's k (the last: to the open
// interval). Runs are immutable once appended.
type appRun struct {
	k   int64
	use []appUse // means, in submission order; immutable, may be shared
}

// containerMetrics is the per-application metrics of a Sim.
type containerMetrics struct {
	nodes []appMetrics // by node index
	rates []appUse     // scratch of share; not shared by clones
}

// appMetrics is a node's per-application metrics, lazy like the node's.
type appMetrics struct {
	rate []appUse // current rates of the apps with a working group, in submission order
	open int64    // the metrics interval acc belongs to
	at   float64  // acc integrates rate up to here
	acc  []appUse // integral over the open interval up to at of each app present in it, in submission order
	runs []appRun // the closed intervals, run-length encoded
}

// AppUsage is, for node, each application's mean use over [from, to),
// weighted like Usage (the same windows, completed intervals only, the same
// time weighting); an application present for part of the window counts
// its use over the whole window (zero where it was absent), as a cgroup's
// counters divided by the window would. The applications are those that
// had containers on the node during a retained interval of the window
// (idle ones with zero use), in submission order. It is false when
// Options.ContainerMetrics is off, the node is unknown, or no retained
// sample overlaps the window (as Usage).
func (s *Sim) AppUsage(node string, from, to time.Time) ([]AppUsage, bool) {
	i, ok := s.nodeIdx[node]
	if !ok || !to.After(from) || s.noMetrics || s.cm == nil {
		return nil, false
	}
	s.closeApps(int32(i))
	m := &s.cm.nodes[i]
	var sum []appUse // w-weighted means, in submission order
	wsum := windowed(s, m.runs, func(r *appRun) int64 { return r.k }, from, to, func(r *appRun, w float64) {
		for _, u := range r.use {
			e := entry(&sum, u.app)
			e.cpu += w * u.cpu
			e.read += w * u.read
			e.write += w * u.write
		}
	})
	if wsum <= 0 {
		return nil, false
	}
	out := make([]AppUsage, len(sum))
	for j, u := range sum {
		out[j] = AppUsage{App: s.apps[u.app].id, CPU: u.cpu / wsum, DiskRead: u.read / wsum, DiskWrite: u.write / wsum}
	}
	return out, true
}

// entry is app's entry in *list, sorted by app, inserted at zero if absent.
func entry(list *[]appUse, app int32) *appUse {
	j, found := slices.BinarySearchFunc(*list, app, func(u appUse, app int32) int { return cmp.Compare(u.app, app) })
	if !found {
		*list = slices.Insert(*list, j, appUse{app: app})
	}
	return &(*list)[j]
}

// addApps adds rate·f to acc, app by app. f = 0 adds nothing, not even
// an entry: an app that left at the end of the last interval still has its
// rate until share runs at the same instant.
func addApps(acc *[]appUse, rate []appUse, f float64) {
	if f == 0 {
		return
	}
	for _, r := range rate {
		e := entry(acc, r.app)
		e.cpu += r.cpu * f
		e.read += r.read * f
		e.write += r.write * f
	}
}

// shareApps gives node i's applications the rates share computed for it
// (rates in submission order); changed rates are settled first.
func (s *Sim) shareApps(i int32, rates []appUse) {
	m := &s.cm.nodes[i]
	if slices.Equal(rates, m.rate) {
		return
	}
	s.settleApps(i)
	m.rate = append(m.rate[:0], rates...)
}

// settleApps integrates node i's per-application rates up to now (its
// intervals closed first).
func (s *Sim) settleApps(i int32) {
	s.closeApps(i)
	m := &s.cm.nodes[i]
	addApps(&m.acc, m.rate, s.now-m.at)
	m.at = s.now
}

// closeApps is closeIntervals for node i's per-application metrics: the
// open interval gets the rest of its integral at the current rates, and
// the whole intervals after it, at those rates with the node's current
// apps, are one run. Call it before changing the node's apps.
func (s *Sim) closeApps(i int32) {
	m := &s.cm.nodes[i]
	if m.open >= s.tick {
		return
	}
	nd := &s.nodes[i]
	cores := s.spec(nd).Cores
	addApps(&m.acc, m.rate, float64(m.open+1)*s.interval-m.at)
	s.appendAppRun(m, m.open, cores)
	s.presentApps(m, nd)
	if m.open+1 < s.tick {
		addApps(&m.acc, m.rate, s.interval)
		s.appendAppRun(m, m.open+1, cores)
		s.presentApps(m, nd)
	}
	m.open, m.at = s.tick, float64(s.tick)*s.interval
	if kf := s.keepFrom(); kf > 0 {
		drop := 0
		for drop+1 < len(m.runs) && m.runs[drop+1].k <= kf {
			drop++
		}
		m.runs = m.runs[drop:]
	}
}

// presentApps resets m's accumulator to a zero entry for each of nd's
// current apps.
func (s *Sim) presentApps(m *appMetrics, nd *node) {
	m.acc = m.acc[:0]
	for _, id := range nd.apps {
		entry(&m.acc, s.byID[id])
	}
}

// appendAppRun records interval k with m's accumulator as its integral: a
// new run, unless the last one has the same means (then it just extends).
func (s *Sim) appendAppRun(m *appMetrics, k int64, cores float64) {
	n := len(m.runs)
	same := n > 0 && len(m.runs[n-1].use) == len(m.acc)
	for j := 0; same && j < len(m.acc); j++ {
		same = m.runs[n-1].use[j] == s.appMean(m.acc[j], cores)
	}
	if same {
		return
	}
	use := make([]appUse, len(m.acc))
	for j, a := range m.acc {
		use[j] = s.appMean(a, cores)
	}
	m.runs = append(m.runs, appRun{k: k, use: use})
}

// appMean is an application's mean use over an interval from its integral
// on a node of cores, in the units of mean.
func (s *Sim) appMean(a appUse, cores float64) appUse {
	f := 1 / s.interval
	return appUse{app: a.app, cpu: clamp01(a.cpu * f / cores), read: a.read * f * mb, write: a.write * f * mb}
}

// clone copies cm for Clone: each node's rates and accumulator, changed in
// place, into one new array (each part clipped, so that growing it copies);
// its runs, immutable, are shared and clipped.
func (cm *containerMetrics) clone() *containerMetrics {
	out := slices.Clone(cm.nodes)
	n := 0
	for i := range out {
		n += len(out[i].rate) + len(out[i].acc)
	}
	buf := make([]appUse, 0, n)
	part := func(x []appUse) []appUse {
		buf = append(buf, x...)
		return slices.Clip(buf[len(buf)-len(x):])
	}
	for i := range out {
		m := &out[i]
		m.rate, m.acc = part(m.rate), part(m.acc)
		m.runs = slices.Clip(m.runs)
	}
	return &containerMetrics{nodes: out}
}
