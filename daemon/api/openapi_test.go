package api

import (
	"bytes"
	"flag"
	"os"
	"slices"
	"sort"
	"testing"

	"github.com/google/go-cmp/cmp"
)

var update = flag.Bool("update", false, "rewrite docs/openapi.json from openapi.yaml (TestOpenAPIDocument) and testdata/golden/*.golden (TestGolden)")

// TestOpenAPIRoutes: the description lists every route and method the
// server serves (with /metrics, as the daemon runs it) and no other; the
// conformance of the real answers is daemon's TestOpenAPIConformance.
func TestOpenAPIRoutes(t *testing.T) {
	h := newHarness(t)
	served := map[string][]string{}
	for p, ms := range h.api.routes {
		served[p] = slices.Sorted(slices.Values(ms))
	}
	described := map[string][]string{}
	for p, ms := range openAPI.params {
		for m := range ms {
			described[p] = append(described[p], m)
		}
		sort.Strings(described[p])
	}
	if diff := cmp.Diff(described, served); diff != "" {
		t.Errorf("routes (-described +served):\n%s", diff)
	}
}

// TestOpenAPIFile: docs/openapi.json, shipped for client generators, is
// what GET /v1/openapi.json serves (go test ./daemon/api -run
// TestOpenAPIFile -update rewrites it).
func TestOpenAPIFile(t *testing.T) {
	const path = "../../docs/openapi.json"
	if *update {
		if err := os.WriteFile(path, openAPIJSON(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, openAPIJSON()) {
		t.Errorf("%s differs from daemon/api/openapi.yaml: go test ./daemon/api -run TestOpenAPIFile -update", path)
	}
	h := newHarness(t)
	r := h.do("GET", "/v1/openapi.json", "", "")
	if r.Code != 200 || !bytes.Equal(r.Body, b) {
		t.Errorf("GET /v1/openapi.json: %d, %d bytes; want the file", r.Code, len(r.Body))
	}
}
