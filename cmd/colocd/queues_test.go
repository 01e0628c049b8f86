package main

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/pipeline"
)

type fixedQueues struct{ rep pipeline.QueuesReport }

func (f fixedQueues) Queues() pipeline.QueuesReport { return f.rep }

func TestClientQueues(t *testing.T) {
	owed, ent, rcv := pipeline.Rate{VCores: 0.25, Memory: 0.125}, pipeline.Rate{VCores: 0.4, Memory: 0.4}, pipeline.Rate{VCores: 0.1, Memory: 0.05}
	alpha, beta := pipeline.Rate{VCores: 0.4, Memory: 0.4}, pipeline.Rate{VCores: 0.1, Memory: 0.1}
	rep := pipeline.QueuesReport{Enabled: true, Mode: pipeline.FairnessCurves, GroupBy: pipeline.GroupByQueue, At: apiclienttest.Epoch,
		BurstPeriodNS: int64(time.Hour), Queues: []pipeline.QueueStatus{
			{Name: "interactive", Class: "latency-sensitive", Level: 1, Guarantee: pipeline.GuaranteeHard, Reason: "resource and fairness conditions hold at level 1 (1 guaranteed there)",
				Alpha: &alpha, Beta: &beta, BurstNS: int64(10 * time.Minute), Weight: 1, Entitled: &ent, Owed: &owed, Received: &rcv,
				Held: pipeline.Rate{VCores: 0.15, Memory: 0.275}, Share: 0.275, Pending: 2},
			{Name: "alice", Class: "batch", Guarantee: pipeline.GuaranteeElastic, Weight: 1, Held: pipeline.Rate{VCores: 0.5, Memory: 0.25}, Share: 0.5, Deficit: -0.07},
		}}
	srv := apiclienttest.Start(t, apiclienttest.Options{Queues: fixedQueues{rep}})
	s := &cliServer{url: srv.URL, store: srv.Store, learner: srv.Learner, profiles: srv.Profiles}
	out, err := s.runCLI(t, cliReader, "", "queues")
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC).In(time.Local).Format(wallFormat)
	if !strings.HasPrefix(out, "mode curves, groups by queue, as of "+at+"\n") {
		t.Errorf("first line of:\n%s", out)
	}
	want := [][]string{
		{"QUEUE", "CLASS", "LEVEL", "GUARANTEE", "ALPHA", "BETA", "BURST", "ENTITLED", "OWED", "HELD", "RECEIVED", "SHARE %", "DEFICIT", "PENDING"},
		{"interactive", "latency-sensitive", "1", "hard", "40.0/40.0", "10.0/10.0", "10m0s", "40.0/40.0", "25.0/12.5", "15.0/27.5", "10.0/5.0", "27.5", "0.000", "2"},
		{"alice", "batch", "-", "elastic", "-", "-", "-", "-", "-", "50.0/25.0", "-", "50.0", "-0.070", "0"},
	}
	if diff := cmp.Diff(want, tableCells(strings.SplitN(out, "\n", 2)[1])); diff != "" {
		t.Errorf("table (-want +got):\n%s\n%s", diff, out)
	}
	if !strings.Contains(out, "\n\ninteractive: resource and fairness conditions hold at level 1 (1 guaranteed there)\n") {
		t.Errorf("no reason line in:\n%s", out)
	}
	got, err := s.runCLI(t, cliReader, "", "queues", "--json")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(s.get(t, "/v1/queues"), got); diff != "" {
		t.Errorf("queues --json (-server +cli):\n%s", diff)
	}
	off := apiclienttest.Start(t, apiclienttest.Options{})
	if out, err := (&cliServer{url: off.URL}).runCLI(t, cliReader, "", "queues"); err != nil || out != "fairness is off (pipeline.fairness.enabled)\n" {
		t.Errorf("fairness off: %q, %v", out, err)
	}
}
