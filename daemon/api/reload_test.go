package api

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestWithIdentity: the handler WithIdentity returns takes only the new
// tokens (the old one is a 401, the new one a 200) and shares the old
// handler's gate on new kinds; the old handler serves on unchanged.
func TestWithIdentity(t *testing.T) {
	h := newHarness(t)
	old := h.srv.Config.Handler
	d := Deps{Store: h.store, Learner: h.learner, Journal: h.journal, Controller: h.ctl, Metrics: h.metrics, Now: h.clock.Now,
		Tokens: []Token{{Secret: "rotated-reader-token", User: "rita", Role: RoleReader}}}
	next, err := WithIdentity(old, d)
	if err != nil {
		t.Fatal(err)
	}
	get := func(hh http.Handler, token string) int {
		r := httptest.NewRequest(http.MethodGet, "/v1/jobs", nil)
		r.Header.Set("Authorization", "Bearer "+token)
		w := httptest.NewRecorder()
		hh.ServeHTTP(w, r)
		return w.Code
	}
	for _, c := range []struct {
		name  string
		h     http.Handler
		token string
		want  int
	}{
		{"new handler, old token", next, readerTok, http.StatusUnauthorized},
		{"new handler, new token", next, "rotated-reader-token", http.StatusOK},
		{"old handler, old token", old, readerTok, http.StatusOK},
	} {
		if got := get(c.h, c.token); got != c.want {
			t.Errorf("%s: %d, want %d", c.name, got, c.want)
		}
	}
	if serverOf(next).kinds != serverOf(old).kinds {
		t.Error("the new handler has a kinds gate of its own")
	}
	if _, err := WithIdentity(http.NotFoundHandler(), d); err == nil {
		t.Error("WithIdentity of a handler New did not return succeeded")
	}
}
