package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

func newStoreCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect, salvage or mend the job store file (ops)",
		Long: `Inspect colocd's job store file (colocd.db in data_dir) while the daemon is
stopped, salvage a damaged one, or put a quarantined pending job back. colocd
store check --help says what is checked; colocd store salvage --help what is
copied; colocd store release --help what comes back.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStoreCheckCmd(), newStoreSalvageCmd(), newStoreReleaseCmd())
	return cmd
}

func newStoreSalvageCmd() *cobra.Command {
	var (
		asJSON  bool
		to      string
		timeout time.Duration
		cf      *configFlags
	)
	cmd := &cobra.Command{
		Use:   "salvage [FILE] --to NEW [--json]",
		Short: "Copy what can still be read of a damaged store file into a new one",
		Long: `Copy what can still be read of the store file (FILE, or colocd.db in data_dir)
into the new file NEW, for a file colocd refuses to open because bbolt's pages,
buckets or keys are damaged (a damaged record alone is quarantined at open and
needs no salvage). It reads the damaged file read-only with a shared lock, so
stop colocd first, and never changes it.

Every intact leaf page of every bucket is copied, from the meta page colocd
would open at (or, when neither is valid, one whose root still fits the file);
the pages that do not read are skipped and listed. Lost buckets and meta keys
are written empty, idempotency keys restored from the job records, and the jobs
the indexes name whose record was lost are quarantined in the new file (a
request for one, or a retry of its idempotency key, gets 410) and listed. NEW
is then opened once (damaged records quarantined, indexes rebuilt) and checked;
it has the damaged file's mode and, run as root, its owner.

Then keep the damaged file, and put NEW in its place:

  systemctl stop colocd
  colocd store salvage --to /var/lib/colocd/salvaged.db
  mv /var/lib/colocd/colocd.db /var/lib/colocd/colocd.db.damaged
  mv /var/lib/colocd/salvaged.db /var/lib/colocd/colocd.db
  systemctl start colocd

A replica (ha) is not salvaged: move its file aside and start it; it re-joins
from the leader's snapshot and the log.

Exit status 0 when everything was read, 1 when the new file was written but
something could not be read or a job was lost (the report says what), or when
nothing could be written; 2 on a usage error. --json prints the report as JSON.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if err := atMostOneFile(cmd, args); err != nil {
				return err
			}
			if to == "" {
				return usagef("%s needs --to NEW, the new file to write", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := storeFileConfig(cmd, cf, args)
			if err != nil {
				return err
			}
			rep, err := daemon.SalvageStore(cfg, strings.Join(args, ""), to, timeout, nil)
			if err != nil {
				return fmt.Errorf("store salvage: %w", err)
			}
			if err := printReport(cmd.OutOrStdout(), asJSON, &rep); err != nil {
				return err
			}
			if !rep.Complete() {
				return fmt.Errorf("store salvage: %s written, but %d part(s) of %s could not be read and %d job(s) were lost",
					rep.To, len(rep.Unread), rep.From, len(rep.Lost))
			}
			return nil
		},
	}
	cf = addConfigFlags(cmd.Flags(), "data-dir")
	cmd.Flags().StringVar(&to, "to", "", "the new store file to write (must not exist)")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Second, "how long to wait for the file lock")
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
		Args: atMostOneFile,
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := storeFileConfig(cmd, cf, args)
			if err != nil {
				return err
			}
			rep, err := daemon.CheckStore(cfg, strings.Join(args, ""), timeout)
			if err != nil {
				return fmt.Errorf("store check: %w", err)
			}
			if err := printReport(cmd.OutOrStdout(), asJSON, &rep); err != nil {
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

func newStoreReleaseCmd() *cobra.Command {
	var (
		record  string
		timeout time.Duration
		cf      *configFlags
	)
	cmd := &cobra.Command{
		Use:   "release ID --record JOB.json [FILE]",
		Short: "Put a quarantined pending job back into the store file",
		Long: `Put quarantined job ID back into the store file (FILE, or colocd.db in
data_dir) as a pending job, where it sat in the FIFO, from JOB.json: the job's
record repaired (colocd store check --json shows the quarantined bytes, in
base64), or, for a job a salvage lost, the job as its submitter sent it. The
record is read strictly (an unknown field is refused); an empty id or seq takes
the job's own; it must be a valid job. Its idempotency key is indexed again.

Only a job that was pending when quarantined comes back: one admitted or
running may have an application on the cluster, and a release would submit
it again. The store must be stopped (colocd holds the file); a replica's
store is refused (its content is the log's).

  systemctl stop colocd
  colocd store check --json | jq '.quarantined'
  colocd store release 01J0ABC --record job.json
  systemctl start colocd

Exit status 0 when the job is back, 1 when it was refused (the reason is on
stderr), 2 on a usage error.`,
		Args: func(cmd *cobra.Command, args []string) error {
			if len(args) < 1 || len(args) > 2 {
				return usagef("%s takes the job ID and at most one FILE, got %d arguments", cmd.CommandPath(), len(args))
			}
			if record == "" {
				return usagef("%s needs --record JOB.json, the job's record", cmd.CommandPath())
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			cfg, err := storeFileConfig(cmd, cf, args[1:])
			if err != nil {
				return err
			}
			b, err := readCapped(cmd.InOrStdin(), record, 1<<20)
			if err != nil {
				return fmt.Errorf("store release: --record: %w", err)
			}
			j, err := daemon.ReleaseJob(cfg, strings.Join(args[1:], ""), args[0], b, timeout)
			if err != nil {
				return fmt.Errorf("store release: %w", err)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "released job %s (%s), pending at seq %d\n", j.ID, j.Kind, j.Seq)
			return nil
		},
	}
	cf = addConfigFlags(cmd.Flags(), "data-dir")
	cmd.Flags().StringVar(&record, "record", "", "the job's record, JSON (- for standard input)")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Second, "how long to wait for the file lock")
	return cmd
}

// readCapped reads path (- for stdin), refusing more than max bytes.
func readCapped(stdin io.Reader, path string, max int64) ([]byte, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		r = f
	}
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("%s is larger than %d bytes", path, max)
	}
	return b, nil
}

// atMostOneFile accepts a store command's optional FILE.
func atMostOneFile(cmd *cobra.Command, args []string) error {
	if len(args) > 1 {
		return usagef("%s takes at most one FILE, got %d arguments", cmd.CommandPath(), len(args))
	}
	return nil
}

// storeFileConfig is the configuration a store command reads its file
// from: none when FILE was given.
func storeFileConfig(cmd *cobra.Command, cf *configFlags, args []string) (daemon.Config, error) {
	if len(args) > 0 {
		return daemon.Config{}, nil
	}
	return loadConfig(cmd, cf, nil)
}

// printReport writes a store command's report as indented JSON or as text.
func printReport(w io.Writer, asJSON bool, rep interface{ WriteText(io.Writer) error }) error {
	if !asJSON {
		return rep.WriteText(w)
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(rep)
}
