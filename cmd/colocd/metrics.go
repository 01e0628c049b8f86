package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
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

// appMetrics is one application of `colocd metrics --containers --json`.
type appMetrics struct {
	Host         string  `json:"host"`
	Application  string  `json:"application_id"`
	CPU          float64 `json:"cpu"`
	DiskReadBps  float64 `json:"disk_read_bps"`
	DiskWriteBps float64 `json:"disk_write_bps"`
}

func newMetricsCmd() *cobra.Command {
	var (
		from, to, hosts string
		cf              *configFlags
	)
	var asJSON, containers bool
	cmd := &cobra.Command{
		Use:   "metrics --from T --to T [--hosts h1,h2] [--source influxdb|prometheus] [--containers] [--json]",
		Short: "Print each host's mean usage and goodness for a window, from InfluxDB or Prometheus",
		Long: `Read what the learning loop would read: each host's mean CPU, I/O wait, disk and
network rates over [from, to) from the metrics source (config key metrics.source:
influxdb reads Telegraf's measurements with Flux or InfluxQL, section influx;
prometheus reads node_exporter's metrics, section prometheus), and the goodness
(paper Eq. 1) with the limits of config section goodness. Times are RFC 3339.
Without --hosts, the RUNNING nodes of the configured YARN ResourceManager are
used, or, when no ResourceManager is configured, every host with data in the
window. With --containers it prints instead what learning.container_usage reads:
each application's own CPU (a share of its host's) and disk rates, from the
colocd-telegraf-yarn plugin's cgroup counters in InfluxDB (section influx), hosts
as InfluxDB names them (--hosts filters them).

  colocd metrics --config /etc/colocd/colocd.yaml --from 2026-03-01T10:00:00Z --to 2026-03-01T10:01:00Z --json
  colocd metrics --source prometheus --prometheus-url http://127.0.0.1:9090 --from ... --to ...`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			f, t, err := parseWindow(from, to)
			if err != nil {
				return err
			}
			cfg, err := loadConfig(cmd, cf, map[string]string{
				"source":     "metrics.source",
				"influx-url": "influx.url", "influx-org": "influx.org",
				"influx-bucket": "influx.bucket", "influx-token": "influx.token",
				"influx-language": "influx.language", "prometheus-url": "prometheus.url",
			})
			if err != nil {
				return err
			}
			if containers {
				return printContainerUsage(cmd, cfg, splitList(hosts), f, t, asJSON)
			}
			readings, stale, err := daemon.ReadMetrics(cmd.Context(), cfg, splitList(hosts), f, t)
			if err != nil {
				return err
			}
			out := map[string]hostMetrics{}
			for h, r := range readings {
				if r.Err != nil {
					fmt.Fprintf(cmd.ErrOrStderr(), "colocd: host %s: usage rejected: %v\n", h, r.Err)
					continue
				}
				u := r.Usage
				out[h] = hostMetrics{CPU: u.CPU, IOWait: u.IOWait, DiskReadBps: u.DiskRead, DiskWriteBps: u.DiskWrite,
					NetRecvBps: u.NetRecv, NetSentBps: u.NetSent, Goodness: r.Goodness}
			}
			for _, h := range stale {
				fmt.Fprintf(cmd.ErrOrStderr(), "colocd: host %s: no fresh data in the window (none, or the newest point is older than %s.stale_after)\n", h, daemon.MetricsSection(cfg))
			}
			return printMetrics(cmd.OutOrStdout(), out, asJSON)
		},
	}
	fl := cmd.Flags()
	cf = addConfigFlags(fl)
	fl.StringVar(&from, "from", "", "window start, RFC 3339 (required)")
	fl.StringVar(&to, "to", "", "window end, RFC 3339 (required)")
	fl.StringVar(&hosts, "hosts", "", "comma-separated host names (default: the YARN RM's running nodes, or every host with data)")
	fl.BoolVar(&asJSON, "json", false, `print {"hosts": {...}} as JSON (with --containers {"containers": [...]})`)
	fl.BoolVar(&containers, "containers", false, "print each application's own CPU and disk per host (the plugin's cgroup counters, learning.container_usage)")
	fl.String("source", "", "metrics source: influxdb or prometheus (config key metrics.source)")
	_ = cmd.RegisterFlagCompletionFunc("source", cobra.FixedCompletions([]string{"influxdb", "prometheus"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("influx-language", cobra.FixedCompletions([]string{"flux", "influxql"}, cobra.ShellCompDirectiveNoFileComp))
	fl.String("influx-url", "", "InfluxDB URL (config key influx.url)")
	fl.String("influx-language", "", "flux or influxql (config key influx.language)")
	fl.String("prometheus-url", "", "Prometheus URL (config key prometheus.url)")
	fl.String("influx-org", "", "InfluxDB 2.x organisation (config key influx.org)")
	fl.String("influx-bucket", "", "bucket, 1.8: db/rp (config key influx.bucket)")
	fl.String("influx-token", "", "token, 1.8: user:password (config key influx.token; prefer COLOCD_INFLUX_TOKEN)")
	return cmd
}

// printMetrics writes the hosts' metrics as {"hosts": {...}} JSON or a
// table sorted by host.
func printMetrics(w io.Writer, out map[string]hostMetrics, asJSON bool) error {
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"hosts": out})
	}
	names := make([]string, 0, len(out))
	for h := range out {
		names = append(names, h)
	}
	slices.Sort(names)
	tw := table(w)
	fmt.Fprintln(tw, "HOST\tCPU\tIOWAIT\tDISK READ\tDISK WRITE\tNET RECV\tNET SENT\tGOODNESS")
	for _, h := range names {
		m := out[h]
		fmt.Fprintf(tw, "%s\t%.1f%%\t%.1f%%\t%s\t%s\t%s\t%s\t%.2f\n", h, 100*m.CPU, 100*m.IOWait,
			rate(m.DiskReadBps), rate(m.DiskWriteBps), rate(m.NetRecvBps), rate(m.NetSentBps), m.Goodness)
	}
	return tw.Flush()
}

// printContainerUsage prints each application's own usage per host in
// [from, to), of the hosts named (all without), as JSON or a table; a
// window without counters says so on stderr.
func printContainerUsage(cmd *cobra.Command, cfg daemon.Config, hosts []string, from, to time.Time, asJSON bool) error {
	rows, err := daemon.ReadContainerUsage(cmd.Context(), cfg, from, to)
	if err != nil {
		return err
	}
	out := []appMetrics{}
	for _, r := range rows {
		if len(hosts) > 0 && !slices.Contains(hosts, r.Host) {
			continue
		}
		out = append(out, appMetrics{Host: r.Host, Application: r.AppID, CPU: r.CPU, DiskReadBps: r.DiskRead, DiskWriteBps: r.DiskWrite})
	}
	if len(out) == 0 {
		fmt.Fprintln(cmd.ErrOrStderr(), "colocd: no application's cgroup counters in the window (is the colocd-telegraf-yarn plugin's cgroup_dir set, and the io controller enabled for YARN's cgroups?)")
	}
	w := cmd.OutOrStdout()
	if asJSON {
		enc := json.NewEncoder(w)
		enc.SetIndent("", "  ")
		return enc.Encode(map[string]any{"containers": out})
	}
	tw := table(w)
	fmt.Fprintln(tw, "HOST\tAPPLICATION\tCPU\tDISK READ\tDISK WRITE")
	for _, m := range out {
		fmt.Fprintf(tw, "%s\t%s\t%.1f%%\t%s\t%s\n", m.Host, m.Application, 100*m.CPU, rate(m.DiskReadBps), rate(m.DiskWriteBps))
	}
	return tw.Flush()
}

// parseWindow parses --from and --to; to must be after from.
func parseWindow(from, to string) (time.Time, time.Time, error) {
	f, err := parseTime("--from", from)
	if err != nil {
		return f, f, err
	}
	t, err := parseTime("--to", to)
	if err != nil {
		return f, t, err
	}
	if !t.After(f) {
		return f, t, usagef("--to (%s) must be after --from (%s)", to, from)
	}
	return f, t, nil
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
