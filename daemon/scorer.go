package daemon

import (
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// modelScorer is the pipeline's co-location model (queue.Scorer): it
// hands the snapshot's nodes to a profile.Scorer, which predicts where
// each candidate's containers land and what they do to those nodes from
// the kinds' resource profiles, corrected by the pair preferences.
type modelScorer struct {
	sc profile.Scorer
}

var _ queue.Scorer = (*modelScorer)(nil)

// newModelScorer builds the scorer of pipeline.preference over profiles,
// with the pair preferences as the correction.
func newModelScorer(p PreferenceStage, profiles profile.Profiles, corr profile.Correction) (*modelScorer, error) {
	obj, err := profile.ParseObjective(p.Objective)
	if err != nil {
		return nil, cfgErr("pipeline.preference.objective", "%v", err)
	}
	return &modelScorer{sc: profile.Scorer{Profiles: profiles, Objective: obj, Risk: p.Risk, Explore: p.Explore,
		Correction: corr, CorrectionWeight: p.Correction}}, nil
}

// Score implements queue.Scorer.
func (m *modelScorer) Score(snap *queue.Snapshot, kinds []string, res []queue.Resources, out []queue.Score) {
	nodes := make([]profile.Node, len(snap.Nodes))
	for i, n := range snap.Nodes {
		pn := profile.Node{
			Capacity: profile.Room{VCores: n.Capacity.VCores, MemoryMB: n.Capacity.MemoryMB},
			Free:     profile.Room{VCores: n.Free.VCores, MemoryMB: n.Free.MemoryMB},
		}
		for _, j := range n.Jobs {
			if j.Containers <= 0 {
				continue
			}
			k := len(pn.Jobs)
			for a := range pn.Jobs {
				if pn.Jobs[a].Kind == j.Kind {
					k = a
					break
				}
			}
			if k == len(pn.Jobs) {
				pn.Jobs = append(pn.Jobs, profile.KindCount{Kind: j.Kind})
			}
			pn.Jobs[k].Containers += float64(j.Containers)
		}
		nodes[i] = pn
	}
	v := m.sc.NewView(nodes)
	for i, k := range kinds {
		r := res[i]
		s := v.Score(k, profile.Shape{Containers: r.Containers, Each: profile.Room{VCores: int64(r.VCores), MemoryMB: r.MemoryMB}})
		q := queue.Score{Value: s.Value, Model: s.Model, Correction: s.Correction, Alone: s.Alone, Known: s.Known, Confounds: s.Confounds}
		for _, b := range s.Beside {
			q.Beside = append(q.Beside, queue.ContextKind{Kind: b.Kind, Weight: b.Weight})
		}
		if !s.Fits {
			q.Value = -1e9 // the placement rule finds no room: last
		}
		out[i] = q
	}
}
