package api

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/queue"
)

func TestLimits(t *testing.T) {
	h := newHarness(t, withMaxBody(1024))
	big := jobBody("wordcount", `"labels":{"pad":"`+strings.Repeat("x", 2000)+`"}`)
	for _, tc := range []struct {
		name, method, path, body string
		headers                  []string
		want                     int
	}{
		{"over max body", "POST", "/v1/jobs", big, nil, 413},
		{"over max body, chunked", "POST", "/v1/jobs", big, []string{"Transfer-Encoding", "chunked"}, 413},
		{"text/plain", "POST", "/v1/jobs", jobBody("wordcount"), []string{"Content-Type", "text/plain"}, 415},
		{"form", "POST", "/v1/jobs", jobBody("wordcount"), []string{"Content-Type", "application/x-www-form-urlencoded"}, 415},
		{"json with charset", "POST", "/v1/jobs", jobBody("wordcount"), []string{"Content-Type", "application/json; charset=utf-8"}, 201},
		{"PUT prefs text/plain", "PUT", "/v1/preferences", `{}`, []string{"Content-Type", "text/plain"}, 415},
		{"PUT prefs over max", "PUT", "/v1/preferences", big, nil, 413},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tok := submitterTok
			if tc.method == "PUT" {
				tok = adminTok
			}
			r := h.do(tc.method, tc.path, tok, tc.body, tc.headers...)
			if r.Code != tc.want {
				t.Fatalf("got %d, want %d: %s", r.Code, tc.want, r.Body)
			}
			if tc.want >= 400 {
				r.errBody(t)
			}
		})
	}
	t.Run("no content type", func(t *testing.T) {
		req, _ := http.NewRequest("POST", h.srv.URL+"/v1/jobs", strings.NewReader(jobBody("wordcount")))
		req.Header.Set("Authorization", "Bearer "+submitterTok)
		res, err := h.client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		if res.StatusCode != 415 {
			t.Fatalf("got %d, want 415", res.StatusCode)
		}
	})
	t.Run("405 with Allow", func(t *testing.T) {
		r := h.do("PATCH", "/v1/jobs", adminTok, "")
		if r.Code != 405 {
			t.Fatalf("got %d, want 405", r.Code)
		}
		if got := r.Header.Get("Allow"); got != "GET, HEAD, POST" {
			t.Errorf("Allow = %q, want GET, HEAD, POST", got)
		}
		r.errBody(t)
	})
	t.Run("404 is JSON", func(t *testing.T) {
		r := h.do("GET", "/v2/nothing", adminTok, "")
		if r.Code != 404 {
			t.Fatalf("got %d, want 404", r.Code)
		}
		r.errBody(t)
		if r := h.do("GET", "/v1/jobs/01NOSUCHJOB", readerTok, ""); r.Code != 404 {
			t.Fatalf("unknown job: got %d, want 404", r.Code)
		}
	})
}

func TestSubmitBadFields(t *testing.T) {
	h := newHarness(t)
	manyLabels := make([]string, 0, 40)
	for i := range 40 {
		manyLabels = append(manyLabels, fmt.Sprintf(`"l%d":"v"`, i))
	}
	for _, tc := range []struct {
		name, body string
		headers    []string
		field      string // "" = no field expected
		wantCode   int
	}{
		{"containers as string", `{"kind":"a","resources":{"containers":"12","memory_mb":1,"vcores":1}}`, nil, "resources.containers", 400},
		{"kind as number", `{"kind":5}`, nil, "kind", 400},
		{"priority as float", `{"kind":"a","priority":1.5}`, nil, "priority", 400},
		{"labels value as number", `{"kind":"a","labels":{"team":1}}`, nil, "labels", 400},
		{"resources as array", `{"kind":"a","resources":[1]}`, nil, "resources", 400},
		{"unknown field", `{"kind":"a","colour":"red"}`, nil, "colour", 400},
		{"unknown nested field", `{"kind":"a","resources":{"containers":1,"memory_mb":1,"vcores":1,"gpus":2}}`, nil, "gpus", 400},
		{"store field id", `{"kind":"a","id":"x"}`, nil, "id", 400},
		{"bad kind", jobBody("Bad Kind!"), nil, "kind", 400},
		{"missing kind", `{"resources":{"containers":1,"memory_mb":1,"vcores":1}}`, nil, "kind", 400},
		{"zero containers", `{"kind":"a","resources":{"containers":0,"memory_mb":1024,"vcores":1}}`, nil, "resources.containers", 400},
		{"no resources, unknown kind", `{"kind":"a"}`, nil, "resources.containers", 400},
		{"huge memory", `{"kind":"a","resources":{"containers":1,"memory_mb":1099511627776,"vcores":1}}`, nil, "resources.memory_mb", 400},
		{"memory overflows int64", `{"kind":"a","resources":{"containers":1,"memory_mb":1e30,"vcores":1}}`, nil, "resources.memory_mb", 400},
		{"negative vcores", `{"kind":"a","resources":{"containers":1,"memory_mb":1,"vcores":-1}}`, nil, "resources.vcores", 400},
		{"bad deadline", jobBody("a", `"deadline":"tomorrow"`), nil, "deadline", 400},
		{"deadline without zone", jobBody("a", `"deadline":"2026-12-01T10:00:00"`), nil, "deadline", 400},
		{"deadline in the past", jobBody("a", `"deadline":"2020-01-01T00:00:00Z"`), nil, "deadline", 400},
		{"too many labels", jobBody("a", `"labels":{`+strings.Join(manyLabels, ",")+`}`), nil, "labels", 400},
		{"oversized label value", jobBody("a", `"labels":{"team":"`+strings.Repeat("v", 300)+`"}`), nil, "labels[team]", 400},
		{"bad label key", jobBody("a", `"labels":{"bad key":"v"}`), nil, `labels["bad key"]`, 400},
		{"submit not JSON object is fine but huge is not", jobBody("a", `"submit":"`+strings.Repeat("s", 70000)+`"`), nil, "submit", 400},
		{"bad idempotency key", jobBody("a"), []string{"Idempotency-Key", "has space"}, "Idempotency-Key", 400},
		{"long idempotency key", jobBody("a"), []string{"Idempotency-Key", strings.Repeat("k", 200)}, "Idempotency-Key", 400},
		{"malformed JSON", `{"kind":`, nil, "", 400},
		{"syntax error", `{"kind" "a"}`, nil, "", 400},
		{"two values", jobBody("a") + jobBody("b"), nil, "", 400},
		{"empty body", ``, []string{"Content-Type", "application/json"}, "", 400},
		{"array body", `[1,2]`, nil, "", 400},
		{"null body", `null`, nil, "kind", 400},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/jobs", submitterTok, tc.body, tc.headers...)
			if r.Code != tc.wantCode {
				t.Fatalf("got %d, want %d: %s", r.Code, tc.wantCode, r.Body)
			}
			if e := r.errBody(t); e.Field != tc.field {
				t.Errorf("field = %q, want %q (error %q)", e.Field, tc.field, e.Error)
			}
		})
	}
	if n, _ := h.store.List("", 0); len(n) != 0 {
		t.Errorf("%d jobs stored by bad requests", len(n))
	}
	if h.ctl.Kicks() != 0 {
		t.Errorf("%d kicks for no new job", h.ctl.Kicks())
	}
}

func TestSubmitShape(t *testing.T) {
	h := newHarness(t)
	body := `{"kind":"kmeans","user":"sam","queue":"default","priority":3,
		"submit":{"application-name":"km"},"deadline":"2026-12-01T10:00:00Z","labels":{"team":"search"}}`
	r := h.do("POST", "/v1/jobs", submitterTok, body)
	if r.Code != http.StatusCreated {
		t.Fatalf("got %d: %s", r.Code, r.Body)
	}
	var v v1.Job
	r.decode(t, &v)
	if got, want := r.Header.Get("Location"), "/v1/jobs/"+v.ID; got != want {
		t.Errorf("Location = %q, want %q", got, want)
	}
	deadline := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	want := queue.Job{
		ID: v.ID, Seq: 1, Kind: "kmeans", User: "sam", Queue: "default", Priority: 3,
		Resources: queue.Resources{Containers: 4, MemoryMB: 1536, VCores: 1}, // filled by Prepare
		Submit:    json.RawMessage(`{"application-name":"km"}`), Deadline: &deadline,
		Labels: map[string]string{"team": "search"}, State: queue.StatePending, CreatedAt: h.clock.Now(),
	}
	if diff := cmp.Diff(wireJob(want), v); diff != "" {
		t.Errorf("stored job (-want +got):\n%s", diff)
	}
	var got v1.Job
	h.do("GET", "/v1/jobs/"+v.ID, readerTok, "").decode(t, &got)
	if got.Position == nil || *got.Position != 0 {
		t.Errorf("position = %v, want 0", got.Position)
	}
	if h.ctl.Kicks() != 1 {
		t.Errorf("kicks = %d, want 1", h.ctl.Kicks())
	}
	// Prepare's field errors are the client's.
	h.ctl.mu.Lock()
	h.ctl.prepareErr = &queue.FieldError{Field: "kind", Reason: "not defined by the workload"}
	h.ctl.mu.Unlock()
	r = h.do("POST", "/v1/jobs", submitterTok, jobBody("mystery"))
	if e := r.errBody(t); r.Code != 400 || e.Field != "kind" {
		t.Errorf("Prepare field error: got %d %+v, want 400 field kind", r.Code, e)
	}
	// A well-formed value the configuration refuses is 422, naming the
	// field and the rule.
	h.ctl.mu.Lock()
	h.ctl.prepareErr = &queue.FieldError{Field: "submit.params[jar]", Reason: "does not match the pattern", Refused: true}
	h.ctl.mu.Unlock()
	r = h.do("POST", "/v1/jobs", submitterTok, jobBody("mystery"))
	if e := r.errBody(t); r.Code != http.StatusUnprocessableEntity || e.Field != "submit.params[jar]" || !strings.Contains(e.Error, "does not match the pattern") {
		t.Errorf("Prepare refusal: got %d %+v, want 422 field submit.params[jar] with the rule", r.Code, e)
	}
	h.ctl.mu.Lock()
	h.ctl.prepareErr = errors.New("backend exploded")
	h.ctl.mu.Unlock()
	if r = h.do("POST", "/v1/jobs", submitterTok, jobBody("mystery")); r.Code != 500 {
		t.Errorf("Prepare internal error: got %d, want 500", r.Code)
	}
}

func TestIdempotency(t *testing.T) {
	h := newHarness(t)
	first := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated, "Idempotency-Key", "k-1")
	again := h.submit(submitterTok, jobBody("wordcount"), http.StatusOK, "Idempotency-Key", "k-1")
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("repeat returned another job (-first +again):\n%s", diff)
	}
	// Same key, different request: a conflict, not a silent old job.
	r := h.do("POST", "/v1/jobs", submitterTok, jobBody("terasort"), "Idempotency-Key", "k-1")
	if e := r.errBody(t); r.Code != http.StatusConflict || e.Field != "Idempotency-Key" {
		t.Errorf("reused key: got %d %+v, want 409 field Idempotency-Key", r.Code, e)
	}
	// Keys are per user: another user's identical key is a new job.
	other := h.submit(submitter2Tok, jobBody("wordcount"), http.StatusCreated, "Idempotency-Key", "k-1")
	if other.ID == first.ID {
		t.Errorf("another user's key returned sam's job")
	}
	if got := h.ctl.Kicks(); got != 2 {
		t.Errorf("kicks = %d, want 2 (one per created job)", got)
	}
}

func TestIdempotencyConcurrent(t *testing.T) {
	h := newHarness(t)
	const n = 32
	var wg sync.WaitGroup
	codes := make([]int, n)
	ids := make([]string, n)
	for i := range n {
		wg.Go(func() {
			r := h.do("POST", "/v1/jobs", submitterTok, jobBody("wordcount"), "Idempotency-Key", "same")
			codes[i] = r.Code
			var v v1.Job
			_ = json.Unmarshal(r.Body, &v)
			ids[i] = v.ID
		})
	}
	wg.Wait()
	created := 0
	for i, c := range codes {
		switch c {
		case 201:
			created++
		case 200:
		default:
			t.Fatalf("request %d: status %d", i, c)
		}
		if ids[i] != ids[0] || ids[i] == "" {
			t.Fatalf("request %d got job %q, request 0 got %q", i, ids[i], ids[0])
		}
	}
	if created != 1 {
		t.Errorf("%d requests created a job, want exactly 1", created)
	}
	if jobs, _ := h.store.List("", 0); len(jobs) != 1 {
		t.Errorf("%d jobs stored, want 1", len(jobs))
	}
}

// TestCancelLosesToAdmission forces the race: the engine admits the job
// between the API's read and its cancel.
func TestCancelLosesToAdmission(t *testing.T) {
	h := newHarness(t)
	j := h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated)
	h.api.beforeCancel = func(id string) {
		if _, err := h.store.Admit(id, "application_1_0001", nil, nil, nil); err != nil {
			t.Errorf("admit in the race window: %v", err)
		}
	}
	r := h.do("DELETE", "/v1/jobs/"+j.ID, submitterTok, "")
	h.api.beforeCancel = nil
	if r.Code != http.StatusConflict {
		t.Fatalf("got %d, want 409: %s", r.Code, r.Body)
	}
	if e := r.errBody(t); !strings.Contains(e.Error, "admitted") || !strings.Contains(e.Error, "not cancelled") {
		t.Errorf("error %q should say the job was admitted and not cancelled", e.Error)
	}
	if got, _ := h.store.Get(j.ID); got.State != queue.StateAdmitted {
		t.Errorf("state = %s, want admitted", got.State)
	}
	if len(h.ctl.Killed()) != 0 {
		t.Errorf("Kill called on a lost cancel race")
	}
	// Retrying the DELETE now kills it.
	if r := h.do("DELETE", "/v1/jobs/"+j.ID, submitterTok, ""); r.Code != http.StatusOK {
		t.Fatalf("retry: got %d: %s", r.Code, r.Body)
	}
	if got, _ := h.store.Get(j.ID); got.State != queue.StateKilled {
		t.Errorf("after retry: state %s, want killed", got.State)
	}
}

// TestCancelAdmitRace runs cancel and admit concurrently on many jobs:
// exactly one of them wins each job, and the loser gets a clear error.
func TestCancelAdmitRace(t *testing.T) {
	h := newHarness(t)
	const n = 60
	ids := make([]string, n)
	for i := range n {
		ids[i] = h.submit(submitterTok, jobBody("wordcount"), http.StatusCreated).ID
	}
	type outcome struct {
		code     int
		state    queue.State
		admitErr error
	}
	out := make([]outcome, n)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			r := h.do("DELETE", "/v1/jobs/"+id, submitterTok, "")
			out[i].code = r.Code
			var v v1.Job
			_ = json.Unmarshal(r.Body, &v)
			out[i].state = queue.State(v.State)
		})
		wg.Go(func() {
			// An HTTP round trip first, so the admission lands about when
			// the DELETE does (a bare store call would always win).
			h.do("GET", "/healthz", "", "")
			_, out[i].admitErr = h.store.Admit(id, "app-"+id, nil, nil, nil)
		})
	}
	wg.Wait()
	cancelled, conflicts, killed := 0, 0, 0
	for i, o := range out {
		final, _ := h.store.Get(ids[i])
		switch {
		case o.code == 200 && o.state == queue.StateCancelled:
			// Cancel won: admission must have failed, loudly.
			cancelled++
			if !errors.Is(o.admitErr, queue.ErrIllegalTransition) {
				t.Errorf("job %d: cancelled, but Admit returned %v", i, o.admitErr)
			}
		case o.code == 409:
			// Admission won inside the window: the job stays admitted.
			conflicts++
			if o.admitErr != nil || final.State != queue.StateAdmitted {
				t.Errorf("job %d: 409 but admit err %v, state %s", i, o.admitErr, final.State)
			}
		case o.code == 200 && o.state == queue.StateKilled:
			// Admission won before the read: DELETE killed the admitted job.
			killed++
			if o.admitErr != nil {
				t.Errorf("job %d: killed but Admit failed: %v", i, o.admitErr)
			}
		default:
			t.Errorf("job %d: DELETE %d (state %s), admit %v, final %s", i, o.code, o.state, o.admitErr, final.State)
		}
	}
	t.Logf("cancel won %d, admit won in the window %d, admit won before the read %d", cancelled, conflicts, killed)
}

func TestListJobs(t *testing.T) {
	h := newHarness(t)
	var ids []string
	for _, k := range []string{"a", "b", "c", "d", "e"} {
		ids = append(ids, h.submit(submitterTok, jobBody(k), http.StatusCreated).ID)
		h.clock.Advance(time.Second)
	}
	h.runJobStart(ids[1]) // b running
	h.runJobStart(ids[3]) // d running (newer)
	var l v1.JobList
	r := h.do("GET", "/v1/jobs", readerTok, "")
	r.decode(t, &l)
	type row struct {
		ID  string
		Pos int
	}
	var got []row
	for _, j := range l.Jobs {
		p := -1
		if j.Position != nil {
			p = *j.Position
		}
		got = append(got, row{j.ID, p})
	}
	want := []row{{ids[0], 0}, {ids[2], 1}, {ids[4], 2}, {ids[3], -1}, {ids[1], -1}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("default listing (-want +got):\n%s", diff)
	}
	if l.Counts[v1.StatePending] != 3 || l.Counts[v1.StateRunning] != 2 || l.Count != 5 {
		t.Errorf("counts %v, count %d", l.Counts, l.Count)
	}
	// The listing carries the daemon's clock (virtual on the simulator) so the
	// status page ages timestamps against it, not the browser's clock.
	if !l.Now.Equal(h.clock.Now()) {
		t.Errorf("now = %v, want the daemon clock %v", l.Now, h.clock.Now())
	}
	r = h.do("GET", "/v1/jobs?state=running&limit=1", readerTok, "")
	r.decode(t, &l)
	if len(l.Jobs) != 1 || l.Jobs[0].ID != ids[3] {
		t.Errorf("running limit 1: got %+v, want the newest running job %s", l.Jobs, ids[3])
	}
	for _, tc := range []struct{ query, field string }{
		{"state=sleeping", "state"}, {"limit=0", "limit"}, {"limit=x", "limit"}, {"limit=100000", "limit"},
	} {
		r := h.do("GET", "/v1/jobs?"+tc.query, readerTok, "")
		if e := r.errBody(t); r.Code != 400 || e.Field != tc.field {
			t.Errorf("%s: got %d %+v, want 400 field %s", tc.query, r.Code, e, tc.field)
		}
	}
}

func TestGetJobEstimatesWait(t *testing.T) {
	h := newHarness(t)
	// History: kind a runs 100 s, kind b 300 s.
	h.runJob(h.submit(submitterTok, jobBody("a"), 201).ID, 100*time.Second)
	h.runJob(h.submit(submitterTok, jobBody("b"), 201).ID, 300*time.Second)
	// Two jobs running now: concurrency 2.
	h.runJobStart(h.submit(submitterTok, jobBody("a"), 201).ID)
	h.runJobStart(h.submit(submitterTok, jobBody("a"), 201).ID)
	// Queue: a, b, x (no history: counts as the mean, 200 s), then ours.
	h.submit(submitterTok, jobBody("a"), 201)
	h.submit(submitterTok, jobBody("b"), 201)
	h.submit(submitterTok, jobBody("x"), 201)
	mine := h.submit(submitterTok, jobBody("b"), 201)

	var v v1.Job
	h.do("GET", "/v1/jobs/"+mine.ID, readerTok, "").decode(t, &v)
	if v.Position == nil || *v.Position != 3 {
		t.Fatalf("position = %v, want 3", v.Position)
	}
	secs, rt := (100.0+300+200)/2, 300.0
	want := &v1.WaitEstimate{Seconds: &secs, JobsAhead: 3, WithHistory: 2, Concurrency: 2, RuntimeSeconds: &rt, Method: waitMethod}
	if diff := cmp.Diff(want, v.EstimatedWait); diff != "" {
		t.Errorf("estimate (-want +got):\n%s", diff)
	}
	// A job that is not pending has neither.
	done, _ := h.store.List(queue.StateSucceeded, 1)
	var d v1.Job
	h.do("GET", "/v1/jobs/"+done[0].ID, readerTok, "").decode(t, &d)
	if d.Position != nil || d.EstimatedWait != nil {
		t.Errorf("finished job has position %v, estimate %v", d.Position, d.EstimatedWait)
	}
}

func TestGetJobShowsDecision(t *testing.T) {
	h := newHarness(t)
	j := h.submit(submitterTok, jobBody("a"), 201)
	dec := json.RawMessage(`{"chosen":"` + j.ID + `","chosen_kind":"a","candidates":[{"job_id":"` + j.ID + `","kind":"a","prob":1}]}`)
	if _, err := h.store.Admit(j.ID, "application_1_0001", dec, nil, nil); err != nil {
		t.Fatal(err)
	}
	var v struct {
		AppID    string          `json:"app_id"`
		Decision json.RawMessage `json:"decision"`
	}
	h.do("GET", "/v1/jobs/"+j.ID, readerTok, "").decode(t, &v)
	if v.AppID != "application_1_0001" || string(v.Decision) != string(dec) {
		t.Errorf("got app %q decision %s", v.AppID, v.Decision)
	}
}

func TestHealthAndReady(t *testing.T) {
	h := newHarness(t)
	if r := h.do("GET", "/healthz", "", ""); r.Code != 200 || !strings.Contains(string(r.Body), "ok") {
		t.Errorf("healthz: %d %s", r.Code, r.Body)
	}
	if r := h.do("GET", "/readyz", "", ""); r.Code != 200 {
		t.Errorf("readyz: %d %s", r.Code, r.Body)
	}
	h.ctl.mu.Lock()
	h.ctl.readyErr = errNotReady
	h.ctl.mu.Unlock()
	r := h.do("GET", "/readyz", readerTok, "")
	if r.Code != 503 || !strings.Contains(r.errBody(t).Error, "connection refused") {
		t.Errorf("readyz when not ready: %d %s", r.Code, r.Body)
	}
	if r := h.do("POST", "/healthz", "", ""); r.Code != 405 || r.Header.Get("Allow") != "GET, HEAD" {
		t.Errorf("POST /healthz: %d Allow %q", r.Code, r.Header.Get("Allow"))
	}
}
