package apiclient_test

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
)

// newClient returns a client of s with token; its connections are closed
// at the end of t.
func newClient(t testing.TB, url, token string, o apiclient.Options) *apiclient.Client {
	t.Helper()
	if o.HTTPClient == nil {
		o.HTTPClient = &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	}
	t.Cleanup(o.HTTPClient.CloseIdleConnections)
	c, err := apiclient.New(url, token, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// clients are one client per role of the test server.
type clients struct {
	reader, submitter, admin *apiclient.Client
}

func start(t testing.TB, o apiclienttest.Options) (*apiclienttest.Server, clients) {
	t.Helper()
	s := apiclienttest.Start(t, o)
	return s, clients{
		reader:    newClient(t, s.URL, apiclienttest.ReaderToken, apiclient.Options{}),
		submitter: newClient(t, s.URL, apiclienttest.SubmitterToken, apiclient.Options{}),
		admin:     newClient(t, s.URL, apiclienttest.AdminToken, apiclient.Options{}),
	}
}

// wantError checks that err is an *apiclient.Error with status and field.
func wantError(t testing.TB, err error, status int, field string) *apiclient.Error {
	t.Helper()
	var e *apiclient.Error
	if !errors.As(err, &e) {
		t.Fatalf("error %v (%T), want an *apiclient.Error", err, err)
	}
	if e.Status != status || e.Field != field {
		t.Fatalf("error %q: status %d field %q, want %d and %q", e, e.Status, e.Field, status, field)
	}
	return e
}

// rawGet returns the body of a GET sent without the client.
func rawGet(t testing.TB, url, path string) []byte {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+apiclienttest.ReaderToken)
	hc := &http.Client{Transport: &http.Transport{}}
	defer hc.CloseIdleConnections()
	res, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil || res.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %d %v: %s", path, res.StatusCode, err, b)
	}
	return b
}

func resources(n int) *v1.ResourcesRequest {
	return &v1.ResourcesRequest{Containers: n, MemoryMB: 512, VCores: 1}
}

func TestSubmitIdempotent(t *testing.T) {
	_, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	deadline := "2099-12-01T10:00:00Z"
	req := v1.JobRequest{Kind: "kmeans", Queue: "default", Resources: resources(3), Deadline: &deadline,
		Labels: map[string]string{"team": "search"}}
	first, err := c.submitter.Submit(ctx, req, "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	if first.Status != http.StatusCreated {
		t.Errorf("status %d, want 201", first.Status)
	}
	j := first.Body
	want := v1.Job{Kind: "kmeans", User: apiclienttest.SubmitterUser, Queue: "default", State: v1.StatePending,
		Resources: v1.Resources{Containers: 3, MemoryMB: 512, VCores: 1}, Labels: map[string]string{"team": "search"},
		IdempotencyKey: "nightly-1"}
	got := v1.Job{Kind: j.Kind, User: j.User, Queue: j.Queue, State: j.State, Resources: j.Resources, Labels: j.Labels,
		IdempotencyKey: j.IdempotencyKey}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("submitted job (-want +got):\n%s", diff)
	}
	if j.Deadline == nil || j.Deadline.Format(time.RFC3339) != deadline {
		t.Errorf("deadline %v, want %s", j.Deadline, deadline)
	}
	var fromRaw v1.Job
	if err := json.Unmarshal(first.Raw, &fromRaw); err != nil || fromRaw.ID != j.ID {
		t.Errorf("Raw %s does not hold job %s: %v", first.Raw, j.ID, err)
	}

	again, err := c.submitter.Submit(ctx, req, "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	if again.Status != http.StatusOK || again.Body.ID != j.ID {
		t.Errorf("repeat: status %d job %s, want 200 and %s", again.Status, again.Body.ID, j.ID)
	}
	// The same key for another job is a conflict naming the header.
	other := req
	other.Resources = resources(4)
	_, err = c.submitter.Submit(ctx, other, "nightly-1")
	wantError(t, err, http.StatusConflict, "Idempotency-Key")

	// Without a key, the same request makes a second job.
	third, err := c.submitter.Submit(ctx, req, "")
	if err != nil || third.Status != http.StatusCreated || third.Body.ID == j.ID {
		t.Errorf("no key: status %d job %s, %v; want 201 and a new job", third.Status, third.Body.ID, err)
	}
}

func TestSubmitJSON(t *testing.T) {
	_, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	r, err := c.submitter.SubmitJSON(ctx, []byte(`{"kind":"terasort","resources":{"containers":2,"memory_mb":1024,"vcores":1},"submit":{"am":"x"}}`), "")
	if err != nil {
		t.Fatal(err)
	}
	if r.Status != http.StatusCreated || r.Body.Kind != "terasort" || string(r.Body.Submit) != `{"am":"x"}` {
		t.Errorf("reply %d %+v", r.Status, r.Body)
	}
	// The server checks the body strictly, and the error names the field.
	for _, tc := range []struct {
		name, body string
		status     int
		field      string
	}{
		{"unknown field", `{"kind":"k","resources":{"containers":1,"memory_mb":1,"vcores":1},"extra":1}`, http.StatusBadRequest, "extra"},
		{"bad value", `{"kind":"k","resources":{"containers":0,"memory_mb":1,"vcores":1}}`, http.StatusBadRequest, "resources.containers"},
		{"not JSON", `{"kind":`, http.StatusBadRequest, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := c.submitter.SubmitJSON(ctx, []byte(tc.body), "")
			wantError(t, err, tc.status, tc.field)
		})
	}
	// The job is the caller's, whatever user the body names.
	forged, err := c.submitter.SubmitJSON(ctx, []byte(`{"kind":"k","user":"ada","resources":{"containers":1,"memory_mb":1,"vcores":1}}`), "")
	if err != nil || forged.Body.User == "ada" {
		t.Errorf("a body naming user ada: %v, user %q; want the submitter's job", err, forged.Body.User)
	}
}

func TestJobsJobCancel(t *testing.T) {
	s, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	var ids []string
	for _, k := range []string{"kmeans", "terasort", "wordcount"} {
		r, err := c.submitter.Submit(ctx, v1.JobRequest{Kind: k, Resources: resources(1)}, "")
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, r.Body.ID)
	}
	list, err := c.reader.Jobs(ctx, apiclient.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var gotIDs []string
	for i, j := range list.Body.Jobs {
		gotIDs = append(gotIDs, j.ID)
		if j.Position == nil || *j.Position != i {
			t.Errorf("job %d position %v, want %d", i, j.Position, i)
		}
	}
	if diff := cmp.Diff(ids, gotIDs); diff != "" {
		t.Errorf("listed (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff([]v1.StateCount{{State: v1.StatePending, N: 3}}, list.Body.StateCounts()); diff != "" {
		t.Errorf("state counts (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(string(rawGet(t, s.URL, "/v1/jobs")), string(list.Raw)); diff != "" {
		t.Errorf("Raw is not the server's bytes (-want +got):\n%s", diff)
	}

	one, err := c.reader.Job(ctx, ids[2])
	if err != nil {
		t.Fatal(err)
	}
	if p, e := one.Body.Position, one.Body.EstimatedWait; p == nil || *p != 2 || e == nil || e.JobsAhead != 2 || e.Concurrency != 1 {
		t.Errorf("job %s: position %v, estimate %+v; want 2 jobs ahead, concurrency 1", ids[2], p, e)
	}
	_, err = c.reader.Job(ctx, "NOSUCH")
	e := wantError(t, err, http.StatusNotFound, "id")
	if got, want := e.Error(), `server: no job "NOSUCH" (field id) (HTTP 404)`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}

	cancelled, err := c.submitter.Cancel(ctx, ids[0])
	if err != nil || cancelled.Body.State != v1.StateCancelled {
		t.Errorf("cancel pending: %+v, %v", cancelled.Body.State, err)
	}
	dec := `{"candidates":[{"kind":"terasort","prob":0.75}],"context":[{"kind":"kmeans","weight":1}],"forced":"deadline"}`
	if _, err := s.Store.Admit(ids[1], "application_1_0001", json.RawMessage(dec), nil, nil); err != nil {
		t.Fatal(err)
	}
	admitted, err := c.reader.Job(ctx, ids[1])
	if err != nil {
		t.Fatal(err)
	}
	rec, err := admitted.Body.DecisionRecord()
	if err != nil || rec == nil {
		t.Fatalf("DecisionRecord: %v, %v", rec, err)
	}
	want := &v1.DecisionRecord{Forced: "deadline", Candidates: []v1.Candidate{{Kind: "terasort", Prob: 0.75}},
		Context: []v1.ContextKind{{Kind: "kmeans", Weight: 1}}}
	if diff := cmp.Diff(want, rec); diff != "" {
		t.Errorf("decision (-want +got):\n%s", diff)
	}
	if rec, err := one.Body.DecisionRecord(); rec != nil || err != nil {
		t.Errorf("pending job's decision: %v, %v; want none", rec, err)
	}
	_, err = c.reader.Cancel(ctx, ids[1])
	wantError(t, err, http.StatusForbidden, "")
	killed, err := c.submitter.Cancel(ctx, ids[1])
	if err != nil || killed.Body.State != v1.StateKilled {
		t.Errorf("cancel admitted: %v, %v; want killed", killed.Body.State, err)
	}
	_, err = c.submitter.Cancel(ctx, ids[1])
	wantError(t, err, http.StatusConflict, "")

	ended, err := c.reader.Jobs(ctx, apiclient.ListOptions{States: []string{"cancelled", "killed"}})
	if err != nil || ended.Body.Count != 2 {
		t.Errorf("cancelled,killed: %d jobs, %v; want 2", ended.Body.Count, err)
	}
	some, err := c.reader.Jobs(ctx, apiclient.ListOptions{States: []string{"all"}, Limit: new(1)})
	if err != nil || len(some.Body.Jobs) != 1 || some.Body.Jobs[0].ID != ids[2] {
		t.Errorf("all, limit 1: %+v, %v; want the pending %s", some.Body.Jobs, err, ids[2])
	}
	_, err = c.reader.Jobs(ctx, apiclient.ListOptions{Limit: new(0)})
	wantError(t, err, http.StatusBadRequest, "limit")
	_, err = c.reader.Jobs(ctx, apiclient.ListOptions{States: []string{"sleeping"}})
	wantError(t, err, http.StatusBadRequest, "state")
}

func TestResolve(t *testing.T) {
	s, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	r, err := c.submitter.Submit(ctx, v1.JobRequest{Kind: "kmeans", Resources: resources(1)}, "")
	if err != nil {
		t.Fatal(err)
	}
	id := r.Body.ID
	if _, err := s.Store.Admit(id, "application_1_0001", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Store.Park(id, "the RM restarted without recovery"); err != nil {
		t.Fatal(err)
	}
	requeue := v1.ResolveRequest{Outcome: v1.OutcomeRequeue, Reason: "no output: it never started"}
	_, err = c.submitter.Resolve(ctx, id, requeue)
	wantError(t, err, http.StatusForbidden, "")
	_, err = c.admin.Resolve(ctx, id, v1.ResolveRequest{Outcome: "bogus", Reason: "x"})
	wantError(t, err, http.StatusBadRequest, "outcome")
	_, err = c.admin.Resolve(ctx, id, v1.ResolveRequest{Outcome: v1.OutcomeFailed})
	wantError(t, err, http.StatusBadRequest, "reason")
	got, err := c.admin.Resolve(ctx, id, requeue)
	if err != nil {
		t.Fatal(err)
	}
	if got.Body.State != v1.StatePending || !strings.Contains(got.Body.Diagnostics, "resolved by "+apiclienttest.AdminUser) {
		t.Errorf("resolved: state %s, diagnostics %q", got.Body.State, got.Body.Diagnostics)
	}
	_, err = c.admin.Resolve(ctx, id, v1.ResolveRequest{Outcome: v1.OutcomeSucceeded, Reason: "again"})
	wantError(t, err, http.StatusConflict, "")
	_, err = c.admin.Resolve(ctx, "NOSUCH", requeue)
	wantError(t, err, http.StatusNotFound, "id")
}

func TestPreferences(t *testing.T) {
	s, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	empty, err := c.reader.Preferences(ctx)
	if err != nil || len(empty.Body.Kinds) != 0 || empty.Body.Kinds == nil {
		t.Errorf("no kinds yet: %+v, %v; want an empty, non-null list", empty.Body.Kinds, err)
	}
	for range 10 {
		s.Learner.Update("terasort", "kmeans", 40)
		s.Learner.Update("kmeans", "terasort", 5)
	}
	p, err := c.reader.Preferences(ctx)
	if err != nil {
		t.Fatal(err)
	}
	snap := s.Learner.Snapshot()
	if diff := cmp.Diff(snap.Kinds, p.Body.Kinds); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(snap.Pi(), p.Body.Pi); diff != "" {
		t.Errorf("π (-want +got):\n%s", diff)
	}
	if p.Body.Observations != 20 || p.Body.Config != (v1.LearnerConfig{StepSize: 0.05, Baseline: v1.BaselineGlobal, RecencyAlpha: 0.1}) {
		t.Errorf("observations %d, config %+v", p.Body.Observations, p.Body.Config)
	}

	for _, m := range []v1.Matrix{v1.MatrixPi, v1.MatrixH, ""} {
		b, err := c.reader.PreferencesCSV(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
		if err != nil || len(recs) != 3 {
			t.Fatalf("csv %q: %v, %d records:\n%s", m, err, len(recs), b)
		}
		if diff := cmp.Diff(append([]string{`running kind \ queued kind`}, snap.Kinds...), recs[0]); diff != "" {
			t.Errorf("csv %q header (-want +got):\n%s", m, diff)
		}
	}
	_, err = c.reader.PreferencesCSV(ctx, "x")
	wantError(t, err, http.StatusBadRequest, "matrix")

	page, err := c.reader.PreferencesPage(ctx, apiclient.Page{Kinds: []string{"terasort"}, Limit: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	if b := page.Body; b.Total != 1 || len(b.Rows) != 1 || b.Rows[0] != "terasort" || len(b.Kinds) != 1 || b.KindsKnown != 2 ||
		b.Pi[0][0] != s.Learner.Prob("terasort", "terasort") {
		t.Errorf("the page of terasort: %+v", b)
	}
	_, err = c.reader.PreferencesPage(ctx, apiclient.Page{Kinds: []string{"nosuch"}})
	wantError(t, err, http.StatusBadRequest, "kinds")

	saved, err := c.reader.PreferencesSnapshot(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// The wire snapshot is the learner's, byte for byte.
	wantJSON, _ := json.Marshal(snap)
	gotJSON, _ := json.Marshal(saved.Body)
	if diff := cmp.Diff(string(wantJSON), string(gotJSON)); diff != "" {
		t.Errorf("snapshot (-want +got):\n%s", diff)
	}
	_, err = c.submitter.ResetPreferences(ctx)
	wantError(t, err, http.StatusForbidden, "")
	reset, err := c.admin.ResetPreferences(ctx)
	if err != nil || len(reset.Body.Kinds) != 0 || len(s.Learner.Kinds()) != 0 {
		t.Errorf("reset: %v kinds in the reply, %v in the learner, %v", reset.Body.Kinds, s.Learner.Kinds(), err)
	}
	_, err = c.reader.ImportPreferences(ctx, saved.Body)
	wantError(t, err, http.StatusForbidden, "")
	bad := saved.Body
	bad.Version = 99
	_, err = c.admin.ImportPreferences(ctx, bad)
	wantError(t, err, http.StatusBadRequest, "version")
	imported, err := c.admin.ImportPreferences(ctx, saved.Body)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(p.Body, imported.Body); diff != "" {
		t.Errorf("after the import (-before +after):\n%s", diff)
	}
	if diff := cmp.Diff(snap, s.Learner.Snapshot()); diff != "" {
		t.Errorf("learner after the import (-want +got):\n%s", diff)
	}
}

// train feeds the model ten ticks of a CPU-bound and a disk-bound kind on
// their own nodes and an idle node.
func train(m *profile.Model) {
	base := profile.Vector{0.02, 0.001, 0.005, 0.005, 0.002, 0.002}
	obs := func(node, kind string, d profile.Vector) profile.Observation {
		u := base
		for r := range profile.NumResources {
			u[r] += 2 * d[r]
		}
		return profile.Observation{Node: node, Usage: u, Containers: []profile.KindCount{{Kind: kind, Containers: 2}}}
	}
	for range 10 {
		m.Observe([]profile.Observation{
			obs("n1", "cpubound", profile.Vector{0.15, 0, 0.01, 0.01, 0.005, 0.005}),
			obs("n2", "diskbound", profile.Vector{0.03, 0.004, 0.12, 0.08, 0.01, 0.01}),
			{Node: "n3", Usage: base},
		})
	}
}

func TestProfiles(t *testing.T) {
	s, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	train(s.Profiles)
	all, err := c.reader.Profiles(ctx)
	if err != nil {
		t.Fatal(err)
	}
	type row struct {
		Kind, Dominant string
		Known          bool
	}
	var got []row
	for _, k := range all.Body.Kinds {
		got = append(got, row{k.Kind, k.Dominant, k.Known})
	}
	if diff := cmp.Diff([]row{{"cpubound", "cpu", true}, {"diskbound", "disk", true}}, got); diff != "" {
		t.Errorf("kinds (-want +got):\n%s", diff)
	}
	if all.Body.Observations != 30 || all.Body.Limits.DiskReadBps != s.Limits.DiskRead {
		t.Errorf("observations %d, limits %+v", all.Body.Observations, all.Body.Limits)
	}
	if d := all.Body.Kinds[1].Demand.DiskReadBps; d == nil || *d <= 0 {
		t.Errorf("diskbound's disk reads %v, want a positive rate", d)
	}
	if diff := cmp.Diff(string(rawGet(t, s.URL, "/v1/profiles?kind=nosuch%2Ccpubound")), string(mustRaw(c.reader.Profiles(ctx, "nosuch", "cpubound")))); diff != "" {
		t.Errorf("Raw is not the server's bytes (-want +got):\n%s", diff)
	}
	some, err := c.reader.Profiles(ctx, "nosuch", "cpubound")
	if err != nil || len(some.Body.Kinds) != 2 || some.Body.Kinds[1].Kind != "nosuch" || some.Body.Kinds[1].Known {
		t.Errorf("filtered: %+v, %v; want cpubound, then nosuch unknown", some.Body.Kinds, err)
	}
	b, err := c.reader.ProfilesCSV(ctx, "diskbound")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(string(b))).ReadAll()
	if err != nil || len(recs) != 2 || recs[0][0] != "kind" || recs[1][0] != "diskbound" || recs[1][4] != "disk" {
		t.Errorf("csv: %v\n%s", err, b)
	}

	_, none := start(t, apiclienttest.Options{NoProfiles: true})
	_, err = none.reader.Profiles(ctx)
	wantError(t, err, http.StatusNotFound, "")
	_, err = none.reader.ProfilesCSV(ctx)
	wantError(t, err, http.StatusNotFound, "")
}

func mustRaw[T any](r apiclient.Reply[T], err error) []byte {
	if err != nil {
		return []byte(err.Error())
	}
	return r.Raw
}

func TestDecisionsGoodness(t *testing.T) {
	s, c := start(t, apiclienttest.Options{})
	ctx := t.Context()
	at := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for i, kind := range []string{"kmeans", "terasort", "wordcount"} {
		rec := journal.DecisionRecord{Decision: pipeline.Decision{At: at.Add(time.Duration(i) * time.Minute), Chosen: "job" + kind, ChosenKind: kind}}
		if err := s.Journal.AddDecision(rec); err != nil {
			t.Fatal(err)
		}
		g := journal.GoodnessRecord{At: rec.At, From: rec.At.Add(-time.Minute), To: rec.At, Node: "n1", Chosen: kind, Given: "kmeans", G: float64(10 * (i + 1))}
		if err := s.Journal.AddGoodness(g); err != nil {
			t.Fatal(err)
		}
	}
	d, err := c.reader.Decisions(ctx, new(2))
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, r := range d.Body.Decisions {
		kinds = append(kinds, r.ChosenKind)
	}
	if diff := cmp.Diff([]string{"wordcount", "terasort"}, kinds); diff != "" {
		t.Errorf("newest two decisions (-want +got):\n%s", diff)
	}
	if all, err := c.reader.Decisions(ctx, nil); err != nil || len(all.Body.Decisions) != 3 {
		t.Errorf("default limit: %d decisions, %v", len(all.Body.Decisions), err)
	}
	_, err = c.reader.Decisions(ctx, new(0))
	wantError(t, err, http.StatusBadRequest, "limit")

	g, err := c.reader.Goodness(ctx, apiclient.GoodnessOptions{From: at, To: at.Add(time.Hour), Limit: new(1)})
	if err != nil {
		t.Fatal(err)
	}
	if g.Body.Total != 3 || len(g.Body.Records) != 1 || g.Body.Records[0].Chosen != "wordcount" {
		t.Errorf("goodness: total %d, records %+v; want 3 and the newest", g.Body.Total, g.Body.Records)
	}
	if diff := cmp.Diff([]v1.NodeSummary{{Node: "n1", Count: 3, MeanG: 20}}, g.Body.Nodes); diff != "" {
		t.Errorf("nodes (-want +got):\n%s", diff)
	}
	if len(g.Body.Pairs) != 3 {
		t.Errorf("%d pairs, want 3", len(g.Body.Pairs))
	}
	_, err = c.reader.Goodness(ctx, apiclient.GoodnessOptions{From: at, To: at})
	wantError(t, err, http.StatusBadRequest, "from")
}

func TestLimits(t *testing.T) {
	s, c := start(t, apiclienttest.Options{MaxBodyBytes: 512})
	ctx := t.Context()
	t.Run("body too large", func(t *testing.T) {
		_, err := c.submitter.Submit(ctx, v1.JobRequest{Kind: "kmeans", Labels: map[string]string{"x": strings.Repeat("y", 600)}}, "")
		wantError(t, err, http.StatusRequestEntityTooLarge, "")
	})
	t.Run("reply over the cap", func(t *testing.T) {
		for range 3 {
			if _, err := c.submitter.Submit(ctx, v1.JobRequest{Kind: "kmeans", Resources: resources(1)}, ""); err != nil {
				t.Fatal(err)
			}
		}
		full, err := c.reader.Jobs(ctx, apiclient.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		n := int64(len(full.Raw))
		exact := newClient(t, s.URL, apiclienttest.ReaderToken, apiclient.Options{MaxReplyBytes: n})
		if _, err := exact.Jobs(ctx, apiclient.ListOptions{}); err != nil {
			t.Errorf("a reply of exactly the cap: %v", err)
		}
		small := newClient(t, s.URL, apiclienttest.ReaderToken, apiclient.Options{MaxReplyBytes: n - 1})
		_, err = small.Jobs(ctx, apiclient.ListOptions{})
		if !errors.Is(err, apiclient.ErrReplyTooLarge) {
			t.Errorf("a reply one byte over the cap: %v, want ErrReplyTooLarge", err)
		}
	})
	t.Run("wrong token", func(t *testing.T) {
		for _, tok := range []string{"wrong", ""} {
			_, err := newClient(t, s.URL, tok, apiclient.Options{}).Jobs(ctx, apiclient.ListOptions{})
			wantError(t, err, http.StatusUnauthorized, "")
		}
	})
	t.Run("reader submits", func(t *testing.T) {
		_, err := c.reader.Submit(ctx, v1.JobRequest{Kind: "kmeans"}, "")
		e := wantError(t, err, http.StatusForbidden, "")
		if !strings.Contains(e.Error(), "role reader may not POST /v1/jobs") || e.Code != v1.CodeForbidden || e.Rule != "tokens" {
			t.Errorf("Error() = %q", e)
		}
	})
	t.Run("cancelled context", func(t *testing.T) {
		cctx, cancel := context.WithCancel(ctx)
		cancel()
		if _, err := c.reader.Jobs(cctx, apiclient.ListOptions{}); !errors.Is(err, context.Canceled) {
			t.Errorf("got %v, want context.Canceled", err)
		}
	})
}

// recorder is a fake server for what a real one cannot show: the request
// as sent, and replies no colocd server makes.
type recorder struct {
	srv  *httptest.Server
	last *http.Request
	body string
	// reply writes the response; nil: 200 with a job.
	reply func(http.ResponseWriter)
}

func newRecorder(t testing.TB) *recorder {
	t.Helper()
	r := &recorder{}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r.srv = &httptest.Server{Listener: l, Config: &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		b, _ := io.ReadAll(req.Body)
		r.last, r.body = req, string(b)
		if r.reply != nil {
			r.reply(w)
			return
		}
		_, _ = io.WriteString(w, `{"id":"J1","state":"pending"}`)
	})}}
	r.srv.Start()
	t.Cleanup(r.srv.Close)
	return r
}

func TestRequests(t *testing.T) {
	rec := newRecorder(t)
	ctx := t.Context()
	c := newClient(t, rec.srv.URL+"/colocd/", "tok", apiclient.Options{})
	deadline := "2099-01-01T00:00:00Z"
	if _, err := c.Submit(ctx, v1.JobRequest{Kind: "k", Resources: resources(2), Deadline: &deadline}, "key-1"); err != nil {
		t.Fatal(err)
	}
	h := rec.last.Header
	got := []string{rec.last.Method, rec.last.URL.String(), h.Get("Authorization"), h.Get("Content-Type"), h.Get("Accept"), h.Get("Idempotency-Key"), rec.body}
	want := []string{"POST", "/colocd/v1/jobs", "Bearer tok", "application/json", "application/json", "key-1",
		`{"kind":"k","resources":{"containers":2,"memory_mb":512,"vcores":1},"deadline":"2099-01-01T00:00:00Z"}`}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("submit request (-want +got):\n%s", diff)
	}
	for _, tc := range []struct {
		name string
		call func() error
		want string // method and URL
	}{
		{"job", func() error { _, err := c.Job(ctx, "a/b c"); return err }, "GET /colocd/v1/jobs/a%2Fb%20c"},
		{"cancel", func() error { _, err := c.Cancel(ctx, "J1"); return err }, "DELETE /colocd/v1/jobs/J1"},
		{"resolve", func() error { _, err := c.Resolve(ctx, "J1", v1.ResolveRequest{}); return err }, "POST /colocd/v1/jobs/J1/resolve"},
		{"list", func() error {
			_, err := c.Jobs(ctx, apiclient.ListOptions{States: []string{"pending", "parked"}, Limit: new(5)})
			return err
		}, "GET /colocd/v1/jobs?limit=5&state=pending%2Cparked"},
		{"profiles csv", func() error { _, err := c.ProfilesCSV(ctx, "a", "b"); return err }, "GET /colocd/v1/profiles?format=csv&kind=a%2Cb"},
		{"prefs csv", func() error { _, err := c.PreferencesCSV(ctx, v1.MatrixH); return err }, "GET /colocd/v1/preferences?format=csv&matrix=h"},
		{"prefs page", func() error {
			_, err := c.PreferencesPage(ctx, apiclient.Page{Kinds: []string{"a", "b"}, Limit: new(0), Offset: 20})
			return err
		}, "GET /colocd/v1/preferences?kinds=a%2Cb&limit=0&offset=20"},
		{"prefs csv page", func() error {
			_, err := c.PreferencesCSVPage(ctx, v1.MatrixPi, apiclient.Page{Limit: new(3)})
			return err
		}, "GET /colocd/v1/preferences?format=csv&limit=3&matrix=pi"},
		{"profiles page", func() error {
			_, err := c.ProfilesPage(ctx, apiclient.Page{Kinds: []string{"x"}, Offset: 2})
			return err
		}, "GET /colocd/v1/profiles?kinds=x&offset=2"},
		{"profiles csv page", func() error { _, err := c.ProfilesCSVPage(ctx, apiclient.Page{Limit: new(1)}); return err },
			"GET /colocd/v1/profiles?format=csv&limit=1"},
		{"goodness", func() error {
			_, err := c.Goodness(ctx, apiclient.GoodnessOptions{To: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("", 3600))})
			return err
		}, "GET /colocd/v1/goodness?to=2026-01-02T03%3A04%3A05%2B01%3A00"},
		{"nodes", func() error {
			_, err := c.Nodes(ctx, apiclient.NodeOptions{Sort: "goodness", Limit: new(10), Offset: 20})
			return err
		}, "GET /colocd/v1/nodes?limit=10&offset=20&sort=goodness"},
		{"cluster", func() error {
			_, err := c.Cluster(ctx, apiclient.ClusterOptions{Jobs: []string{"J1", "J2"}})
			return err
		},
			"GET /colocd/v1/cluster?jobs=J1%2CJ2"},
		{"trend", func() error {
			_, err := c.GoodnessTrend(ctx, apiclient.TrendOptions{From: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), Buckets: 12})
			return err
		}, "GET /colocd/v1/goodness/trend?buckets=12&from=2026-01-02T03%3A04%3A05Z"},
		{"summary", func() error { _, err := c.Summary(ctx); return err }, "GET /colocd/v1/summary"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_ = tc.call() // some replies do not decode; the request is what counts
			if got := rec.last.Method + " " + rec.last.URL.String(); got != tc.want {
				t.Errorf("sent %s, want %s", got, tc.want)
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		if _, err := newClient(t, rec.srv.URL, "", apiclient.Options{}).Job(ctx, "J1"); err != nil {
			t.Fatal(err)
		}
		if _, ok := rec.last.Header["Authorization"]; ok {
			t.Errorf("an empty token sent Authorization: %q", rec.last.Header.Get("Authorization"))
		}
	})
}

func TestErrorReplies(t *testing.T) {
	rec := newRecorder(t)
	c := newClient(t, rec.srv.URL, "tok", apiclient.Options{Retries: -1})
	for _, tc := range []struct {
		name  string
		reply func(http.ResponseWriter)
		want  apiclient.Error
		text  string
	}{
		{"json with a field", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadRequest)
			_, _ = io.WriteString(w, `{"error":"invalid kind: must be lower case","code":"bad_request","field":"kind"}`)
		}, apiclient.Error{Status: 400, Message: "invalid kind: must be lower case", Code: "bad_request", Field: "kind"},
			"server: invalid kind: must be lower case (HTTP 400)"},
		{"a refusal with its rule", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusForbidden)
			_, _ = io.WriteString(w, `{"error":"no","code":"forbidden","rule":"api.acl.admin"}`)
		}, apiclient.Error{Status: 403, Message: "no", Code: "forbidden", Rule: "api.acl.admin"},
			"server: no (rule api.acl.admin) (HTTP 403)"},
		{"field not in the message", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusConflict)
			_, _ = io.WriteString(w, `{"error":"used for another job","field":"Idempotency-Key"}`)
		}, apiclient.Error{Status: 409, Message: "used for another job", Field: "Idempotency-Key"},
			"server: used for another job (field Idempotency-Key) (HTTP 409)"},
		{"retry after", func(w http.ResponseWriter) {
			w.Header().Set("Retry-After", "30")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"store cannot write"}`)
		}, apiclient.Error{Status: 503, Message: "store cannot write", RetryAfter: 30 * time.Second},
			"server: store cannot write (HTTP 503)"},
		{"plain text", func(w http.ResponseWriter) {
			w.WriteHeader(http.StatusBadGateway)
			_, _ = io.WriteString(w, "upstream down\n")
		}, apiclient.Error{Status: 502, Message: "upstream down"}, "server: upstream down (HTTP 502)"},
		{"empty", func(w http.ResponseWriter) { w.WriteHeader(http.StatusTeapot) },
			apiclient.Error{Status: 418, Message: "I'm a teapot"}, "server: I'm a teapot (HTTP 418)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec.reply = tc.reply
			_, err := c.Job(t.Context(), "J1")
			var e *apiclient.Error
			if !errors.As(err, &e) {
				t.Fatalf("got %v, want an *apiclient.Error", err)
			}
			if diff := cmp.Diff(tc.want, *e); diff != "" {
				t.Errorf("error (-want +got):\n%s", diff)
			}
			if err.Error() != tc.text {
				t.Errorf("Error() = %q, want %q", err, tc.text)
			}
		})
	}
	t.Run("undecodable 2xx", func(t *testing.T) {
		rec.reply = func(w http.ResponseWriter) { _, _ = io.WriteString(w, `{"jobs":"not a list"}`) }
		r, err := c.Jobs(t.Context(), apiclient.ListOptions{})
		if !errors.Is(err, apiclient.ErrDecode) || string(r.Raw) != `{"jobs":"not a list"}` || r.Status != 200 {
			t.Errorf("got %v, status %d, raw %q; want ErrDecode with the reply", err, r.Status, r.Raw)
		}
	})
}

func TestNew(t *testing.T) {
	for _, bad := range []string{"", "127.0.0.1:8080", "ftp://host", "http://", "http://[::1"} {
		if _, err := apiclient.New(bad, "t", apiclient.Options{}); !errors.Is(err, apiclient.ErrBaseURL) {
			t.Errorf("New(%q): %v, want ErrBaseURL", bad, err)
		}
	}
	if _, err := apiclient.New("http://h", "t", apiclient.Options{MaxReplyBytes: -1}); err == nil {
		t.Error("a negative MaxReplyBytes accepted")
	}
	for _, good := range []string{"http://127.0.0.1:8080", "https://colocd.example/", "http://h/prefix"} {
		if _, err := apiclient.New(good, "", apiclient.Options{}); err != nil {
			t.Errorf("New(%q): %v", good, err)
		}
	}
}

// TestRetryAfter: a request safe to repeat (a read, a keyed submission)
// is sent again after a 503 with Retry-After, waiting what it says, up to
// Options.Retries times; a submission without a key is not.
func TestRetryAfter(t *testing.T) {
	rec := newRecorder(t)
	var waited []time.Duration
	busy := 2
	rec.reply = func(w http.ResponseWriter) {
		if busy > 0 {
			busy--
			w.Header().Set("Retry-After", "7")
			w.WriteHeader(http.StatusServiceUnavailable)
			_, _ = io.WriteString(w, `{"error":"leadership is moving","code":"unavailable"}`)
			return
		}
		w.WriteHeader(http.StatusCreated)
		_, _ = io.WriteString(w, `{"id":"J1","kind":"k"}`)
	}
	c := newClient(t, rec.srv.URL, "tok", apiclient.Options{Wait: func(_ context.Context, d time.Duration) error {
		waited = append(waited, d)
		return nil
	}})
	r, err := c.Submit(t.Context(), v1.JobRequest{Kind: "k"}, "key-1")
	if err != nil || r.Status != http.StatusCreated {
		t.Fatalf("keyed submit through two 503s: %v, %d", err, r.Status)
	}
	if diff := cmp.Diff([]time.Duration{7 * time.Second, 7 * time.Second}, waited); diff != "" {
		t.Errorf("waits (-want +got):\n%s", diff)
	}
	busy, waited = 1, nil
	_, err = c.Submit(t.Context(), v1.JobRequest{Kind: "k"}, "")
	var e *apiclient.Error
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || len(waited) != 0 {
		t.Errorf("unkeyed submit: %v after %d waits; want the 503, no retry", err, len(waited))
	}
	busy, waited = 5, nil
	_, err = c.Job(t.Context(), "J1")
	if !errors.As(err, &e) || e.Status != http.StatusServiceUnavailable || len(waited) != apiclient.DefaultRetries {
		t.Errorf("a read through 5 503s: %v after %d waits; want the 503 after %d", err, len(waited), apiclient.DefaultRetries)
	}
}
