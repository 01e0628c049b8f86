package simcluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/yarnclient"
)

// Cluster adapts the simulator to engine.Cluster, engine.UsageSource (and
// engine.ContainerUsageSource: its per-application metrics, when on) and
// engine.JobPreparer.
// Every access to the simulator goes through exec, which must run its
// argument with exclusive access: sim.Realtime.Do for `colocd serve`, a
// direct call for a benchmark that owns the simulator.
//
// A submission that does not fit the free room now is accepted and waits,
// as YARN keeps an application ACCEPTED until its scheduler has room for
// it: App reports it accepted, State first starts every waiting
// application that fits (oldest first), and Kill drops it. It is logged
// when it starts, at that virtual time; a crash forgets it, and Reconcile
// submits its job again. A job waits when the engine, which admits several
// jobs on one reading of the cluster and predicts where each lands, finds
// the nodes more fragmented than it predicted; every kind of a workload
// fits the idle cluster (sim checks it), so none waits forever.
type Cluster struct {
	exec  func(func(*sim.Sim))
	state *State // nil: nothing is logged (not durable)
	kinds map[string]sim.KindSpec
	// waiting are the accepted submissions that did not fit yet, oldest
	// first.
	waiting []waitingApp
	// running caches what State reports of each running application:
	// nothing of it changes while it runs (the simulator places every
	// container at submission), and sim.App would build its placement map
	// and compute its speed again at every State.
	running map[string]cluster.App
}

type waitingApp struct {
	appID string
	jobID string
	spec  sim.AppSpec
}

// New adapts the simulator reached through exec. state, when not
// nil, receives every reservation, submission and kill (see Open).
func New(exec func(func(*sim.Sim)), state *State) *Cluster {
	c := &Cluster{exec: exec, state: state, kinds: map[string]sim.KindSpec{}, running: map[string]cluster.App{}}
	exec(func(s *sim.Sim) {
		for _, k := range s.Kinds() {
			c.kinds[k.Name] = k
		}
	})
	return c
}

// DirectExec runs f on s: the exec of a simulator owned by one goroutine.
func DirectExec(s *sim.Sim) func(func(*sim.Sim)) { return func(f func(*sim.Sim)) { f(s) } }

// Prepare fills a job's resources from its kind's spec; the kind must be
// one of the workload's.
func (c *Cluster) Prepare(j *queue.Job) error {
	k, ok := c.kinds[j.Kind]
	if !ok {
		names := make([]string, 0, len(c.kinds))
		for n := range c.kinds {
			names = append(names, n)
		}
		slices.Sort(names)
		return &queue.FieldError{Field: "kind", Reason: fmt.Sprintf("%q is not a kind of the simulated workload (%v)", j.Kind, names)}
	}
	if _, err := submitSpec(j.Submit); err != nil {
		return err
	}
	want := queue.Resources{Containers: k.Containers, MemoryMB: k.Container.MemoryMB, VCores: k.Container.VCores}
	if j.Resources == (queue.Resources{}) {
		j.Resources = want
		return nil
	}
	if j.Resources.MemoryMB != want.MemoryMB || j.Resources.VCores != want.VCores || j.Resources.Containers <= 0 {
		return &queue.FieldError{Field: "resources", Reason: fmt.Sprintf("kind %s runs containers of %d MB and %d vcores on the simulator (%d of them unless the job asks for another count); leave resources out or match it",
			j.Kind, want.MemoryMB, want.VCores, want.Containers)}
	}
	return nil
}

// SubmitSpec is a job's submission spec (queue.Job.Submit) on the
// simulator: the size of its input, which only its runtime shows.
type SubmitSpec struct {
	// Scale multiplies every container's work (sim.AppSpec.Scale); 0 or
	// absent means 1.
	Scale float64 `json:"scale,omitempty"`
}

// submitSpec decodes and checks a job's submission spec: empty, or a
// SubmitSpec with no other keys.
func submitSpec(raw json.RawMessage) (SubmitSpec, error) {
	var sp SubmitSpec
	if len(raw) == 0 {
		return sp, nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&sp); err != nil {
		return sp, &queue.FieldError{Field: "submit", Reason: "the simulator takes {\"scale\": x}: " + err.Error()}
	}
	if sp.Scale != 0 && !(sp.Scale > 0 && sp.Scale <= sim.MaxScale) {
		return sp, &queue.FieldError{Field: "submit", Reason: fmt.Sprintf("scale must be in (0, %d] (got %v)", sim.MaxScale, sp.Scale)}
	}
	return sp, nil
}

// appSpec is the simulator's submission of job j: its declared container
// count when it is not its kind's, and the scale of its submission spec.
func (c *Cluster) appSpec(j queue.Job) (sim.AppSpec, error) {
	spec := sim.AppSpec{JobID: j.ID, Kind: j.Kind, User: j.User, Queue: j.Queue, Tags: jobTags(j.ID, j.Kind)}
	if k, ok := c.kinds[j.Kind]; ok && j.Resources.Containers > 0 && j.Resources.Containers != k.Containers {
		spec.Containers = j.Resources.Containers
	}
	sp, err := submitSpec(j.Submit)
	spec.Scale = sp.Scale
	return spec, err
}

// State reports nodes (advertised vcores and memory) and running apps,
// after starting the waiting submissions that fit. It costs one pass over
// the nodes and their applications: what it reports of a running
// application is read from the simulator once (c.running) and shared,
// read-only, by every State until the application ends.
func (c *Cluster) State(ctx context.Context) (cluster.State, error) {
	var st cluster.State
	var err error
	c.exec(func(s *sim.Sim) {
		if err = c.startWaiting(s); err != nil {
			return
		}
		var ids []string
		seen := map[string]bool{}
		for _, n := range s.Nodes() {
			capa := pipeline.Capacity{MemoryMB: n.MemoryMB, VCores: int64(n.VCores)}
			free := pipeline.Capacity{MemoryMB: n.MemoryMB - n.UsedMemoryMB, VCores: int64(n.VCores - n.UsedVCores)}
			st.Nodes = append(st.Nodes, cluster.Node{Name: n.Name, Capacity: capa, Free: free, Apps: n.Apps})
			st.Capacity.MemoryMB += capa.MemoryMB
			st.Capacity.VCores += capa.VCores
			st.Free.MemoryMB += free.MemoryMB
			st.Free.VCores += free.VCores
			for _, id := range n.Apps {
				if !seen[id] {
					seen[id] = true
					ids = append(ids, id)
				}
			}
		}
		slices.Sort(ids)
		for _, id := range ids {
			a, ok := c.running[id]
			if !ok {
				// A node lists only the applications whose containers it
				// holds, so a listed application runs.
				info, found := s.App(id)
				if !found || info.State != sim.AppRunning {
					continue
				}
				a = cluster.App{ID: info.ID, JobID: info.JobID, Kind: info.Kind, User: info.User, Queue: info.Queue,
					Alloc: pipeline.Capacity{MemoryMB: info.Alloc.MemoryMB, VCores: info.Alloc.VCores},
					Nodes: info.Nodes, Placement: info.Placement, Starts: info.Started}
				c.running[id] = a
			}
			st.Apps = append(st.Apps, a)
		}
		for id := range c.running {
			if !seen[id] {
				delete(c.running, id)
			}
		}
	})
	return st, err
}

// startWaiting starts, oldest first, every waiting submission that fits
// now, logging each first.
func (c *Cluster) startWaiting(s *sim.Sim) error {
	kept := c.waiting[:0]
	for i, w := range c.waiting {
		if !s.FitsApp(w.spec) {
			kept = append(kept, w)
			continue
		}
		if err := c.log(submitEntry(w.appID, w.spec, s.Now())); err != nil {
			c.waiting = append(kept, c.waiting[i:]...)
			return fmt.Errorf("start waiting application %s: %w", w.appID, err)
		}
		if err := s.Submit(w.appID, w.spec); err != nil {
			c.waiting = append(kept, c.waiting[i+1:]...)
			return fmt.Errorf("start waiting application %s: %w", w.appID, err)
		}
	}
	c.waiting = kept
	return nil
}

// waitingFor returns the waiting submission of appID.
func (c *Cluster) waitingFor(appID string) (waitingApp, int, bool) {
	for i, w := range c.waiting {
		if w.appID == appID {
			return w, i, true
		}
	}
	return waitingApp{}, -1, false
}

// Reserve reserves an application id. Like every change to the simulator,
// it is logged first and made only once the log has it.
func (c *Cluster) Reserve(ctx context.Context) (string, error) {
	var id string
	var err error
	c.exec(func(s *sim.Sim) {
		next := s.NextApplicationID()
		if err = c.log(logEntry{Op: opReserve, AppID: next, At: s.Now()}); err != nil {
			return
		}
		if id = s.NewApplication(); id != next {
			err = fmt.Errorf("%w: reserved %s, logged %s", errSimState, id, next)
		}
	})
	return id, err
}

// Submit places and starts the job, or, when it does not fit the free
// room now, accepts it to start once it does (see Cluster). A job of an
// unknown kind is rejected (cluster.ErrRejected); an id the simulator did
// not reserve, or one holding another job, is cluster.ErrStaleAppID; a
// submission it already has is success.
func (c *Cluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	var err error
	c.exec(func(s *sim.Sim) {
		if a, ok := s.App(appID); ok {
			if a.JobID != j.ID {
				err = fmt.Errorf("%w: application %s already runs job %s", cluster.ErrStaleAppID, appID, a.JobID)
			}
			return
		}
		if w, _, ok := c.waitingFor(appID); ok {
			if w.jobID != j.ID {
				err = fmt.Errorf("%w: application %s already holds job %s", cluster.ErrStaleAppID, appID, w.jobID)
			}
			return
		}
		var spec sim.AppSpec
		if spec, err = c.appSpec(j); err != nil {
			err = fmt.Errorf("%w: %w", cluster.ErrRejected, err)
			return
		}
		if err = s.CheckSubmit(appID, spec); err != nil {
			switch {
			case errors.Is(err, sim.ErrUnknownKind):
				err = fmt.Errorf("%w: %w", cluster.ErrRejected, err)
			case errors.Is(err, sim.ErrUnknownApp):
				err = fmt.Errorf("%w: %w", cluster.ErrStaleAppID, err)
			}
			return
		}
		// A job that does not fit now waits, before anything is logged or
		// placed: sim.Submit would draw random numbers even to fail, and a
		// refusal the log does not hold must not change the simulator.
		if !s.FitsApp(spec) {
			c.waiting = append(c.waiting, waitingApp{appID: appID, jobID: j.ID, spec: spec})
			return
		}
		if err = c.log(submitEntry(appID, spec, s.Now())); err != nil {
			return
		}
		err = s.Submit(appID, spec)
	})
	return err
}

// submitEntry is the log entry of submitting spec under appID at.
func submitEntry(appID string, spec sim.AppSpec, at time.Time) logEntry {
	return logEntry{Op: OpSubmit, AppID: appID, JobID: spec.JobID, Kind: spec.Kind, User: spec.User, Queue: spec.Queue,
		Containers: spec.Containers, Scale: spec.Scale, At: at}
}

// App reports an application.
func (c *Cluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	var st cluster.AppStatus
	var err error
	c.exec(func(s *sim.Sim) {
		a, ok := s.App(appID)
		if w, _, waiting := c.waitingFor(appID); !ok && waiting {
			st = cluster.AppStatus{ID: appID, JobID: w.jobID, Phase: cluster.PhaseAccepted}
			return
		}
		if !ok {
			err = fmt.Errorf("application %s: %w", appID, cluster.ErrUnknownApp)
			return
		}
		st = cluster.AppStatus{ID: a.ID, JobID: a.JobID, Started: a.Started, Finished: a.Finished}
		switch a.State {
		case sim.AppRunning:
			st.Phase = cluster.PhaseRunning
		case sim.AppFinished:
			st.Phase = cluster.PhaseSucceeded
		case sim.AppKilled:
			st.Phase = cluster.PhaseKilled
			st.Diagnostics = "killed"
		default:
			st.Phase = cluster.PhaseFailed
			st.Diagnostics = string(a.State)
		}
	})
	return st, err
}

// Kill kills an application.
func (c *Cluster) Kill(ctx context.Context, appID string) error {
	var err error
	c.exec(func(s *sim.Sim) {
		a, ok := s.App(appID)
		if _, i, waiting := c.waitingFor(appID); !ok && waiting {
			c.waiting = slices.Delete(c.waiting, i, i+1) // it never started: nothing to log
			return
		}
		if !ok {
			err = fmt.Errorf("kill %s: %w: %w", appID, cluster.ErrUnknownApp, sim.ErrUnknownApp)
			return
		}
		if a.State != sim.AppRunning {
			return // nothing to change, nothing to log
		}
		if err = c.log(logEntry{Op: opKill, AppID: appID, At: s.Now()}); err != nil {
			return
		}
		err = s.Kill(appID)
	})
	return err
}

// Usage is the simulator's metrics: each node's mean over [from, to).
func (c *Cluster) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	out := make(map[string]goodness.Usage, len(hosts))
	var stale []string
	c.exec(func(s *sim.Sim) {
		for _, h := range hosts {
			if u, ok := s.Usage(h, from, to); ok {
				out[h] = u
			} else {
				stale = append(stale, h)
			}
		}
	})
	return out, stale, nil
}

// ContainerUsage is the simulator's per-application metrics (what each
// YARN container's cgroup would show: sim.Options.ContainerMetrics); empty
// when they are off, and then every node is fitted whole.
func (c *Cluster) ContainerUsage(ctx context.Context, hosts []string, from, to time.Time) (map[string]map[string]goodness.Usage, error) {
	out := map[string]map[string]goodness.Usage{}
	c.exec(func(s *sim.Sim) {
		for _, h := range hosts {
			aus, ok := s.AppUsage(h, from, to)
			if !ok {
				continue
			}
			m := make(map[string]goodness.Usage, len(aus))
			for _, a := range aus {
				m[a.App] = goodness.Usage{CPU: a.CPU, DiskRead: a.DiskRead, DiskWrite: a.DiskWrite}
			}
			out[h] = m
		}
	})
	return out, nil
}

// Limits are the workload node's maxima.
func (c *Cluster) Limits() goodness.Limits {
	var l goodness.Limits
	c.exec(func(s *sim.Sim) { l = s.Cluster().Limits() })
	return l
}

// ReferenceVCores is the reference node's advertised vcores (the
// workload's node; in a cluster of node groups, the first group's): with
// Limits, the node the profiles' amounts are fractions of.
func (c *Cluster) ReferenceVCores() int64 {
	var v int64
	c.exec(func(s *sim.Sim) { v = int64(s.Cluster().Node.VCores) })
	return v
}

// NodeLimits are the maxima of the nodes whose disk or network differ from
// the reference node's, by name: the figures an operator configures for
// hardware the resource manager does not report. Empty for a cluster of
// one node type.
func (c *Cluster) NodeLimits() map[string]goodness.Limits {
	out := map[string]goodness.Limits{}
	c.exec(func(s *sim.Sim) {
		ref := s.Cluster().Limits()
		for _, n := range s.Nodes() {
			l := sim.NodeSpec{DiskMBps: n.DiskMBps, NetMBps: n.NetMBps}.Limits()
			if l != ref {
				out[n.Name] = l
			}
		}
	})
	return out
}

// Checkpoint records the simulator's virtual time in its durable state.
func (c *Cluster) Checkpoint() error {
	if c.state == nil {
		return nil
	}
	var at time.Time
	c.exec(func(s *sim.Sim) { at = s.Now() })
	return c.state.Checkpoint(at)
}

func (c *Cluster) log(e logEntry) error {
	if c.state == nil {
		return nil
	}
	return c.state.Append(e)
}

func jobTags(jobID, kind string) []string { return yarnclient.JobTags(jobID, kind) }

// Clock is the virtual clock of a simulator that the caller advances
// itself, in one goroutine (a benchmark driving Engine's passes directly).
// After's channel never fires: nothing advances the simulator on its own.
type Clock struct{ Sim *sim.Sim }

// Now is the simulator's virtual time.
func (c Clock) Now() time.Time { return c.Sim.Now() }

// After returns a channel that never fires.
func (c Clock) After(time.Duration) <-chan time.Time { return nil }
