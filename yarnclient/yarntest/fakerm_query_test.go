package yarntest_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// appIDs are the ids GET path answered with, in order.
func appIDs(t *testing.T, rm *yarntest.FakeRM, path string) []string {
	t.Helper()
	a := do(t, "GET", rm.URL()+path, "")
	if a.status != http.StatusOK {
		t.Fatalf("GET %s: %d %s", path, a.status, a.body)
	}
	var body struct {
		Apps *struct {
			App []yarnclient.App `json:"app"`
		} `json:"apps"`
	}
	if err := json.Unmarshal(a.body, &body); err != nil {
		t.Fatal(err)
	}
	var out []string
	if body.Apps != nil {
		for _, app := range body.Apps.App {
			out = append(out, app.ID)
		}
	}
	return out
}

// TestAppsQuery: the set-valued parameters of GET /ws/v1/cluster/apps may
// repeat and list several values each (Jersey's Set<String>); tags are
// matched lower-cased, any of them; a parameter the RM does not know is
// ignored.
func TestAppsQuery(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.AddNode(yarnclient.Node{ID: "w1:45454"})
	a := rm.AddApp(yarnclient.App{Name: "a", User: "u", State: "RUNNING", ApplicationTags: "colocd-job-a,team-x"})
	b := rm.AddApp(yarnclient.App{Name: "b", User: "u", State: "ACCEPTED", ApplicationTags: "colocd-job-b"})
	c := rm.AddApp(yarnclient.App{Name: "c", User: "v", State: "RUNNING"})
	for q, want := range map[string][]string{
		"?states=RUNNING":                                      {a, c},
		"?states=accepted&states=running":                      {a, b, c},
		"?state=ACCEPTED&states=RUNNING":                       {a, b, c},
		"?applicationTags=COLOCD-JOB-A":                        {a},
		"?applicationTags=colocd-job-a,colocd-job-b":           {a, b},
		"?applicationTags=colocd-job-b&applicationTags=team-x": {a, b},
		"?states=RUNNING&applicationTags=colocd-job-b":         nil,
		"?states=RUNNING&noSuchParameter=1&user=v":             {c},
	} {
		if diff := cmp.Diff(want, appIDs(t, rm, yarnclient.PathApps+q)); diff != "" {
			t.Errorf("%s (-want +got):\n%s", q, diff)
		}
	}
}

// TestDeSelects: a 3.x RM serves each application's resourceRequests and
// label expressions unless deSelects names them (any case, repeated or
// comma-separated); an unknown value is a 400 when there is an
// application to serve; a 2.7 RM knows no deSelects, ignores it and
// serves no resourceRequests.
func TestDeSelects(t *testing.T) {
	rm, id := populated(t)
	keys := func(rm *yarntest.FakeRM, path string) map[string]bool {
		t.Helper()
		a := do(t, "GET", rm.URL()+path, "")
		if a.status != http.StatusOK {
			t.Fatalf("GET %s: %d %s", path, a.status, a.body)
		}
		if strings.HasPrefix(path, yarnclient.PathApp(id)) {
			return keySet(t, a.body, "app")
		}
		return keySet(t, a.body, "apps", "app", "*")
	}
	for _, path := range []string{yarnclient.PathApps, yarnclient.PathApp(id)} {
		if k := keys(rm, path); !k["resourceRequests"] || !k["appNodeLabelExpression"] {
			t.Errorf("%s: keys %v, want resourceRequests and appNodeLabelExpression", path, k)
		}
		for _, q := range []string{"?deSelects=resourceRequests", "?deSelects=RESOURCEREQUESTS,timeouts", "?deSelects=timeouts&deSelects=resourceRequests"} {
			if k := keys(rm, path+q); k["resourceRequests"] || !k["amNodeLabelExpression"] {
				t.Errorf("%s%s: keys %v, want no resourceRequests, amNodeLabelExpression kept", path, q, k)
			}
		}
		if k := keys(rm, path+"?deSelects=appNodeLabelExpression,amNodeLabelExpression"); k["appNodeLabelExpression"] || k["amNodeLabelExpression"] {
			t.Errorf("%s: keys %v, want the label expressions deselected", path, k)
		}
		for _, bad := range []string{"?deSelects=nodes", "?deSelects=,%20resourceRequests"} {
			if a := do(t, "GET", rm.URL()+path+bad, ""); a.status != http.StatusBadRequest || !strings.Contains(string(a.body), "Invalid deSelects string") {
				t.Errorf("%s%s: %d %s, want 400 Invalid deSelects string", path, bad, a.status, a.body)
			}
		}
	}
	if ids := appIDs(t, rm, yarnclient.PathApps+"?states=KILLED&deSelects=nodes"); len(ids) != 0 {
		t.Errorf("no app to serve: %v, want none and no error (the RM reads deSelects per app)", ids)
	}
	rm2, id2 := populated(t, yarntest.Hadoop2())
	if a := do(t, "GET", rm2.URL()+yarnclient.PathApps+"?deSelects=nodes", ""); a.status != http.StatusOK {
		t.Errorf("2.7 with an unknown deSelects: %d, want 200", a.status)
	}
	if k := keys(rm2, yarnclient.PathApps); k["resourceRequests"] {
		t.Errorf("2.7 apps %s: keys %v, want no resourceRequests", id2, k)
	}
}

// TestTraffic counts requests and the bytes of the answers' bodies.
func TestTraffic(t *testing.T) {
	rm, _ := populated(t)
	before := rm.Traffic()
	a := do(t, "GET", rm.URL()+yarnclient.PathNodes, "")
	got := rm.Traffic()
	if got.Requests-before.Requests != 1 || got.Bytes-before.Bytes != int64(len(a.body)) {
		t.Errorf("traffic %+v → %+v, want 1 request of %d bytes", before, got, len(a.body))
	}
}

// TestPopulate: a populated cluster has the nodes and applications asked
// for, consistent with each other (each node's used room is the
// containers placed on it; the cluster metrics add up), the load asked
// for, and is the same for the same seed.
func TestPopulate(t *testing.T) {
	p := yarntest.Population{Nodes: 200, Apps: 40, Seed: 3}
	rm := yarntest.NewFakeRM(t, yarntest.Populate(p))
	nodes, apps := rm.Nodes(), rm.Apps()
	if len(nodes) != 200 || len(apps) != 40 {
		t.Fatalf("%d nodes, %d apps; want 200 and 40", len(nodes), len(apps))
	}
	used := map[string]int64{}
	var vcores, total int64
	for _, a := range apps {
		if a.State != "RUNNING" || a.RunningContainers == 0 {
			t.Errorf("app %s: %s with %d containers, want running ones", a.ID, a.State, a.RunningContainers)
		}
		vcores += a.AllocatedVCores
	}
	for _, n := range nodes {
		for _, c := range rm.NodeContainers(n.ID) {
			used[n.ID] += c.TotalMemoryNeededMB
		}
		if used[n.ID] != n.UsedMemoryMB || n.UsedMemoryMB+n.AvailMemoryMB != 128<<10 {
			t.Errorf("node %s: used %d MB (containers %d), available %d", n.ID, n.UsedMemoryMB, used[n.ID], n.AvailMemoryMB)
		}
		total += n.UsedVirtualCores + n.AvailableVirtualCores
	}
	if load := float64(vcores) / float64(total); load < 0.55 || load > 0.61 {
		t.Errorf("load %.3f, want about 0.6", load)
	}
	again := yarntest.NewFakeRM(t, yarntest.Populate(p))
	if diff := cmp.Diff(apps, again.Apps()); diff != "" {
		t.Errorf("the same population twice (-first +second):\n%s", diff)
	}
}
