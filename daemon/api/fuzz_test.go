package api

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

// FuzzSubmitBody: no body makes the API panic or answer 5xx, and every
// error is the JSON error shape.
func FuzzSubmitBody(f *testing.F) {
	for _, s := range []string{
		jobBody("a"), `{"kind":5}`, `{"kind":"a","resources":{"containers":"x"}}`, `{`, `[]`, `null`,
		`{"kind":"a","deadline":"2026-12-01T10:00:00Z","labels":{"a":"b"},"submit":{"x":[1,2]}}`,
		`{"kind":"a","resources":{"containers":1,"memory_mb":1e400,"vcores":1}}`, "\x00\xff",
	} {
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
			var e errorBody
			if err := json.Unmarshal(rec.Body.Bytes(), &e); err != nil || e.Error == "" {
				t.Fatalf("body %q: error response %q is not the JSON error shape", body, rec.Body)
			}
		case rec.Code != http.StatusCreated:
			t.Fatalf("body %q: unexpected %d", body, rec.Code)
		}
	})
}
