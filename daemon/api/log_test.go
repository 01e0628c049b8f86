package api

import (
	"log/slog"
	"net/http"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/logtest"

	"github.com/google/go-cmp/cmp"
)

func withLogger(l *slog.Logger) harnessOpt { return func(c *harnessCfg) { c.Logger = l } }

// Each request is logged once, at a level that keeps a status page's
// refreshes out of the default log (issue 14): DEBUG when it went well or
// the client erred, INFO for authentication failures, WARN for server
// errors and slow answers.
func TestRequestLogLevels(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelDebug}
	h := newHarness(t, withLogger(slog.New(rec)))
	tests := []struct {
		name, method, path, token string
		notReady                  bool
		slow                      bool
		wantCode                  int
		wantLevel                 slog.Level
	}{
		{name: "status page", method: "GET", path: "/", wantCode: 200, wantLevel: slog.LevelDebug},
		{name: "favicon", method: "GET", path: "/favicon.ico", wantCode: 204, wantLevel: slog.LevelDebug},
		{name: "api read", method: "GET", path: "/v1/jobs", token: readerTok, wantCode: 200, wantLevel: slog.LevelDebug},
		{name: "no such endpoint", method: "GET", path: "/nope", wantCode: 404, wantLevel: slog.LevelDebug},
		{name: "method not allowed", method: "PATCH", path: "/v1/jobs", token: readerTok, wantCode: 405, wantLevel: slog.LevelDebug},
		{name: "no token", method: "GET", path: "/v1/jobs", wantCode: 401, wantLevel: slog.LevelInfo},
		{name: "bad token", method: "GET", path: "/v1/jobs", token: "nope", wantCode: 401, wantLevel: slog.LevelInfo},
		{name: "role too low", method: "DELETE", path: "/v1/preferences", token: readerTok, wantCode: 403, wantLevel: slog.LevelInfo},
		{name: "server error", method: "GET", path: "/readyz", notReady: true, wantCode: 503, wantLevel: slog.LevelWarn},
		{name: "slow", method: "GET", path: "/healthz", slow: true, wantCode: 200, wantLevel: slog.LevelWarn},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h.ctl.mu.Lock()
			h.ctl.readyErr = nil
			if tt.notReady {
				h.ctl.readyErr = errNotReady
			}
			h.ctl.mu.Unlock()
			h.api.slow = slowRequest
			if tt.slow {
				h.api.slow = -1 // every request is slower than that
			}
			rec.Take()
			res := h.do(tt.method, tt.path, tt.token, "")
			if res.Code != tt.wantCode {
				t.Fatalf("code = %d, want %d", res.Code, tt.wantCode)
			}
			lines := rec.Take()
			if len(lines) != 1 {
				t.Fatalf("logged %d lines, want 1: %v", len(lines), lines)
			}
			got := lines[0]
			if _, ok := got.Attrs["took"].(time.Duration); !ok {
				t.Errorf("took = %#v, want a time.Duration", got.Attrs["took"])
			}
			want := logtest.Line{Level: tt.wantLevel, Msg: "http request", Attrs: map[string]any{
				"method": tt.method, "path": tt.path, "code": int64(tt.wantCode),
			}}
			got.Attrs = map[string]any{"method": got.Attrs["method"], "path": got.Attrs["path"], "code": got.Attrs["code"]}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("log line (-want,+got):\n%s", diff)
			}
		})
	}
}

// The favicon is an empty answer the browser caches, not a 404.
func TestFavicon(t *testing.T) {
	h := newHarness(t)
	res := h.do(http.MethodGet, "/favicon.ico", "", "")
	if res.Code != http.StatusNoContent || len(res.Body) != 0 || res.Header.Get("Cache-Control") == "" {
		t.Errorf("GET /favicon.ico = %d, %q, Cache-Control %q; want 204, empty, cached", res.Code, res.Body, res.Header.Get("Cache-Control"))
	}
}
