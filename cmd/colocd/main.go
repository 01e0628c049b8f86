// Command colocd is the one colocd binary: the daemon (serve), its clients
// (submit, queue, job, cancel, prefs, profiles), ops tools (metrics, yarn,
// version) and the simulator (sim).
//
// Exit status: 0 ok, 1 runtime error, 2 usage or configuration error.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

// Exit statuses.
const (
	exitOK      = 0
	exitRuntime = 1
	exitUsage   = 2
)

// usageError marks errors the user can fix on the command line (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

func usagef(format string, args ...any) error { return usageError{fmt.Errorf(format, args...)} }

func main() {
	os.Exit(run(context.Background(), os.Args[1:], os.Stdout, os.Stderr))
}

// run executes the command line args and returns the exit status.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot(stdout, stderr)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return exitOK
	}
	fmt.Fprintln(stderr, "colocd:", err)
	return exitCode(err)
}

func exitCode(err error) int {
	var ue usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, daemon.ErrConfig):
		return exitUsage
	case strings.HasPrefix(err.Error(), "unknown command"), strings.HasPrefix(err.Error(), "unknown flag"),
		strings.HasPrefix(err.Error(), "unknown shorthand flag"):
		return exitUsage // cobra's own usage errors
	}
	return exitRuntime
}

// globals are the root's persistent flags.
type globals struct {
	config string
}

func newRoot(stdout, stderr io.Writer) *cobra.Command {
	g := &globals{}
	root := &cobra.Command{
		Use:   "colocd",
		Short: "Job admission daemon that learns which jobs co-locate well",
		Long: `colocd sits in front of a YARN ResourceManager (or its embedded simulator),
queues submitted jobs and decides which one goes to the cluster next, so that
jobs stressing different resources run side by side. It learns which pairs of
recurring job kinds co-locate well from node metrics (Telegraf → InfluxDB).

Configuration: --config FILE (YAML), COLOCD_* environment variables, flags.`,
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	pf := root.PersistentFlags()
	pf.StringVar(&g.config, "config", "", "YAML config file (env COLOCD_CONFIG)")
	pf.String("listen", "", "HTTP listen address host:port (config key listen)")
	pf.String("data-dir", "", "state directory (config key data_dir)")
	pf.String("log-level", "", "debug|info|warn|error (config key log_level)")

	root.AddCommand(
		newServeCmd(g),
		newVersionCmd(),
		newMetricsCmd(g),
		newYarnCmd(g),
		newStoreCmd(g), // colocd store check (cmd/colocd/store.go)
		// The bench helper's `colocd sim` (cmd/colocd/sim.go).
		newSimCmd(g),
	)
	// The client commands (submit, queue, job, cancel, prefs, profiles),
	// client.go and profiles.go.
	root.AddCommand(clientCommands()...)
	return root
}

func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usagef("unknown command %q for %q", args[0], cmd.CommandPath())
	}
	return nil
}

func exactArgs(n int) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s takes %d argument(s), got %d", cmd.CommandPath(), n, len(args))
		}
		return nil
	}
}

// loadConfig loads the configuration for cmd: --config (or COLOCD_CONFIG),
// COLOCD_* env, and the flags that map to keys. Only serve reads token_file.
func loadConfig(cmd *cobra.Command, g *globals, extra map[string]string) (daemon.Config, error) {
	file := g.config
	if file == "" {
		file = os.Getenv("COLOCD_CONFIG")
	}
	return daemon.Load(daemon.LoadOptions{File: file, Flags: cmd.Flags(), FlagKeys: extra, SkipTokenFile: cmd.Name() != "serve"})
}

// newLogger builds the slog logger of the config.
func newLogger(w io.Writer, level, format string) *slog.Logger {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	opts := &slog.HandlerOptions{Level: lv}
	if format == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
