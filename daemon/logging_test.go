package daemon

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// Durations read as durations in JSON logs, also in groups and in the
// logger's own attrs; other values are left alone.
func TestReplaceLogAttrWritesDurationsAsStrings(t *testing.T) {
	var buf bytes.Buffer
	log := slog.New(slog.NewJSONHandler(&buf, &slog.HandlerOptions{ReplaceAttr: replaceLogAttr})).With("wait", 250*time.Millisecond)
	log.Info("job finished", "took", 90*time.Minute+1500*time.Millisecond, "code", 200, slog.Group("tick", "took", time.Duration(0)))
	var got map[string]any
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil {
		t.Fatalf("%v: %s", err, buf.Bytes())
	}
	delete(got, "time")
	want := map[string]any{
		"level": "INFO", "msg": "job finished", "wait": "250ms", "took": "1h30m1.5s", "code": float64(200),
		"tick": map[string]any{"took": "0s"},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("JSON line (-want,+got):\n%s", diff)
	}
}
