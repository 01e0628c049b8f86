package main

import (
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

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

// versionText is what `colocd version` and `colocd --version` print.
func versionText() string {
	rev, modified := buildInfo()
	var b strings.Builder
	fmt.Fprintf(&b, "colocd %s\ncommit %s", version, rev)
	if modified {
		b.WriteString(" (modified)")
	}
	fmt.Fprintf(&b, "\ngo %s %s/%s\n", runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return b.String()
}

func newVersionCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and Go version",
		Long: `Print colocd's version, the VCS commit it was built from ("(modified)" when the
tree had uncommitted changes) and the Go toolchain and platform. colocd
--version prints the same.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			_, err := io.WriteString(cmd.OutOrStdout(), versionText())
			return err
		},
	}
}
