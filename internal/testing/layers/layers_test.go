package layers

import (
	"go/build"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/colocd/colocd"

// rules are, for each package (relative to the module), the packages of
// ours its non-test files may import: nothing else of the module. Every
// file counts, whatever its build constraints.
var rules = map[string][]string{
	// The wire types: the standard library only (checked below).
	"api/v1": {},
	// The client speaks the wire types; it never sees the store's, the
	// learner's or the journal's.
	"apiclient": {"api/v1"},
	// The command line reaches colocd through the daemon, the bench and
	// the client only.
	"cmd/colocd": {"daemon", "bench", "apiclient", "api/v1"},
	// The store and the job model: nothing of ours.
	"queue": {},
	// The ordering pipeline: the job type, nothing else.
	"pipeline": {"queue"},
	// The pure algorithm packages.
	"goodness": {},
	"bandit":   {},
	"profile":  {"goodness"},
}

// noHTTP are the packages that import no HTTP package: the engine decides
// and acts through the interfaces it declares, never by serving or
// calling HTTP itself.
var noHTTP = []string{"engine", "pipeline", "queue"}

// stdlibOnly are the packages that import nothing outside the standard
// library, third-party packages included.
var stdlibOnly = []string{"api/v1"}

func TestImportRules(t *testing.T) {
	root := moduleRoot(t)
	ctxt := build.Default
	ctxt.UseAllFiles = true // every GOOS's files, and files excluded by tags
	for _, dir := range slices.Sorted(maps.Keys(rules)) {
		allowed := rules[dir]
		pkg, err := ctxt.ImportDir(filepath.Join(root, dir), build.IgnoreVendor)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			rel, ours := strings.CutPrefix(imp, module+"/")
			switch {
			case ours && !slices.Contains(allowed, rel):
				t.Errorf("%s imports %s: it may import of ours only %v (docs/architecture.md)", dir, imp, allowed)
			case slices.Contains(stdlibOnly, dir) && !ours && !isStdlib(imp):
				t.Errorf("%s imports %s: it imports the standard library only", dir, imp)
			}
		}
	}
	for _, dir := range noHTTP {
		pkg, err := ctxt.ImportDir(filepath.Join(root, dir), build.IgnoreVendor)
		if err != nil {
			t.Fatalf("%s: %v", dir, err)
		}
		for _, imp := range pkg.Imports {
			if imp == "net/http" || strings.HasPrefix(imp, "net/http/") {
				t.Errorf("%s imports %s: it imports no HTTP package (docs/architecture.md)", dir, imp)
			}
		}
	}
}

// isStdlib reports whether an import path is the standard library's: its
// first element has no dot.
func isStdlib(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// moduleRoot is the directory of go.mod above the test's.
func moduleRoot(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			t.Fatal("no go.mod above the test")
		}
		dir = parent
	}
}
