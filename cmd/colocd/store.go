package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect the job store file (ops)",
		Long: `Inspect colocd's job store file (colocd.db in data_dir) while the daemon is
stopped. colocd store check --help says what is checked.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStoreCheckCmd())
	return cmd
}

func newStoreCheckCmd() *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
		cf      *configFlags
	)
	cmd := &cobra.Command{
		Use:   "check [FILE] [--json]",
		Short: "Check the store file for damage, without changing it",
		Long: `Check the store file (FILE, or colocd.db in data_dir) without changing it: both
bbolt meta pages (magic, version, page size, checksum), the file's size, every
page pointer, bbolt's own consistency check, every job record and kind
history, the indexes against the records, every row of the learned
preferences and profiles, and the records already quarantined. It opens the file read-only with a shared lock, so stop colocd
first: a running colocd holds the file exclusively.

Exit status 0 when the file is clean (quarantined records are listed but are
damage already handled), 1 with a summary on stderr when something is wrong
or the file cannot be read, 2 on a usage error. --json prints the report as
JSON (raw bytes of quarantined records in base64).

  colocd store check /var/lib/colocd/colocd.db
  colocd store check --config /etc/colocd/colocd.yaml --json`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) > 1 {
				return usagef("%s takes at most one FILE, got %d arguments", cmd.CommandPath(), len(args))
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			var cfg daemon.Config
			if len(args) == 0 {
				var err error
				if cfg, err = loadConfig(cmd, cf, nil); err != nil {
					return err
				}
			}
			rep, err := daemon.CheckStore(cfg, strings.Join(args, ""), timeout)
			if err != nil {
				return fmt.Errorf("store check: %w", err)
			}
			out := cmd.OutOrStdout()
			if asJSON {
				enc := json.NewEncoder(out)
				enc.SetIndent("", "  ")
				if err := enc.Encode(rep); err != nil {
					return err
				}
			} else if err := rep.WriteText(out); err != nil {
				return err
			}
			if !rep.Clean() {
				return errors.New("store check: " + rep.Summary())
			}
			return nil
		},
	}
	cf = addConfigFlags(cmd.Flags(), "data-dir")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Second, "how long to wait for the file lock")
	return cmd
}
