package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// TestClientSummaryAndNodes: `colocd summary` and `colocd nodes` print
// the run and the nodes the real API serves, and --json is its bytes.
func TestClientSummaryAndNodes(t *testing.T) {
	at := apiclienttest.Epoch
	room := pipeline.Capacity{MemoryMB: 8192, VCores: 8}
	view := apiclienttest.FixedCluster{At: at, State: cluster.State{
		Capacity: pipeline.Capacity{MemoryMB: 16384, VCores: 16}, Free: pipeline.Capacity{MemoryMB: 6144, VCores: 6},
		Nodes: []cluster.Node{
			{Name: "n1", Capacity: room, Free: pipeline.Capacity{MemoryMB: 2048, VCores: 2}, Apps: []string{"application_1_0001", "application_1_0002"}},
			{Name: "n2", Capacity: room, Free: pipeline.Capacity{MemoryMB: 4096, VCores: 4}},
		},
		Apps: []cluster.App{
			{ID: "application_1_0001", JobID: "J1", Kind: "cc", Nodes: []string{"n1"}, Placement: map[string]int{"n1": 3}},
			{ID: "application_1_0002", User: "bob", Nodes: []string{"n1"}},
		},
	}}
	now := at // the daemon starts at at; the test then moves its clock
	srv := apiclienttest.Start(t, apiclienttest.Options{Cluster: view, Now: func() time.Time { return now }})
	now = at.Add(10 * time.Minute)
	if err := srv.Journal.AddGoodness(journal.GoodnessRecord{At: at.Add(time.Minute), From: at, To: at.Add(time.Minute),
		Node: "n1", Chosen: "cc", Given: "cc", Usage: goodness.Usage{CPU: 0.5}}); err != nil {
		t.Fatal(err)
	}
	if _, _, err := srv.Store.Submit(context.Background(), queue.Job{Kind: "cc", User: apiclienttest.SubmitterUser, Queue: "default",
		Resources: queue.Resources{Containers: 1, MemoryMB: 512, VCores: 1}}); err != nil {
		t.Fatal(err)
	}
	s := &cliServer{url: srv.URL, store: srv.Store, learner: srv.Learner, profiles: srv.Profiles}

	out, err := s.runCLI(t, cliReader, "", "nodes", "--sort", "goodness")
	if err != nil {
		t.Fatal(err)
	}
	g := fixed(goodness.Score(goodness.Usage{CPU: 0.5}, apiclienttest.DefaultLimits), 2)
	want := [][]string{
		{"NODE", "FREE MEM", "FREE VCORES", "CONTAINERS", "G", "APPLICATIONS"},
		{"n1", "2048/8192 MB", "2/8", "4", g, "cc×3 application_1_0002×1"},
		{"n2", "4096/8192 MB", "4/8", "0", "-", "-"},
	}
	table, tail, _ := strings.Cut(out, "\n\n")
	if diff := cmp.Diff(want, tableCells(table)); diff != "" {
		t.Errorf("nodes table (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.HasPrefix(tail, "2 of 2 nodes from 0 (by goodness); cluster free 6144/16384 MB, 6/16 vcores, read ") {
		t.Errorf("nodes footer: %q", tail)
	}

	out, err = s.runCLI(t, cliReader, "", "summary")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range []string{
		"since " + at.In(time.Local).Format(wallFormat) + ": 10m0s ago\n",
		"store: pending 1; 1 ever submitted\n",
		"submitted since (1): pending 1\n",
		"  admitted 0, mean wait -, mean runtime -\n",
		"admissions journaled: 0, learned choice 0, forced -, shadow 0\n",
		"goodness G over 1 node observations: mean " + g + ", min " + g + ", max " + g + " (range 2.72 to 54.60)\n",
	} {
		if !strings.Contains(out, line) {
			t.Errorf("summary lacks %q:\n%s", line, out)
		}
	}
	for _, cmd := range []string{"summary", "nodes"} {
		got, err := s.runCLI(t, cliReader, "", cmd, "--json")
		if err != nil {
			t.Fatal(err)
		}
		path := map[string]string{"summary": "/v1/summary", "nodes": "/v1/nodes?limit=50"}[cmd]
		if diff := cmp.Diff(s.get(t, path), got); diff != "" {
			t.Errorf("%s --json (-server +cli):\n%s", cmd, diff)
		}
	}
}
