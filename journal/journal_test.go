package journal

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/pipeline"
)

var t0 = time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)

func decision(i int) DecisionRecord {
	id := fmt.Sprintf("job-%03d", i)
	return DecisionRecord{
		Decision: pipeline.Decision{
			At: t0.Add(time.Duration(i) * time.Second), Chosen: id, ChosenKind: "kmeans",
			Context:    []pipeline.ContextKind{{Kind: "terasort", Weight: 0.5}},
			Candidates: []pipeline.Candidate{{JobID: id, Kind: "kmeans", Prob: 0.7, Weight: 1}, {JobID: "other", Kind: "wordcount", Prob: 0.3, Weight: 1}},
		},
		Shadow: i%2 == 0, FIFOChoice: "other", AppID: fmt.Sprintf("application_1_%04d", i),
	}
}

func good(i int) GoodnessRecord {
	at := t0.Add(time.Duration(i) * time.Minute)
	return GoodnessRecord{
		At: at, From: at.Add(-time.Minute), To: at, Node: fmt.Sprintf("node-%d", i%3),
		Chosen: "kmeans", Given: "terasort", G: 10 + float64(i),
		Usage: goodness.Usage{CPU: 0.5, IOWait: 0.1, DiskRead: 1e6, DiskWrite: 2e6, NetRecv: 3e6, NetSent: 4e6},
	}
}

func lines(t testing.TB, path string) int {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte("\n"))
}

func TestJournalReload(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	var wantDec []DecisionRecord
	for i := range 8 {
		if err := j.AddDecision(decision(i)); err != nil {
			t.Fatal(err)
		}
	}
	for i := 7; i >= 3; i-- { // the last 5, newest first
		wantDec = append(wantDec, decision(i))
	}
	var wantGood []GoodnessRecord
	for i := range 12 {
		if err := j.AddGoodness(good(i)); err != nil {
			t.Fatal(err)
		}
		if i >= 2 {
			wantGood = append(wantGood, good(i))
		}
	}
	if diff := cmp.Diff(wantDec, j.Decisions(0)); diff != "" {
		t.Errorf("decisions before reopen (-want +got):\n%s", diff)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.AddDecision(decision(9)); !errors.Is(err, errClosed) {
		t.Errorf("AddDecision after Close: %v, want errClosed", err)
	}
	j, err = Open(dir, 5, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if diff := cmp.Diff(wantDec, j.Decisions(0)); diff != "" {
		t.Errorf("decisions after reopen (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantDec[:2], j.Decisions(2)); diff != "" {
		t.Errorf("Decisions(2) (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(wantGood, j.Goodness(time.Time{}, time.Time{})); diff != "" {
		t.Errorf("goodness after reopen (-want +got):\n%s", diff)
	}
	// Window [good(4).At, good(6).At): records 4 and 5.
	if diff := cmp.Diff([]GoodnessRecord{good(4), good(5)}, j.Goodness(good(4).At, good(6).At)); diff != "" {
		t.Errorf("goodness window (-want +got):\n%s", diff)
	}
	if j.Corrupt() != 0 {
		t.Errorf("Corrupt = %d on a clean journal", j.Corrupt())
	}
}

func TestJournalCorruptLines(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		_ = j.AddDecision(decision(i))
	}
	_ = j.Close()
	path := filepath.Join(dir, DecisionsFile)
	f, err := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	// A garbage line, a line longer than the limit, a good record, and a
	// torn last write (no newline).
	_, _ = f.WriteString("not json at all\n")
	_, _ = f.WriteString(`{"chosen":` + string(bytes.Repeat([]byte("9"), maxJournalLine+10)) + "}\n")
	rec, _ := jsonLine(decision(3))
	_, _ = f.Write(rec)
	_, _ = f.WriteString(`{"at":"2026-11-23T09:00:05Z","chos`)
	_ = f.Close()

	j, err = Open(dir, 10, 10)
	if err != nil {
		t.Fatalf("open with corrupt lines: %v", err)
	}
	if got := j.Corrupt(); got != 3 {
		t.Errorf("Corrupt = %d, want 3 (garbage, overlong, torn)", got)
	}
	want := []DecisionRecord{decision(3), decision(2), decision(1), decision(0)}
	if diff := cmp.Diff(want, j.Decisions(0)); diff != "" {
		t.Errorf("decisions (-want +got):\n%s", diff)
	}
	// The file was rewritten clean: appends land on their own line.
	if err := j.AddDecision(decision(4)); err != nil {
		t.Fatal(err)
	}
	_ = j.Close()
	j, err = Open(dir, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if j.Corrupt() != 0 || len(j.Decisions(0)) != 5 {
		t.Errorf("after repair: corrupt %d, %d decisions", j.Corrupt(), len(j.Decisions(0)))
	}
}

func jsonLine(r DecisionRecord) ([]byte, error) {
	b, err := json.Marshal(r)
	return append(b, '\n'), err
}

func TestJournalCompacts(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, 4, 4)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	path := filepath.Join(dir, DecisionsFile)
	bound := 2*4 + 16
	for i := range 200 {
		if err := j.AddDecision(decision(i)); err != nil {
			t.Fatal(err)
		}
		if n := lines(t, path); n > bound {
			t.Fatalf("after %d appends the file has %d lines, bound %d", i+1, n, bound)
		}
	}
	want := []DecisionRecord{decision(199), decision(198), decision(197), decision(196)}
	if diff := cmp.Diff(want, j.Decisions(0)); diff != "" {
		t.Errorf("ring (-want +got):\n%s", diff)
	}
	if _, err := os.Stat(path + ".tmp"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("compaction left %s.tmp behind: %v", path, err)
	}
}

// TestJournalHugeCapAllocatesLazily opens a journal whose rings may hold
// 10⁸ records each (≈ 25 GB of decision slots and 18 GB of goodness slots
// if allocated up front) and checks that opening it, and keeping a few
// records, allocates next to nothing.
func TestJournalHugeCapAllocatesLazily(t *testing.T) {
	const huge = 100_000_000
	dir := t.TempDir()
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	j, err := Open(dir, huge, huge)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	for i := range 10 {
		if err := j.AddDecision(decision(i)); err != nil {
			t.Fatal(err)
		}
		if err := j.AddGoodness(good(i)); err != nil {
			t.Fatal(err)
		}
	}
	runtime.ReadMemStats(&after)
	// Everything allocated in between, garbage included: opening two files,
	// encoding 20 records and growing the rings to a few slots.
	const slots = huge * 248 // unsafe.Sizeof(DecisionRecord{}) on 64-bit
	if grew := after.TotalAlloc - before.TotalAlloc; grew > 1<<20 {
		t.Errorf("opening with cap %d and adding 10 records of each allocated %d bytes, want < 1 MiB (the decision ring alone is %d bytes)",
			huge, grew, uint64(slots))
	}
	if got := len(j.Decisions(0)); got != 10 {
		t.Errorf("%d decisions kept, want 10", got)
	}
	if got := len(j.Goodness(time.Time{}, time.Time{})); got != 10 {
		t.Errorf("%d goodness records kept, want 10", got)
	}
}

// TestJournalRingGrowth checks that the ring, grown step by step, keeps
// exactly the last max records at every length, newest first, in memory
// and after reopening, and that the file stays bounded.
func TestJournalRingGrowth(t *testing.T) {
	const max = 100 // not a power of two: the ring grows 64 → 100
	dir := t.TempDir()
	j, err := Open(dir, max, 1)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, DecisionsFile)
	chosen := func(rs []DecisionRecord) []string {
		var ids []string
		for _, r := range rs {
			ids = append(ids, r.Chosen)
		}
		return ids
	}
	lastN := func(n int) []DecisionRecord {
		var want []DecisionRecord
		for i := n - 1; i >= 0 && len(want) < max; i-- {
			want = append(want, decision(i))
		}
		return want
	}
	for n := 1; n <= 3*max+7; n++ {
		if err := j.AddDecision(decision(n - 1)); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(chosen(lastN(n)), chosen(j.Decisions(0))); diff != "" {
			t.Fatalf("after %d appends, the decisions kept (-want +got):\n%s", n, diff)
		}
		if got := lines(t, path); got > 2*max+16 {
			t.Fatalf("after %d appends the file has %d lines, bound %d", n, got, 2*max+16)
		}
		if n == 37 || n == max || n == 3*max+7 {
			if err := j.Close(); err != nil {
				t.Fatal(err)
			}
			if j, err = Open(dir, max, 1); err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(lastN(n), j.Decisions(0)); diff != "" {
				t.Fatalf("reopened after %d appends (-want +got):\n%s", n, diff)
			}
			if diff := cmp.Diff(lastN(n)[:3], j.Decisions(3)); diff != "" {
				t.Fatalf("Decisions(3) reopened after %d appends (-want +got):\n%s", n, diff)
			}
		}
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestOpenJournalValidates(t *testing.T) {
	for _, tc := range []struct {
		name    string
		dir     string
		dec, gd int
	}{{"no dir", "", 1, 1}, {"zero decisions", t.TempDir(), 0, 1}, {"zero goodness", t.TempDir(), 1, 0}} {
		if _, err := Open(tc.dir, tc.dec, tc.gd); !errors.Is(err, errConfig) {
			t.Errorf("%s: got %v, want errConfig", tc.name, err)
		}
	}
}

// TestJournalMemoryOnly: while memory-only, new records are listed but
// not written (nor compacted, however many); once resumed, appends go on
// after the records written before.
func TestJournalMemoryOnly(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	if err := j.AddDecision(decision(0)); err != nil {
		t.Fatal(err)
	}
	j.SetMemoryOnly(true)
	for i := 1; i <= 30; i++ { // past the compaction bound, 2 × 2 + 16 lines
		if err := j.AddDecision(decision(i)); err != nil {
			t.Fatal(err)
		}
		if err := j.AddGoodness(good(i)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff([]DecisionRecord{decision(30), decision(29)}, j.Decisions(0)); diff != "" {
		t.Errorf("decisions in memory (-want +got):\n%s", diff)
	}
	if n, g := lines(t, filepath.Join(dir, DecisionsFile)), lines(t, filepath.Join(dir, goodnessFile)); n != 1 || g != 0 {
		t.Errorf("%d decision and %d goodness lines on disk while memory-only, want 1 and 0", n, g)
	}
	j.SetMemoryOnly(false)
	if err := j.AddDecision(decision(31)); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, err = Open(dir, 2, 2)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if diff := cmp.Diff([]DecisionRecord{decision(31), decision(0)}, j.Decisions(0)); diff != "" {
		t.Errorf("decisions after reopen (-want +got):\n%s", diff)
	}
}
