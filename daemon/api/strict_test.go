package api

import (
	"net/http"
	"strings"
	"testing"
)

// TestStrictJSON: keys must match exactly and once, at every level, and
// the body must be valid UTF-8; nothing is stored otherwise.
func TestStrictJSON(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct {
		name, body, field, msg string
	}{
		{"upper-case key", `{"KIND":"kmeans"}`, "KIND", `unknown field "KIND"`},
		{"title-case key", `{"Kind":"kmeans"}`, "Kind", `unknown field "Kind"`},
		{"Kelvin sign folds to k", `{"\u212Aind":"kmeans"}`, "\u212Aind", "unknown field"},
		{"nested case", `{"kind":"a","resources":{"Containers":1,"memory_mb":1,"vcores":1}}`, "Containers", `unknown field "Containers"`},
		{"duplicate key", `{"kind":"kmeans","kind":"evil"}`, "kind", `duplicate key "kind"`},
		{"duplicate through an escape", `{"kind":"kmeans","k\u0069nd":"evil"}`, "kind", `duplicate key "kind"`},
		{"duplicate nested", `{"kind":"a","resources":{"containers":2,"memory_mb":1024,"vcores":1,"vcores":2}}`, "resources.vcores", `duplicate key "resources.vcores"`},
		{"duplicate label", jobBody("a", `"labels":{"team":"a","team":"b"}`), "labels[team]", `duplicate key "labels[team]"`},
		{"duplicate in submit", jobBody("a", `"submit":{"am":{"x":1,"x":2}}`), "submit.am.x", `duplicate key "submit.am.x"`},
		{"duplicate in a submit array", jobBody("a", `"submit":[{"x":1},{"x":1,"x":2}]`), "submit[1].x", `duplicate key "submit[1].x"`},
		{"invalid UTF-8 in a value", "{\"kind\":\"a\xff\"}", "", "not valid UTF-8: byte 0xff at offset 10"},
		{"invalid UTF-8 in a label", jobBody("a", "\"labels\":{\"team\":\"\xc3\"}"), "", "not valid UTF-8: byte 0xc3 at offset"},
		{"invalid UTF-8 in a key", "{\"kind\":\"a\",\"\xfe\":1}", "", "not valid UTF-8: byte 0xfe at offset 13"},
		{"surrogate bytes", "{\"kind\":\"a\xed\xa0\x80\"}", "", "not valid UTF-8: byte 0xed at offset 10"},
		{"too deep", strings.Repeat("[", 10001), "", "exceeded max depth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := h.do("POST", "/v1/jobs", adminTok, tc.body)
			if r.Code != http.StatusBadRequest {
				t.Fatalf("got %d, want 400: %s", r.Code, r.Body)
			}
			e := r.errBody(t)
			if e.Field != tc.field || !strings.Contains(e.Error, tc.msg) {
				t.Errorf("got field %q error %q, want field %q and an error containing %q", e.Field, e.Error, tc.field, tc.msg)
			}
		})
	}
	if jobs, _ := h.store.List("", 0); len(jobs) != 0 {
		t.Errorf("%d jobs stored from rejected bodies", len(jobs))
	}
	// Valid UTF-8 beyond ASCII, and escapes, are fine.
	v := h.submit(adminTok, jobBody("a", `"labels":{"team":"se\u00e1rch"}`), http.StatusCreated)
	if v.Labels["team"] != "seárch" {
		t.Errorf("label %q", v.Labels["team"])
	}
	// The preference import is strict too.
	r := h.do("PUT", "/v1/preferences", adminTok, `{"version":1,"Version":1}`)
	if e := r.errBody(t); r.Code != 400 || e.Field != "Version" {
		t.Errorf("PUT /v1/preferences with Version: %d %+v", r.Code, e)
	}
}
