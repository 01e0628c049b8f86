package main

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
)

func newProfilesCmd() *cobra.Command {
	var (
		kinds         string
		asCSV, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "profiles [--kinds K[,K]] [--limit N] [--offset M] [--csv|--json]",
		Short: "Show the learned resource profile of each job kind",
		Long: `Show the learned per-kind resource profiles: what one container of each kind
uses, as the daemon fitted it from node metrics. The table has one row per
kind: whether it was observed (known; "no" means the prior, the population's
mean), the learning ticks that saw it, its effective weight, its dominant
resource (cpu, disk, net_in or net_out), then its demand ± standard deviation
of CPU and I/O wait (% of a node's CPU time) and of disk read and write and
network in and out (MB/s, converted with the nodes' configured maxima; "-"
where none is known). --kinds lists only those kinds (unknown ones with the
prior; --kind is its old name); --limit and --offset show a page of the kinds,
sorted (the server sends at most 1,000 at once). --csv and --json print the
server's CSV (one row per kind, rates in bytes/s) or JSON (demand and std in
measured units, demand_util in the model's fractions of node capacity,
baseline, sigma, limits, total) for analysts.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	pg := addPageFlags(cmd, "kinds")
	cmd.Flags().StringVar(&kinds, "kind", "", "only these kinds (comma-separated; the old name of --kinds)")
	cmd.MarkFlagsMutuallyExclusive("kind", "kinds")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "print the server's CSV")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.MarkFlagsMutuallyExclusive("csv", "json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		page := pg.page(cmd)
		if kinds != "" {
			page.Kinds = strings.Split(kinds, ",")
		}
		out := cmd.OutOrStdout()
		if asCSV {
			b, err := api.ProfilesCSVPage(cmd.Context(), page)
			if err != nil {
				return err
			}
			return writeRaw(out, b)
		}
		r, err := api.ProfilesPage(cmd.Context(), page)
		if err != nil {
			return err
		}
		return printReply(out, r, c.format(asJSON), printProfiles)
	}
	return cmd
}

// printProfiles prints the table, then the node baseline, the residual
// σ and the limits.
func printProfiles(w io.Writer, p v1.Profiles) error {
	if len(p.Kinds) == 0 {
		if _, err := fmt.Fprintln(w, "no kinds profiled yet"); err != nil {
			return err
		}
	} else {
		rows := [][]string{{"KIND", "KNOWN", "TICKS", "WEIGHT", "DOMINANT", "CPU %", "IOWAIT %",
			"DISK READ MB/s", "DISK WRITE MB/s", "NET IN MB/s", "NET OUT MB/s"}}
		for _, k := range p.Kinds {
			known := "no"
			if k.Known {
				known = "yes"
			}
			d, s := k.Demand, k.Std
			rows = append(rows, []string{k.Kind, known, strconv.FormatInt(k.Ticks, 10), strconv.FormatFloat(k.Weight, 'f', 1, 64), k.Dominant,
				pm(pct(d.CPU), pct(s.CPU)), pm(pct(d.IOWait), pct(s.IOWait)),
				pm(mbps(d.DiskReadBps), mbps(s.DiskReadBps)), pm(mbps(d.DiskWriteBps), mbps(s.DiskWriteBps)),
				pm(mbps(d.NetInBps), mbps(s.NetInBps)), pm(mbps(d.NetOutBps), mbps(s.NetOutBps))})
		}
		if err := writeTable(w, rows); err != nil {
			return err
		}
	}
	node := func(r v1.Rates) string {
		return fmt.Sprintf("cpu %s %%, iowait %s %%, disk read %s, write %s MB/s, net in %s, out %s MB/s",
			pct(r.CPU), pct(r.IOWait), mbps(r.DiskReadBps), mbps(r.DiskWriteBps), mbps(r.NetInBps), mbps(r.NetOutBps))
	}
	limit := func(v float64) string {
		if v <= 0 {
			return "-"
		}
		return mbps(&v)
	}
	l := p.Limits
	_, err := fmt.Fprintf(w, "\n%d node observations\nidle node:  %s\nresidual σ: %s\nlimits:     disk read %s, write %s MB/s, net in %s, out %s MB/s\n",
		p.Observations, node(p.Baseline), node(p.Sigma),
		limit(l.DiskReadBps), limit(l.DiskWriteBps), limit(l.NetInBps), limit(l.NetOutBps))
	if err != nil || len(p.Kinds) == p.Total || p.Total == 0 {
		return err
	}
	_, err = fmt.Fprintf(w, "kinds %d to %d of %d (--offset, --limit for others)\n", p.Offset+1, p.Offset+len(p.Kinds), p.Total)
	return err
}

// pct formats a fraction as a percentage with one decimal.
func pct(v float64) string { return fixed(100*v, 1) }

// mbps formats bytes/s as MB/s (10⁶ bytes, as in the config's *_mbps
// keys) with two decimals; "-" when unknown (null: the server knows no
// maximum to convert with).
func mbps(v *float64) string {
	if v == nil {
		return "-"
	}
	return fixed(*v/1e6, 2)
}

// pm joins a value and its standard deviation: "12.3 ± 0.4", or the value
// alone when either is unknown.
func pm(v, std string) string {
	if v == "-" || std == "-" {
		return v
	}
	return v + " ± " + std
}
