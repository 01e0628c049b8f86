package daemon

import (
	"context"

	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
)

// Log formats (log_format).
const (
	// logAuto is the journal's native protocol when stderr is the journal
	// (JOURNAL_STREAM names it: colocd runs as a systemd service), text
	// elsewhere.
	logAuto    = "auto"
	logText    = "text"
	logJSON    = "json"
	logJournal = "journal" // always the journal's protocol, wherever stderr goes
)

// NewLogger is the daemon's logger on w at level, in format (log_format).
// In the journal, each record has its priority (debug 7, info 6, warn 4,
// error 3: `journalctl -p err` shows errors only), its attributes as
// fields (JOB=…, ERR=…: `journalctl -o json`, `journalctl JOB=j-1`) and a
// MESSAGE that reads as the text format does without the time and level,
// which the journal records itself. A record the journal refuses is
// written to w as text instead.
func NewLogger(w io.Writer, level slog.Leveler, format string) *slog.Logger {
	opts := &slog.HandlerOptions{Level: level, ReplaceAttr: replaceLogAttr}
	switch format {
	case logJSON:
		return slog.New(slog.NewJSONHandler(w, opts))
	case logJournal:
		return slog.New(newJournalHandler(journal.Send, level, w))
	case logAuto, "":
		if f, ok := w.(*os.File); ok && f == os.Stderr {
			if yes, _ := journal.StderrIsJournalStream(); yes {
				return slog.New(newJournalHandler(journal.Send, level, w))
			}
		}
	}
	return slog.New(slog.NewTextHandler(w, opts))
}

// journalSend is journal.Send's shape.
type journalSend func(message string, priority journal.Priority, vars map[string]string) error

// journalHandler is a slog.Handler writing to the journal.
type journalHandler struct {
	send     journalSend
	level    slog.Leveler
	fallback slog.Handler // where a record goes that the journal refused
	attrs    []journalField
	prefix   string // the open groups' prefix, "TICK_"
	textPre  string // the open groups' prefix in MESSAGE, "tick."

	mu         *sync.Mutex
	lastFailed *bool // the previous send failed (it is said once)
}

// journalField is one attribute: its journal field name and its value,
// and its key in MESSAGE.
type journalField struct {
	field, key, value string
}

func newJournalHandler(send journalSend, level slog.Leveler, fallback io.Writer) *journalHandler {
	if level == nil {
		level = slog.LevelInfo
	}
	return &journalHandler{send: send, level: level, mu: new(sync.Mutex), lastFailed: new(bool),
		fallback: slog.NewTextHandler(fallback, &slog.HandlerOptions{Level: level, ReplaceAttr: replaceLogAttr})}
}

func (h *journalHandler) Enabled(_ context.Context, l slog.Level) bool { return l >= h.level.Level() }

func (h *journalHandler) WithAttrs(as []slog.Attr) slog.Handler {
	h2 := *h
	h2.attrs = slices.Clone(h.attrs)
	for _, a := range as {
		h2.attrs = appendField(h2.attrs, h.prefix, h.textPre, a)
	}
	h2.fallback = h.fallback.WithAttrs(as)
	return &h2
}

func (h *journalHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h2 := *h
	h2.prefix += journalName(name) + "_"
	h2.textPre += name + "."
	h2.fallback = h.fallback.WithGroup(name)
	return &h2
}

// Handle sends r: MESSAGE, PRIORITY, SYSLOG_IDENTIFIER, the source
// (CODE_FILE, CODE_LINE, CODE_FUNC), SLOG_LEVEL and the attributes.
func (h *journalHandler) Handle(ctx context.Context, r slog.Record) error {
	fields := slices.Clone(h.attrs)
	r.Attrs(func(a slog.Attr) bool {
		fields = appendField(fields, h.prefix, h.textPre, a)
		return true
	})
	vars := map[string]string{"SYSLOG_IDENTIFIER": "colocd", "SLOG_LEVEL": r.Level.String()}
	var msg strings.Builder
	msg.WriteString(r.Message)
	for _, f := range fields {
		vars[f.field] = f.value
		msg.WriteString(" " + f.key + "=" + quoteText(f.value))
	}
	if r.PC != 0 {
		fs := runtime.CallersFrames([]uintptr{r.PC})
		f, _ := fs.Next()
		vars["CODE_FILE"], vars["CODE_LINE"], vars["CODE_FUNC"] = f.File, strconv.Itoa(f.Line), f.Function
	}
	err := h.send(msg.String(), priority(r.Level), vars)
	h.mu.Lock()
	failed, said := err != nil, *h.lastFailed
	*h.lastFailed = failed
	h.mu.Unlock()
	if err != nil {
		if !said {
			r.AddAttrs(slog.String("journal_err", err.Error()))
		}
		return h.fallback.Handle(ctx, r)
	}
	return nil
}

// priority is the syslog priority of a slog level.
func priority(l slog.Level) journal.Priority {
	switch {
	case l >= slog.LevelError:
		return journal.PriErr
	case l >= slog.LevelWarn:
		return journal.PriWarning
	case l >= slog.LevelInfo:
		return journal.PriInfo
	}
	return journal.PriDebug
}

// reservedFields are the journal's own fields and those Handle sets: an
// attribute of that name is sent as ATTR_<NAME>.
var reservedFields = map[string]bool{
	"MESSAGE": true, "MESSAGE_ID": true, "PRIORITY": true, "CODE_FILE": true, "CODE_LINE": true, "CODE_FUNC": true,
	"ERRNO": true, "INVOCATION_ID": true, "USER_INVOCATION_ID": true, "SYSLOG_FACILITY": true, "SYSLOG_IDENTIFIER": true,
	"SYSLOG_PID": true, "SYSLOG_TIMESTAMP": true, "SYSLOG_RAW": true, "DOCUMENTATION": true, "TID": true, "UNIT": true,
	"USER_UNIT": true, "SLOG_LEVEL": true,
}

// appendField appends attribute a (a group: each of its attributes) under
// the groups' prefixes.
func appendField(fs []journalField, prefix, textPre string, a slog.Attr) []journalField {
	a.Value = a.Value.Resolve()
	a = replaceLogAttr(nil, a)
	if a.Equal(slog.Attr{}) {
		return fs
	}
	if a.Value.Kind() == slog.KindGroup {
		p, tp := prefix, textPre
		if a.Key != "" {
			p, tp = prefix+journalName(a.Key)+"_", textPre+a.Key+"."
		}
		for _, g := range a.Value.Group() {
			fs = appendField(fs, p, tp, g)
		}
		return fs
	}
	name := prefix + journalName(a.Key)
	if reservedFields[name] {
		name = "ATTR_" + name
	}
	return append(fs, journalField{field: name, key: textPre + a.Key, value: valueText(a.Value)})
}

// journalName is a journal field name for key: upper case, every
// character but A–Z and 0–9 an underscore, no leading underscore (those
// are the journal's trusted fields) or digit.
func journalName(key string) string {
	b := []byte(strings.ToUpper(key))
	for i, c := range b {
		if (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			b[i] = '_'
		}
	}
	s := strings.TrimLeft(string(b), "_")
	if s == "" || s[0] >= '0' && s[0] <= '9' {
		s = "F" + s
	}
	return s
}

// valueText is a value as the text handler writes it, unquoted.
func valueText(v slog.Value) string {
	switch v.Kind() {
	case slog.KindTime:
		return v.Time().Format(time.RFC3339Nano)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return err.Error()
		}
		if s, ok := v.Any().(fmt.Stringer); ok {
			return s.String()
		}
	}
	return v.String()
}

// quoteText quotes s for MESSAGE when the text handler would.
func quoteText(s string) string {
	if s == "" || strings.ContainsAny(s, " \t\n\"=") || !strconv.CanBackquote(s) {
		return strconv.Quote(s)
	}
	return s
}
