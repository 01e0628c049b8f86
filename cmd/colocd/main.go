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
	"io/fs"
	"log/slog"
	"os"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

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

// configFlags are the flags of the commands that read the daemon's
// configuration (serve, store check, metrics, yarn, sim): --config and
// the config keys each of them registers (addConfigFlags). The client
// commands read no configuration and take none of them.
type configFlags struct {
	file string
	// explicitOnly: no default path (colocd sim: a node's production
	// config must not change what a simulation plays).
	explicitOnly bool
}

// Environment variables the command line reads itself.
const envConfig = "COLOCD_CONFIG"

// keyFlags are the flags that set a config key (daemon.Load binds them by
// these names), with their help.
var keyFlags = map[string]string{
	"listen":    "HTTP listen address host:port (config key listen)",
	"data-dir":  "state directory (config key data_dir)",
	"log-level": "debug|info|warn|error (config key log_level)",
}

// addConfigFlags registers --config and the key flags named on fs (a
// command's local or persistent flags).
func addConfigFlags(set *pflag.FlagSet, keys ...string) *configFlags {
	cf := &configFlags{}
	set.StringVar(&cf.file, "config", "", "YAML config file (env "+envConfig+")")
	for _, k := range keys {
		set.String(k, "", keyFlags[k])
	}
	return cf
}

// defaultConfigPath is the config file of the packages and the unit,
// read when neither --config nor COLOCD_CONFIG names one and it exists.
var defaultConfigPath = "/etc/colocd/colocd.yaml"

// path is the config file: --config, else COLOCD_CONFIG, else
// defaultConfigPath when it exists (a file that exists but cannot be read
// is then an error, as with --config). A file that COLOCD_CONFIG names and
// that does not exist is a usage error naming the variable, since
// --config appears nowhere on the command line.
func (cf *configFlags) path() (string, error) {
	if cf.file != "" {
		return cf.file, nil
	}
	file := os.Getenv(envConfig)
	if file == "" && cf.explicitOnly {
		return "", nil
	}
	if file == "" {
		// Only a file that is not there is skipped: one that cannot be
		// read (its directory's permissions) is read, and refused.
		if _, err := os.Lstat(defaultConfigPath); !errors.Is(err, fs.ErrNotExist) {
			return defaultConfigPath, nil
		}
		return "", nil
	}
	if _, err := os.Stat(file); errors.Is(err, fs.ErrNotExist) {
		return "", usagef("environment variable %s: config file %s does not exist", envConfig, file)
	}
	return file, nil
}

// newRoot builds the command tree: the root, then each command with the
// flags it reads. The root takes only --help and --version; cobra adds
// help and completion.
func newRoot(stdout, stderr io.Writer) *cobra.Command {
	root := &cobra.Command{
		Use:   "colocd",
		Short: "Job admission daemon that learns which jobs co-locate well",
		Long: `colocd sits in front of a YARN ResourceManager (or its embedded simulator),
queues submitted jobs and decides which one goes to the cluster next, so that
jobs stressing different resources run side by side. It learns which pairs of
recurring job kinds co-locate well from node metrics (Telegraf → InfluxDB).

The daemon and its ops tools (serve, store check, metrics, yarn, sim) read the
configuration: --config FILE (YAML, env COLOCD_CONFIG; by default
/etc/colocd/colocd.yaml when it exists, but for sim), COLOCD_* environment variables, then
their flags; colocd config check validates it and shows each value's source. The client commands (submit, queue, job, cancel,
resolve, prefs, profiles, queues) talk to a running daemon: --server (env
COLOCD_SERVER) and --token (env COLOCD_TOKEN).

Shell completion: colocd completion bash|zsh|fish|powershell --help.`,
		Version:       versionText(),
		SilenceUsage:  true,
		SilenceErrors: true,
		Args:          noArgs,
		RunE:          func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	root.SetVersionTemplate("{{.Version}}")
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetFlagErrorFunc(flagError)

	root.AddCommand(
		newServeCmd(),
		newVersionCmd(),
		newMetricsCmd(),
		newYarnCmd(),
		newStoreCmd(),  // colocd store check (cmd/colocd/store.go)
		newConfigCmd(), // colocd config check (cmd/colocd/config.go)
		newHACmd(),     // colocd ha status (cmd/colocd/ha.go)
		// The bench helper's `colocd sim` (cmd/colocd/sim.go).
		newSimCmd(),
	)
	// The client commands (submit, queue, job, cancel, prefs, profiles),
	// client.go and profiles.go.
	root.AddCommand(clientCommands()...)
	suggest(root)
	return root
}

// flagError makes a flag mistake a usage error; a server flag given to a
// command that does not take it says which commands do (they used to be
// the root's, accepted and ignored by every command).
func flagError(cmd *cobra.Command, err error) error {
	for _, name := range []string{"config", "listen", "data-dir", "log-level"} {
		if err.Error() == "unknown flag: --"+name {
			return usagef("%w (%s reads no daemon configuration: --%s is a flag of %s)", err, cmd.CommandPath(), name, flagOwners[name])
		}
	}
	return usageError{err}
}

// flagOwners are the commands that take each server flag.
var flagOwners = map[string]string{
	"config":    "serve, config check, store check, salvage and release, metrics, yarn and sim",
	"listen":    "serve",
	"data-dir":  "serve and store check, salvage and release",
	"log-level": "serve",
}

// suggestDistance is the edit distance within which a mistyped command
// gets suggestions: "sbumit" is 2 from "submit".
const suggestDistance = 2

// suggest sets the suggestion distance on cmd and every command below it
// (cobra reads each command's own; noArgs asks the command it runs).
func suggest(cmd *cobra.Command) {
	cmd.SuggestionsMinimumDistance = suggestDistance
	for _, c := range cmd.Commands() {
		suggest(c)
	}
}

// noArgs refuses arguments; for a command with subcommands, an argument
// is a mistyped command, and the error suggests the nearest ones as cobra
// does (cobra only does when Args is nil).
func noArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "\n\nDid you mean this?\n\t" + strings.Join(s, "\n\t")
	}
	return usageError{errors.New(msg)}
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
func loadConfig(cmd *cobra.Command, cf *configFlags, extra map[string]string) (daemon.Config, error) {
	file, err := cf.path()
	if err != nil {
		return daemon.Config{}, err
	}
	return daemon.Load(daemon.LoadOptions{File: file, Flags: cmd.Flags(), FlagKeys: extra, SkipTokenFile: cmd.Name() != "serve"})
}

// newLogger builds the slog logger of the config (daemon.NewLogger: the
// journal's fields and priorities when stderr is the journal); its level
// is the LevelVar returned, which a reload sets again.
func newLogger(w io.Writer, level, format string) (*slog.Logger, *slog.LevelVar) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		lv = slog.LevelInfo
	}
	v := new(slog.LevelVar)
	v.Set(lv)
	return daemon.NewLogger(w, v, format), v
}
