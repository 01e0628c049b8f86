package main

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"
)

// version and commit are set at build time (the Makefile does):
// go build -ldflags "-X main.version=v1.2.3 -X main.commit=<sha>". The Go
// toolchain's own VCS stamp wins when present; it is missing whenever git
// cannot be run at build time or GOFLAGS holds -buildvcs=false.
var (
	version = "dev"
	commit  = ""
)

// buildInfo returns the VCS revision and whether the tree was modified.
func buildInfo() (rev string, modified bool) {
	rev = commit
	if rev == "" {
		rev = "unknown"
	}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return rev, false
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			rev = s.Value
		case "vcs.modified":
			modified = s.Value == "true"
		}
	}
	return rev, modified
}

func versionString() string {
	rev, modified := buildInfo()
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if modified {
		rev += "-dirty"
	}
	return fmt.Sprintf("%s (commit %s, %s)", version, rev, runtime.Version())
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Args:  noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			rev, modified := buildInfo()
			fmt.Fprintf(cmd.OutOrStdout(), "colocd %s\ncommit %s", version, rev)
			if modified {
				fmt.Fprint(cmd.OutOrStdout(), " (modified)")
			}
			fmt.Fprintf(cmd.OutOrStdout(), "\ngo %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
