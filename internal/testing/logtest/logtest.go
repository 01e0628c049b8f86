// Package logtest records slog records for tests that check what colocd
// logs: each record's level, message and attributes (its logger's
// included), values resolved.
package logtest

import (
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Line is one record.
type Line struct {
	Level slog.Level
	Msg   string
	Attrs map[string]any
}

// Recorder is a slog.Handler that keeps every record at Min and above.
// It is safe for concurrent use.
type Recorder struct {
	Min   slog.Level
	mu    sync.Mutex
	lines []Line
}

// Enabled reports whether l is at or above Min.
func (h *Recorder) Enabled(_ context.Context, l slog.Level) bool { return l >= h.Min }

// WithAttrs returns a handler that records as into every record.
func (h *Recorder) WithAttrs(as []slog.Attr) slog.Handler { return &withAttrs{h, as} }

// WithGroup ignores the group: keys are recorded unqualified.
func (h *Recorder) WithGroup(string) slog.Handler { return h }

// Handle records r.
func (h *Recorder) Handle(_ context.Context, r slog.Record) error { return h.add(r, nil) }

func (h *Recorder) add(r slog.Record, with []slog.Attr) error {
	l := Line{Level: r.Level, Msg: r.Message, Attrs: map[string]any{}}
	for _, a := range with {
		l.Attrs[a.Key] = a.Value.Resolve().Any()
	}
	r.Attrs(func(a slog.Attr) bool { l.Attrs[a.Key] = a.Value.Resolve().Any(); return true })
	h.mu.Lock()
	h.lines = append(h.lines, l)
	h.mu.Unlock()
	return nil
}

// Take returns the lines recorded so far and forgets them.
func (h *Recorder) Take() []Line {
	h.mu.Lock()
	defer h.mu.Unlock()
	out := h.lines
	h.lines = nil
	return out
}

// With returns the recorded lines whose message is one of msgs, each with
// only the attrs named in keys.
func (h *Recorder) With(keys []string, msgs ...string) []Line {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []Line
	for _, l := range h.lines {
		if !slices.Contains(msgs, l.Msg) {
			continue
		}
		kept := Line{Level: l.Level, Msg: l.Msg, Attrs: map[string]any{}}
		for _, k := range keys {
			if v, ok := l.Attrs[k]; ok {
				kept.Attrs[k] = v
			}
		}
		out = append(out, kept)
	}
	return out
}

type withAttrs struct {
	*Recorder
	as []slog.Attr
}

func (w *withAttrs) WithAttrs(as []slog.Attr) slog.Handler {
	return &withAttrs{w.Recorder, append(slices.Clone(w.as), as...)}
}

func (w *withAttrs) Handle(_ context.Context, r slog.Record) error { return w.add(r, w.as) }
