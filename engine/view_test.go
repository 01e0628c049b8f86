package engine

import (
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestClusterView: the engine keeps the cluster state it last read, as
// read (not the admission pass's picture with its predicted arrivals),
// stamped with the engine's clock, and unchanged by later passes.
func TestClusterView(t *testing.T) {
	h := newHarness(t, harnessOpts{nodes: 2})
	if _, _, ok := h.e.ClusterView(); ok {
		t.Fatal("ClusterView is ok before any read of the cluster")
	}

	ids := h.submit("cpu", "disk")
	readAt := h.s.Now()
	if rep := h.admit(); len(rep.Admitted) != 2 {
		t.Fatalf("admitted %v, want both jobs", rep.Admitted)
	}
	st, at, ok := h.e.ClusterView()
	if !ok || !at.Equal(readAt) {
		t.Fatalf("after a pass: ok %v at %v, want the pass's read at %v", ok, at, readAt)
	}
	// Read before the submissions: the pass's arrivals are not in it.
	if len(st.Nodes) != 2 || len(st.Apps) != 0 || st.Free != st.Capacity {
		t.Errorf("view after the pass: %d nodes, apps %v, free %+v of %+v; want 2 idle nodes", len(st.Nodes), st.Apps, st.Free, st.Capacity)
	}

	syncAt := h.advance(time.Second)
	h.sync()
	st, at, ok = h.e.ClusterView()
	if !ok || !at.Equal(syncAt) {
		t.Fatalf("after sync: ok %v at %v, want %v", ok, at, syncAt)
	}
	var jobs []string
	for _, a := range st.Apps {
		jobs = append(jobs, a.JobID)
		if len(a.Nodes) == 0 {
			t.Errorf("app %s of job %s has no node", a.ID, a.JobID)
		}
	}
	slices.Sort(jobs)
	slices.Sort(ids)
	if !slices.Equal(jobs, ids) {
		t.Errorf("view's applications are of jobs %v, want %v", jobs, ids)
	}
	fresh, err := h.cluster.State(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(fresh, st); diff != "" {
		t.Errorf("view differs from the cluster (-cluster +view):\n%s", diff)
	}

	// The loop's pass admits on the sync's state, changing that picture
	// in place (arrive): the kept view stays the cluster as read.
	h.submit("net")
	_, synced, err := h.e.syncStep(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	read, err := h.cluster.State(h.ctx)
	if err != nil {
		t.Fatal(err)
	}
	if rep, err := h.e.admitStep(h.ctx, synced); err != nil || len(rep.Admitted) != 1 {
		t.Fatalf("admit step: %v, %v; want the net job admitted", rep, err)
	}
	if len(synced.Apps) != len(read.Apps)+1 {
		t.Fatalf("the pass's picture has %d apps, the cluster %d: the test no longer exercises arrive", len(synced.Apps), len(read.Apps))
	}
	kept, _, _ := h.e.ClusterView()
	if diff := cmp.Diff(read, kept); diff != "" {
		t.Errorf("the pass changed the kept view (-read +kept):\n%s", diff)
	}
}
