package main

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/queue"
)

// storeFile is the store's file name in data_dir (daemon.Serve opens it).
const storeFile = "colocd.db"

func newStoreCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "store",
		Short: "Inspect the job store file (ops)",
		Args:  noArgs,
		RunE:  func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	cmd.AddCommand(newStoreCheckCmd(g))
	return cmd
}

func newStoreCheckCmd(g *globals) *cobra.Command {
	var (
		asJSON  bool
		timeout time.Duration
	)
	cmd := &cobra.Command{
		Use:   "check [FILE] [--json]",
		Short: "Check the store file for damage, without changing it",
		Long: `Check the store file (FILE, or colocd.db in data_dir) without changing it: both
bbolt meta pages (magic, version, page size, checksum), the file's size, every
page pointer, bbolt's own consistency check, every job record and kind
history, the indexes against the records, and the records already
quarantined. It opens the file read-only with a shared lock, so stop colocd
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
			path := ""
			if len(args) == 1 {
				path = args[0]
			} else {
				cfg, err := loadConfig(cmd, g, nil)
				if err != nil {
					return err
				}
				path = filepath.Join(cfg.DataDir, storeFile)
			}
			rep, err := queue.Check(path, queue.CheckOptions{Timeout: timeout})
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
			} else if err := printReport(out, &rep); err != nil {
				return err
			}
			if !rep.Clean() {
				return errors.New("store check: " + rep.Summary())
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as JSON")
	cmd.Flags().DurationVar(&timeout, "timeout", time.Second, "how long to wait for the file lock")
	return cmd
}

// printReport writes the report as text: the file, both meta pages, the
// records, each problem and each quarantined record.
func printReport(w io.Writer, r *queue.Report) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	verdict := "clean"
	if !r.Clean() {
		verdict = fmt.Sprintf("%d problem(s)", len(r.Problems))
	}
	fmt.Fprintf(tw, "file\t%s\t%s\n", r.Path, verdict)
	fmt.Fprintf(tw, "size\t%d bytes, page size %d\n", r.Size, r.PageSize)
	for _, m := range r.Meta {
		state := "ok"
		if m.Damage != "" {
			state = "DAMAGED: " + m.Damage
		}
		fmt.Fprintf(tw, "meta page %d\ttxid %d, %d pages in use\t%s\n", m.Page, m.Txid, m.HighWater, state)
	}
	if r.Txid != 0 {
		fmt.Fprintf(tw, "opens at\ttxid %d, schema %d\n", r.Txid, r.Schema)
	}
	if r.Scanned {
		states := make([]string, 0, len(r.Jobs))
		total := 0
		for _, st := range queue.States {
			if n := r.Jobs[st]; n > 0 {
				states = append(states, fmt.Sprintf("%s %d", st, n))
				total += n
			}
		}
		fmt.Fprintf(tw, "records\t%d jobs (%s), %d kind histories\n", total, strings.Join(states, ", "), r.Kinds)
	} else {
		fmt.Fprintf(tw, "records\tnot read: the file is too damaged for bbolt to read them safely\n")
	}
	for _, p := range r.Problems {
		fmt.Fprintf(tw, "PROBLEM %s\t%s\t%s\n", p.Kind, p.Where, p.What)
	}
	for _, q := range r.Quarantined {
		fmt.Fprintf(tw, "quarantined\t%s/%s\t%s at %s; %d bytes: %s\n", q.Bucket, q.Key, q.Reason,
			q.At.Format(time.RFC3339), len(q.Raw), preview(q.Raw))
	}
	return tw.Flush()
}

// preview shows the start of raw bytes: as text when printable, else base64.
func preview(b []byte) string {
	const max = 80
	cut := b
	if len(cut) > max {
		cut = cut[:max]
	}
	for _, c := range cut {
		if c < 0x20 || c > 0x7e {
			return "base64 " + base64.StdEncoding.EncodeToString(cut) + ellipsis(len(b) > max)
		}
	}
	return fmt.Sprintf("%q", cut) + ellipsis(len(b) > max)
}

func ellipsis(more bool) string {
	if more {
		return "…"
	}
	return ""
}
