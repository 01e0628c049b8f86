package main

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
)

func newQueuesCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "queues [--json]",
		Short: "Show the fairness queues: guarantees, owed and received service, deficits",
		Long: `Show the fairness stage's queues as of the last admission decision. In
pipeline.fairness.mode curves: every configured queue with its class
(latency-sensitive when its burst rate exceeds its sustained rate, else batch),
priority level, guarantee (hard, soft or elastic, from admission control, with
its reason), its curve (α, β, burst), the rate its curve entitles it to now
(ENTITLED), what it lacks of that (OWED), what it holds (HELD) and its mean
rate over the burst period (RECEIVED), as % of the cluster's vcores/memory;
then the elastic groups with their DRF deficit. In mode deficit: the groups
with their share and deficit. --json prints the server's JSON.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[v1.QueuesReport], error) {
		return api.Queues(ctx)
	}, printQueues)
	return cmd
}

// printQueues prints one row per queue, then the reasons of admission
// control.
func printQueues(w io.Writer, q v1.QueuesReport, cv clockView) error {
	if !q.Enabled {
		_, err := fmt.Fprintln(w, "fairness is off (pipeline.fairness.enabled)")
		return err
	}
	at := "no decision yet"
	if !q.At.IsZero() {
		at = "as of " + cv.at(q.At)
	}
	if _, err := fmt.Fprintf(w, "mode %s, groups by %s, %s\n", q.Mode, q.GroupBy, at); err != nil {
		return err
	}
	rows := [][]string{{"QUEUE", "CLASS", "LEVEL", "GUARANTEE", "ALPHA", "BETA", "BURST", "ENTITLED", "OWED", "HELD", "RECEIVED", "SHARE %", "DEFICIT", "PENDING"}}
	for _, s := range q.Queues {
		level, burst := "-", "-"
		if s.Level > 0 {
			level = strconv.Itoa(s.Level)
		}
		if s.BurstNS > 0 {
			burst = time.Duration(s.BurstNS).String()
		}
		rows = append(rows, []string{s.Name, s.Class, level, string(s.Guarantee), shareRate(s.Alpha), shareRate(s.Beta), burst,
			shareRate(s.Entitled), shareRate(s.Owed), shareRate(&s.Held), shareRate(s.Received), pct(s.Share),
			strconv.FormatFloat(s.Deficit, 'f', 3, 64), strconv.Itoa(s.Pending)})
	}
	if err := writeTable(w, rows); err != nil {
		return err
	}
	sep := "\n"
	for _, s := range q.Queues {
		if s.Reason != "" {
			if _, err := fmt.Fprintf(w, "%s%s: %s\n", sep, s.Name, s.Reason); err != nil {
				return err
			}
			sep = ""
		}
	}
	return nil
}

// shareRate formats a share of the cluster as "vcores%/memory%"; "-" for none.
func shareRate(r *v1.Rate) string {
	if r == nil {
		return "-"
	}
	return pct(r.VCores) + "/" + pct(r.Memory)
}
