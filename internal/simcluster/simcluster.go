package simcluster

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/yarnclient"
)

// Cluster adapts the simulator to engine.Cluster, engine.UsageSource and
// engine.JobPreparer.
// Every access to the simulator goes through exec, which must run its
// argument with exclusive access: sim.Realtime.Do for `colocd serve`, a
// direct call for a benchmark that owns the simulator.
type Cluster struct {
	exec  func(func(*sim.Sim))
	state *State // nil: nothing is logged (not durable)
	kinds map[string]sim.KindSpec
}

// New adapts the simulator reached through exec. state, when not
// nil, receives every reservation, submission and kill (see Open).
func New(exec func(func(*sim.Sim)), state *State) *Cluster {
	c := &Cluster{exec: exec, state: state, kinds: map[string]sim.KindSpec{}}
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
	want := queue.Resources{Containers: k.Containers, MemoryMB: k.Container.MemoryMB, VCores: k.Container.VCores}
	if j.Resources == (queue.Resources{}) {
		j.Resources = want
		return nil
	}
	if j.Resources != want {
		return &queue.FieldError{Field: "resources", Reason: fmt.Sprintf("kind %s runs %d containers of %d MB and %d vcores on the simulator; leave resources out or match it",
			j.Kind, want.Containers, want.MemoryMB, want.VCores)}
	}
	return nil
}

// State reports nodes (advertised vcores and memory) and running apps.
func (c *Cluster) State(ctx context.Context) (cluster.State, error) {
	var st cluster.State
	c.exec(func(s *sim.Sim) {
		var ids []string
		seen := map[string]bool{}
		for _, n := range s.Nodes() {
			capa := queue.Capacity{MemoryMB: n.MemoryMB, VCores: int64(n.VCores)}
			free := queue.Capacity{MemoryMB: n.MemoryMB - n.UsedMemoryMB, VCores: int64(n.VCores - n.UsedVCores)}
			st.Nodes = append(st.Nodes, cluster.Node{Name: n.Name, Capacity: capa, Free: free, Apps: slices.Clone(n.Apps)})
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
			a, ok := s.App(id)
			if !ok || a.State != sim.AppRunning {
				continue
			}
			st.Apps = append(st.Apps, cluster.App{ID: a.ID, JobID: a.JobID, Kind: a.Kind, User: a.User, Queue: a.Queue,
				Alloc: queue.Capacity{MemoryMB: a.Alloc.MemoryMB, VCores: a.Alloc.VCores}, Nodes: a.Nodes, Placement: a.Placement, Starts: a.Started})
		}
	})
	return st, nil
}

// Reserve reserves an application id. Like every change to the simulator,
// it is logged first and made only once the log has it.
func (c *Cluster) Reserve(ctx context.Context) (string, error) {
	var id string
	var err error
	c.exec(func(s *sim.Sim) {
		next := s.NextApplicationID()
		if err = c.log(LogEntry{Op: OpReserve, AppID: next, At: s.Now()}); err != nil {
			return
		}
		if id = s.NewApplication(); id != next {
			err = fmt.Errorf("%w: reserved %s, logged %s", ErrSimState, id, next)
		}
	})
	return id, err
}

// Submit places and starts the job. A submission the simulator cannot take
// (no fit, unknown kind or id) is rejected; one it already has is success.
func (c *Cluster) Submit(ctx context.Context, appID string, j queue.Job) error {
	var err error
	c.exec(func(s *sim.Sim) {
		if a, ok := s.App(appID); ok {
			if a.JobID != j.ID {
				err = fmt.Errorf("%w: application %s already runs job %s", cluster.ErrRejected, appID, a.JobID)
			}
			return
		}
		spec := sim.AppSpec{JobID: j.ID, Kind: j.Kind, User: j.User, Queue: j.Queue, Tags: jobTags(j.ID, j.Kind)}
		if err = s.CheckSubmit(appID, spec); err != nil {
			if errors.Is(err, sim.ErrUnknownKind) || errors.Is(err, sim.ErrUnknownApp) {
				err = fmt.Errorf("%w: %w", cluster.ErrRejected, err)
			}
			return
		}
		// A job that does not fit is refused before anything is logged or
		// placed: sim.Submit would draw random numbers even to fail, and a
		// refusal the log does not hold must not change the simulator.
		if !s.Fits(j.Kind) {
			err = fmt.Errorf("%w: submit %s: %w", cluster.ErrRejected, appID, sim.ErrNoFit)
			return
		}
		if err = c.log(LogEntry{Op: OpSubmit, AppID: appID, JobID: j.ID, Kind: j.Kind, User: j.User, Queue: j.Queue, At: s.Now()}); err != nil {
			return
		}
		err = s.Submit(appID, spec)
	})
	return err
}

// App reports an application.
func (c *Cluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	var st cluster.AppStatus
	var err error
	c.exec(func(s *sim.Sim) {
		a, ok := s.App(appID)
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
		if !ok {
			err = fmt.Errorf("kill %s: %w: %w", appID, cluster.ErrUnknownApp, sim.ErrUnknownApp)
			return
		}
		if a.State != sim.AppRunning {
			return // nothing to change, nothing to log
		}
		if err = c.log(LogEntry{Op: OpKill, AppID: appID, At: s.Now()}); err != nil {
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

// Limits are the workload node's maxima.
func (c *Cluster) Limits() goodness.Limits {
	var l goodness.Limits
	c.exec(func(s *sim.Sim) { l = s.Cluster().Limits() })
	return l
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

func (c *Cluster) log(e LogEntry) error {
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
