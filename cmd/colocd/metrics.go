package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/collector"
	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/yarnclient"
)

// hostMetrics is one host of `colocd metrics --json`.
type hostMetrics struct {
	CPU          float64 `json:"cpu"`
	IOWait       float64 `json:"iowait"`
	DiskReadBps  float64 `json:"disk_read_bps"`
	DiskWriteBps float64 `json:"disk_write_bps"`
	NetRecvBps   float64 `json:"net_recv_bps"`
	NetSentBps   float64 `json:"net_sent_bps"`
	Goodness     float64 `json:"goodness"`
}

func newMetricsCmd(g *globals) *cobra.Command {
	var from, to, hosts string
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "metrics --from T --to T [--hosts h1,h2] [--json]",
		Short: "Print each host's mean usage and goodness for a window, from InfluxDB",
		Long: `Read what the learning loop would read: each host's mean CPU, I/O wait, disk and
network rates over [from, to) from InfluxDB (Telegraf's schema, config section
influx), and the goodness (paper Eq. 1) with the limits of config section
goodness. Times are RFC 3339. Without --hosts, the RUNNING nodes of the
configured YARN ResourceManager are used.

  colocd metrics --config /etc/colocd/colocd.yaml --from 2026-03-01T10:00:00Z --to 2026-03-01T10:01:00Z --json`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, err := parseTime("--from", from)
			if err != nil {
				return err
			}
			t, err := parseTime("--to", to)
			if err != nil {
				return err
			}
			if !t.After(f) {
				return usagef("--to (%s) must be after --from (%s)", to, from)
			}
			cfg, err := loadConfig(cmd, g, map[string]string{
				"influx-url": "influx.url", "influx-org": "influx.org",
				"influx-bucket": "influx.bucket", "influx-token": "influx.token",
			})
			if err != nil {
				return err
			}
			if cfg.Influx.URL == "" {
				return usagef("no InfluxDB: set influx.url (--influx-url or COLOCD_INFLUX_URL)")
			}
			lim := goodness.Limits{DiskRead: cfg.Goodness.DiskReadMBps * 1e6, DiskWrite: cfg.Goodness.DiskWriteMBps * 1e6,
				NetRecv: cfg.Goodness.NetRecvMBps * 1e6, NetSent: cfg.Goodness.NetSentMBps * 1e6}
			if err := lim.Validate(); err != nil {
				return usagef("goodness limits: set goodness.disk_read_mbps, disk_write_mbps, net_recv_mbps and net_sent_mbps (> 0): %v", err)
			}
			col, err := collector.New(cfg.Influx.CollectorConfig())
			if err != nil {
				return usageError{fmt.Errorf("influx: %w", err)}
			}
			defer col.Close()
			list := splitList(hosts)
			if len(list) == 0 {
				if list, err = yarnHosts(cmd.Context(), cfg); err != nil {
					return err
				}
			}
			res, err := col.Usage(cmd.Context(), list, f, t)
			if err != nil && !errors.Is(err, collector.ErrEmpty) {
				return err
			}
			out := map[string]hostMetrics{}
			for h, u := range res.Usage {
				gv, err := goodness.Checked(u, lim)
				if err != nil {
					return fmt.Errorf("host %s: %w", h, err)
				}
				out[h] = hostMetrics{CPU: u.CPU, IOWait: u.IOWait, DiskReadBps: u.DiskRead, DiskWriteBps: u.DiskWrite,
					NetRecvBps: u.NetRecv, NetSentBps: u.NetSent, Goodness: gv}
			}
			for _, h := range res.Stale {
				fmt.Fprintf(cmd.ErrOrStderr(), "colocd: host %s: stale (newest point older than influx.stale_after)\n", h)
			}
			for _, h := range res.Missing {
				fmt.Fprintf(cmd.ErrOrStderr(), "colocd: host %s: no data in the window\n", h)
			}
			if asJSON {
				enc := json.NewEncoder(cmd.OutOrStdout())
				enc.SetIndent("", "  ")
				return enc.Encode(map[string]any{"hosts": out})
			}
			names := make([]string, 0, len(out))
			for h := range out {
				names = append(names, h)
			}
			slices.Sort(names)
			tw := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "HOST\tCPU\tIOWAIT\tDISK READ\tDISK WRITE\tNET RECV\tNET SENT\tGOODNESS")
			for _, h := range names {
				m := out[h]
				fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%s\t%s\t%s\t%s\t%.2f\n", h, 100*m.CPU, 100*m.IOWait,
					rate(m.DiskReadBps), rate(m.DiskWriteBps), rate(m.NetRecvBps), rate(m.NetSentBps), m.Goodness)
			}
			return tw.Flush()
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&from, "from", "", "window start, RFC 3339 (required)")
	fl.StringVar(&to, "to", "", "window end, RFC 3339 (required)")
	fl.StringVar(&hosts, "hosts", "", "comma-separated host names (default: the YARN RM's running nodes)")
	fl.BoolVar(&asJSON, "json", false, `print {"hosts": {...}} as JSON`)
	fl.String("influx-url", "", "InfluxDB URL (config key influx.url)")
	fl.String("influx-org", "", "InfluxDB 2.x organisation (config key influx.org)")
	fl.String("influx-bucket", "", "bucket, 1.8: db/rp (config key influx.bucket)")
	fl.String("influx-token", "", "token, 1.8: user:password (config key influx.token; prefer COLOCD_INFLUX_TOKEN)")
	return cmd
}

func parseTime(flag, s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, usagef("%s is required (RFC 3339, e.g. 2026-03-01T10:00:00Z)", flag)
	}
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		return time.Time{}, usagef("%s: %q is not RFC 3339 (e.g. 2026-03-01T10:00:00Z)", flag, s)
	}
	return t, nil
}

func splitList(s string) []string {
	var out []string
	for _, x := range strings.Split(s, ",") {
		if x = strings.TrimSpace(x); x != "" {
			out = append(out, x)
		}
	}
	return out
}

// yarnHosts lists the RUNNING nodes' host names.
func yarnHosts(ctx context.Context, cfg daemon.Config) ([]string, error) {
	if len(cfg.Yarn.RMURLs) == 0 {
		return nil, usagef("no hosts: pass --hosts, or configure yarn.rm_urls to list the cluster's nodes")
	}
	yc, err := yarnclient.New(cfg.Yarn.ClientConfig(nil))
	if err != nil {
		return nil, usageError{fmt.Errorf("yarn: %w", err)}
	}
	nodes, err := yc.Nodes(ctx, "RUNNING")
	if err != nil {
		return nil, fmt.Errorf("list YARN nodes: %w", err)
	}
	var out []string
	for _, n := range nodes {
		h := n.NodeHostName
		if h == "" {
			h, _, _ = strings.Cut(n.ID, ":")
		}
		out = append(out, h)
	}
	return out, nil
}

// rate formats bytes/s.
func rate(bps float64) string {
	switch {
	case bps >= 1e9:
		return fmt.Sprintf("%.2f GB/s", bps/1e9)
	case bps >= 1e6:
		return fmt.Sprintf("%.1f MB/s", bps/1e6)
	case bps >= 1e3:
		return fmt.Sprintf("%.1f kB/s", bps/1e3)
	}
	return fmt.Sprintf("%.0f B/s", bps)
}
