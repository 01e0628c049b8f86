package yarnclient_test

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// startedApp adds an app to rm, starts it (its AM lands on the first node)
// and places containers on nodes.
func startedApp(t testing.TB, rm *yarntest.FakeRM, nodes ...string) string {
	t.Helper()
	id := rm.AddApp(yarnclient.App{Name: "job", User: "u", State: "ACCEPTED"})
	if err := rm.StartApp(id); err != nil {
		t.Fatal(err)
	}
	if err := rm.PlaceContainers(id, nodes...); err != nil {
		t.Fatal(err)
	}
	return id
}

func TestPlacementFromRM(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	addNodes(rm, "w1.example.com:45454", "w2.example.com:45454", "w3.example.com:45454")
	other := startedApp(t, rm, "w3.example.com:45454")
	id := startedApp(t, rm, "w2.example.com:45454", "w2.example.com:45454", "w3.example.com:45454")
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	got, err := c.Placement(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	// The AM went to w1 (the first node with room).
	if diff := cmp.Diff(map[string]int{"w1.example.com": 1, "w2.example.com": 2, "w3.example.com": 1}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if got, err := c.Placement(ctx, other); err != nil || got["w3.example.com"] != 1 {
		t.Errorf("other app placement = %v, %v", got, err)
	}
	attempt, _ := yarnclient.AttemptID(id, 1)
	if n := rm.Requests(http.MethodGet, yarnclient.PathAttemptContainers(id, attempt)); n != 1 {
		t.Errorf("attempt-containers asked %d times, want 1", n)
	}
	if _, err := c.Placement(ctx, "application_1700000000000_0999"); !errors.Is(err, yarnclient.ErrNotFound) {
		t.Errorf("unknown app: %v, want ErrNotFound", err)
	}
	pending := rm.AddApp(yarnclient.App{Name: "waiting", User: "u", State: "ACCEPTED"})
	if got, err := c.Placement(ctx, pending); err != nil || len(got) != 0 {
		t.Errorf("app without attempt: %v, %v; want empty", got, err)
	}
}

// TestPlacementFromNodeManagers: a 2.7 RM has no attempt-containers
// endpoint; placement comes from the NodeManagers, filtered by application.
func TestPlacementFromNodeManagers(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.Hadoop2())
	nms := map[string]*yarntest.FakeNM{}
	for _, id := range []string{"w1:45454", "w2:45454"} {
		nm := yarntest.NewFakeNM(t)
		nms[id] = nm
		rm.AddNode(yarnclient.Node{ID: id, NodeHTTPAddress: strings.TrimPrefix(nm.URL(), "http://")})
	}
	id := startedApp(t, rm, "w2:45454", "w2:45454")
	other := startedApp(t, rm, "w1:45454", "w2:45454")
	for node, nm := range nms {
		cs := rm.NodeContainers(node)
		// A finished container of the app must not count.
		cs = append(cs, yarnclient.NMContainer{ID: strings.Replace(id, "application_", "container_", 1) + "_01_000099", State: "DONE", NodeID: node})
		nm.SetContainers(cs)
	}
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	for i := 0; i < 2; i++ {
		got, err := c.Placement(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(map[string]int{"w1": 1, "w2": 2}, got); diff != "" {
			t.Errorf("call %d (-want +got)\n%s", i, diff)
		}
	}
	if got, err := c.Placement(ctx, other); err != nil || !cmp.Equal(map[string]int{"w1": 2, "w2": 1}, got) {
		t.Errorf("other app: %v, %v", got, err)
	}
	attempt, _ := yarnclient.AttemptID(id, 1)
	if n := rm.Requests(http.MethodGet, yarnclient.PathAttemptContainers(id, attempt)); n != 1 {
		t.Errorf("the missing endpoint was asked %d times; once is enough to learn it is missing", n)
	}

	// Several apps at once: each NodeManager is asked once.
	before := rm.Requests(http.MethodGet, yarnclient.PathNodes)
	all, err := c.Placements(ctx, []string{id, other, "application_1700000000000_0999"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int{id: {"w1": 1, "w2": 2}, other: {"w1": 2, "w2": 1}, "application_1700000000000_0999": {}}
	if diff := cmp.Diff(want, all); diff != "" {
		t.Errorf("Placements (-want +got)\n%s", diff)
	}
	if n := rm.Requests(http.MethodGet, yarnclient.PathNodes) - before; n != 1 {
		t.Errorf("Placements listed the nodes %d times, want 1", n)
	}
}

func TestPlacementsFromRM(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	addNodes(rm, "w1:45454", "w2:45454")
	a := startedApp(t, rm, "w2:45454")
	b := startedApp(t, rm)
	c, _ := newClient(t, nil, rm.URL())
	got, err := c.Placements(ctxT(t), []string{a, b, "application_1700000000000_0999"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]map[string]int{a: {"w1": 1, "w2": 1}, b: {"w1": 1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if _, err := c.Placements(ctxT(t), []string{"nope"}); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("bad id: %v, want ErrInvalid", err)
	}
}

func TestPlacementNodeManagerDown(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.Hadoop2())
	nm := yarntest.NewFakeNM(t)
	rm.AddNode(yarnclient.Node{ID: "up:45454", NodeHTTPAddress: strings.TrimPrefix(nm.URL(), "http://")})
	rm.AddNode(yarnclient.Node{ID: "down:45454", NodeHTTPAddress: strings.TrimPrefix(deadaddr.URL(t), "http://")})
	id := startedApp(t, rm, "down:45454")
	nm.SetContainers(rm.NodeContainers("up:45454"))
	c, sleeps := newClient(t, nil, rm.URL())
	got, err := c.Placement(ctxT(t), id)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]int{"up": 1}, got); diff != "" {
		t.Errorf("partial placement (-want +got)\n%s", diff)
	}
	if len(sleeps.got()) != 3 {
		t.Errorf("the dead NodeManager was retried with %d waits, want 3", len(sleeps.got()))
	}

	rm2 := yarntest.NewFakeRM(t, yarntest.Hadoop2())
	rm2.AddNode(yarnclient.Node{ID: "down:45454", NodeHTTPAddress: strings.TrimPrefix(deadaddr.URL(t), "http://")})
	id2 := startedApp(t, rm2)
	c2, _ := newClient(t, nil, rm2.URL())
	if _, err := c2.Placement(ctxT(t), id2); err == nil || !strings.Contains(err.Error(), "no NodeManager answered") {
		t.Errorf("all NodeManagers down: %v, want an error", err)
	}
}

func TestIDs(t *testing.T) {
	apps := map[string]struct {
		container string
		want      string
		ok        bool
	}{
		"plain":           {"container_1326121700862_0006_01_000001", "application_1326121700862_0006", true},
		"rm epoch":        {"container_e17_1410901177871_0001_01_000005", "application_1410901177871_0001", true},
		"large sequence":  {"container_1410901177871_12345_02_000005", "application_1410901177871_12345", true},
		"not a container": {"application_1_0001", "", false},
		"short":           {"container_1_2_3", "", false},
		"letters":         {"container_1a_0001_01_000001", "", false},
	}
	for name, tt := range apps {
		t.Run(name, func(t *testing.T) {
			got, ok := yarnclient.AppIDFromContainerID(tt.container)
			if got != tt.want || ok != tt.ok {
				t.Errorf("AppIDFromContainerID(%q) = %q, %v; want %q, %v", tt.container, got, ok, tt.want, tt.ok)
			}
		})
	}
	if got, err := yarnclient.AttemptID("application_1326821518301_0005", 2); err != nil || got != "appattempt_1326821518301_0005_000002" {
		t.Errorf("AttemptID = %q, %v", got, err)
	}
	if _, err := yarnclient.AttemptID("app_1", 1); !errors.Is(err, yarnclient.ErrInvalid) {
		t.Errorf("AttemptID of a bad id: %v, want ErrInvalid", err)
	}
	tags := map[string]struct {
		id, kind string
		want     []string
	}{
		"plain":     {"01HZX3Q4", "tpch-q10", []string{"colocd-job-01hzx3q4", "colocd-kind-tpch-q10"}},
		"commas":    {"a,b", "Spark SQL", []string{"colocd-job-a_b", "colocd-kind-spark_sql"}},
		"non-ascii": {"j1", "wörd", []string{"colocd-job-j1", "colocd-kind-w_rd"}},
		"too long":  {strings.Repeat("x", 200), "k", []string{"colocd-job-" + strings.Repeat("x", 89), "colocd-kind-k"}},
	}
	for name, tt := range tags {
		t.Run("tags/"+name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, yarnclient.JobTags(tt.id, tt.kind)); diff != "" {
				t.Errorf("(-want +got)\n%s", diff)
			}
		})
	}
}
