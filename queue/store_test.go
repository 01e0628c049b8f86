package queue_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// openStore opens a temp store and checks the index invariants at cleanup.
func openStore(tb testing.TB, opts queue.Options) (*queue.Store, *queuetest.Clock) {
	tb.Helper()
	s, clk := queuetest.OpenStore(tb, opts)
	tb.Cleanup(func() {
		if err := s.CheckInvariants(); err != nil && !errors.Is(err, queue.ErrClosed) {
			tb.Errorf("invariants: %v", err)
		}
	})
	return s, clk
}

func submit(tb testing.TB, s *queue.Store, j queue.Job) queue.Job {
	tb.Helper()
	got, created, err := s.Submit(context.Background(), j)
	if err != nil {
		tb.Fatalf("Submit(%s): %v", j.Kind, err)
	}
	if !created {
		tb.Fatalf("Submit(%s): created = false", j.Kind)
	}
	return got
}

func ids(jobs []queue.Job) []string {
	out := make([]string, len(jobs))
	for i, j := range jobs {
		out[i] = j.ID
	}
	return out
}

func TestSubmitAssignsStoreFields(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	in := queuetest.Job("tpch-q10")
	in.ID, in.Seq, in.State, in.Skips, in.AppID = "mine", 99, queue.StateRunning, 7, "app_1" // ignored
	in.Labels = map[string]string{"team": "db"}
	in.Submit = json.RawMessage(`{"argv": ["true"]}`)
	dl := clk.Now().Add(time.Hour)
	in.Deadline = &dl
	got := submit(t, s, in)

	want := queuetest.Job("tpch-q10")
	want.ID, want.Seq, want.State, want.CreatedAt = got.ID, 1, queue.StatePending, clk.Now()
	want.Labels = map[string]string{"team": "db"}
	want.Submit = json.RawMessage(`{"argv":["true"]}`)
	want.Deadline = &dl
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Submit (-want +got):\n%s", diff)
	}
	if len(got.ID) != 26 {
		t.Errorf("ID %q is not a ULID", got.ID)
	}
	back, err := s.Get(got.ID)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(got, back); diff != "" {
		t.Errorf("Get (-submitted +stored):\n%s", diff)
	}
	// The caller's maps are not shared with the store.
	in.Labels["team"] = "changed"
	if back, _ := s.Get(got.ID); back.Labels["team"] != "db" {
		t.Errorf("label changed through the caller's map: %v", back.Labels)
	}
}

func TestSubmitRejectsPastDeadline(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	j := queuetest.Job("k")
	past := clk.Now().Add(-time.Second)
	j.Deadline = &past
	_, _, err := s.Submit(context.Background(), j)
	var fe *queue.FieldError
	if !errors.As(err, &fe) || fe.Field != "deadline" || !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("Submit with past deadline: %v, want FieldError on deadline", err)
	}
}

func TestRetryAfterDeadlinePassed(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	j := queuetest.Job("k")
	j.IdempotencyKey = "once"
	dl := clk.Now().Add(time.Minute)
	j.Deadline = &dl
	first := submit(t, s, j)
	clk.Advance(time.Hour)
	again, created, err := s.Submit(context.Background(), j)
	if err != nil || created || again.ID != first.ID {
		t.Fatalf("retry after the deadline: id %s created %v err %v; want the first job", again.ID, created, err)
	}
	j.IdempotencyKey = "new"
	if _, _, err := s.Submit(context.Background(), j); !errors.Is(err, queue.ErrInvalid) {
		t.Fatalf("new job with a past deadline: %v, want ErrInvalid", err)
	}
}

func TestRejectedSubmitDoesNotFailItsBatch(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	past := clk.Now().Add(-time.Second)
	var wg sync.WaitGroup
	var bad, good atomic.Int32
	for i := 0; i < 40; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j := queuetest.Job("k")
			if i%2 == 0 {
				j.Deadline = &past
			}
			_, _, err := s.Submit(context.Background(), j)
			switch {
			case i%2 == 0 && errors.Is(err, queue.ErrInvalid):
				bad.Add(1)
			case i%2 == 1 && err == nil:
				good.Add(1)
			default:
				t.Errorf("submit %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	if bad.Load() != 20 || good.Load() != 20 {
		t.Errorf("rejected %d, accepted %d; want 20 and 20", bad.Load(), good.Load())
	}
}

func TestRecent(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	var js []queue.Job
	for i := 0; i < 6; i++ {
		js = append(js, submit(t, s, queuetest.Job("k")))
	}
	for _, i := range []int{0, 2, 3} {
		s.Cancel(js[i].ID)
	}
	tests := map[string]struct {
		state queue.State
		limit int
		want  []queue.Job
	}{
		"cancelled":     {queue.StateCancelled, 0, []queue.Job{js[3], js[2], js[0]}},
		"cancelled, 2":  {queue.StateCancelled, 2, []queue.Job{js[3], js[2]}},
		"pending":       {queue.StatePending, 0, []queue.Job{js[5], js[4], js[1]}},
		"all, 4":        {"", 4, []queue.Job{js[5], js[4], js[3], js[2]}},
		"none finished": {queue.StateSucceeded, 0, nil},
		"cancelled, 1":  {queue.StateCancelled, 1, []queue.Job{js[3]}},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			got, err := s.Recent(tc.state, tc.limit)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(ids(tc.want), ids(got)); diff != "" {
				t.Errorf("Recent (-want +got):\n%s", diff)
			}
		})
	}
	// "succeeded" sorts last among the states: no key follows its prefix.
	for _, j := range js[4:] {
		s.Admit(j.ID, "", nil, nil, nil)
		s.Finish(j.ID, queue.StateSucceeded, "")
	}
	got, _ := s.Recent(queue.StateSucceeded, 0)
	if diff := cmp.Diff([]string{js[5].ID, js[4].ID}, ids(got)); diff != "" {
		t.Errorf("Recent(succeeded) (-want +got):\n%s", diff)
	}
}

func TestPositionAcrossBlocks(t *testing.T) {
	if testing.Short() {
		t.Skip("submits 9,000 jobs")
	}
	s, _ := openStore(t, queue.Options{NoSync: true})
	const n = 9000 // three blocks of 4096 sequence numbers
	var wg sync.WaitGroup
	for w := 0; w < 30; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/30; i++ {
				if _, _, err := s.Submit(context.Background(), queuetest.Job("k")); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	all, _ := s.Pending(0)
	rng := rand.New(rand.NewPCG(4, 4))
	for i := 0; i < 1500; i++ { // holes in every block
		s.Cancel(all[rng.IntN(len(all))].ID)
	}
	pend, _ := s.Pending(0)
	for _, i := range []int{0, 1, len(pend) / 3, len(pend) / 2, len(pend) - 2, len(pend) - 1} {
		if got, err := s.Position(pend[i].ID); err != nil || got != i {
			t.Errorf("Position(job %d, seq %d) = %d, %v; want %d", i, pend[i].Seq, got, err, i)
		}
	}
}

func TestGetNotFound(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	if _, err := s.Get("nope"); !errors.Is(err, queue.ErrNotFound) {
		t.Fatalf("Get: %v, want ErrNotFound", err)
	}
}

func TestIdempotencyKey(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	j := queuetest.Job("k")
	j.IdempotencyKey = "retry-1"
	first := submit(t, s, j)

	j.Kind = "other" // a retry with a different body still returns the first job
	again, created, err := s.Submit(context.Background(), j)
	if err != nil || created {
		t.Fatalf("repeat Submit: created=%v err=%v", created, err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("repeat Submit (-first +again):\n%s", diff)
	}
	// Keys are scoped per user.
	j.User = "bob"
	bobs, created, err := s.Submit(context.Background(), j)
	if err != nil || !created || bobs.ID == first.ID {
		t.Fatalf("same key, other user: created=%v err=%v id=%s", created, err, bobs.ID)
	}
	if n, _ := s.Counts(); n[queue.StatePending] != 2 {
		t.Errorf("pending count %d, want 2", n[queue.StatePending])
	}
}

func TestIdempotencyUnderConcurrency(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	const workers, keys = 32, 4
	var (
		wg      sync.WaitGroup
		mu      sync.Mutex
		byKey   = map[string]map[string]bool{}
		created = map[string]int{}
	)
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < keys; k++ {
				j := queuetest.Job("k")
				j.IdempotencyKey = fmt.Sprintf("key-%d", k)
				got, c, err := s.Submit(context.Background(), j)
				if err != nil {
					t.Error(err)
					return
				}
				mu.Lock()
				if byKey[j.IdempotencyKey] == nil {
					byKey[j.IdempotencyKey] = map[string]bool{}
				}
				byKey[j.IdempotencyKey][got.ID] = true
				if c {
					created[j.IdempotencyKey]++
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	for k := 0; k < keys; k++ {
		key := fmt.Sprintf("key-%d", k)
		if len(byKey[key]) != 1 || created[key] != 1 {
			t.Errorf("key %s: %d distinct jobs, %d created; want 1 and 1", key, len(byKey[key]), created[key])
		}
	}
	if n, _ := s.Counts(); n[queue.StatePending] != keys {
		t.Errorf("pending %d, want %d", n[queue.StatePending], keys)
	}
}

func TestPendingFIFOAndPosition(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	var all []queue.Job
	for i := 0; i < 10; i++ {
		clk.Advance(time.Millisecond)
		all = append(all, submit(t, s, queuetest.Job(fmt.Sprintf("k%d", i))))
	}
	head, err := s.Pending(3)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(ids(all[:3]), ids(head)); diff != "" {
		t.Errorf("Pending(3) (-want +got):\n%s", diff)
	}
	if _, err := s.Cancel(all[1].ID); err != nil {
		t.Fatal(err)
	}
	rest, _ := s.Pending(0)
	want := append(ids(all[:1]), ids(all[2:])...)
	if diff := cmp.Diff(want, ids(rest)); diff != "" {
		t.Errorf("Pending(0) after cancel (-want +got):\n%s", diff)
	}
	for i, id := range want {
		if pos, err := s.Position(id); err != nil || pos != i {
			t.Errorf("Position(%s) = %d, %v; want %d", id, pos, err, i)
		}
	}
	if _, err := s.Position(all[1].ID); !errors.Is(err, queue.ErrNotPending) {
		t.Errorf("Position of cancelled job: %v, want ErrNotPending", err)
	}
}

func TestTransitions(t *testing.T) {
	type step struct {
		op   string // admit, requeue, start, succeed, fail, kill, cancel
		want queue.State
		err  error
	}
	tests := map[string][]step{
		"happy path":          {{"admit", queue.StateAdmitted, nil}, {"start", queue.StateRunning, nil}, {"succeed", queue.StateSucceeded, nil}},
		"fails while running": {{"admit", queue.StateAdmitted, nil}, {"start", queue.StateRunning, nil}, {"fail", queue.StateFailed, nil}},
		"killed before run":   {{"admit", queue.StateAdmitted, nil}, {"kill", queue.StateKilled, nil}},
		"requeue":             {{"admit", queue.StateAdmitted, nil}, {"requeue", queue.StatePending, nil}, {"admit", queue.StateAdmitted, nil}},
		"cancel pending":      {{"cancel", queue.StateCancelled, nil}},
		"start pending":       {{"start", queue.StatePending, queue.ErrIllegalTransition}},
		"finish pending":      {{"succeed", queue.StatePending, queue.ErrIllegalTransition}},
		"cancel admitted":     {{"admit", queue.StateAdmitted, nil}, {"cancel", queue.StateAdmitted, queue.ErrIllegalTransition}},
		"requeue running":     {{"admit", queue.StateAdmitted, nil}, {"start", queue.StateRunning, nil}, {"requeue", queue.StateRunning, queue.ErrIllegalTransition}},
		"admit twice":         {{"admit", queue.StateAdmitted, nil}, {"admit", queue.StateAdmitted, queue.ErrIllegalTransition}},
		"terminal is final":   {{"cancel", queue.StateCancelled, nil}, {"admit", queue.StateCancelled, queue.ErrIllegalTransition}},
		"finish twice":        {{"admit", queue.StateAdmitted, nil}, {"kill", queue.StateKilled, nil}, {"fail", queue.StateKilled, queue.ErrIllegalTransition}},
	}
	for name, steps := range tests {
		t.Run(name, func(t *testing.T) {
			s, _ := openStore(t, queue.Options{})
			id := submit(t, s, queuetest.Job("k")).ID
			for i, st := range steps {
				var err error
				switch st.op {
				case "admit":
					_, err = s.Admit(id, "application_1_0001", nil, nil, nil)
				case "requeue":
					_, err = s.Requeue(id, "rm said no")
				case "start":
					_, err = s.Start(id)
				case "succeed":
					_, err = s.Finish(id, queue.StateSucceeded, "")
				case "fail":
					_, err = s.Finish(id, queue.StateFailed, "exit 1")
				case "kill":
					_, err = s.Finish(id, queue.StateKilled, "killed")
				case "cancel":
					_, err = s.Cancel(id)
				}
				if !errors.Is(err, st.err) || (st.err == nil) != (err == nil) {
					t.Fatalf("step %d %s: err %v, want %v", i, st.op, err, st.err)
				}
				var te *queue.TransitionError
				if st.err != nil && !errors.As(err, &te) {
					t.Fatalf("step %d %s: %v is not a *TransitionError", i, st.op, err)
				}
				got, _ := s.Get(id)
				if got.State != st.want {
					t.Fatalf("step %d %s: state %s, want %s", i, st.op, got.State, st.want)
				}
			}
		})
	}
}

func TestFinishRejectsNonFinalState(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	id := submit(t, s, queuetest.Job("k")).ID
	s.Admit(id, "", nil, nil, nil)
	_, err := s.Finish(id, queue.StateRunning, "")
	var fe *queue.FieldError
	if !errors.As(err, &fe) || fe.Field != "final" {
		t.Fatalf("Finish(running): %v, want FieldError on final", err)
	}
}

func TestAdmitRecordsAndSkips(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	a := submit(t, s, queuetest.Job("a"))
	b := submit(t, s, queuetest.Job("b"))
	c := submit(t, s, queuetest.Job("c"))
	gone := submit(t, s, queuetest.Job("d"))
	s.Cancel(gone.ID)
	clk.Advance(time.Minute)

	dec := json.RawMessage(`{"chosen": "x",  "passed": []}`)
	got, err := s.Admit(c.ID, "application_1_0007", dec, []string{a.ID, b.ID, a.ID, gone.ID, c.ID, "unknown"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.State != queue.StateAdmitted || got.AppID != "application_1_0007" || got.AdmittedAt == nil || !got.AdmittedAt.Equal(clk.Now()) {
		t.Errorf("admitted job: %+v", got)
	}
	if string(got.Decision) != `{"chosen":"x","passed":[]}` {
		t.Errorf("decision stored as %s", got.Decision)
	}
	skips := map[string]int{}
	for _, j := range []queue.Job{a, b, c, gone} {
		g, _ := s.Get(j.ID)
		skips[j.Kind] = g.Skips
	}
	if diff := cmp.Diff(map[string]int{"a": 1, "b": 1, "c": 0, "d": 0}, skips); diff != "" {
		t.Errorf("skips (-want +got):\n%s", diff)
	}

	// Blocked: each pending id once; passed ones are not blocked too.
	e := submit(t, s, queuetest.Job("e"))
	f := submit(t, s, queuetest.Job("f"))
	if _, err := s.Admit(f.ID, "application_1_0008", nil, []string{a.ID}, []string{e.ID, e.ID, a.ID, c.ID, f.ID}); err != nil {
		t.Fatal(err)
	}
	counts := map[string][2]int{}
	for _, j := range []queue.Job{a, b, e} {
		g, _ := s.Get(j.ID)
		counts[j.Kind] = [2]int{g.Skips, g.Blocked}
	}
	if diff := cmp.Diff(map[string][2]int{"a": {2, 0}, "b": {1, 0}, "e": {0, 1}}, counts); diff != "" {
		t.Errorf("skips, blocked (-want +got):\n%s", diff)
	}
	if _, err := s.Admit(a.ID, "", json.RawMessage(`{`), nil, nil); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("Admit with bad decision JSON: %v, want ErrInvalid", err)
	}
}

func TestRequeueKeepsPlace(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	a := submit(t, s, queuetest.Job("a"))
	b := submit(t, s, queuetest.Job("b"))
	s.Admit(a.ID, "app", json.RawMessage(`{}`), nil, nil)
	got, err := s.Requeue(a.ID, "submit failed: 503")
	if err != nil {
		t.Fatal(err)
	}
	if got.AppID != "" || got.AdmittedAt != nil || got.Decision != nil || got.Requeues != 1 || got.Diagnostics != "submit failed: 503" {
		t.Errorf("requeued job: %+v", got)
	}
	head, _ := s.Pending(0)
	if diff := cmp.Diff([]string{a.ID, b.ID}, ids(head)); diff != "" {
		t.Errorf("FIFO after requeue (-want +got):\n%s", diff)
	}
}

func TestFinishUpdatesHistory(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	runtimes := []time.Duration{10 * time.Minute, 20 * time.Minute, 5 * time.Minute}
	for i, rt := range runtimes {
		id := submit(t, s, queuetest.Job("etl")).ID
		s.Admit(id, "", nil, nil, nil)
		clk.Advance(time.Minute) // admitted → running gap is not runtime
		if i != 1 {
			s.Start(id)
		} else {
			rt += time.Minute // never seen running: measured from admission
		}
		clk.Advance(runtimes[i])
		if _, err := s.Finish(id, queue.StateSucceeded, ""); err != nil {
			t.Fatal(err)
		}
		runtimes[i] = rt
	}
	failed := submit(t, s, queuetest.Job("etl")).ID
	s.Admit(failed, "", nil, nil, nil)
	clk.Advance(time.Hour)
	s.Finish(failed, queue.StateFailed, "") // failures are not history

	got, err := s.History("etl")
	if err != nil {
		t.Fatal(err)
	}
	ewma := float64(runtimes[0])
	for _, rt := range runtimes[1:] {
		ewma = queue.HistoryAlpha*float64(rt) + (1-queue.HistoryAlpha)*ewma
	}
	want := queue.KindHistory{
		Kind: "etl", Runs: 3,
		MeanRuntime: (runtimes[0] + runtimes[1] + runtimes[2]) / 3,
		EWMARuntime: time.Duration(ewma),
		Last:        runtimes,
	}
	if diff := cmp.Diff(want, got, cmpopts.EquateApprox(0, float64(time.Millisecond))); diff != "" {
		t.Errorf("History (-want +got):\n%s", diff)
	}
	all, _ := s.Histories()
	if diff := cmp.Diff(map[string]queue.KindHistory{"etl": got}, all); diff != "" {
		t.Errorf("Histories (-want +got):\n%s", diff)
	}
	if h, _ := s.History("never"); h.Runs != 0 || h.Kind != "never" {
		t.Errorf("History of unknown kind: %+v", h)
	}
}

func TestHistoryKeepsLastTen(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	for i := 1; i <= 13; i++ {
		id := submit(t, s, queuetest.Job("k")).ID
		s.Admit(id, "", nil, nil, nil)
		s.Start(id)
		clk.Advance(time.Duration(i) * time.Second)
		s.Finish(id, queue.StateSucceeded, "")
	}
	h, _ := s.History("k")
	var want []time.Duration
	for i := 4; i <= 13; i++ {
		want = append(want, time.Duration(i)*time.Second)
	}
	if diff := cmp.Diff(want, h.Last); diff != "" || h.Runs != 13 || h.MeanRuntime != 7*time.Second {
		t.Errorf("runs %d mean %v; Last (-want +got):\n%s", h.Runs, h.MeanRuntime, diff)
	}
}

func TestListAndCounts(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	var js []queue.Job
	for i := 0; i < 6; i++ {
		js = append(js, submit(t, s, queuetest.Job("k")))
	}
	s.Admit(js[0].ID, "", nil, nil, nil)
	s.Admit(js[1].ID, "", nil, nil, nil)
	s.Start(js[1].ID)
	s.Cancel(js[2].ID)
	got, err := s.Counts()
	if err != nil {
		t.Fatal(err)
	}
	want := map[queue.State]int{"pending": 3, "admitted": 1, "running": 1, "parked": 0, "cancelled": 1, "succeeded": 0, "failed": 0, "killed": 0}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Counts (-want +got):\n%s", diff)
	}
	pend, _ := s.List(queue.StatePending, 0)
	if diff := cmp.Diff(ids(js[3:]), ids(pend)); diff != "" {
		t.Errorf("List(pending) (-want +got):\n%s", diff)
	}
	two, _ := s.List(queue.StatePending, 2)
	if len(two) != 2 {
		t.Errorf("List(pending, 2) gave %d", len(two))
	}
	all, _ := s.List("", 0)
	if diff := cmp.Diff(ids(js), ids(all)); diff != "" {
		t.Errorf("List(all) (-want +got):\n%s", diff)
	}
	if _, err := s.List("bogus", 0); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("List(bogus): %v, want ErrInvalid", err)
	}
}

func TestPreferences(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	if b, err := s.LoadPreferences(); b != nil || err != nil {
		t.Fatalf("empty store: %q, %v", b, err)
	}
	snap := []byte(`{"version":1}`)
	if err := s.SavePreferences(snap); err != nil {
		t.Fatal(err)
	}
	snap[0] = 'X' // the store keeps its own copy
	got, _ := s.LoadPreferences()
	if string(got) != `{"version":1}` {
		t.Errorf("LoadPreferences = %s", got)
	}
	s.SavePreferences(nil)
	if got, _ := s.LoadPreferences(); got != nil {
		t.Errorf("after delete: %s", got)
	}
}

func TestCompact(t *testing.T) {
	s, clk := openStore(t, queue.Options{})
	old := submit(t, s, queuetest.Job("k"))
	oldKeyed := queuetest.Job("k")
	oldKeyed.IdempotencyKey = "once"
	oldKeyed = submit(t, s, oldKeyed)
	s.Cancel(old.ID)
	s.Admit(oldKeyed.ID, "", nil, nil, nil)
	s.Finish(oldKeyed.ID, queue.StateFailed, "")
	running := submit(t, s, queuetest.Job("k"))
	s.Admit(running.ID, "", nil, nil, nil)
	s.Start(running.ID)
	cut := clk.Advance(time.Hour)
	recent := submit(t, s, queuetest.Job("k"))
	s.Cancel(recent.ID)
	pending := submit(t, s, queuetest.Job("k"))

	n, err := s.Compact(cut)
	if err != nil || n != 2 {
		t.Fatalf("Compact = %d, %v; want 2", n, err)
	}
	all, _ := s.List("", 0)
	if diff := cmp.Diff([]string{running.ID, recent.ID, pending.ID}, ids(all)); diff != "" {
		t.Errorf("after Compact (-want +got):\n%s", diff)
	}
	// The key of a compacted job is free again.
	again := queuetest.Job("k")
	again.IdempotencyKey = "once"
	if _, created, _ := s.Submit(context.Background(), again); !created {
		t.Error("idempotency key of a compacted job still taken")
	}
	if n, _ := s.Compact(cut); n != 0 {
		t.Errorf("second Compact deleted %d", n)
	}
}

func TestCompactManyChunks(t *testing.T) {
	s, clk := openStore(t, queue.Options{NoSync: true})
	const n = 1500
	var wg sync.WaitGroup
	for w := 0; w < 10; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < n/10; i++ {
				j, _, err := s.Submit(context.Background(), queuetest.Job("k"))
				if err != nil {
					t.Error(err)
					return
				}
				s.Cancel(j.ID)
			}
		}()
	}
	wg.Wait()
	got, err := s.Compact(clk.Advance(time.Second))
	if err != nil || got != n {
		t.Fatalf("Compact = %d, %v; want %d", got, err, n)
	}
}

func TestReopenKeepsEverything(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	clk := queuetest.NewClock(queuetest.Start)
	opts := queue.Options{Now: clk.Now, Entropy: rand.NewChaCha8([32]byte{2})}
	s, err := queue.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	a := submit(t, s, queuetest.Job("a"))
	keyed := queuetest.Job("b")
	keyed.IdempotencyKey = "k1"
	b := submit(t, s, keyed)
	s.Admit(a.ID, "app_a", json.RawMessage(`{"chosen":"a"}`), []string{b.ID}, nil)
	s.Start(a.ID)
	clk.Advance(time.Minute)
	s.Finish(a.ID, queue.StateSucceeded, "ok")
	s.SavePreferences([]byte("prefs"))
	wantJobs, _ := s.List("", 0)
	wantHist, _ := s.Histories()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := s.Get(a.ID); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Get after Close: %v", err)
	}
	if _, _, err := s.Submit(context.Background(), queuetest.Job("x")); !errors.Is(err, queue.ErrClosed) {
		t.Errorf("Submit after Close: %v", err)
	}

	s2, err := queue.Open(path, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	gotJobs, _ := s2.List("", 0)
	if diff := cmp.Diff(wantJobs, gotJobs); diff != "" {
		t.Errorf("jobs after reopen (-want +got):\n%s", diff)
	}
	gotHist, _ := s2.Histories()
	if diff := cmp.Diff(wantHist, gotHist); diff != "" {
		t.Errorf("history after reopen (-want +got):\n%s", diff)
	}
	if p, _ := s2.LoadPreferences(); string(p) != "prefs" {
		t.Errorf("preferences after reopen: %q", p)
	}
	if _, created, _ := s2.Submit(context.Background(), keyed); created {
		t.Error("idempotency key forgotten after reopen")
	}
	c := submit(t, s2, queuetest.Job("c"))
	if c.Seq != 3 {
		t.Errorf("seq after reopen = %d, want 3", c.Seq)
	}
	if err := s2.CheckInvariants(); err != nil {
		t.Error(err)
	}
}

func TestOpenBadFiles(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, b []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, b, 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	// A valid queue file, then damaged copies of it.
	good := filepath.Join(dir, "good.db")
	s, err := queue.Open(good, queue.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 50; i++ {
		submit(t, s, queuetest.Job(fmt.Sprintf("k%d", i)))
	}
	s.Close()
	goodBytes, _ := os.ReadFile(good)

	badMeta := append([]byte(nil), goodBytes...)
	for _, off := range []int{0, 4096} { // both meta pages: break the checksums
		for i := off + 40; i < off+64; i++ {
			badMeta[i] ^= 0xff
		}
	}
	badPages := append([]byte(nil), goodBytes...)
	for i := 2 * 4096; i < len(badPages); i++ { // every page after the metas
		badPages[i] = byte(i * 7)
	}

	foreign := filepath.Join(dir, "foreign.db")
	db, err := bolt.Open(foreign, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	db.Update(func(tx *bolt.Tx) error {
		b, _ := tx.CreateBucket([]byte("etcd"))
		return b.Put([]byte("k"), []byte("v"))
	})
	db.Close()

	newer := filepath.Join(dir, "newer.db")
	s, _ = queue.OpenSchema(newer, queue.Options{}, queue.SchemaVersion+1, nil)
	s.Close()

	tests := map[string]struct {
		path string
		want error
	}{
		"text file":        {write("text.db", []byte("hello, this is not a database\n")), queue.ErrForeign},
		"random bytes":     {write("rand.db", bytesOf(rand.New(rand.NewPCG(1, 2)), 3*4096)), queue.ErrForeign},
		"bbolt of another": {foreign, queue.ErrForeign},
		"broken meta":      {write("badmeta.db", badMeta), queue.ErrCorrupt},
		"broken pages":     {write("badpages.db", badPages), queue.ErrCorrupt},
		"newer schema":     {newer, queue.ErrSchema},
		"directory":        {dir, queue.ErrForeign},
	}
	for name, tc := range tests {
		for _, skip := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/skip_check=%v", name, skip), func(t *testing.T) {
				before, _ := os.ReadFile(tc.path)
				s, err := queue.Open(tc.path, queue.Options{SkipCheck: skip, Timeout: time.Second})
				if err == nil {
					s.Close()
				}
				if !errors.Is(err, tc.want) {
					t.Fatalf("Open: %v, want %v", err, tc.want)
				}
				if after, _ := os.ReadFile(tc.path); string(after) != string(before) {
					t.Error("Open modified a file it refused")
				}
			})
		}
	}
	// An existing empty file is refused (integrity_test.go has the rest).
	var te *queue.TruncatedError
	if _, err = queue.Open(write("empty.db", nil), queue.Options{}); !errors.As(err, &te) {
		t.Fatalf("Open(empty file): %v, want a *TruncatedError", err)
	}
}

func bytesOf(r *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(r.UintN(256))
	}
	return b
}

func TestOpenLocked(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	_, err := queue.Open(s.Path(), queue.Options{Timeout: 50 * time.Millisecond})
	if !errors.Is(err, queue.ErrLocked) {
		t.Fatalf("second Open: %v, want ErrLocked", err)
	}
}

func TestMigrationHook(t *testing.T) {
	path := filepath.Join(t.TempDir(), "q.db")
	s, err := queue.OpenSchema(path, queue.Options{}, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	j := submit(t, s, queuetest.Job("k"))
	s.Close()

	var ran []uint64
	migs := map[uint64]func(*bolt.Tx) error{
		1: func(tx *bolt.Tx) error {
			ran = append(ran, 1)
			_, err := tx.CreateBucket([]byte("v2-extra"))
			return err
		},
		2: func(tx *bolt.Tx) error { ran = append(ran, 2); return nil },
	}
	s, err = queue.OpenSchema(path, queue.Options{}, 3, migs)
	if err != nil {
		t.Fatalf("migrate 1 → 3: %v", err)
	}
	if diff := cmp.Diff([]uint64{1, 2}, ran); diff != "" {
		t.Errorf("migrations run (-want +got):\n%s", diff)
	}
	if got, err := s.Get(j.ID); err != nil || got.Kind != "k" {
		t.Errorf("job after migration: %v %v", got, err)
	}
	s.DB().View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("v2-extra")) == nil {
			t.Error("migration's bucket missing")
		}
		return nil
	})
	s.Close()
	ran = nil
	if s, err = queue.OpenSchema(path, queue.Options{}, 3, migs); err != nil || len(ran) != 0 {
		t.Fatalf("reopen at 3: err %v, ran %v", err, ran)
	}
	s.Close()

	// A failing migration leaves the file as it was (one transaction).
	path2 := filepath.Join(t.TempDir(), "q2.db")
	s, _ = queue.OpenSchema(path2, queue.Options{}, 1, nil)
	s.Close()
	boom := errors.New("boom")
	_, err = queue.OpenSchema(path2, queue.Options{}, 3, map[uint64]func(*bolt.Tx) error{
		1: func(tx *bolt.Tx) error { _, err := tx.CreateBucket([]byte("half")); return err },
		2: func(*bolt.Tx) error { return boom },
	})
	if !errors.Is(err, queue.ErrSchema) || !errors.Is(err, boom) {
		t.Fatalf("failing migration: %v", err)
	}
	s, err = queue.OpenSchema(path2, queue.Options{}, 1, nil)
	if err != nil {
		t.Fatalf("reopen at 1 after failed migration: %v", err)
	}
	s.DB().View(func(tx *bolt.Tx) error {
		if tx.Bucket([]byte("half")) != nil {
			t.Error("failed migration left a bucket behind")
		}
		return nil
	})
	s.Close()
	// A missing step is an error too.
	if _, err := queue.OpenSchema(path2, queue.Options{}, 2, nil); !errors.Is(err, queue.ErrSchema) {
		t.Errorf("no migration 1 → 2: %v", err)
	}
}

func TestSubmitCancelledContext(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, _, err := s.Submit(ctx, queuetest.Job("k")); !errors.Is(err, context.Canceled) {
		t.Fatalf("Submit(cancelled): %v", err)
	}
	if n, _ := s.Counts(); n[queue.StatePending] != 0 {
		t.Errorf("a cancelled Submit wrote a job")
	}
}

// TestConcurrentSubmitAndTransitions runs submitters and workers that move
// jobs through their lives at once; run with -race.
func TestConcurrentSubmitAndTransitions(t *testing.T) {
	s, _ := openStore(t, queue.Options{NoSync: true})
	const submitters, perSubmitter, workers = 8, 60, 4
	var wg sync.WaitGroup
	for w := 0; w < submitters; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < perSubmitter; i++ {
				j := queuetest.Job(fmt.Sprintf("k%d", i%5))
				if i%3 == 0 {
					j.IdempotencyKey = fmt.Sprintf("w%d-%d", w, i/6) // every second keyed submit repeats
				}
				if _, _, err := s.Submit(context.Background(), j); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	done := make(chan struct{})
	var moved sync.WaitGroup
	for w := 0; w < workers; w++ {
		moved.Add(1)
		go func() {
			defer moved.Done()
			for {
				select {
				case <-done:
					return
				default:
				}
				head, err := s.Pending(3)
				if err != nil {
					t.Error(err)
					return
				}
				if len(head) == 0 {
					continue
				}
				j := head[len(head)-1]
				var passed []string
				for _, p := range head[:len(head)-1] {
					passed = append(passed, p.ID)
				}
				if _, err := s.Admit(j.ID, "app", nil, passed, nil); err != nil {
					if errors.Is(err, queue.ErrIllegalTransition) {
						continue // another worker won
					}
					t.Error(err)
					return
				}
				s.Start(j.ID)
				s.Finish(j.ID, queue.StateSucceeded, "")
				s.Counts()
				s.List(queue.StateRunning, 5)
			}
		}()
	}
	wg.Wait()
	close(done)
	moved.Wait()
	counts, _ := s.Counts()
	total := 0
	for _, n := range counts {
		total += n
	}
	const want = submitters * (perSubmitter - perSubmitter/6)
	if total != want {
		t.Errorf("%d jobs stored, want %d (repeated keys must not make jobs)", total, want)
	}
}
