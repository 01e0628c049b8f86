//go:build linux

package journal

import (
	"errors"
	"flag"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestJournalCutsTornAppend: an append the file system takes only in part
// (here the file may not grow: RLIMIT_FSIZE, the way a full disk fails a
// write) is cut off again, so the next append is whole and a reopen finds
// no corrupt line.
func TestJournalCutsTornAppend(t *testing.T) {
	dir := t.TempDir()
	j, err := Open(dir, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	if err := j.AddDecision(decision(0)); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, DecisionsFile)
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	var limit syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_FSIZE, &limit); err != nil {
		t.Skipf("getrlimit: %v", err)
	}
	// The limit is per process: the test runner's own log (written when go
	// test may cache the result) must stay below it, so the journal is
	// filled up to it, its last append torn.
	cur := uint64(fi.Size()) + 4<<10
	if f := flag.Lookup("test.testlogfile"); f != nil && f.Value.String() != "" {
		if li, err := os.Stat(f.Value.String()); err == nil {
			cur = max(cur, uint64(li.Size())+64<<10)
		}
	}
	if err := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &syscall.Rlimit{Cur: cur, Max: limit.Max}); err != nil {
		t.Skipf("setrlimit: %v", err)
	}
	n := 1
	for ; err == nil && n < 10000; n++ {
		err = j.AddDecision(decision(n))
	}
	if rerr := syscall.Setrlimit(syscall.RLIMIT_FSIZE, &limit); rerr != nil {
		t.Fatalf("restoring RLIMIT_FSIZE: %v", rerr)
	}
	if !errors.Is(err, errIO) || !errors.Is(err, syscall.EFBIG) {
		t.Fatalf("AddDecision %d up to the limit = %v, want errIO wrapping EFBIG", n-1, err)
	}
	b, err := os.ReadFile(path)
	if err != nil || len(b) == 0 || b[len(b)-1] != '\n' || uint64(len(b)) == cur {
		t.Fatalf("file after the torn append: %d bytes ending %q (%v), want whole lines below the limit %d", len(b), b[max(len(b)-1, 0):], err, cur)
	}
	torn := n - 1                                      // the decision that did not fit
	if err := j.AddDecision(decision(2)); err != nil { // after the torn one
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	j, err = Open(dir, 10, 10)
	if err != nil {
		t.Fatal(err)
	}
	want := []DecisionRecord{decision(2)}
	for i := torn - 1; i >= 0 && len(want) < 10; i-- {
		want = append(want, decision(i))
	}
	if diff := cmp.Diff(want, j.Decisions(0)); diff != "" || j.Corrupt() != 0 {
		t.Errorf("after reopen: %d corrupt lines, decisions (-want +got):\n%s", j.Corrupt(), diff)
	}
}
