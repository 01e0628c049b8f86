package api

import (
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// curvesSource is a real pipeline in fairness mode curves after one
// decision: an owed latency-sensitive queue, a batch queue, an elastic
// group.
func curvesSource(t *testing.T) *pipeline.Pipeline {
	t.Helper()
	c := pipeline.Config{MaxRecorded: 32, Fairness: pipeline.DefaultConfig().Fairness}
	c.Fairness.Enabled, c.Fairness.Mode, c.Fairness.GroupBy = true, pipeline.FairnessCurves, pipeline.GroupByQueue
	c.Fairness.Queues = []pipeline.ServiceQueue{
		{Name: "interactive", Level: 1, Alpha: pipeline.Rate{VCores: 0.4, Memory: 0.4}, Beta: pipeline.Rate{VCores: 0.1, Memory: 0.1}, Burst: 10 * time.Minute},
		{Name: "etl", Level: 2, Alpha: pipeline.Rate{VCores: 0.2, Memory: 0.2}},
	}
	p, err := pipeline.New(c, nil)
	if err != nil {
		t.Fatal(err)
	}
	capa := pipeline.Capacity{MemoryMB: 10240, VCores: 10}
	job := func(id, q string) queue.Job {
		return queue.Job{ID: id, Seq: uint64(len(id)), Kind: "k", User: "u", Queue: q, State: queue.StatePending,
			Resources: queue.Resources{Containers: 1, MemoryMB: 1024, VCores: 1}}
	}
	p.Decide(pipeline.Snapshot{
		Now: time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC), Capacity: capa, Free: pipeline.Capacity{MemoryMB: 8192, VCores: 8},
		Running: []pipeline.Running{{JobID: "r", Kind: "k", User: "u", Queue: "adhoc", Alloc: pipeline.Capacity{MemoryMB: 2048, VCores: 2}}},
		Pending: []queue.Job{job("a", "adhoc"), job("bb", "interactive")},
	}, nil)
	return p
}

func TestQueues(t *testing.T) {
	p := curvesSource(t)
	h := newHarness(t, func(c *harnessCfg) { c.Queues = p })
	r := h.do(http.MethodGet, "/v1/queues", readerTok, "")
	if r.Code != http.StatusOK {
		t.Fatalf("GET /v1/queues: %d %s", r.Code, r.Body)
	}
	var got pipeline.QueuesReport
	r.decode(t, &got)
	if diff := cmp.Diff(p.Queues(), got); diff != "" {
		t.Errorf("GET /v1/queues (-pipeline +served):\n%s", diff)
	}
	names := []string{}
	for _, q := range got.Queues {
		names = append(names, q.Name+":"+string(q.Guarantee))
	}
	if want := []string{"interactive:hard", "etl:soft", "adhoc:elastic"}; !cmp.Equal(want, names) {
		t.Errorf("queues %v, want %v", names, want)
	}
	if o := got.Queues[0].Owed; o == nil || !(o.VCores > 0) {
		t.Errorf("interactive owed %+v, want positive: it has a pending job and holds nothing", o)
	}
	if a := got.Queues[2]; a.Held.VCores != 0.2 || a.Pending != 1 {
		t.Errorf("adhoc %+v: want held 0.2 vcores and 1 pending", a)
	}
	if r := h.do(http.MethodGet, "/v1/queues", "", ""); r.Code != http.StatusUnauthorized {
		t.Errorf("GET /v1/queues without a token: %d", r.Code)
	}
	off := newHarness(t)
	r = off.do(http.MethodGet, "/v1/queues", readerTok, "")
	var none pipeline.QueuesReport
	r.decode(t, &none)
	if r.Code != http.StatusOK || none.Enabled || none.Queues == nil || len(none.Queues) != 0 {
		t.Errorf("GET /v1/queues with no source: %d %s", r.Code, r.Body)
	}
}
