package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// recorder is a Log that applies each commit as the next entry and keeps
// the entries, as a replicated log would append them.
type recorder struct {
	s       *queue.Store
	mu      sync.Mutex
	next    uint64
	entries []queue.Entry
}

func (r *recorder) Commit(_ context.Context, cmds []queue.Command) ([]queue.Result, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := queue.Entry{Index: r.next + 1, Epoch: 7, Commands: cmds}
	res, err := r.s.Apply(e)
	if err != nil {
		return nil, err
	}
	r.next++
	r.entries = append(r.entries, e)
	return res[0], nil
}

// session drives a store through every kind of write (the quarantine of
// a learned section too): concurrent
// submissions (group-committed) with and without keys and deadlines,
// admissions with passed and blocked jobs, starts, finishes of every
// kind, requeues, parking and resolving, cancellations, learned state in
// both sections (dense, rows, full and partial saves, a migration from
// the old layout), fairness state and compaction.
func session(t *testing.T, s *queue.Store, clk *queuetest.Clock, rng *rand.Rand) {
	t.Helper()
	var wg sync.WaitGroup
	ids := make([]string, 40)
	for i := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := queuetest.Job(fmt.Sprintf("k%d", i%5))
			j.Labels = map[string]string{"n": fmt.Sprint(i)}
			if i%3 == 0 {
				j.IdempotencyKey = fmt.Sprintf("key-%d", i%6) // some keys repeat
			}
			if i%7 == 0 {
				d := queuetest.Start.Add(time.Hour)
				j.Deadline = &d
			}
			j.Submit = json.RawMessage(`{ "am": { "x" : 1 } }`)
			got, _, err := s.Submit(context.Background(), j)
			if err != nil {
				t.Errorf("submit %d: %v", i, err)
				return
			}
			ids[i] = got.ID
		}()
	}
	wg.Wait()
	pending, err := s.Pending(0)
	if err != nil {
		t.Fatal(err)
	}
	for n, j := range pending[:20] {
		clk.Advance(time.Duration(rng.IntN(5000)) * time.Millisecond)
		var passed []string
		if n+1 < len(pending) {
			passed = []string{pending[n+1].ID}
		}
		if _, err := s.Admit(j.ID, fmt.Sprintf("application_1_%04d", n), json.RawMessage(`{"chosen": "`+j.ID+`"}`), passed, []string{pending[len(pending)-1].ID}); err != nil {
			t.Fatal(err)
		}
		switch n % 5 {
		case 0:
			must(t)(s.Requeue(j.ID, "rm down"))
		case 1:
			must(t)(s.Finish(j.ID, queue.StateFailed, "exit 1"))
		default:
			must(t)(s.Start(j.ID))
		}
	}
	for n, j := range pending[:20] {
		clk.Advance(time.Duration(rng.IntN(60)) * time.Second)
		switch n % 5 {
		case 2:
			must(t)(s.Finish(j.ID, queue.StateSucceeded, ""))
		case 3:
			must(t)(s.Park(j.ID, "gone"))
			must(t)(s.Resolve(j.ID, queue.StateSucceeded, "it ran"))
		case 4:
			must(t)(s.Finish(j.ID, queue.StateKilled, "killed"))
		}
	}
	must(t)(s.Cancel(pending[25].ID))
	if _, err := s.Cancel(pending[2].ID); !errors.Is(err, queue.ErrIllegalTransition) {
		t.Fatalf("cancel of a finished job: %v, want ErrIllegalTransition", err)
	}
	if err := s.SavePreferences([]byte(`{"old":"layout"}`)); err != nil {
		t.Fatal(err)
	}
	if err := s.MigrateLearned(queue.SectionPreferences, learned(rng, 3), []byte(`{"old":"layout"}`)); err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if err := s.SaveLearned(
			queue.LearnedSave{Section: queue.SectionProfiles, State: learned(rng, 4), Full: i == 0},
			queue.LearnedSave{Section: queue.SectionPreferences, State: learned(rng, 3)},
		); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.QuarantineLearned(queue.SectionPreferences, "a poisoned import"); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveFairness([]byte(`{"deficits":{"alice":2}}`)); err != nil {
		t.Fatal(err)
	}
	clk.Advance(48 * time.Hour)
	if n, err := s.Compact(clk.Now().Add(-24 * time.Hour)); err != nil || n == 0 {
		t.Fatalf("compact: %d, %v", n, err)
	}
}

func must(t *testing.T) func(queue.Job, error) {
	return func(_ queue.Job, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
}

// learned is a model state with a dense vector, a NaN and a run of equal
// values in its rows.
func learned(rng *rand.Rand, n int) queue.Learned {
	st := queue.Learned{Meta: json.RawMessage(`{"v":1}`), Dense: []float64{rng.Float64(), math.NaN(), 0}}
	for i := range n {
		st.Names = append(st.Names, fmt.Sprintf("k%d", i))
		if rng.IntN(2) == 0 {
			st.Rows = append(st.Rows, queue.LearnedRow{Index: i, Floats: []float64{rng.NormFloat64(), 1, 1, 1}, Ints: []int64{int64(rng.IntN(9)), -3}})
		}
	}
	return st
}

func content(t *testing.T, s *queue.Store) []string {
	t.Helper()
	c, err := s.Content()
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func openAt(t *testing.T, dir string) *queue.Store {
	t.Helper()
	s, err := queue.Open(filepath.Join(dir, "replica.db"), queue.Options{NoSync: true, Now: func() time.Time {
		t.Error("applying a command read the clock")
		return time.Time{}
	}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// The seam of the replicated log: the commands a store's methods
// committed, sent through the wire form and applied in order to an empty
// store, give the same content, key for key and byte for byte, and the
// same digest — with no clock read while applying.
func TestReplayGivesTheSameStore(t *testing.T) {
	seed := rand.Uint64()
	t.Logf("seed %d", seed)
	s, clk := queuetest.OpenStore(t, queue.Options{})
	rec := &recorder{s: s}
	s.SetLog(rec)
	session(t, s, clk, rand.New(rand.NewPCG(seed, 2)))

	one := openAt(t, t.TempDir())
	all := openAt(t, t.TempDir())
	var wire []queue.Entry
	for _, e := range rec.entries {
		b, err := queue.EncodeEntry(e)
		if err != nil {
			t.Fatal(err)
		}
		d, err := queue.DecodeEntry(b)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := one.Apply(d); err != nil {
			t.Fatalf("apply entry %d: %v", d.Index, err)
		}
		wire = append(wire, d)
	}
	if _, err := all.Apply(wire...); err != nil {
		t.Fatal(err)
	}
	want := content(t, s)
	for name, r := range map[string]*queue.Store{"one by one": one, "all at once": all} {
		if diff := cmp.Diff(want, content(t, r)); diff != "" {
			t.Errorf("%s: replayed store differs (-original,+replica):\n%s", name, diff)
		}
		ia, da, _ := s.Digest()
		ib, db, _ := r.Digest()
		if ia != ib || da != db || ia != uint64(len(rec.entries)) {
			t.Errorf("%s: digest %d %x, original %d %x (%d entries)", name, ib, db, ia, da, len(rec.entries))
		}
	}
	// Entries applied before are skipped: applying the log again changes nothing.
	if res, err := one.Apply(wire...); err != nil || res[0] != nil {
		t.Fatalf("re-apply: %v, %v", res[0], err)
	}
	if diff := cmp.Diff(want, content(t, one)); diff != "" {
		t.Errorf("re-applied store changed:\n%s", diff)
	}
}

func TestApplyGap(t *testing.T) {
	s := openAt(t, t.TempDir())
	at := queuetest.Start
	j := queuetest.Job("a")
	j.ID = "01JBZ7V7Y5000000000000000A"
	_, err := s.Apply(queue.Entry{Index: 1, Commands: []queue.Command{queue.CmdSubmit{At: at, Jobs: []queue.Job{j}}}}, queue.Entry{Index: 3})
	var gap *queue.GapError
	if !errors.As(err, &gap) || gap.Applied != 1 || gap.Index != 3 {
		t.Fatalf("err %v, want a gap after 1 at 3", err)
	}
	if n, _ := s.Applied(); n != 0 {
		t.Errorf("applied %d after a failed Apply, want 0", n)
	}
	if _, err := s.Get(j.ID); !errors.Is(err, queue.ErrNotFound) {
		t.Errorf("the failed Apply stored the job: %v", err)
	}
}

// A command refused by the state machine changes nothing, is the same on
// every replica, and does not stop the entry's other commands.
func TestApplyRefusals(t *testing.T) {
	s := openAt(t, t.TempDir())
	at := queuetest.Start
	ok, bad := queuetest.Job("a"), queuetest.Job("BAD")
	ok.ID, bad.ID = "01JBZ7V7Y5000000000000000A", "01JBZ7V7Y5000000000000000B"
	past := at.Add(-time.Second)
	late := queuetest.Job("a")
	late.ID, late.Deadline = "01JBZ7V7Y5000000000000000C", &past
	res, err := s.Apply(queue.Entry{Commands: []queue.Command{
		queue.CmdStart{At: at, ID: ok.ID},
		queue.CmdSubmit{At: at, Jobs: []queue.Job{bad, ok, late}},
		queue.CmdFinish{At: at, ID: ok.ID, Final: queue.StateSucceeded},
		queue.CmdResolve{At: at, ID: ok.ID, To: queue.StateRunning},
		queue.CmdCompact{At: at, State: queue.StatePending},
		queue.CmdSaveLearned{Saves: []queue.LearnedSave{{Section: "nope"}}},
		queue.CmdAdmit{At: at, ID: ok.ID, AppID: "application_1_0001", Decision: json.RawMessage(`{`)},
		queue.CmdCancel{At: at, ID: ok.ID},
	}})
	if err != nil {
		t.Fatal(err)
	}
	r := res[0]
	checks := []struct {
		name string
		err  error
		want error
	}{
		{"start of an unknown job", r[0].Err, queue.ErrNotFound},
		{"invalid kind", r[1].Submitted[0].Err, queue.ErrInvalid},
		{"accepted", r[1].Submitted[1].Err, nil},
		{"deadline past", r[1].Submitted[2].Err, queue.ErrInvalid},
		{"finish of a pending job", r[2].Err, queue.ErrIllegalTransition},
		{"resolve to running", r[3].Err, queue.ErrInvalid},
		{"compact pending", r[4].Err, queue.ErrInvalid},
		{"unknown section", r[5].Err, queue.ErrInvalid},
		{"decision not JSON", r[6].Err, queue.ErrInvalid},
		{"cancel", r[7].Err, nil},
	}
	for _, c := range checks {
		if !errors.Is(c.err, c.want) || (c.want == nil) != (c.err == nil) {
			t.Errorf("%s: %v, want %v", c.name, c.err, c.want)
		}
	}
	if got := r[7].Job; got.State != queue.StateCancelled || !got.FinishedAt.Equal(at) || got.Seq != 1 {
		t.Errorf("cancelled job %+v", got)
	}
}

// A proposer that could not tell whether its submission went through may
// propose it again: the same job comes back, created, and nothing is
// stored twice. A different job under a used id is refused.
func TestSubmitReproposed(t *testing.T) {
	s := openAt(t, t.TempDir())
	at := queuetest.Start
	j := queuetest.Job("a")
	j.ID = "01JBZ7V7Y5000000000000000A"
	cmd := queue.CmdSubmit{At: at, Jobs: []queue.Job{j}}
	other := j
	other.Kind = "b"
	res, err := s.Apply(queue.Entry{Commands: []queue.Command{cmd}}, queue.Entry{Commands: []queue.Command{cmd}},
		queue.Entry{Commands: []queue.Command{queue.CmdSubmit{At: at, Jobs: []queue.Job{other}}}})
	if err != nil {
		t.Fatal(err)
	}
	first, again, clash := res[0][0].Submitted[0], res[1][0].Submitted[0], res[2][0].Submitted[0]
	if !first.Created || !again.Created || again.Job.Seq != first.Job.Seq {
		t.Errorf("reproposed: %+v after %+v", again, first)
	}
	if clash.Err == nil {
		t.Errorf("a different job under a used id was stored: %+v", clash.Job)
	}
	if c, _ := s.Counts(); c[queue.StatePending] != 1 {
		t.Errorf("%d pending, want 1", c[queue.StatePending])
	}
}

func TestEntryWireRejects(t *testing.T) {
	for name, b := range map[string]string{
		"not json":       `{`,
		"format":         `{"format":2,"index":1,"commands":[]}`,
		"unknown type":   `{"format":1,"index":1,"commands":[{"type":"drop_table","body":{}}]}`,
		"bad body":       `{"format":1,"index":1,"commands":[{"type":"start","body":[]}]}`,
		"short row":      `{"format":1,"index":1,"commands":[{"type":"save_learned","body":[{"section":"profiles","names":["a"],"rows":["AAA="]}]}]}`,
		"bad dense":      `{"format":1,"index":1,"commands":[{"type":"save_learned","body":[{"section":"profiles","names":["a"],"dense":"/w=="}]}]}`,
		"migrate nobody": `{"format":1,"index":1,"commands":[{"type":"migrate_learned","body":3}]}`,
	} {
		if _, err := queue.DecodeEntry([]byte(b)); !errors.Is(err, queue.ErrEntry) {
			t.Errorf("%s: %v, want ErrEntry", name, err)
		}
	}
}

func FuzzDecodeEntry(f *testing.F) {
	e := queue.Entry{Index: 3, Epoch: 2, Commands: []queue.Command{
		queue.CmdSubmit{At: queuetest.Start, Jobs: []queue.Job{queuetest.Job("a")}},
		queue.CmdSaveLearned{Saves: []queue.LearnedSave{{Section: queue.SectionProfiles, State: learned(rand.New(rand.NewPCG(1, 1)), 3)}}},
		queue.CmdFinish{At: queuetest.Start, ID: "x", Final: queue.StateSucceeded, Runtime: time.Second, Measured: true},
	}}
	b, err := queue.EncodeEntry(e)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(b)
	f.Add([]byte(`{"format":1,"commands":[{"type":"submit","body":{"Jobs":[{}]}}]}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := queue.DecodeEntry(b)
		if err != nil {
			return
		}
		again, err := queue.EncodeEntry(e)
		if err != nil {
			t.Fatalf("a decoded entry does not encode: %v", err)
		}
		if _, err := queue.DecodeEntry(again); err != nil {
			t.Fatalf("a re-encoded entry does not decode: %v", err)
		}
	})
}

// A snapshot installed in another store gives it the same content and
// applied index, in place of what it held.
func TestSnapshotInstall(t *testing.T) {
	s, clk := queuetest.OpenStore(t, queue.Options{})
	session(t, s, clk, rand.New(rand.NewPCG(3, 3)))
	path, applied, err := s.SnapshotFile(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	other, _ := queuetest.OpenStore(t, queue.Options{})
	if _, _, err := other.Submit(t.Context(), queuetest.Job("gone")); err != nil {
		t.Fatal(err)
	}
	got, err := other.InstallSnapshot(path)
	if err != nil || got != applied || applied == 0 {
		t.Fatalf("install: applied %d (snapshot %d), %v", got, applied, err)
	}
	if diff := cmp.Diff(content(t, s), content(t, other)); diff != "" {
		t.Errorf("installed store differs (-snapshot,+installed):\n%s", diff)
	}
	if _, err := other.InstallSnapshot(filepath.Join(t.TempDir(), "missing.db")); err == nil {
		t.Error("installed a missing snapshot")
	}
}
