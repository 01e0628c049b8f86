package main

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestREADMEMatches is the check `make test` runs: README.md's package map
// is what the packages' doc comments and imports say.
func TestREADMEMatches(t *testing.T) {
	root := filepath.Join("..", "..", "..")
	pkgs, err := Scan(root)
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	got, err := Current(string(b))
	if err != nil {
		t.Fatalf("README.md: %v (the lines %q and %q)", err, Begin, End)
	}
	if diff := cmp.Diff(Table(pkgs), got); diff != "" {
		t.Errorf("README.md's package map differs from the doc comments (-want,+got):\n%s\nrun: go run ./internal/tools/pkgmap -w", diff)
	}
}

func TestHead(t *testing.T) {
	for name, tc := range map[string]struct{ comment, want string }{
		"colon":             {"Package queue is the durable queue: its store and jobs.\n", "is the durable queue"},
		"colon in brackets": {"Package usage adapts readers (HostsConfig: metrics.hosts) to the engine.", "adapts readers (HostsConfig: metrics.hosts) to the engine"},
		"command":           {"Command colocd is the one binary: serve, submit.", "is the one binary"},
		"first sentence":    {"Package goodness rates nodes. It is pure.", "rates nodes"},
		"no package prefix": {"Helpers for tests.", "Helpers for tests"},
		"empty":             {"", ""},
	} {
		t.Run(name, func(t *testing.T) {
			if got := Head(tc.comment); got != tc.want {
				t.Errorf("Head(%q) = %q, want %q", tc.comment, got, tc.want)
			}
		})
	}
}

func TestReplace(t *testing.T) {
	readme := "# x\n\n" + Begin + "\nold\n" + End + "\n\nrest\n"
	got, err := Replace(readme, "new\n")
	if err != nil {
		t.Fatal(err)
	}
	want := "# x\n\n" + Begin + "\nnew\n" + End + "\n\nrest\n"
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("(-want,+got):\n%s", diff)
	}
	if _, err := Replace("# x\n", "new\n"); !errors.Is(err, ErrNoMarkers) {
		t.Errorf("without markers: err = %v, want ErrNoMarkers", err)
	}
}
