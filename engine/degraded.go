package engine

import (
	"sort"
	"time"
)

// The dependencies whose state the engine reports (Degraded): what colocd
// needs from outside, each failing on its own.
const (
	// DepCluster is the cluster's API (the YARN ResourceManager).
	DepCluster = "cluster"
	// DepMetrics is the metrics store (InfluxDB, Prometheus) the
	// learning tick reads.
	DepMetrics = "metrics"
	// DepKDC is the Kerberos KDC, when a call failed for want of a
	// ticket (Options.DependencyOf says which errors are its).
	DepKDC = "kdc"
	// depDisk is data_dir's file system: below its reserve.
	depDisk = "disk"
)

// degradation is a dependency that is failing: since the first failure of
// the current run of failures (wall time), the call that failed last and
// its error. Reason and Dependency may be shown to anyone; Err may name
// hosts and users (show it to callers with a token only).
type degradation struct {
	Dependency string
	Since      time.Time
	Op         string // the call that failed last: "sync", "submit", "metrics", "space"
	Err        error
}

// depFail is a dependency's current run of failures.
type depFail struct {
	since time.Time
	op    string
	err   error
}

// dependencyDown records a failed call op to dep (its error err).
func (e *Engine) dependencyDown(dep, op string, err error) {
	if err != nil && e.dependencyOf != nil {
		if d := e.dependencyOf(err); d != "" {
			dep = d
		}
	}
	now := e.wall()
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	if e.health.state.deps == nil {
		e.health.state.deps = map[string]depFail{}
	}
	f, ok := e.health.state.deps[dep]
	if !ok {
		f.since = now
	}
	f.op, f.err = op, err
	e.health.state.deps[dep] = f
}

// dependencyUp records a call to dep that succeeded: its run of failures
// ends. A call to the cluster that succeeded also clears the KDC (its
// ticket was good).
func (e *Engine) dependencyUp(dep string) {
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	delete(e.health.state.deps, dep)
	if dep == DepCluster {
		delete(e.health.state.deps, DepKDC)
	}
}

// Degraded lists the dependencies that are failing, by name: the cluster,
// the metrics store and the KDC from the last calls made to them, the disk
// from the store's free-space check now. colocd serves on through each of
// them; Ready says which of them stop admissions (the cluster, the disk).
func (e *Engine) Degraded() []degradation {
	spaceErr := e.store.CheckSpace()
	now := e.wall()
	e.health.mu.Lock()
	defer e.health.mu.Unlock()
	if e.health.state.deps == nil {
		e.health.state.deps = map[string]depFail{}
	}
	if f, ok := e.health.state.deps[depDisk]; spaceErr != nil {
		if !ok {
			f.since = now
		}
		f.op, f.err = "space", spaceErr
		e.health.state.deps[depDisk] = f
	} else {
		delete(e.health.state.deps, depDisk)
	}
	out := make([]degradation, 0, len(e.health.state.deps))
	for d, f := range e.health.state.deps {
		out = append(out, degradation{Dependency: d, Since: f.since, Op: f.op, Err: f.err})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Dependency < out[j].Dependency })
	return out
}

// Probed records the outcome of a call to dep made outside the loop (the
// daemon's start-up probe): a failure makes it degraded as the loop's
// own failures do, a success ends its run of failures.
func (e *Engine) Probed(dep, op string, err error) {
	if err != nil {
		e.dependencyDown(dep, op, err)
		return
	}
	e.dependencyUp(dep)
}
