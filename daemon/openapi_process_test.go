package daemon

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
)

// Tokens of the conformance test, one per role and a second submitter
// (COLOCD_TOKENS replaces the demo's).
const (
	oaAdmin  = "oa-admin-token"
	oaSubmit = "oa-submitter-token"
	oaOther  = "oa-other-submitter"
	oaReader = "oa-reader-token"
)

// TestOpenAPIConformance runs the real binary (the demo's simulator) and
// checks its real answers against the OpenAPI description it serves at
// /v1/openapi.json, with kin-openapi: every operation's success and its
// errors (authentication, roles, unknown parameters, bad values, missing
// jobs, conflicts) validate — status documented, headers, media type and
// body against the schema — and every operation the description lists
// was exercised.
func TestOpenAPIConformance(t *testing.T) {
	addr := freeAddr(t)
	// One job runs at a time, at a hundredth of real time: the jobs this
	// test submits stay pending, so each answer it expects (a cancel's
	// 200, then 409) is the one it gets however busy the machine.
	p := startDemo(t, t.TempDir(), addr, "COLOCD_TOKENS="+strings.Join([]string{
		oaAdmin + ":ada:admin", oaSubmit + ":sam:submitter", oaOther + ":sue:submitter", oaReader + ":rita:reader"}, ","),
		"COLOCD_ADMISSION_MAX_RUNNING=1", "COLOCD_SIM_SPEED=0.01")
	ctx := context.Background()

	res, err := http.Get(p.base + "/v1/openapi.json")
	if err != nil {
		t.Fatal(err)
	}
	spec, _ := io.ReadAll(res.Body)
	res.Body.Close()
	loader := openapi3.NewLoader()
	doc, err := loader.LoadFromData(spec)
	if err != nil {
		t.Fatalf("loading /v1/openapi.json: %v", err)
	}
	if err := doc.Validate(ctx); err != nil {
		t.Fatalf("/v1/openapi.json is not a valid OpenAPI description: %v", err)
	}
	if !doc.IsOpenAPI31OrLater() {
		t.Errorf("openapi %q, want 3.1", doc.OpenAPI)
	}
	doc.Servers = openapi3.Servers{{URL: p.base}}
	router, err := gorillamux.NewRouter(doc)
	if err != nil {
		t.Fatal(err)
	}
	openapi3filter.RegisterBodyDecoder("image/svg+xml", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/csv", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/javascript", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/css", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)

	seen := map[string]map[string]bool{} // "METHOD /path" → statuses
	send := func(method, path, token, body string, hdr ...string) (int, []byte) {
		t.Helper()
		var rd io.Reader
		if body != "" {
			rd = strings.NewReader(body)
		}
		req, err := http.NewRequest(method, p.base+path, rd)
		if err != nil {
			t.Fatal(err)
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		b, _ := io.ReadAll(res.Body)
		res.Body.Close()
		route, params, err := router.FindRoute(req)
		if errors.Is(err, routers.ErrMethodNotAllowed) {
			// No operation to check it against: the Error schema and Allow.
			var v any
			if jerr := json.Unmarshal(b, &v); jerr != nil || res.Header.Get("Allow") == "" {
				t.Errorf("%s %s → %d: %v, Allow %q", method, path, res.StatusCode, jerr, res.Header.Get("Allow"))
			} else if verr := doc.Components.Schemas["Error"].Value.VisitJSON(v, openapi3.EnableJSONSchema2020()); verr != nil {
				t.Errorf("%s %s → %d: the body is not an Error: %v", method, path, res.StatusCode, verr)
			}
			return res.StatusCode, b
		}
		if err != nil {
			t.Errorf("%s %s (%d): not in the description: %v", method, path, res.StatusCode, err)
			return res.StatusCode, b
		}
		op := method + " " + route.Path
		if seen[op] == nil {
			seen[op] = map[string]bool{}
		}
		seen[op][fmt.Sprint(res.StatusCode)] = true
		in := &openapi3filter.ResponseValidationInput{
			RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route,
				Options: &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc}},
			Status: res.StatusCode, Header: res.Header, Body: io.NopCloser(bytes.NewReader(b)),
			Options: &openapi3filter.Options{IncludeResponseStatus: true},
		}
		if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
			t.Errorf("%s %s → %d does not conform: %v\n%.600s", method, path, res.StatusCode, err, b)
		}
		return res.StatusCode, b
	}
	want := func(code int, method, path, token, body string, hdr ...string) []byte {
		t.Helper()
		got, b := send(method, path, token, body, hdr...)
		if got != code {
			t.Errorf("%s %s: %d, want %d: %.300s", method, path, got, code, b)
		}
		return b
	}
	idOf := func(b []byte) string {
		var j struct{ ID string }
		_ = json.Unmarshal(b, &j)
		return j.ID
	}
	job := `{"kind":"kmeans","labels":{"team":"t1"}}`

	// Jobs.
	a := idOf(want(201, "POST", "/v1/jobs", oaSubmit, job, "Idempotency-Key", "k1"))
	want(200, "POST", "/v1/jobs", oaSubmit, job, "Idempotency-Key", "k1")
	want(409, "POST", "/v1/jobs", oaSubmit, `{"kind":"kmeans","queue":"other"}`, "Idempotency-Key", "k1")
	want(400, "POST", "/v1/jobs", oaSubmit, `{"kind":"kmeans","bogus":1}`)
	want(415, "POST", "/v1/jobs", oaSubmit, job, "Content-Type", "text/plain")
	want(403, "POST", "/v1/jobs", oaReader, job)
	want(401, "POST", "/v1/jobs", "", job)
	want(401, "GET", "/v1/jobs", "wrong-token-1234", "")
	b := idOf(want(201, "POST", "/v1/jobs", oaOther, job))
	want(200, "GET", "/v1/jobs?state=all&limit=1", oaAdmin, "")
	want(200, "GET", "/v1/jobs?state=all&user=sam&label=team%3Dt1&kind=kmeans&since=2000-01-01T00:00:00Z", oaReader, "")
	want(200, "GET", "/v1/jobs?estimate=1", oaReader, "")
	want(400, "GET", "/v1/jobs?offset=10", oaReader, "")
	want(400, "GET", "/v1/jobs?limit=0", oaReader, "")
	want(400, "GET", "/v1/jobs?cursor=nonsense", oaReader, "")
	want(200, "GET", "/v1/jobs/"+a, oaSubmit, "")
	want(200, "GET", "/v1/jobs/"+a, oaOther, "") // redacted
	want(404, "GET", "/v1/jobs/01NOSUCHJOB0000000000000000", oaReader, "")
	want(403, "GET", "/v1/jobs/"+a+"?doAs=sue", oaSubmit, "")
	want(403, "DELETE", "/v1/jobs/"+a, oaOther, "")
	want(403, "DELETE", "/v1/jobs/"+a, oaReader, "")
	want(200, "DELETE", "/v1/jobs/"+b, oaOther, "")
	want(409, "DELETE", "/v1/jobs/"+b, oaOther, "")
	want(404, "DELETE", "/v1/jobs/01NOSUCHJOB0000000000000000", oaAdmin, "")
	want(409, "POST", "/v1/jobs/"+b+"/resolve", oaAdmin, `{"outcome":"requeue","reason":"x"}`)
	want(400, "POST", "/v1/jobs/"+b+"/resolve", oaAdmin, `{"outcome":"maybe","reason":"x"}`)
	want(403, "POST", "/v1/jobs/"+b+"/resolve", oaSubmit, `{"outcome":"requeue","reason":"x"}`)
	want(405, "PUT", "/v1/jobs/"+a, oaAdmin, job)
	want(200, "GET", "/v1/whoami", oaSubmit, "")
	want(401, "GET", "/v1/whoami", "", "")
	want(200, "GET", "/v1/openapi.json", "", "")

	// Learning.
	want(200, "GET", "/v1/preferences", oaReader, "")
	want(200, "GET", "/v1/preferences?format=csv&matrix=h", oaReader, "")
	snap := want(200, "GET", "/v1/preferences?format=snapshot", oaReader, "")
	want(400, "GET", "/v1/preferences?format=xls", oaReader, "")
	want(403, "PUT", "/v1/preferences", oaSubmit, string(snap))
	want(200, "PUT", "/v1/preferences", oaAdmin, string(snap))
	want(400, "PUT", "/v1/preferences", oaAdmin, `{"kinds":7}`)
	want(403, "DELETE", "/v1/preferences", oaReader, "")
	want(200, "DELETE", "/v1/preferences", oaAdmin, "")
	want(200, "GET", "/v1/preferences/heatmap.svg", oaReader, "")
	want(400, "GET", "/v1/preferences/heatmap.svg?matrix=q", oaReader, "")
	want(200, "GET", "/v1/profiles", oaReader, "")
	want(200, "GET", "/v1/profiles?format=csv", oaReader, "")
	want(400, "GET", "/v1/profiles?limit=-1", oaReader, "")
	want(200, "GET", "/v1/decisions?limit=5", oaReader, "")
	want(400, "GET", "/v1/decisions?limit=x", oaReader, "")
	want(200, "GET", "/v1/goodness", oaReader, "")
	want(400, "GET", "/v1/goodness?from=yesterday", oaReader, "")
	want(200, "GET", "/v1/goodness/trend?buckets=10", oaReader, "")
	want(400, "GET", "/v1/goodness/trend?buckets=0", oaReader, "")

	// Cluster and service.
	want(200, "GET", "/v1/queues", oaReader, "")
	want(401, "GET", "/v1/queues", "", "")
	want(200, "GET", "/v1/nodes?limit=5&sort=goodness", oaReader, "")
	want(400, "GET", "/v1/nodes?sort=size", oaReader, "")
	want(200, "GET", "/v1/cluster", oaReader, "")
	want(400, "GET", "/v1/cluster?limit=x", oaReader, "")
	want(200, "GET", "/v1/clock", oaReader, "")
	want(200, "GET", "/v1/summary", oaReader, "")
	want(404, "GET", "/v1/ha", oaReader, "")
	want(200, "GET", "/healthz", "", "")
	want(405, "POST", "/healthz", "", "")
	want(200, "GET", "/readyz", "", "")
	want(400, "GET", "/readyz?verbose=1", "", "")
	want(200, "GET", "/metrics", oaReader, "")
	want(401, "GET", "/metrics", "", "")
	want(200, "GET", "/?token="+url.QueryEscape(oaReader), "", "")
	want(200, "GET", "/static/app.js", "", "")
	want(404, "GET", "/static/nothing.js", "", "")
	want(204, "GET", "/favicon.ico", "", "")

	// Every operation was exercised, with a success — but two that the
	// simulator cannot give: GET /v1/ha (replicas only; its 404 is checked
	// here) and POST /v1/jobs/{id}/resolve (a parked job: the cluster must
	// forget an application; its 409 and 400 are checked here).
	var missing []string
	for path, item := range doc.Paths.Map() {
		for method := range item.Operations() {
			op := method + " " + path
			st, ok := seen[op]
			if !ok {
				missing = append(missing, op+" (never called)")
				continue
			}
			success := slices.ContainsFunc([]string{"200", "201", "204"}, func(s string) bool { return st[s] })
			if !success && op != "GET /v1/ha" && op != "POST /v1/jobs/{id}/resolve" {
				missing = append(missing, op+" (no success)")
			}
		}
	}
	sort.Strings(missing)
	if len(missing) > 0 {
		t.Errorf("operations not exercised:\n%s", strings.Join(missing, "\n"))
	}
}
