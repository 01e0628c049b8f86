package daemon

import (
	"bytes"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/coreos/go-systemd/v22/journal"
	"github.com/google/go-cmp/cmp"
)

// sent is one record as the journal would have received it.
type sent struct {
	Msg  string
	Pri  journal.Priority
	Vars map[string]string
}

// recordJournal is a fake journal.Send that keeps what it is sent; err,
// when set, refuses every record.
func recordJournal(out *[]sent, err error) journalSend {
	return func(msg string, pri journal.Priority, vars map[string]string) error {
		if err != nil {
			return err
		}
		delete(vars, "CODE_FILE")
		delete(vars, "CODE_LINE")
		delete(vars, "CODE_FUNC")
		*out = append(*out, sent{msg, pri, vars})
		return nil
	}
}

// TestJournalHandler: each level has its syslog priority, attributes are
// fields (groups prefixed, reserved names moved aside, durations as the
// text format writes them), and MESSAGE reads as a text line.
func TestJournalHandler(t *testing.T) {
	var got []sent
	lv := new(slog.LevelVar)
	log := slog.New(newJournalHandler(recordJournal(&got, nil), lv, nil)).With("component", "engine")
	log.Debug("not sent")
	log.Info("tick", "kinds", 3, "took", 1500*time.Millisecond)
	log.Warn("slow", slog.Group("rm", "addr", "rm1:8088"), "priority", "high")
	log.WithGroup("job").Error("parked", "id", "j-1", "err", errors.New("submit: 403 Forbidden"))
	lv.Set(slog.LevelDebug)
	log.Debug("now sent", "1st", true)
	want := []sent{
		{"tick component=engine kinds=3 took=1.5s", journal.PriInfo,
			map[string]string{"SYSLOG_IDENTIFIER": "colocd", "SLOG_LEVEL": "INFO", "COMPONENT": "engine", "KINDS": "3", "TOOK": "1.5s"}},
		{"slow component=engine rm.addr=rm1:8088 priority=high", journal.PriWarning,
			map[string]string{"SYSLOG_IDENTIFIER": "colocd", "SLOG_LEVEL": "WARN", "COMPONENT": "engine", "RM_ADDR": "rm1:8088", "ATTR_PRIORITY": "high"}},
		{`parked component=engine job.id=j-1 job.err="submit: 403 Forbidden"`, journal.PriErr,
			map[string]string{"SYSLOG_IDENTIFIER": "colocd", "SLOG_LEVEL": "ERROR", "COMPONENT": "engine", "JOB_ID": "j-1", "JOB_ERR": "submit: 403 Forbidden"}},
		{"now sent component=engine 1st=true", journal.PriDebug,
			map[string]string{"SYSLOG_IDENTIFIER": "colocd", "SLOG_LEVEL": "DEBUG", "COMPONENT": "engine", "F1ST": "true"}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("sent to the journal (-want,+got):\n%s", d)
	}
}

// TestJournalHandlerFallback: a record the journal refuses is written as
// text, the first with the journal's error.
func TestJournalHandlerFallback(t *testing.T) {
	var got []sent
	var buf bytes.Buffer
	log := slog.New(newJournalHandler(recordJournal(&got, errors.New("socket gone")), slog.LevelInfo, &buf))
	log.Error("first", "job", "j-1")
	log.Error("second")
	lines := strings.Split(strings.TrimSpace(buf.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], `msg=first job=j-1 journal_err="socket gone"`) ||
		!strings.Contains(lines[1], "msg=second") || strings.Contains(lines[1], "journal_err") {
		t.Errorf("fallback lines:\n%s", buf.String())
	}
}

// TestNewLoggerFormats: text and json as asked; auto is text when stderr
// is not the journal (JOURNAL_STREAM names another file).
func TestNewLoggerFormats(t *testing.T) {
	t.Setenv("JOURNAL_STREAM", "1:1")
	for _, tc := range []struct{ format, want string }{
		{logText, "level=INFO msg=hello"},
		{logAuto, "level=INFO msg=hello"},
		{logJSON, `"level":"INFO","msg":"hello"`},
	} {
		var buf bytes.Buffer
		NewLogger(&buf, slog.LevelInfo, tc.format).Info("hello")
		if !strings.Contains(buf.String(), tc.want) {
			t.Errorf("format %s: %q, want it to contain %q", tc.format, buf.String(), tc.want)
		}
	}
}

func TestJournalName(t *testing.T) {
	for in, want := range map[string]string{"job": "JOB", "rm.addr": "RM_ADDR", "_x": "X", "9lives": "F9LIVES", "": "F", "é": "F"} {
		if got := journalName(in); got != want {
			t.Errorf("journalName(%q) = %q, want %q", in, got, want)
		}
	}
}
