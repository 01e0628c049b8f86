package api

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
)

// goldenReplica is the leader of a replicated colocd, for GET /v1/ha.
type goldenReplica struct{}

func (goldenReplica) Leading() (bool, string) { return true, "" }
func (goldenReplica) Applied() uint64         { return 42 }
func (goldenReplica) FollowerReady() error    { return nil }
func (goldenReplica) Status() v1.HAStatus {
	return v1.HAStatus{ID: "r1", URL: "http://r1:8080", Role: "leader", Epoch: 3, Applied: 42, LeaderID: "r1",
		LeaderURL: "http://r1:8080", LeaderApplied: 42, Session: "0x100", SessionTimeoutSeconds: 10, TermsWon: 2,
		Root: "/colocd", Members: []v1.HAMember{
			{ID: "r1", URL: "http://r1:8080", Role: "leader", Epoch: 3, Applied: 42, UpdatedAt: t0},
			{ID: "r2", URL: "http://r2:8080", Role: "follower", Epoch: 3, Applied: 41, UpdatedAt: t0.Add(-time.Second)},
		}}
}

// goldenHarness is an API server over fixed data on a fixed clock: job
// ids from a seeded source, every dependency the API reads filled in.
func goldenHarness(t *testing.T) *harness {
	t.Helper()
	view := &fakeView{}
	started := t0.Add(-time.Hour)
	h := newHarness(t, withCluster(view), withProfiles(trainedModel(t), testLimits),
		func(c *harnessCfg) {
			c.entropy = rand.NewChaCha8([32]byte{'c', 'o', 'l', 'o', 'c', 'd'})
			c.Queues = curvesSource(t)
			c.Replica = goldenReplica{}
			c.Clock = func() v1.Clock {
				now := t0.Add(10 * time.Minute)
				return v1.Clock{Simulated: true, Now: now, WallNow: now.Add(-9 * time.Minute), Speed: 10, Started: started,
					WallStarted: started, Runs: []v1.ClockRun{{From: started, WallFrom: started, Speed: 10}}}
			}
			c.Degraded = func() []v1.Degraded {
				return []v1.Degraded{{Dependency: "metrics", Since: t0, Op: "metrics", Error: "influxdb: connection refused"}}
			}
			c.FIFO = func() *v1.FIFOComparison {
				return &v1.FIFOComparison{Jobs: 3, MeanJCTSeconds: 90, FIFOMeanJCTSeconds: 120, JCTGainPercent: 25,
					MakespanSeconds: 300, FIFOMakespanSeconds: 330, MakespanGainPercent: 100.0 / 11}
			}
		})
	view.set(testCluster(3, map[int]int{0: 2, 1: 1}, map[int]int{2: 3}), h.clock.Now())
	learn(h.learner, testKinds[:3])
	for i := range 4 {
		_ = h.journal.AddDecision(decision(i))
		rec := good(i)
		rec.Usage, rec.G = usageG(0.2 + 0.1*float64(i))
		_ = h.journal.AddGoodness(rec)
	}
	return h
}

// TestGolden: the JSON of every endpoint, over fixed data, is the bytes in
// testdata/golden/<case>.golden (indented; the first line is the status).
// A field renamed in the store, the learner or the journal must not show
// here: the API's JSON is package v1's. go test -run TestGolden -update
// (the flag of openapi_test.go) rewrites the files after a change to the API itself (then update
// docs/openapi.json to match).
func TestGolden(t *testing.T) {
	h := goldenHarness(t)
	ids := map[string]string{}
	submit := func(name, token, body string, hdr ...string) {
		j := h.submit(token, body, http.StatusCreated, hdr...)
		ids[name] = j.ID
		h.clock.Advance(time.Second)
	}
	submit("done", submitterTok, jobBody("terasort"))
	h.runJob(ids["done"], 2*time.Minute)
	submit("admitted", submitterTok, jobBody("kmeans", `"queue":"etl"`, `"priority":2`))
	dec, err := json.Marshal(decision(7))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Admit(ids["admitted"], "application_1_0007", dec, nil, nil); err != nil {
		t.Fatal(err)
	}
	submit("parked", submitterTok, jobBody("wordcount"))
	if _, err := h.store.Admit(ids["parked"], "application_1_0008", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := h.store.Park(ids["parked"], "the ResourceManager does not know application_1_0008"); err != nil {
		t.Fatal(err)
	}
	deadline := t0.Add(48 * time.Hour).Format(time.RFC3339)
	submit("pending", submitterTok, jobBody("kmeans", `"deadline":"`+deadline+`"`, `"labels":{"team":"search"}`,
		`"submit":{"application-name":"km"}`), "Idempotency-Key", "golden-1")
	submit("other", submitter2Tok, jobBody("terasort", `"labels":{"team":"ads"}`))
	submit("cancel", submitterTok, jobBody("wordcount"))
	snapshot := h.do(http.MethodGet, "/v1/preferences?format=snapshot", readerTok, "").Body

	for _, c := range []struct {
		name, method, path, token, body string
		header                          []string
	}{
		{name: "jobs-submit", method: "POST", path: "/v1/jobs", token: adminTok,
			body: jobBody("pagerank", `"queue":"adhoc"`, `"priority":-1`)},
		{name: "jobs-submit-again", method: "POST", path: "/v1/jobs", token: submitterTok, header: []string{"Idempotency-Key", "golden-1"},
			body: jobBody("kmeans", `"deadline":"`+deadline+`"`, `"labels":{"team":"search"}`, `"submit":{"application-name":"km"}`)},
		{name: "jobs-list", method: "GET", path: "/v1/jobs?state=all", token: readerTok},
		{name: "jobs-list-page", method: "GET", path: "/v1/jobs?state=all&limit=2", token: adminTok},
		{name: "jobs-list-estimate", method: "GET", path: "/v1/jobs?estimate=1", token: submitterTok},
		{name: "job-pending", method: "GET", path: "/v1/jobs/" + ids["pending"], token: submitterTok},
		{name: "job-pending-redacted", method: "GET", path: "/v1/jobs/" + ids["pending"], token: submitter2Tok},
		{name: "job-admitted", method: "GET", path: "/v1/jobs/" + ids["admitted"], token: adminTok},
		{name: "job-succeeded", method: "GET", path: "/v1/jobs/" + ids["done"], token: readerTok},
		{name: "job-cancel", method: "DELETE", path: "/v1/jobs/" + ids["cancel"], token: submitterTok},
		{name: "job-resolve", method: "POST", path: "/v1/jobs/" + ids["parked"] + "/resolve", token: adminTok,
			body: `{"outcome":"failed","reason":"the application failed in YARN"}`},
		{name: "job-not-found", method: "GET", path: "/v1/jobs/nosuch", token: readerTok},
		{name: "job-bad-request", method: "POST", path: "/v1/jobs", token: submitterTok, body: `{"kind":"kmeans","colour":"red"}`},
		{name: "preferences", method: "GET", path: "/v1/preferences", token: readerTok},
		{name: "preferences-page", method: "GET", path: "/v1/preferences?kinds=kmeans,terasort&limit=1&offset=1", token: readerTok},
		{name: "preferences-snapshot", method: "GET", path: "/v1/preferences?format=snapshot", token: readerTok},
		{name: "preferences-import", method: "PUT", path: "/v1/preferences", token: adminTok, body: string(snapshot)},
		{name: "profiles", method: "GET", path: "/v1/profiles", token: readerTok},
		{name: "decisions", method: "GET", path: "/v1/decisions?limit=2", token: readerTok},
		{name: "queues", method: "GET", path: "/v1/queues", token: readerTok},
		{name: "goodness", method: "GET", path: "/v1/goodness?from=2026-11-23T08:00:00Z&to=2026-11-23T10:00:00Z", token: readerTok},
		{name: "goodness-trend", method: "GET", path: "/v1/goodness/trend?from=2026-11-23T08:59:00Z&to=2026-11-23T09:05:00Z&buckets=3", token: readerTok},
		{name: "clock", method: "GET", path: "/v1/clock", token: readerTok},
		{name: "nodes", method: "GET", path: "/v1/nodes?sort=goodness", token: readerTok},
		{name: "cluster", method: "GET", path: "/v1/cluster", token: readerTok},
		{name: "summary", method: "GET", path: "/v1/summary", token: readerTok},
		{name: "ha", method: "GET", path: "/v1/ha", token: readerTok},
		{name: "whoami", method: "GET", path: "/v1/whoami", token: submitterTok},
		{name: "healthz", method: "GET", path: "/healthz"},
		{name: "readyz", method: "GET", path: "/readyz", token: readerTok},
		{name: "unauthenticated", method: "GET", path: "/v1/jobs"},
		{name: "preferences-reset", method: "DELETE", path: "/v1/preferences", token: adminTok},
	} {
		r := h.do(c.method, c.path, c.token, c.body, c.header...)
		checkGolden(t, c.method+" "+c.path, c.name, goldenBytes(t, c.name, r))
	}
}

// checkGolden compares got with testdata/golden/<name>.golden, or with
// -update writes it there.
func checkGolden(t *testing.T, what, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", "golden", name+".golden")
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Errorf("%s: %v (run go test -run 'TestGolden|TestWireTranslation' -update)", name, err)
		return
	}
	if diff := cmp.Diff(string(want), string(got)); diff != "" {
		t.Errorf("%s: the API's JSON changed (-%s +got); if meant, run go test -run 'TestGolden|TestWireTranslation' -update and update docs/openapi.json:\n%s",
			what, path, diff)
	}
}

// goldenBytes is the status line and the body indented (which keeps the
// keys, their order and every value as sent).
func goldenBytes(t *testing.T, name string, r response) []byte {
	t.Helper()
	if ct := r.Header.Get("Content-Type"); !strings.HasPrefix(ct, "application/json") {
		t.Fatalf("%s: Content-Type %q, want JSON: %s", name, ct, r.Body)
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%d %s\n", r.Code, http.StatusText(r.Code))
	if err := json.Indent(&b, r.Body, "", "  "); err != nil {
		t.Fatalf("%s: the body is not JSON (%v): %s", name, err, r.Body)
	}
	b.WriteByte('\n')
	return b.Bytes()
}

// TestWireTranslation: the translation of the packages' own types (the
// journal's records, the learner's snapshot, a stored job, the fairness
// report) into v1's, over values that fill every field (the handlers'
// goldens leave some empty), is the JSON in
// testdata/golden/translate-<case>.golden. When these files were written
// it was byte for byte the JSON of the packages' own types, which the API
// served as they were before package api/v1; a field renamed in the store
// must not change it.
func TestWireTranslation(t *testing.T) {
	at := t0.Add(time.Minute)
	rate := pipeline.Rate{VCores: 0.25, Memory: 0.5}
	dec := decision(3)
	dec.Forced, dec.Note, dec.Passed, dec.Blocked, dec.Reserved = "max_skips", "a note", []string{"a"}, []string{"b"}, "c"
	dec.Stages = []pipeline.StageRecord{{Name: "fit", In: 3, Out: 2, Dropped: []pipeline.Drop{{JobID: "x", Reason: "too big"}}, Omitted: 1, Note: "n"}}
	dec.Candidates[0].Score = &pipeline.Score{Value: 1, Model: 0.5, Correction: 0.5, Alone: 0.25,
		Beside: []pipeline.ContextKind{{Kind: "k", Weight: 1}}, Known: true, Confounds: true}
	dec.Groups = []pipeline.GroupRecord{{Group: "g", Weight: 1, Share: 0.5, Deficit: 0.1, Pending: 2}}
	dec.Queues = []pipeline.QueueRecord{{Queue: "q", Level: 1, Guarantee: pipeline.GuaranteeHard, Entitled: rate, Held: rate, Owed: rate, Pending: 1}}
	rec := good(2)
	rec.Usage.IOPressure, rec.Usage.CPUPressure, rec.Usage.Pressure = 0.1, 0.2, true
	job := queue.Job{ID: "01J", Seq: 7, Kind: "k", User: "u", Queue: "q", Priority: 1,
		Resources: queue.Resources{Containers: 1, MemoryMB: 2, VCores: 3}, Submit: json.RawMessage(`{"a":1}`), Deadline: &at,
		Labels: map[string]string{"l": "v"}, IdempotencyKey: "key", State: queue.StateRunning, Skips: 1, Blocked: 2, Requeues: 3,
		AppID: "app", AdmitEpoch: 4, Diagnostics: "d", CreatedAt: t0, AdmittedAt: &at, RunningAt: &at, FinishedAt: &at,
		Decision: json.RawMessage(`{"chosen":"01J"}`)}
	rep := pipeline.QueuesReport{Enabled: true, Mode: pipeline.FairnessCurves, GroupBy: pipeline.GroupByQueue, At: at, BurstPeriodNS: 5,
		Queues: []pipeline.QueueStatus{{Name: "q", Members: []string{"m"}, Class: "c", Level: 1, Guarantee: pipeline.GuaranteeSoft,
			Reason: "r", Alpha: &rate, Beta: &rate, BurstNS: 6, Weight: 1, Entitled: &rate, Owed: &rate, Received: &rate,
			Held: rate, Share: 0.5, Deficit: 0.25, Pending: 1}}}
	h := goldenHarness(t)
	snap := h.learner.Snapshot()
	snap.Config.Clip, snap.Config.SelfPrior = 3, 1
	for name, v := range map[string]any{
		"decision":       wireDecision(dec),
		"decision-empty": wireDecision(journal.DecisionRecord{}),
		"goodness":       wireGoodness(rec),
		"job":            wireJob(job),
		"job-empty":      wireJob(queue.Job{}),
		"queues":         wireQueues(rep),
		"queues-empty":   wireQueues(pipeline.QueuesReport{}),
		"snapshot":       wireSnapshot(snap),
		"counts":         wireCounts(map[queue.State]int{queue.StatePending: 1}),
		"capacity":       wireCapacity(pipeline.Capacity{MemoryMB: 1, VCores: 2}),
	} {
		b, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		var got bytes.Buffer
		if err := json.Indent(&got, b, "", "  "); err != nil {
			t.Fatal(err)
		}
		got.WriteByte('\n')
		checkGolden(t, name, "translate-"+name, got.Bytes())
	}
	back, err := snapshotOf(wireSnapshot(snap))
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(snap, back); diff != "" {
		t.Errorf("snapshot round trip (-want +got):\n%s", diff)
	}
}
