package main

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"sort"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/daemon"
)

// yarnFlags are the flags every yarn subcommand takes.
type yarnFlags struct {
	cf      *configFlags
	asJSON  bool
	cfg     daemon.Config     // as client loaded it
	sources map[string]string // where each of its keys came from
}

// client is the ResourceManager client colocd serve would build from the
// configuration and --rm/--user.
func (yf *yarnFlags) client(cmd *cobra.Command) (*daemon.YarnRM, error) {
	file, err := yf.cf.path()
	if err != nil {
		return nil, err
	}
	yf.sources = map[string]string{}
	cfg, err := daemon.Load(daemon.LoadOptions{File: file, Flags: cmd.Flags(), SkipTokenFile: true, Sources: yf.sources,
		FlagKeys: map[string]string{"rm": "yarn.rm_urls", "user": "yarn.user"}})
	if err != nil {
		return nil, err
	}
	yf.cfg = cfg
	return daemon.YarnClient(cfg, nil)
}

// printSubmission writes the submission rows of yarn info.
func printSubmission(tw io.Writer, s daemon.YarnSubmission) {
	as := "colocd's own user (yarn.submit_as daemon)"
	if s.ByJobUser() {
		as = "each job's user (yarn.submit_as job_user: doAs with Kerberos, user.name with simple auth; the proxy-user rules decide)"
	}
	fmt.Fprintf(tw, "submit as\t%s\n", as)
	if s.AppUser != "" {
		fmt.Fprintf(tw, "applications' user\t%s (yarn.app_user: recovery parks a job whose application is another user's)\n", s.AppUser)
	}
	var toks []string
	if s.RMToken {
		toks = append(toks, "RM")
	}
	for _, h := range s.HDFS {
		toks = append(toks, "HDFS "+h)
	}
	if len(toks) == 0 {
		fmt.Fprintln(tw, "delegation tokens\tnone (yarn.tokens)")
		return
	}
	fmt.Fprintf(tw, "delegation tokens\t%s, fetched at admission, renewer %s\n", strings.Join(toks, ", "), s.Renewer)
}

// printAuth writes the auth rows of yarn info.
func printAuth(tw io.Writer, a daemon.YarnAuth) {
	defer printClientCert(tw, a.ClientCert, time.Now())
	switch {
	case a.Mode == "kerberos":
		fmt.Fprintf(tw, "auth\tKerberos %s (keytab %s)\n", a.Principal, a.Keytab)
		tgt := "none yet"
		if !a.TGTEnd.IsZero() {
			tgt = fmt.Sprintf("valid until %s (renewed from %s)", a.TGTEnd.UTC().Format(time.RFC3339), a.RenewAt.UTC().Format(time.RFC3339))
		}
		fmt.Fprintf(tw, "Kerberos TGT\t%s\n", tgt)
	case a.Mode != "simple":
		fmt.Fprintf(tw, "auth\t%s\n", a.Mode)
	case a.User == "":
		fmt.Fprintln(tw, "auth\tsimple, anonymous (no user.name: the RM sees dr.who)")
	default:
		fmt.Fprintf(tw, "auth\tsimple, user.name %s\n", a.User)
	}
}

// printClientCert writes the client certificate row of yarn info, if
// there is one: whose, signed by whom, until when, and whether that has
// passed at now.
func printClientCert(tw io.Writer, c *daemon.YarnClientCert, now time.Time) {
	if c == nil {
		return
	}
	state := "valid until"
	if now.After(c.NotAfter) {
		state = "EXPIRED"
	}
	fmt.Fprintf(tw, "client certificate\t%s, issued by %s, %s %s (%s)\n", c.Subject, c.Issuer, state,
		c.NotAfter.UTC().Format(time.RFC3339), c.File)
}

func newYarnCmd() *cobra.Command {
	yf := &yarnFlags{}
	cmd := &cobra.Command{
		Use:   "yarn",
		Short: "Show what colocd sees of the YARN ResourceManager",
		Long: `Query the ResourceManager(s) of config key yarn.rm_urls (or --rm) the way colocd
does, to check connectivity and the data admission decisions are based on.
Tables for people; --json prints the decoded values under YARN's documented
field names.`,
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return cmd.Help() },
	}
	pf := cmd.PersistentFlags()
	yf.cf = addConfigFlags(pf)
	pf.String("rm", "", "comma-separated RM URLs (config key yarn.rm_urls)")
	pf.String("user", "", "simple-auth user.name (config key yarn.user)")
	pf.BoolVar(&yf.asJSON, "json", false, "print JSON")
	cmd.AddCommand(newYarnInfoCmd(yf), newYarnNodesCmd(yf), newYarnAppsCmd(yf), newYarnAppCmd(yf))
	return cmd
}

func newYarnInfoCmd(yf *yarnFlags) *cobra.Command {
	return &cobra.Command{
		Use: "info", Short: "Cluster info and metrics", Args: noArgs,
		Long: `Print the active ResourceManager, how colocd authenticates to it (simple
auth's user.name, or the Kerberos principal and its TGT's expiry), whose
applications it submits (yarn.submit_as) and which delegation tokens it
fetches at admission (yarn.tokens), the yarn keys a Hadoop configuration
can supply with where each value came from (yarn.hadoop_conf_dir, default
$HADOOP_CONF_DIR: "hadoop yarn-site.xml: …", or the file, a variable, a
flag, the default), its
cluster info (id, state, HA state, Hadoop version) and cluster metrics
(nodes, memory, vcores, applications).`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := yf.client(cmd)
			if err != nil {
				return err
			}
			ci, err := c.ClusterInfo(cmd.Context())
			if err != nil {
				return err
			}
			cm, err := c.ClusterMetrics(cmd.Context())
			if err != nil {
				return err
			}
			info := daemon.InspectYarn(yf.cfg, c)
			auth, sub := info.Auth, info.Submission
			keys := yarnKeySources(yf.cfg, yf.sources)
			if yf.asJSON {
				byKey := map[string]daemon.EffectiveValue{}
				for _, k := range keys {
					byKey[k.Key] = k
				}
				return printJSON(cmd.OutOrStdout(), map[string]any{"clusterInfo": ci, "clusterMetrics": cm, "auth": auth, "submission": sub, "config": byKey})
			}
			tw := table(cmd.OutOrStdout())
			fmt.Fprintf(tw, "ResourceManager\t%s\n", c.ActiveRM())
			printAuth(tw, auth)
			printSubmission(tw, sub)
			for _, k := range keys {
				fmt.Fprintf(tw, "%s\t%s\t(%s)\n", k.Key, k.Value, k.Source)
			}
			fmt.Fprintf(tw, "cluster id\t%d\n", ci.ID)
			fmt.Fprintf(tw, "state / HA state\t%s / %s\n", ci.State, ci.HAState)
			fmt.Fprintf(tw, "Hadoop\t%s\n", ci.HadoopVersion)
			fmt.Fprintf(tw, "started\t%s\n", msTime(ci.StartedOn))
			fmt.Fprintf(tw, "nodes active/total\t%d/%d (lost %d, unhealthy %d, decommissioned %d)\n",
				cm.ActiveNodes, cm.TotalNodes, cm.LostNodes, cm.UnhealthyNodes, cm.DecommissionedNodes)
			fmt.Fprintf(tw, "memory MB avail/alloc/total\t%d/%d/%d\n", cm.AvailableMB, cm.AllocatedMB, cm.TotalMB)
			fmt.Fprintf(tw, "vcores avail/alloc/total\t%d/%d/%d\n", cm.AvailableVirtualCores, cm.AllocatedVirtualCores, cm.TotalVirtualCores)
			fmt.Fprintf(tw, "apps running/pending/completed\t%d/%d/%d\n", cm.AppsRunning, cm.AppsPending, cm.AppsCompleted)
			return tw.Flush()
		},
	}
}

// yarnInfoKeys are the keys yarn info shows with their source: those a
// Hadoop configuration can supply (yarn.hadoop_conf_dir), and the
// directory itself.
var yarnInfoKeys = []string{"yarn.hadoop_conf_dir", "yarn.rm_urls", "yarn.auth", "yarn.kerberos.service_principal",
	"yarn.tokens.renewer", "yarn.tokens.rm_service", "yarn.tokens.hdfs"}

// yarnKeySources is each of yarnInfoKeys with its value and source.
func yarnKeySources(cfg daemon.Config, sources map[string]string) []daemon.EffectiveValue {
	var out []daemon.EffectiveValue
	for _, v := range daemon.Effective(cfg, sources) {
		if slices.Contains(yarnInfoKeys, v.Key) {
			out = append(out, v)
		}
	}
	return out
}

func newYarnNodesCmd(yf *yarnFlags) *cobra.Command {
	var states []string
	nodes := &cobra.Command{
		Use: "nodes", Short: "Nodes and their free resources", Args: noArgs,
		Long: `List the ResourceManager's nodes: host, rack, state, containers, memory and
vcores used and available, health report. --state restricts the states.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := yf.client(cmd)
			if err != nil {
				return err
			}
			ns, err := c.Nodes(cmd.Context(), states...)
			if err != nil {
				return err
			}
			if yf.asJSON {
				return printJSON(cmd.OutOrStdout(), ns)
			}
			tw := table(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tHOST\tRACK\tSTATE\tCONTAINERS\tMEM USED/AVAIL MB\tVCORES USED/AVAIL\tHEALTH")
			for _, n := range ns {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%d\t%d/%d\t%d/%d\t%s\n", n.ID, n.NodeHostName, n.Rack, n.State, n.NumContainers,
					n.UsedMemoryMB, n.AvailMemoryMB, n.UsedVirtualCores, n.AvailableVirtualCores, oneLine(n.HealthReport))
			}
			return tw.Flush()
		},
	}
	nodes.Flags().StringSliceVar(&states, "state", nil, "node states (RUNNING, UNHEALTHY, LOST, ...); default all")
	return nodes
}

func newYarnAppsCmd(yf *yarnFlags) *cobra.Command {
	var f daemon.YarnAppsFilter
	var tags, appStates []string
	var limit int
	apps := &cobra.Command{
		Use: "apps", Short: "Applications (filters: --state, --queue, --app-user, --tag)", Args: noArgs,
		Long: `List the ResourceManager's applications, sorted by id. colocd tags the
applications it submits colocd-job-<id> and colocd-kind-<kind>: --tag
colocd-kind-kmeans lists one kind's.`,
		RunE: func(cmd *cobra.Command, _ []string) error {
			c, err := yf.client(cmd)
			if err != nil {
				return err
			}
			f.States, f.ApplicationTags, f.Limit = appStates, tags, limit
			as, err := c.Apps(cmd.Context(), f)
			if err != nil {
				return err
			}
			if yf.asJSON {
				return printJSON(cmd.OutOrStdout(), as)
			}
			sort.Slice(as, func(i, j int) bool { return as[i].ID < as[j].ID })
			tw := table(cmd.OutOrStdout())
			fmt.Fprintln(tw, "ID\tNAME\tUSER\tQUEUE\tSTATE\tFINAL\tPROGRESS\tMEM MB\tVCORES\tTAGS")
			for _, a := range as {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%.0f%%\t%d\t%d\t%s\n", a.ID, a.Name, a.User, a.Queue, a.State,
					a.FinalStatus, a.Progress, a.AllocatedMB, a.AllocatedVCores, a.ApplicationTags)
			}
			return tw.Flush()
		},
	}
	af := apps.Flags()
	af.StringSliceVar(&appStates, "state", nil, "application states (RUNNING, ACCEPTED, FINISHED, ...)")
	af.StringVar(&f.Queue, "queue", "", "queue")
	af.StringVar(&f.User, "app-user", "", "applications of this user")
	af.StringSliceVar(&tags, "tag", nil, "application tags (any of), e.g. colocd-kind-kmeans")
	af.IntVar(&limit, "limit", 0, "at most this many")
	return apps
}

func newYarnAppCmd(yf *yarnFlags) *cobra.Command {
	return &cobra.Command{
		Use: "app ID", Short: "One application and where its containers run", Args: exactArgs(1),
		Long: `Show one application (state, progress, allocation, tags, diagnostics) and,
while it runs, how many of its containers run on each host.`,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := yf.client(cmd)
			if err != nil {
				return err
			}
			a, err := c.App(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var placement map[string]int
			var perr error
			if !a.Terminal() {
				placement, perr = c.Placement(cmd.Context(), a.ID)
			}
			if yf.asJSON {
				return printJSON(cmd.OutOrStdout(), map[string]any{"app": a, "placement": placement})
			}
			tw := table(cmd.OutOrStdout())
			for _, kv := range [][2]string{
				{"id", a.ID}, {"name", a.Name}, {"type", a.ApplicationType}, {"user", a.User}, {"queue", a.Queue},
				{"state", a.State}, {"final status", a.FinalStatus}, {"progress", fmt.Sprintf("%.0f%%", a.Progress)},
				{"started", msTime(a.StartedTime)}, {"finished", msTime(a.FinishedTime)},
				{"allocated", fmt.Sprintf("%d MB, %d vcores, %d containers", a.AllocatedMB, a.AllocatedVCores, a.RunningContainers)},
				{"tags", a.ApplicationTags}, {"tracking URL", a.TrackingURL}, {"diagnostics", oneLine(a.Diagnostics)},
			} {
				fmt.Fprintf(tw, "%s\t%s\n", kv[0], kv[1])
			}
			if perr != nil {
				fmt.Fprintf(tw, "placement\tunavailable: %v\n", perr)
			}
			hosts := make([]string, 0, len(placement))
			for h := range placement {
				hosts = append(hosts, h)
			}
			slices.Sort(hosts)
			for _, h := range hosts {
				fmt.Fprintf(tw, "containers on %s\t%d\n", h, placement[h])
			}
			return tw.Flush()
		},
	}
}

func printJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func table(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

func msTime(ms int64) string {
	if ms <= 0 {
		return "-"
	}
	return time.UnixMilli(ms).UTC().Format(time.RFC3339)
}

func oneLine(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 120 {
		s = s[:117] + "..."
	}
	return s
}
