package engine

import (
	"maps"
	"slices"
	"time"

	"github.com/colocd/colocd/cluster"
)

// clusterView is the cluster state the engine last read and when, on its
// clock: what the status page shows of nodes and applications
// (ClusterView). It is never modified once stored.
type clusterView struct {
	st cluster.State
	at time.Time
}

// remember keeps st, read from the cluster at at, for ClusterView. It
// stores a deep copy: the admission pass changes its picture of the
// cluster in place (passView.arrive), and the picture is not the cluster.
// O(nodes + applications), next to the read itself.
func (e *Engine) remember(st cluster.State, at time.Time) {
	c := cluster.State{Capacity: st.Capacity, Free: st.Free,
		Nodes: make([]cluster.Node, len(st.Nodes)), Apps: make([]cluster.App, len(st.Apps))}
	for i, n := range st.Nodes {
		n.Apps = slices.Clone(n.Apps)
		c.Nodes[i] = n
	}
	for i, a := range st.Apps {
		a.Nodes = slices.Clone(a.Nodes)
		a.Placement = maps.Clone(a.Placement)
		c.Apps[i] = a
	}
	e.view.Store(&clusterView{st: c, at: at})
}

// ClusterView returns the cluster state the engine last read (by Sync, or
// by an admission pass or a share update that read its own) and when it
// read it, on the engine's clock; ok is false before the first read. The
// state is shared by every caller and must not be modified. Safe for
// concurrent use; it takes no lock a pass holds.
func (e *Engine) ClusterView() (st cluster.State, at time.Time, ok bool) {
	v := e.view.Load()
	if v == nil {
		return cluster.State{}, time.Time{}, false
	}
	return v.st, v.at, true
}
