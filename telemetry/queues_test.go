package telemetry

import (
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

	"github.com/colocd/colocd/pipeline"
)

type fixedQueues struct{ rep pipeline.QueuesReport }

func (f fixedQueues) Queues() pipeline.QueuesReport { return f.rep }

func TestWatchQueues(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := New(reg, nil)
	owed := pipeline.Rate{VCores: 0.25, Memory: 0.5}
	m.WatchQueues(fixedQueues{pipeline.QueuesReport{Enabled: true, Queues: []pipeline.QueueStatus{
		{Name: "interactive", Class: "latency-sensitive", Level: 1, Guarantee: pipeline.GuaranteeHard, Owed: &owed, Entitled: &owed, Received: &owed, Pending: 3},
		{Name: "alice", Class: "batch", Guarantee: pipeline.GuaranteeElastic, Held: pipeline.Rate{VCores: 0.1}, Deficit: 0.04},
	}}})
	want := `
# HELP colocd_queue_owed What a guaranteed queue lacks of its entitlement now, as a share of the cluster.
# TYPE colocd_queue_owed gauge
colocd_queue_owed{queue="interactive",resource="memory"} 0.5
colocd_queue_owed{queue="interactive",resource="vcores"} 0.25
# HELP colocd_queue_deficit A group's DRF deficit (elastic groups; positive: owed).
# TYPE colocd_queue_deficit gauge
colocd_queue_deficit{queue="alice"} 0.04
colocd_queue_deficit{queue="interactive"} 0
# HELP colocd_queue_info A fairness queue: its class, admission control's guarantee (hard, soft, elastic) and its priority level (0: none).
# TYPE colocd_queue_info gauge
colocd_queue_info{class="batch",guarantee="elastic",level="0",queue="alice"} 1
colocd_queue_info{class="latency-sensitive",guarantee="hard",level="1",queue="interactive"} 1
`
	if err := testutil.GatherAndCompare(reg, strings.NewReader(want), "colocd_queue_owed", "colocd_queue_deficit", "colocd_queue_info"); err != nil {
		t.Error(err)
	}
	problems, err := testutil.GatherAndLint(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		if strings.HasPrefix(p.Metric, "colocd_queue") {
			t.Errorf("lint %s: %s", p.Metric, p.Text)
		}
	}
}
