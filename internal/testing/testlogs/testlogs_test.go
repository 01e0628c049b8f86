package testlogs

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestKeep: the output is kept whole under the repository's
// .cache/test-logs, named after the test and the process; Tail keeps the
// end.
func TestKeep(t *testing.T) {
	out := []byte(strings.Repeat("a", 3000) + "the end")
	path := keep(t, "influxd", out)
	t.Cleanup(func() { os.Remove(path) })
	got, err := os.ReadFile(path)
	if err != nil || string(got) != string(out) {
		t.Fatalf("kept %q (%d bytes, %v), want the whole output", path, len(got), err)
	}
	if want := filepath.Join("..", "..", "..", ".cache", "test-logs", "TestKeep-influxd.log"); !sameFile(t, path, want) {
		t.Errorf("kept at %s, want %s", path, want)
	}
	if tail := Tail(out, 10); tail != "a"+"a"+"a"+"the end" {
		t.Errorf("Tail = %q", tail)
	}
}

func sameFile(t *testing.T, a, b string) bool {
	t.Helper()
	fa, err := os.Stat(a)
	if err != nil {
		t.Fatal(err)
	}
	fb, err := os.Stat(b)
	return err == nil && os.SameFile(fa, fb)
}
