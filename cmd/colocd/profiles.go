package main

import (
	"encoding/json"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"strconv"

	"github.com/spf13/cobra"
)

// clientRates is a per-container (or per-node) amount as GET /v1/profiles
// returns it: fractions of a node's CPU time, and bytes per second (null
// where the server knows no maximum to convert with).
type clientRates struct {
	CPU          float64  `json:"cpu"`
	IOWait       float64  `json:"iowait"`
	DiskReadBps  *float64 `json:"disk_read_bps"`
	DiskWriteBps *float64 `json:"disk_write_bps"`
	NetInBps     *float64 `json:"net_in_bps"`
	NetOutBps    *float64 `json:"net_out_bps"`
}

// clientProfiles is the reply of GET /v1/profiles (what the table needs).
type clientProfiles struct {
	Kinds []struct {
		Kind     string      `json:"kind"`
		Known    bool        `json:"known"`
		Ticks    int64       `json:"ticks"`
		Weight   float64     `json:"weight"`
		Dominant string      `json:"dominant"`
		Demand   clientRates `json:"demand"`
		Std      clientRates `json:"std"`
	} `json:"kinds"`
	Baseline     clientRates `json:"baseline"`
	Sigma        clientRates `json:"sigma"`
	Observations int64       `json:"observations"`
	Limits       struct {
		DiskReadBps  float64 `json:"disk_read_bps"`
		DiskWriteBps float64 `json:"disk_write_bps"`
		NetInBps     float64 `json:"net_in_bps"`
		NetOutBps    float64 `json:"net_out_bps"`
	} `json:"limits"`
}

func newProfilesCmd() *cobra.Command {
	var (
		kinds         string
		asCSV, asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "profiles [--kind K[,K]] [--csv|--json]",
		Short: "Show the learned resource profile of each job kind",
		Long: `Show the learned per-kind resource profiles: what one container of each kind
uses, as the daemon fitted it from node metrics. The table has one row per
kind: whether it was observed (known; "no" means the prior, the population's
mean), the learning ticks that saw it, its effective weight, its dominant
resource (cpu, disk, net_in or net_out), then its demand ± standard deviation
of CPU and I/O wait (% of a node's CPU time) and of disk read and write and
network in and out (MB/s, converted with the nodes' configured maxima; "-"
where none is known). --kind lists only those kinds (unknown ones with the
prior). --csv and --json print the server's CSV (one row per kind, rates in
bytes/s) or JSON (demand and std in measured units, demand_util in the model's
fractions of node capacity, baseline, sigma, limits) for analysts.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().StringVar(&kinds, "kind", "", "only these kinds (comma-separated)")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "print the server's CSV")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.MarkFlagsMutuallyExclusive("csv", "json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		q := url.Values{}
		if kinds != "" {
			q.Set("kind", kinds)
		}
		if asCSV {
			q.Set("format", "csv")
		}
		path := "/v1/profiles"
		if len(q) > 0 {
			path += "?" + q.Encode()
		}
		_, b, err := c.do(cmd.Context(), http.MethodGet, path, nil, nil)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asCSV || asJSON {
			return writeRaw(out, b)
		}
		var p clientProfiles
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		return printProfiles(out, p)
	}
	return cmd
}

// printProfiles prints the table, then the node baseline, the residual
// σ and the limits.
func printProfiles(w io.Writer, p clientProfiles) error {
	if len(p.Kinds) == 0 {
		if _, err := fmt.Fprintln(w, "no kinds profiled yet"); err != nil {
			return err
		}
	} else {
		tw := newTable(w)
		fmt.Fprintln(tw, "KIND\tKNOWN\tTICKS\tWEIGHT\tDOMINANT\tCPU %\tIOWAIT %\tDISK READ MB/s\tDISK WRITE MB/s\tNET IN MB/s\tNET OUT MB/s")
		for _, k := range p.Kinds {
			known := "no"
			if k.Known {
				known = "yes"
			}
			d, s := k.Demand, k.Std
			fmt.Fprintf(tw, "%s\t%s\t%d\t%.1f\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", k.Kind, known, k.Ticks, k.Weight, k.Dominant,
				pm(pct(d.CPU), pct(s.CPU)), pm(pct(d.IOWait), pct(s.IOWait)),
				pm(mbps(d.DiskReadBps), mbps(s.DiskReadBps)), pm(mbps(d.DiskWriteBps), mbps(s.DiskWriteBps)),
				pm(mbps(d.NetInBps), mbps(s.NetInBps)), pm(mbps(d.NetOutBps), mbps(s.NetOutBps)))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	node := func(r clientRates) string {
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

func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

// pm joins a value and its standard deviation: "12.3 ± 0.4", or the value
// alone when either is unknown.
func pm(v, std string) string {
	if v == "-" || std == "-" {
		return v
	}
	return v + " ± " + std
}
