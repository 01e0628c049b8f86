package engine

import (
	"fmt"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/plan"
	"github.com/colocd/colocd/profile"
)

// modelPlanner is the pipeline's lookahead (pipeline.Planner): it builds
// plan's model of the cluster from the decision's snapshot — the nodes'
// room, colocd's running jobs where they run and how far along they are,
// the pending window — and from what was learned: each kind's profile and
// its uncertainty, and its runtime (the kind's runtime history). Other
// tenants' applications are not in the model (their room is).
type modelPlanner struct {
	cfg      plan.Config
	profiles profile.Profiles
	runtimes *runtimes // the engine's; read under its lock, as Decide runs
	// size is a node's size (nodeSizes.size); nil: every node is the
	// reference.
	size func(node string, vcores int64) profile.Vector
}

var _ pipeline.Planner = (*modelPlanner)(nil)

// Plan implements pipeline.Planner.
func (m *modelPlanner) Plan(snap *pipeline.Snapshot, cands []string, seed uint64) ([]pipeline.PlanOutcome, error) {
	model, idx, err := m.model(snap, cands)
	if err != nil {
		return nil, err
	}
	outs, err := plan.Evaluate(model, idx, m.cfg, seed)
	if err != nil {
		return nil, err
	}
	res := make([]pipeline.PlanOutcome, len(outs))
	for i, o := range outs {
		res[i] = pipeline.PlanOutcome{Values: o.Values, Fits: o.Fits}
	}
	return res, nil
}

// model is the snapshot as plan's model, and the candidates' indices in
// its pending window.
func (m *modelPlanner) model(snap *pipeline.Snapshot, cands []string) (*plan.Model, []int, error) {
	model := &plan.Model{Kinds: map[string]plan.Kind{}}
	kind := func(k string) {
		if _, ok := model.Kinds[k]; ok {
			return
		}
		p := m.profiles.Profile(k)
		solo, ok := m.runtimes.solo(k)
		if h, hok := snap.History[k]; !ok && hok && h.Runs > 0 {
			solo = h.EWMARuntime // none finished since the start: the history
		}
		model.Kinds[k] = plan.Kind{Demand: p.Demand, Std: p.Std, Solo: solo}
	}
	running := map[string]int{} // job id → index into model.Running
	started := map[string]pipeline.Running{}
	for _, ru := range snap.Running {
		started[ru.JobID] = ru
	}
	for i, n := range snap.Nodes {
		pn := plan.Node{VCores: int(n.Capacity.VCores), MemoryMB: n.Capacity.MemoryMB}
		if m.size != nil {
			pn.Size = m.size(n.Name, n.Capacity.VCores)
		}
		model.Nodes = append(model.Nodes, pn)
		for _, j := range n.Jobs {
			if _, ok := started[j.JobID]; j.JobID == "" || !ok || j.Containers <= 0 {
				continue // another tenant's: its room is taken, it is not modelled
			}
			at, ok := running[j.JobID]
			if !ok {
				at = len(model.Running)
				running[j.JobID] = at
				model.Running = append(model.Running, plan.Running{Job: plan.Job{ID: j.JobID, Kind: j.Kind}, Placement: map[int]int{}})
				kind(j.Kind)
			}
			r := &model.Running[at]
			r.Placement[i] += j.Containers
			r.Containers += j.Containers
		}
	}
	for i := range model.Running {
		r := &model.Running[i]
		ru := started[r.ID]
		if r.Containers > 0 {
			r.VCores = int(ru.Alloc.VCores) / r.Containers
			r.MemoryMB = ru.Alloc.MemoryMB / int64(r.Containers)
		}
		r.VCores, r.MemoryMB = max(r.VCores, 1), max(r.MemoryMB, 1)
		solo := model.Kinds[r.Kind].Solo.Seconds()
		if solo <= 0 {
			continue
		}
		if done, at, ok := m.runtimes.done(r.ID); ok {
			// Credited up to the last tick; since then at its last pace.
			_, tracked := m.runtimes.pace(r.ID)
			r.Done = (done + tracked*max(snap.Now.Sub(at).Seconds(), 0)) / solo
		} else if !ru.Started.IsZero() {
			r.Done = snap.Now.Sub(ru.Started).Seconds() / solo
		}
		r.Done = min(max(r.Done, 0), 0.95)
	}
	pos := map[string]int{}
	for _, j := range snap.Pending {
		pos[j.ID] = len(model.Pending)
		model.Pending = append(model.Pending, plan.Job{ID: j.ID, Kind: j.Kind, Containers: j.Resources.Containers,
			VCores: j.Resources.VCores, MemoryMB: j.Resources.MemoryMB})
		kind(j.Kind)
	}
	idx := make([]int, len(cands))
	for i, id := range cands {
		p, ok := pos[id]
		if !ok {
			return nil, nil, fmt.Errorf("%w: candidate %s is not in the pending window", plan.ErrInvalid, id)
		}
		idx[i] = p
	}
	return model, idx, nil
}
