package engine

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// tenantsCluster is the simulator with other tenants, as YARN shows
// them: every application has a user (colocd's own are "colocd"'s, the
// one appOwners expects), other users' applications run beside colocd's
// and may claim a job (JobID and Kind set, as an adapter that believed
// their tags would), and an application may show under another id than
// the one reserved (a command submission: Reservation is the reserved
// id).
type tenantsCluster struct {
	Cluster
	foreign []cluster.App
	owner   map[string]string // application id → its user; default colocd
	shown   map[string]string // reserved id → the id the cluster shows
}

var _ appOwners = (*tenantsCluster)(nil)

func (c *tenantsCluster) user(id string) string {
	if u, ok := c.owner[id]; ok {
		return u
	}
	return "colocd"
}

func (c *tenantsCluster) State(ctx context.Context) (cluster.State, error) {
	st, err := c.Cluster.State(ctx)
	if err != nil {
		return st, err
	}
	for i := range st.Apps {
		a := &st.Apps[i]
		a.User = c.user(a.ID)
		if id, ok := c.shown[a.ID]; ok {
			a.Reservation, a.ID = a.ID, id
		}
	}
	for i := range st.Nodes {
		n := &st.Nodes[i]
		apps := make([]string, len(n.Apps))
		for k, id := range n.Apps {
			apps[k] = id
			if shown, ok := c.shown[id]; ok {
				apps[k] = shown
			}
		}
		n.Apps = apps
	}
	st.Apps = append(st.Apps, c.foreign...)
	return st, nil
}

func (c *tenantsCluster) App(ctx context.Context, appID string) (cluster.AppStatus, error) {
	s, err := c.Cluster.App(ctx, appID)
	s.User = c.user(appID)
	return s, err
}

func (c *tenantsCluster) Prepare(j *queue.Job) error { return c.Cluster.(JobPreparer).Prepare(j) }

func (c *tenantsCluster) AppOwners(queue.Job) []string { return []string{"colocd"} }

func tenantsHarness(t *testing.T) (*harness, *tenantsCluster) {
	t.Helper()
	tc := &tenantsCluster{owner: map[string]string{}, shown: map[string]string{}}
	h := newHarness(t, harnessOpts{cluster: func(sc *simcluster.Cluster) Cluster {
		tc.Cluster = sc
		return tc
	}})
	return h, tc
}

// viewApps is the engine's last picture of the running applications, as
// /v1/cluster shows them: id → job id.
func viewApps(t *testing.T, e *Engine) map[string]string {
	t.Helper()
	st, _, ok := e.ClusterView()
	if !ok {
		t.Fatal("no cluster view")
	}
	out := map[string]string{}
	for _, a := range st.Apps {
		out[a.ID] = a.JobID
		if a.JobID == "" && a.Kind != "" {
			t.Errorf("application %s has kind %q but no job: it kept what it claimed", a.ID, a.Kind)
		}
	}
	return out
}

// runOne admits and starts one job of kind, and returns it.
func runOne(t *testing.T, h *harness, kind string) queue.Job {
	t.Helper()
	id := h.submit(kind)[0]
	if rep := h.admit(); len(rep.Admitted) != 1 {
		t.Fatalf("admitted %v", rep.Admitted)
	}
	h.sync()
	j, err := h.store.Get(id)
	if err != nil || j.State != queue.StateRunning {
		t.Fatalf("job %s: %+v, %v; want running", id, j, err)
	}
	return j
}

// TestForeignApplicationIsNotTheJobItsTagsName: another user's
// application that says it runs a job (colocd's job tag) is not taken for
// it: the job ends when its own application does, and the picture the API
// shows has the foreign application without a job.
func TestForeignApplicationIsNotTheJobItsTagsName(t *testing.T) {
	h, tc := tenantsHarness(t)
	j := runOne(t, h, "cpu")
	bob := cluster.App{ID: "application_1_9999", JobID: j.ID, Kind: j.Kind, User: "bob",
		Alloc: pipeline.Capacity{MemoryMB: 1024, VCores: 1}}
	tc.foreign = append(tc.foreign, bob)
	h.sync()
	if diff := cmp.Diff(map[string]string{j.AppID: j.ID, bob.ID: ""}, viewApps(t, h.e)); diff != "" {
		t.Errorf("applications → jobs (-want +got)\n%s", diff)
	}
	for range 48 {
		h.advance(time.Hour)
		h.sync()
		if h.state(j.ID).Terminal() {
			break
		}
	}
	if got := h.state(j.ID); got != queue.StateSucceeded {
		t.Fatalf("job %s is %s after its application ended beside the foreign one, want succeeded", j.ID, got)
	}
	if diff := cmp.Diff(map[string]string{bob.ID: ""}, viewApps(t, h.e)); diff != "" {
		t.Errorf("applications → jobs after the job ended (-want +got)\n%s", diff)
	}
}

// TestApplicationOfAnotherUserUnderTheJobsIDParksIt: the RM holds the
// job's recorded id as another user's application (bob submitted under
// the id colocd reserved; the RM took colocd's submission for a repeat).
// It is not the job's: the job is parked for an operator, naming bob,
// and never taken for running.
func TestApplicationOfAnotherUserUnderTheJobsIDParksIt(t *testing.T) {
	h, tc := tenantsHarness(t)
	id := h.submit("cpu")[0]
	h.admit()
	j, err := h.store.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	tc.owner[j.AppID] = "bob"
	rep := h.sync()
	if diff := cmp.Diff([]string{id}, rep.Parked); diff != "" || len(rep.Started) != 0 {
		t.Errorf("parked (-want +got)\n%s; started %v, want none", diff, rep.Started)
	}
	got, err := h.store.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != queue.StateParked || !strings.Contains(got.Diagnostics, "belongs to bob, not to colocd") {
		t.Errorf("job %s %q, want parked naming bob", got.State, got.Diagnostics)
	}
	if diff := cmp.Diff(map[string]string{j.AppID: ""}, viewApps(t, h.e)); diff != "" {
		t.Errorf("applications → jobs (-want +got)\n%s", diff)
	}
}

// TestReservationMapsOneApplication: an application shown under another
// id than the reserved one (a command submission) is the job's through
// its Reservation; a second application with the same reservation is not.
func TestReservationMapsOneApplication(t *testing.T) {
	h, tc := tenantsHarness(t)
	id := h.submit("cpu")[0]
	h.admit()
	j, err := h.store.Get(id)
	if err != nil {
		t.Fatal(err)
	}
	tc.shown[j.AppID] = "application_2_0001"
	copyApp := cluster.App{ID: "application_2_0002", Reservation: j.AppID, User: "colocd"}
	tc.foreign = append(tc.foreign, copyApp)
	rep := h.sync()
	if diff := cmp.Diff([]string{id}, rep.Started); diff != "" {
		t.Errorf("started (-want +got)\n%s", diff)
	}
	if diff := cmp.Diff(map[string]string{"application_2_0001": id, copyApp.ID: ""}, viewApps(t, h.e)); diff != "" {
		t.Errorf("applications → jobs (-want +got)\n%s", diff)
	}
}
