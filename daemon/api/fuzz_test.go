package api

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
)

// decodeSeeds are bodies for the decoding fuzzers: valid, wrong types,
// broken syntax, and the strictness cases (case, duplicates, UTF-8).
var decodeSeeds = []string{
	jobBody("a"), `{"kind":5}`, `{"kind":"a","resources":{"containers":"x"}}`, `{`, `[]`, `null`,
	`{"kind":"a","deadline":"2026-12-01T10:00:00Z","labels":{"a":"b"},"submit":{"x":[1,2]}}`,
	`{"kind":"a","resources":{"containers":1,"memory_mb":1e400,"vcores":1}}`, "\x00\xff",
	`{"KIND":"a"}`, `{"kind":"a","kind":"b"}`, `{"kind":"a","k\u0069nd":"b"}`,
	`{"kind":"a","resources":{"containers":1,"CONTAINERS":2}}`, `{"kind":"a","labels":{"x":"1","x":"2"}}`,
	`{"kind":"a","submit":{"q":{"r":1,"r":2}}}`, "{\"kind\":\"a\xc3\"}", "{\"kind\":\"\xed\xa0\x80\"}",
	`{"\u212Aind":"a"}`, `[[[[[[[[]]]]]]]]`, `{"kind":"a"} {}`,
}

// FuzzSubmitBody: no body makes the API panic or answer 5xx, every error
// is the JSON error shape, and an accepted body is valid UTF-8 with every
// key exact and once.
func FuzzSubmitBody(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	h := newHarness(f)
	handler := h.srv.Config.Handler
	f.Fuzz(func(t *testing.T, body string) {
		req := httptest.NewRequest("POST", "/v1/jobs", strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer "+submitterTok)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		handler.ServeHTTP(rec, req)
		switch {
		case rec.Code >= 500:
			t.Fatalf("body %q: %d %s", body, rec.Code, rec.Body)
		case rec.Code >= 400:
			var e v1.ErrorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("body %q: error response %q is not the JSON error shape", body, rec.Body)
			}
		case rec.Code != http.StatusCreated:
			t.Fatalf("body %q: unexpected %d", body, rec.Code)
		default:
			if !utf8.ValidString(body) {
				t.Fatalf("body %q: accepted, but it is not valid UTF-8", body)
			}
			if bad := looseKey([]byte(body)); bad != "" {
				t.Fatalf("body %q: accepted, but key %q is repeated or not a field name", body, bad)
			}
		}
	})
}

// FuzzDecodeStrict: the strict decoder never panics, and what it accepts
// encoding/json decodes to the same value: strictness only rejects, it
// never changes what a body means.
func FuzzDecodeStrict(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var strict v1.JobRequest
		if err := unmarshalStrict([]byte(body), &strict); err != nil {
			if he, ok := err.(*httpError); !ok || he.Status != http.StatusBadRequest || he.Msg == "" {
				t.Fatalf("body %q: error %#v, want a 400 *httpError", body, err)
			}
			return
		}
		var loose v1.JobRequest
		if err := json.Unmarshal([]byte(body), &loose); err != nil {
			t.Fatalf("body %q: strict accepted, encoding/json says %v", body, err)
		}
		if diff := cmp.Diff(loose, strict); diff != "" {
			t.Fatalf("body %q: strict and encoding/json differ (-json +strict):\n%s", body, diff)
		}
	})
}

// looseKey is the first key of an accepted job body that encoding/json
// alone would have let through: one repeated in its object, or one that is
// not exactly a field name of v1.JobRequest or
// v1.ResourcesRequest. "" if none.
// It walks objects directly under the top level and "resources"; labels and
// submit are checked for repeats only.
func looseKey(body []byte) string {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	names := map[string][]string{
		"":          {"kind", "user", "queue", "priority", "resources", "submit", "deadline", "labels"},
		"resources": {"containers", "memory_mb", "vcores"},
	}
	var walk func(path string, strictNames bool) string
	walk = func(path string, strictNames bool) string {
		tok, err := dec.Token()
		if err != nil {
			return ""
		}
		switch tok {
		case json.Delim('['):
			for dec.More() {
				if bad := walk(path+"[]", false); bad != "" {
					return bad
				}
			}
			_, _ = dec.Token()
		case json.Delim('{'):
			seen := map[string]bool{}
			for dec.More() {
				kt, _ := dec.Token()
				k, _ := kt.(string)
				if seen[k] {
					return k
				}
				seen[k] = true
				if strictNames {
					known := false
					for _, n := range names[path] {
						known = known || n == k
					}
					if !known {
						return k
					}
				}
				_, childStrict := names[k]
				if bad := walk(k, strictNames && path == "" && childStrict); bad != "" {
					return bad
				}
			}
			_, _ = dec.Token()
		}
		return ""
	}
	return walk("", true)
}
