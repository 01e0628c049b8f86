package apiclient_test

import (
	"net/http"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
)

// TestConsole: the console's endpoints through the client, against the
// real API over a fixed cluster view and journal: nodes sorted by
// goodness and paged, applications filtered by job, the goodness trend in
// buckets, the run summary; and a bad parameter is an *Error naming it.
func TestConsole(t *testing.T) {
	at := apiclienttest.Epoch
	cpu := pipeline.Capacity{MemoryMB: 8192, VCores: 8}
	view := apiclienttest.FixedCluster{At: at.Add(-time.Minute), State: cluster.State{
		Capacity: pipeline.Capacity{MemoryMB: 16384, VCores: 16}, Free: pipeline.Capacity{MemoryMB: 4096, VCores: 4},
		Nodes: []cluster.Node{{Name: "n1", Capacity: cpu, Apps: []string{"application_1_0001"}}, {Name: "n2", Capacity: cpu, Apps: []string{"application_1_0002"}}},
		Apps: []cluster.App{
			{ID: "application_1_0001", JobID: "J1", Kind: "cc", Nodes: []string{"n1"}, Placement: map[string]int{"n1": 3}},
			{ID: "application_1_0002", User: "bob", Nodes: []string{"n2"}},
		},
	}}
	s, c := start(t, apiclienttest.Options{Cluster: view})
	ctx := t.Context()
	for i, node := range []string{"n1", "n2"} { // n1 is idler: lower G
		g := journal.GoodnessRecord{At: at.Add(-time.Duration(2-i) * time.Minute), From: at.Add(-time.Hour), To: at, Node: node, Chosen: "cc", Given: "cc",
			Usage: goodness.Usage{CPU: 0.2 + 0.5*float64(i)}}
		if err := s.Journal.AddGoodness(g); err != nil {
			t.Fatal(err)
		}
	}

	nodes, err := c.reader.Nodes(ctx, apiclient.NodeOptions{Sort: "goodness", Limit: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	if b := nodes.Body; !b.Available || b.Total != 2 || len(b.Nodes) != 1 || b.Nodes[0].Name != "n1" || b.Nodes[0].G == nil {
		t.Errorf("nodes by goodness, first page of 1: %+v", b)
	}
	if nodes, err := c.reader.Nodes(ctx, apiclient.NodeOptions{Offset: 1}); err != nil || len(nodes.Body.Nodes) != 1 || nodes.Body.Nodes[0].Name != "n2" {
		t.Errorf("nodes by name from offset 1: %+v %v, want n2", nodes.Body.Nodes, err)
	}
	_, err = c.reader.Nodes(ctx, apiclient.NodeOptions{Sort: "size"})
	wantError(t, err, http.StatusBadRequest, "sort")

	apps, err := c.reader.Cluster(ctx, apiclient.ClusterOptions{Jobs: []string{"J1"}})
	if err != nil {
		t.Fatal(err)
	}
	if b := apps.Body; b.Total != 1 || len(b.Apps) != 1 || b.Apps[0].Kind != "cc" || b.Apps[0].Containers != 3 {
		t.Errorf("applications of J1: %+v", b)
	}
	if all, err := c.reader.Cluster(ctx, apiclient.ClusterOptions{}); err != nil || all.Body.Total != 2 {
		t.Errorf("every application: %+v %v, want 2", all.Body, err)
	}

	trend, err := c.reader.GoodnessTrend(ctx, apiclient.TrendOptions{From: at.Add(-3 * time.Minute), To: at, Buckets: 3})
	if err != nil {
		t.Fatal(err)
	}
	counts := []int{}
	for _, b := range trend.Body.Buckets {
		counts = append(counts, b.Count)
	}
	if trend.Body.Total != 2 || len(counts) != 3 || counts[1] != 1 || counts[2] != 1 {
		t.Errorf("trend over 3 one-minute buckets: total %d, counts %v; want 2, [0 1 1]", trend.Body.Total, counts)
	}
	_, err = c.reader.GoodnessTrend(ctx, apiclient.TrendOptions{Buckets: 100000})
	wantError(t, err, http.StatusBadRequest, "buckets")

	if _, err := c.submitter.Submit(ctx, v1.JobRequest{Kind: "cc", Resources: resources(1)}, ""); err != nil {
		t.Fatal(err)
	}
	sum, err := c.reader.Summary(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if b := sum.Body; b.Counts[v1.StatePending] != 1 || b.SubmittedEver != 1 || b.Run.States[v1.StatePending] != 1 {
		t.Errorf("summary after one submission: %+v", b)
	}
}
