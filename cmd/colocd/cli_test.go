package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// walk calls f on cmd and every command below it that is not hidden.
func walk(cmd *cobra.Command, f func(*cobra.Command)) {
	f(cmd)
	for _, c := range cmd.Commands() {
		if !c.Hidden {
			walk(c, f)
		}
	}
}

// fullTree is the command tree as Execute completes it: with cobra's help
// and completion commands.
func fullTree(t testing.TB) *cobra.Command {
	t.Helper()
	root := newRoot(&bytes.Buffer{}, &bytes.Buffer{})
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd()
	return root
}

// TestVersionFlag: colocd --version prints what colocd version prints.
func TestVersionFlag(t *testing.T) {
	_, want, _ := runCmd(t, "version")
	for _, flag := range []string{"--version", "-v"} {
		code, out, errOut := runCmd(t, flag)
		if code != exitOK {
			t.Errorf("%s: exit %d: %s", flag, code, errOut)
		}
		if diff := cmp.Diff(want, out); diff != "" {
			t.Errorf("%s (-version +%s):\n%s", flag, flag, diff)
		}
	}
}

// TestSuggestions: a mistyped command, at the root or under a command
// with subcommands, is a usage error naming the nearest commands.
func TestSuggestions(t *testing.T) {
	for _, tc := range []struct {
		args    []string
		suggest string // "" when none
	}{
		{[]string{"sbumit"}, "submit"},
		{[]string{"queeu"}, "queue"},
		{[]string{"kill"}, "cancel"},       // SuggestFor
		{[]string{"preferences"}, "prefs"}, // SuggestFor
		{[]string{"yarn", "nods"}, "nodes"},
		{[]string{"store", "chek"}, "check"},
		{[]string{"frobnicate"}, ""},
	} {
		t.Run(strings.Join(tc.args, " "), func(t *testing.T) {
			code, _, stderr := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, "unknown command") {
				t.Errorf("exit %d, stderr %q; want %d and unknown command", code, stderr, exitUsage)
			}
			if got := strings.Contains(stderr, "Did you mean this?\n\t"+tc.suggest+"\n"); tc.suggest != "" && !got {
				t.Errorf("stderr %q does not suggest %s", stderr, tc.suggest)
			}
			if tc.suggest == "" && strings.Contains(stderr, "Did you mean") {
				t.Errorf("stderr %q suggests something", stderr)
			}
		})
	}
}

// serverFlags are the flags that set where the daemon's configuration and
// state are.
var serverFlags = []string{"config", "listen", "data-dir", "log-level"}

// TestServerFlagsWhereRead: each command takes exactly the server flags it
// reads, and the root takes none; a client command given one refuses it,
// naming the commands that take it.
func TestServerFlagsWhereRead(t *testing.T) {
	want := map[string][]string{
		"colocd serve":         {"config", "data-dir", "listen", "log-level"},
		"colocd store check":   {"config", "data-dir"},
		"colocd store salvage": {"config", "data-dir"},
		"colocd store release": {"config", "data-dir"},
		"colocd metrics":       {"config"},
		"colocd sim":           {"config"},
		"colocd yarn":          {"config"}, // and each yarn subcommand, inherited
		"colocd yarn info":     {"config"},
		"colocd config check":  {"config"},
		"colocd yarn nodes":    {"config"},
		"colocd yarn apps":     {"config"},
		"colocd yarn app":      {"config"},
	}
	got := map[string][]string{}
	walk(fullTree(t), func(c *cobra.Command) {
		fs := c.LocalFlags()
		fs.AddFlagSet(c.InheritedFlags())
		fs.VisitAll(func(f *pflag.Flag) {
			if slices.Contains(serverFlags, f.Name) {
				got[c.CommandPath()] = append(got[c.CommandPath()], f.Name)
			}
		})
	})
	for _, v := range got {
		slices.Sort(v)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("server flags by command (-want +got):\n%s", diff)
	}

	code, _, stderr := runCmd(t, "queue", "--data-dir", "/tmp")
	if code != exitUsage || !strings.Contains(stderr, "unknown flag: --data-dir") || !strings.Contains(stderr, "serve and store check, salvage and release") {
		t.Errorf("queue --data-dir: exit %d, stderr %q; want %d naming serve and the store commands", code, stderr, exitUsage)
	}
}

// TestConfigFlagBeforeCommand: `colocd --config FILE serve`, the order the
// root's persistent flag allowed, still reaches serve's --config.
func TestConfigFlagBeforeCommand(t *testing.T) {
	isolate(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("learning:\n  stepsize: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, _, stderr := runCmd(t, "--config", bad, "serve")
	if code != exitUsage || !strings.Contains(stderr, "learning.stepsize") {
		t.Errorf("exit %d, stderr %q; want %d naming learning.stepsize", code, stderr, exitUsage)
	}
}

// TestEnvErrorsNameTheVariable: a value the command line reads from the
// environment is refused naming the variable, not a flag the user did not
// pass.
func TestEnvErrorsNameTheVariable(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		args    []string
		mention string
	}{
		{"server", map[string]string{envServer: "not a url", envToken: "t"}, []string{"queue"},
			`environment variable COLOCD_SERVER "not a url": want a URL`},
		{"server flag", map[string]string{envToken: "t"}, []string{"queue", "--server", "not a url"},
			`--server "not a url": want a URL`},
		{"config serve", map[string]string{envConfig: "/nonexistent/colocd.yaml"}, []string{"serve"},
			"environment variable COLOCD_CONFIG: config file /nonexistent/colocd.yaml does not exist"},
		{"config sim", map[string]string{envConfig: "/nonexistent/colocd.yaml"}, []string{"sim", "--workload", "../../configs/workloads/paper-queue-a.yaml"},
			"environment variable COLOCD_CONFIG: config file /nonexistent/colocd.yaml does not exist"},
		// daemon.Load names the variable of a key (config_refusal_test.go
		// has the rest).
		{"key", map[string]string{"COLOCD_LISTEN": "nope"}, []string{"serve"},
			"config key listen (environment variable COLOCD_LISTEN)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			code, _, stderr := runCmd(t, tc.args...)
			if code != exitUsage || !strings.Contains(stderr, tc.mention) {
				t.Errorf("exit %d, stderr %q; want %d and %q", code, stderr, exitUsage, tc.mention)
			}
		})
	}
}

// TestPrefsMatrix: --matrix h shows H; --h, its old name, still works,
// hidden, with a notice on stderr only (stdout stays CSV).
func TestPrefsMatrix(t *testing.T) {
	isolate(t)
	s := startAPI(t)
	for range 10 {
		s.learner.Update("terasort", "kmeans", 40)
	}
	prefs := func(args ...string) (int, string, string) {
		t.Helper()
		return runCmd(t, append([]string{"prefs", "--server", s.url, "--token", cliReader, "--csv"}, args...)...)
	}
	_, pi, _ := prefs()
	code, h, stderr := prefs("--matrix", "h")
	if code != exitOK || h == pi {
		t.Fatalf("--matrix h: exit %d, %q (π: %q), stderr %q", code, h, pi, stderr)
	}
	code, old, stderr := prefs("--h")
	if code != exitOK || old != h || !strings.Contains(stderr, "--h is deprecated, use --matrix h") {
		t.Errorf("--h: exit %d, stdout %q (want %q), stderr %q", code, old, h, stderr)
	}
	if _, err := csv.NewReader(strings.NewReader(old)).ReadAll(); err != nil {
		t.Errorf("--h stdout is not CSV: %v\n%s", err, old)
	}
	if code, _, stderr := prefs("--matrix", "x"); code != exitUsage || !strings.Contains(stderr, `--matrix "x": want pi, h or n`) {
		t.Errorf("--matrix x: exit %d, stderr %q", code, stderr)
	}
	if _, out, _ := runCmd(t, "prefs", "--help"); strings.Contains(out, "\n      --h ") || !strings.Contains(out, "\n      --matrix ") {
		t.Errorf("prefs --help shows --h or lacks --matrix:\n%s", out)
	}
}

// TestEveryCommandDocumented walks every visible command: it has Short
// and Long text, and --help runs and prints its usage.
func TestEveryCommandDocumented(t *testing.T) {
	var paths [][]string
	walk(fullTree(t), func(c *cobra.Command) {
		path := strings.Fields(c.CommandPath())[1:]
		paths = append(paths, path)
		if strings.TrimSpace(c.Short) == "" {
			t.Errorf("%s has no Short text", c.CommandPath())
		}
		if strings.TrimSpace(c.Long) == "" {
			t.Errorf("%s has no Long text", c.CommandPath())
		}
	})
	for _, want := range [][]string{{"completion", "bash"}, {"completion", "zsh"}, {"completion", "fish"}, {"prefs"}, {"yarn", "app"}} {
		if !slices.ContainsFunc(paths, func(p []string) bool { return slices.Equal(p, want) }) {
			t.Errorf("no visible command %q", want)
		}
	}
	for _, p := range paths {
		t.Run(strings.Join(append([]string{"colocd"}, p...), " "), func(t *testing.T) {
			code, out, stderr := runCmd(t, append(p, "--help")...)
			if code != exitOK || !strings.Contains(out, "Usage:") {
				t.Errorf("--help: exit %d, stdout %q, stderr %q", code, out, stderr)
			}
		})
	}
}

// TestCompletion: colocd completion prints each shell's script, and the
// completion of a command name and of --matrix's values works.
func TestCompletion(t *testing.T) {
	for shell, mark := range map[string]string{"bash": "__start_colocd", "zsh": "#compdef colocd", "fish": "complete -c colocd"} {
		code, out, stderr := runCmd(t, "completion", shell)
		if code != exitOK || !strings.Contains(out, mark) {
			t.Errorf("completion %s: exit %d, stderr %q, script lacks %q", shell, code, stderr, mark)
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"__complete", "sub"}, "submit"},
		{[]string{"__complete", "yarn", "no"}, "nodes"},
		{[]string{"__complete", "prefs", "--matrix", ""}, "pi\nh\n"},
	} {
		var out, errOut bytes.Buffer
		if code := run(ctx, tc.args, &out, &errOut); code != exitOK || !strings.Contains(out.String(), tc.want) {
			t.Errorf("%q: exit %d, stdout %q, stderr %q; want %q", tc.args, code, out.String(), errOut.String(), tc.want)
		}
	}
}
