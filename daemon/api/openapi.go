package api

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"

	v1 "github.com/colocd/colocd/api/v1"
)

// openAPISource is the API's OpenAPI 3.1 description, written by hand
// beside the handlers it describes. It is the one list of the query
// parameters each endpoint takes (the dispatcher refuses the others), and
// the conformance test checks every route and every real response against
// it. GET /v1/openapi.json serves it as JSON; docs/openapi.json is the
// same, shipped for client generators (TestOpenAPIFile keeps it so).
//
//go:embed openapi.yaml
var openAPISource []byte

// openAPI is the description parsed once: the JSON served, and the query
// parameters of each route and method.
var openAPI = mustOpenAPI(openAPISource)

type openAPIDoc struct {
	json   []byte
	params map[string]map[string][]string // path → method → query parameter names
}

// openAPIJSON returns the API's OpenAPI 3.1 description as JSON.
func openAPIJSON() []byte { return slices.Clone(openAPI.json) }

func mustOpenAPI(src []byte) openAPIDoc {
	d, err := parseOpenAPI(src)
	if err != nil {
		panic(err)
	}
	return d
}

func parseOpenAPI(src []byte) (openAPIDoc, error) {
	var doc map[string]any
	if err := yaml.Unmarshal(src, &doc); err != nil {
		return openAPIDoc{}, fmt.Errorf("openapi.yaml: %w", err)
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return openAPIDoc{}, fmt.Errorf("openapi.yaml as JSON: %w", err)
	}
	out := openAPIDoc{json: append(b, '\n'), params: map[string]map[string][]string{}}
	comps, _ := doc["components"].(map[string]any)
	shared, _ := comps["parameters"].(map[string]any)
	resolve := func(p any) map[string]any {
		m, _ := p.(map[string]any)
		if ref, ok := m["$ref"].(string); ok {
			m, _ = shared[strings.TrimPrefix(ref, "#/components/parameters/")].(map[string]any)
		}
		return m
	}
	query := func(list any) []string {
		var names []string
		items, _ := list.([]any)
		for _, p := range items {
			if m := resolve(p); m != nil && m["in"] == "query" {
				names = append(names, m["name"].(string))
			}
		}
		return names
	}
	paths, _ := doc["paths"].(map[string]any)
	for path, item := range paths {
		ops, _ := item.(map[string]any)
		common := query(ops["parameters"])
		out.params[path] = map[string][]string{}
		for method, op := range ops {
			if method == "parameters" {
				continue
			}
			o, _ := op.(map[string]any)
			out.params[path][strings.ToUpper(method)] = append(slices.Clone(common), query(o["parameters"])...)
		}
	}
	return out, nil
}

// specPath is the path of the description a mux pattern serves.
func specPath(pattern string) string {
	if pattern == "/{$}" {
		return "/"
	}
	return pattern
}

// checkParams refuses a query parameter the description does not list
// for r's route and method (doAs, in any case, is every endpoint's).
func checkParams(r *http.Request) *httpError {
	if r.URL.RawQuery == "" {
		return nil
	}
	method := r.Method
	if method == http.MethodHead {
		method = http.MethodGet
	}
	known := openAPI.params[specPath(r.Pattern)][method]
	for name := range r.URL.Query() {
		if strings.EqualFold(name, "doas") || slices.Contains(known, name) {
			continue
		}
		e := errorf(http.StatusBadRequest, name, "unknown query parameter %q for %s %s (it takes: %s; /v1/openapi.json describes every endpoint)",
			name, method, specPath(r.Pattern), strings.Join(append(slices.Clone(known), "doAs"), ", "))
		e.Code = v1.CodeUnknownParameter
		return e
	}
	return nil
}

// serveOpenAPI: GET /v1/openapi.json.
func serveOpenAPI(w http.ResponseWriter, _ *http.Request, _ principal) error {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(openAPI.json)
	return nil
}

// whoami: GET /v1/whoami.
func whoami(w http.ResponseWriter, _ *http.Request, p principal) error {
	groups := p.Groups
	if groups == nil {
		groups = []string{}
	}
	writeJSON(w, http.StatusOK, v1.WhoAmI{User: p.User, Role: p.Role.String(), RoleRule: p.RoleRule, Groups: groups,
		Principal: p.Principal, Method: p.Method, RealUser: p.RealUser, ProxyRule: p.ProxyRule})
	return nil
}
