// Package testlogs keeps the whole output of a failed test's child
// process (a daemon, a database) in the repository's git-ignored
// .cache/test-logs/, so that a failure message can show only the end: a CI
// excerpt is the end of the run's output, and long logs there push the
// failing check out of it.
package testlogs

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tailBytes is how much of a log a failure message shows.
const tailBytes = 1500

// keep writes out to .cache/test-logs/<test>-<name>.log under the
// repository root and returns its path, or why it was not kept.
func keep(tb testing.TB, name string, out []byte) string {
	tb.Helper()
	dir, err := logDir()
	if err == nil {
		err = os.MkdirAll(dir, 0o755)
	}
	if err != nil {
		return "not kept: " + err.Error()
	}
	file := strings.NewReplacer("/", "_", " ", "_").Replace(tb.Name() + "-" + name + ".log")
	path := filepath.Join(dir, file)
	if err := os.WriteFile(path, out, 0o644); err != nil {
		return "not kept: " + err.Error()
	}
	return path
}

// Log keeps out (keep) and logs its path and its last tailBytes.
func Log(tb testing.TB, name string, out []byte) {
	tb.Helper()
	tb.Logf("%s output, whole in %s; its end:\n%s", name, keep(tb, name, out), Tail(out, tailBytes))
}

// Tail is the last n bytes of b.
func Tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// logDir is .cache/test-logs in the repository root: the nearest directory
// above the working directory whose go.mod declares the main module (a
// test runs in its package's directory; the Telegraf plugin is a module of
// its own inside the repository).
func logDir() (string, error) {
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := wd; ; d = filepath.Dir(d) {
		b, err := os.ReadFile(filepath.Join(d, "go.mod"))
		if err == nil && bytes.HasPrefix(b, []byte("module github.com/colocd/colocd\n")) {
			return filepath.Join(d, ".cache", "test-logs"), nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no github.com/colocd/colocd go.mod above %s", wd)
		}
	}
}
