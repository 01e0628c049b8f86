package engine

import (
	"errors"
	"log/slog"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/testing/logtest"
	"github.com/colocd/colocd/journal"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
)

// Every transition of a job is one INFO line with the same keys: admitted,
// started, finished with its state and runtime, killed (issue 14).
func TestJobTransitionsAreLogged(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	h := newHarness(t, harnessOpts{nodes: 2, logger: slog.New(rec)})
	ids := h.submit("cpu", "disk")
	h.admit()
	var app = map[string]string{}
	for _, id := range ids {
		j, err := h.store.Get(id)
		if err != nil {
			t.Fatal(err)
		}
		app[id] = j.AppID
	}
	h.advance(time.Second)
	h.sync()
	if _, err := h.e.Kill(h.ctx, ids[1]); err != nil {
		t.Fatal(err)
	}
	for range 50 {
		h.advance(30 * time.Second)
		h.sync()
		if h.state(ids[0]).Terminal() {
			break
		}
	}
	done, err := h.store.Get(ids[0])
	if err != nil {
		t.Fatal(err)
	}
	killed, err := h.store.Get(ids[1])
	if err != nil {
		t.Fatal(err)
	}
	line := func(msg, id, kind string, state queue.State, took *time.Duration) logtest.Line {
		a := map[string]any{"job": id, "kind": kind, "app": app[id], "state": state}
		if took != nil {
			a["took"] = *took
		}
		return logtest.Line{Level: slog.LevelInfo, Msg: msg, Attrs: a}
	}
	ran := done.FinishedAt.Sub(*done.RunningAt)
	killedAfter := killed.FinishedAt.Sub(*killed.RunningAt)
	want := []logtest.Line{
		line("job admitted", ids[0], "cpu", queue.StateAdmitted, nil),
		line("job admitted", ids[1], "disk", queue.StateAdmitted, nil),
		line("job started", ids[0], "cpu", queue.StateRunning, nil),
		line("job started", ids[1], "disk", queue.StateRunning, nil),
		line("job finished", ids[1], "disk", queue.StateKilled, &killedAfter),
		line("job finished", ids[0], "cpu", queue.StateSucceeded, &ran),
	}
	got := rec.With([]string{"job", "kind", "app", "state", "took"}, "job admitted", "job started", "job finished")
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("transition lines (-want,+got):\n%s", diff)
	}
	if ran <= 0 {
		t.Errorf("runtime %v, want > 0", ran)
	}
}

// A learning tick is one INFO line: the kinds it updated, the hosts it
// scored and skipped, how long it took.
func TestLearningTickIsLogged(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	h := newHarness(t, harnessOpts{nodes: 1, logger: slog.New(rec)})
	from, to := colocate(h, "disk")
	if _, err := h.e.Learn(h.ctx, from, to); err != nil {
		t.Fatal(err)
	}
	got := rec.With([]string{"kinds", "updates", "hosts_observed", "hosts_stale", "hosts_invalid"}, "learning tick")
	want := []logtest.Line{{Level: slog.LevelInfo, Msg: "learning tick", Attrs: map[string]any{
		"kinds": int64(2), "updates": int64(1), "hosts_observed": int64(1), "hosts_stale": int64(0), "hosts_invalid": int64(0),
	}}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("tick lines (-want,+got):\n%s", diff)
	}
	took := rec.With([]string{"took"}, "learning tick")
	if _, ok := took[0].Attrs["took"].(time.Duration); !ok {
		t.Errorf("took = %#v, want a time.Duration", took[0].Attrs["took"])
	}
}

// On a simulated clock the log names the times and durations it carries on
// that clock sim_from, sim_to and sim_took; the tick's own duration (wall
// time) stays took.
func TestSimulatedClockLogKeys(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	h := newHarness(t, harnessOpts{nodes: 1, logger: slog.New(rec)})
	h.e.simClock = true
	from, to := colocate(h, "disk")
	if _, err := h.e.Learn(h.ctx, from, to); err != nil {
		t.Fatal(err)
	}
	tick := rec.With([]string{"sim_from", "sim_to", "from", "to"}, "learning tick")
	if len(tick) != 1 {
		t.Fatalf("%d learning tick lines, want 1", len(tick))
	}
	a := tick[0].Attrs
	if a["sim_from"] != from || a["sim_to"] != to || a["from"] != nil || a["to"] != nil {
		t.Errorf("tick attrs %v; want sim_from %s and sim_to %s only", a, from, to)
	}
	if _, ok := rec.With([]string{"took"}, "learning tick")[0].Attrs["took"].(time.Duration); !ok {
		t.Error("the tick's own duration is not took")
	}
	j := queue.Job{ID: "j1", Kind: "cpu", State: queue.StateSucceeded, RunningAt: &from, FinishedAt: &to}
	h.e.logFinished(j)
	fin := rec.With([]string{"sim_took", "took"}, "job finished")
	if len(fin) != 1 || fin[0].Attrs["sim_took"] != to.Sub(from) || fin[0].Attrs["took"] != nil {
		t.Errorf("job finished lines %v; want sim_took %v only", fin, to.Sub(from))
	}
}

// failingJournal fails every write while failing is set.
type failingJournal struct {
	journalSink
	failing bool
}

func (f *failingJournal) AddGoodness(r journal.GoodnessRecord) error {
	if f.failing {
		return errors.New("journal: appending to goodness.jsonl: input/output error")
	}
	return f.journalSink.AddGoodness(r)
}

// A failing journal logs once per streak: the first failure at WARN, and
// the success that ends it at INFO with how many failed.
func TestJournalFailuresLoggedOncePerStreak(t *testing.T) {
	rec := &logtest.Recorder{Min: slog.LevelInfo}
	h := newHarness(t, harnessOpts{logger: slog.New(rec)})
	fj := &failingJournal{journalSink: h.journal, failing: true}
	h.e.journal = fj
	for range 5 {
		h.e.journalGoodness(journal.GoodnessRecord{Node: "node01"})
	}
	fj.failing = false
	h.e.journalGoodness(journal.GoodnessRecord{Node: "node01"})
	h.e.journalGoodness(journal.GoodnessRecord{Node: "node01"})
	warn := "journal: writing a record failed; the records stay in memory, and the next failures are counted, not logged"
	got := rec.With([]string{"failed"}, warn, "journal: writing records again")
	want := []logtest.Line{
		{Level: slog.LevelWarn, Msg: warn, Attrs: map[string]any{}},
		{Level: slog.LevelInfo, Msg: "journal: writing records again", Attrs: map[string]any{"failed": int64(5)}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("journal log lines (-want +got):\n%s", diff)
	}
}
