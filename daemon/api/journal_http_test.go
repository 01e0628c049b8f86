package api

import (
	"bytes"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func decision(i int) journal.DecisionRecord {
	id := fmt.Sprintf("job-%03d", i)
	return journal.DecisionRecord{
		Decision: pipeline.Decision{
			At: t0.Add(time.Duration(i) * time.Second), Chosen: id, ChosenKind: "kmeans",
			Context:    []pipeline.ContextKind{{Kind: "terasort", Weight: 0.5}},
			Candidates: []pipeline.Candidate{{JobID: id, Kind: "kmeans", Prob: 0.7, Weight: 1}, {JobID: "other", Kind: "wordcount", Prob: 0.3, Weight: 1}},
		},
		Shadow: i%2 == 0, FIFOChoice: "other", AppID: fmt.Sprintf("application_1_%04d", i),
	}
}

func good(i int) journal.GoodnessRecord {
	at := t0.Add(time.Duration(i) * time.Minute)
	return journal.GoodnessRecord{
		At: at, From: at.Add(-time.Minute), To: at, Node: fmt.Sprintf("node-%d", i%3),
		Chosen: "kmeans", Given: "terasort", G: 10 + float64(i),
		Usage: goodness.Usage{CPU: 0.5, IOWait: 0.1, DiskRead: 1e6, DiskWrite: 2e6, NetRecv: 3e6, NetSent: 4e6},
	}
}

func TestDecisionsAndGoodnessEndpoints(t *testing.T) {
	h := newHarness(t)
	for i := range 5 {
		_ = h.journal.AddDecision(decision(i))
		_ = h.journal.AddGoodness(good(i))
	}
	var dl v1.DecisionList
	h.do("GET", "/v1/decisions?limit=2", readerTok, "").decode(t, &dl)
	if diff := cmp.Diff([]v1.DecisionRecord{wireDecision(decision(4)), wireDecision(decision(3))}, dl.Decisions); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// Raw JSON shape: snake_case, the decision's fields inline.
	raw := string(h.do("GET", "/v1/decisions?limit=1", readerTok, "").Body)
	for _, key := range []string{`"chosen":"job-004"`, `"chosen_kind":"kmeans"`, `"shadow":true`, `"fifo_choice":"other"`, `"app_id":"application_1_0004"`, `"candidates":[`} {
		if !bytes.Contains([]byte(raw), []byte(key)) {
			t.Errorf("decision JSON lacks %s: %s", key, raw)
		}
	}

	var gl v1.GoodnessList
	q := "/v1/goodness?from=" + good(1).At.Format(time.RFC3339) + "&to=" + good(4).At.Format(time.RFC3339)
	r := h.do("GET", q, readerTok, "")
	r.decode(t, &gl)
	if diff := cmp.Diff(wireGoodnessList([]journal.GoodnessRecord{good(1), good(2), good(3)}), gl.Records); diff != "" {
		t.Errorf("records (-want +got):\n%s", diff)
	}
	wantPairs := []v1.PairSummary{{Chosen: "kmeans", Given: "terasort", Count: 3, MeanG: 12, MinG: 11, MaxG: 13}}
	if diff := cmp.Diff(wantPairs, gl.Pairs); diff != "" {
		t.Errorf("pairs (-want +got):\n%s", diff)
	}
	wantNodes := []v1.NodeSummary{{Node: "node-0", Count: 1, MeanG: 13}, {Node: "node-1", Count: 1, MeanG: 11}, {Node: "node-2", Count: 1, MeanG: 12}}
	if diff := cmp.Diff(wantNodes, gl.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if !bytes.Contains(r.Body, []byte(`"usage":{"cpu":0.5,"iowait":0.1,"disk_read":1000000`)) {
		t.Errorf("goodness JSON is not snake_case: %s", r.Body)
	}
	for _, tc := range []struct{ q, field string }{
		{"from=yesterday", "from"}, {"to=2026-13-01T00:00:00Z", "to"},
		{"from=2026-11-24T00:00:00Z&to=2026-11-23T00:00:00Z", "from"},
	} {
		r := h.do("GET", "/v1/goodness?"+tc.q, readerTok, "")
		if r.Code != 400 || r.errBody(t).Field != tc.field {
			t.Errorf("%s: %d %s, want 400 field %s", tc.q, r.Code, r.Body, tc.field)
		}
	}
	// Default window: the last 24 h before now (the fake clock is t0).
	h.clock.Advance(time.Hour)
	h.do("GET", "/v1/goodness", readerTok, "").decode(t, &gl)
	if len(gl.Records) != 5 || gl.Total != 5 {
		t.Errorf("default window: %d records of %d, want 5", len(gl.Records), gl.Total)
	}
	// limit keeps the newest records; the summaries still cover them all.
	h.do("GET", "/v1/goodness?limit=2", readerTok, "").decode(t, &gl)
	if diff := cmp.Diff(wireGoodnessList([]journal.GoodnessRecord{good(3), good(4)}), gl.Records); diff != "" || gl.Total != 5 || gl.Pairs[0].Count != 5 {
		t.Errorf("limit=2: total %d, pairs %+v, records (-want +got):\n%s", gl.Total, gl.Pairs, diff)
	}
	for _, q := range []string{"limit=0", "limit=10001", "limit=many"} {
		if r := h.do("GET", "/v1/goodness?"+q, readerTok, ""); r.Code != 400 || r.errBody(t).Field != "limit" {
			t.Errorf("%s: %d %s, want 400 naming limit", q, r.Code, r.Body)
		}
	}
}
