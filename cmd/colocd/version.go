package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version is set at build time: go build -ldflags "-X main.version=v1.2.3".
var version = "dev"

// buildInfo returns the VCS revision and whether the tree was modified.
func buildInfo() (commit string, modified bool) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown", false
	}
	commit = "unknown"
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			commit = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return commit, modified
}

func versionString() string {
	commit, modified := buildInfo()
	if len(commit) > 12 {
		commit = commit[:12]
	}
	if modified {
		commit += "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, %s)", version, commit, runtime.Version())
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			commit, modified := buildInfo()
			fmt.Fprintf(cmd.OutOrStdout(), "colocd %s\ncommit %s", version, commit)
			if modified {
				fmt.Fprint(cmd.OutOrStdout(), " (modified)")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\ngo %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
