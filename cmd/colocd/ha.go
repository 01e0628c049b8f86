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

// newHACmd is `colocd ha status`: the replicas of a replicated colocd.
func newHACmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "ha",
		Short: "The replicas of a colocd replicated on ZooKeeper",
		Long: `colocd replicated on the cluster's ZooKeeper (the ha section of the
configuration) runs one leader, which admits jobs, and followers that
apply its log and take over when it fails. ha status shows them.`,
		Args: noArgs,
	}
	var asJSON bool
	status := &cobra.Command{
		Use:   "status [--json]",
		Short: "Show each replica's role, epoch, applied log index and lag",
		Long: `Ask one replica (the first of --server that answers; list them all,
comma-separated) for the replicated colocd as it sees it: its own role,
the leader, and every replica as each published itself in ZooKeeper: its
role, the fencing epoch it knows, the last log entry applied to its store,
how far it is behind the leader, and when it last reported. --json prints
the server's JSON.`,
		Args: noArgs,
	}
	c := addClientFlags(status)
	status.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	status.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[v1.HAStatus], error) {
		return api.HA(ctx)
	}, printHA)
	cmd.AddCommand(status)
	return cmd
}

// printHA prints the answering replica's view, then one row per replica.
func printHA(w io.Writer, s v1.HAStatus, _ clockView) error {
	leader := "none elected"
	if s.LeaderID != "" {
		leader = s.LeaderID + " (" + s.LeaderURL + ")"
	}
	if _, err := fmt.Fprintf(w, "asked %s: %s, epoch %d, leader %s, ZooKeeper %s, session %s (timeout %gs)\n",
		s.ID, s.Role, s.Epoch, leader, s.Root, orDash(s.Session), s.SessionTimeoutSeconds); err != nil {
		return err
	}
	rows := [][]string{{"REPLICA", "ROLE", "EPOCH", "APPLIED", "LAG", "REPORTED", "URL"}}
	for _, m := range s.Members {
		lag := "-"
		if s.LeaderApplied >= m.Applied {
			lag = strconv.FormatUint(s.LeaderApplied-m.Applied, 10)
		}
		rows = append(rows, []string{m.ID, m.Role, strconv.FormatUint(m.Epoch, 10), strconv.FormatUint(m.Applied, 10), lag,
			m.UpdatedAt.Local().Format(time.DateTime), m.URL})
	}
	return writeTable(w, rows)
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
