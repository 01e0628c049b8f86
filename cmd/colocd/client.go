package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
)

// Client defaults and environment variables.
const (
	defaultServer = "http://127.0.0.1:8080"
	envServer     = "COLOCD_SERVER"
	envToken      = "COLOCD_TOKEN"
	clientTimeout = apiclient.DefaultTimeout
)

// clientCommands returns the HTTP API client commands: submit, queue, job,
// cancel, resolve, prefs, profiles (profiles.go). Each takes --server (env
// COLOCD_SERVER) and --token (env COLOCD_TOKEN); they print tables for
// people and, with --json, the server's JSON for scripts. A non-2xx reply
// becomes an *apiclient.Error carrying the server's message (printed on
// stderr by main, exit status 1).
func clientCommands() []*cobra.Command {
	return []*cobra.Command{newSubmitCmd(), newQueueCmd(), newJobCmd(), newCancelCmd(), newResolveCmd(), newPrefsCmd(), newProfilesCmd(), newQueuesCmd(), newSummaryCmd(), newNodesCmd(), newWhoAmICmd()}
}

// clientFlags are one command's connection and output settings.
type clientFlags struct {
	server     string
	serverFrom string // where server came from, for its error
	token      string
	timeout    time.Duration
	auth       string
	caFile     string
	certFile   string
	keyFile    string
	output     string
	// clientConfig is --client-config: the client configuration file
	// (default clientConfigPath()).
	clientConfig string
}

// addClientFlags registers the connection flags (--server, --token,
// --auth, --ca-file, --cert-file, --key-file, --timeout,
// --client-config) and -o on cmd.
func addClientFlags(cmd *cobra.Command) *clientFlags {
	c := &clientFlags{}
	f := cmd.Flags()
	f.StringVar(&c.server, "server", defaultServer, "colocd API base URL, or the replicas' URLs comma-separated (env "+envServer+")")
	f.StringVar(&c.token, "token", "", "bearer token of a service account (env "+envToken+")")
	f.StringVar(&c.auth, "auth", authAuto, "auto (a token if given, else your Kerberos ticket from kinit, else --cert-file), kerberos, token or tls")
	f.StringVar(&c.caFile, "ca-file", "", "PEM CA bundle that signs the server's certificate (https)")
	f.StringVar(&c.certFile, "cert-file", "", "client certificate (PEM) for mutual TLS")
	f.StringVar(&c.keyFile, "key-file", "", "the client certificate's key (PEM)")
	f.DurationVar(&c.timeout, "timeout", clientTimeout, "timeout of the whole request")
	f.StringVar(&c.clientConfig, "client-config", "", "client configuration file (default "+clientConfigPathHelp+")")
	f.StringVarP(&c.output, "output", "o", "", "output: table (default), json, yaml, wide or name")
	_ = cmd.RegisterFlagCompletionFunc("output", cobra.FixedCompletions([]string{"table", "json", "yaml", "wide", "name"}, cobra.ShellCompDirectiveNoFileComp))
	_ = cmd.RegisterFlagCompletionFunc("auth", cobra.FixedCompletions([]string{authAuto, authKerberos, authToken, authTLS}, cobra.ShellCompDirectiveNoFileComp))
	return c
}

// clientConfigPathHelp names the default client configuration in help.
const clientConfigPathHelp = "$XDG_CONFIG_HOME/colocd/config.yaml or ~/.config/colocd/config.yaml"

// client applies the environment and the client configuration to the
// flags the user did not set, checks them and returns the API client they
// describe.
func (c *clientFlags) client(cmd *cobra.Command) (*apiclient.Client, error) {
	cfg, err := c.settle(cmd)
	if err != nil {
		return nil, err
	}
	if c.timeout <= 0 {
		return nil, usagef("--timeout must be positive, got %s", c.timeout)
	}
	auth, err := c.authenticator(cfg)
	if err != nil {
		return nil, err
	}
	hc, err := c.httpClient()
	if err != nil {
		return nil, err
	}
	api, err := apiclient.New(c.server, c.token, apiclient.Options{HTTPClient: hc, Auth: auth})
	switch {
	case errors.Is(err, apiclient.ErrBaseURL):
		return nil, usagef("%s %q: want a URL like %s", c.serverFrom, c.server, defaultServer)
	case err != nil:
		return nil, err
	}
	return api, nil
}

// printReply prints r as format says: the server's JSON, as YAML, the
// names of the jobs it holds, or through print (table, wide).
func printReply[T any](w io.Writer, r apiclient.Reply[T], format string, print func(io.Writer, T) error) error {
	switch format {
	case "json":
		return writeRaw(w, r.Raw)
	case "yaml":
		return writeYAML(w, r.Raw)
	case "name":
		return writeNames(w, any(r.Body))
	}
	return print(w, r.Body)
}

// viewRunE is the RunE of a command that reads one view (read, given the
// command's arguments) and prints it: the server's JSON with --json
// (*asJSON), else through print with the daemon's clock.
func viewRunE[T any](c *clientFlags, asJSON *bool, read func(context.Context, *apiclient.Client, []string) (apiclient.Reply[T], error),
	print func(io.Writer, T, clockView) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		r, err := read(cmd.Context(), api, args)
		if err != nil {
			return err
		}
		cv := clockView{}
		format := c.format(*asJSON)
		if format == "table" || format == "wide" {
			cv = fetchClock(cmd.Context(), api)
		}
		cv.wide = format == "wide"
		return printReply(cmd.OutOrStdout(), r, format, func(w io.Writer, v T) error { return print(w, v, cv) })
	}
}

// writeRaw prints the server's bytes, ending with a newline.
func writeRaw(w io.Writer, b []byte) error {
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// writeTable prints rows (the first is the header, if any) as aligned
// columns, two spaces apart.
func writeTable(w io.Writer, rows [][]string) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	for _, r := range rows {
		if _, err := io.WriteString(tw, strings.Join(r, "\t")+"\n"); err != nil {
			return err
		}
	}
	return tw.Flush()
}

// fixed formats v with prec decimals; "-" when it is not finite.
func fixed(v float64, prec int) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', prec, 64)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// jobRunE runs call on the command's argument, a job id, and prints the
// job it returns: the server's JSON with --json, else through print.
func jobRunE(c *clientFlags, asJSON *bool, call func(*cobra.Command, *apiclient.Client, string) (apiclient.Reply[v1.Job], error),
	print func(io.Writer, v1.Job) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		r, err := call(cmd, api, args[0])
		if err != nil {
			return err
		}
		return printReply(cmd.OutOrStdout(), r, c.format(*asJSON), print)
	}
}

// printJobState prints the one line of cancel and resolve.
func printJobState(w io.Writer, j v1.Job) error {
	_, err := fmt.Fprintf(w, "job %s is %s\n", j.ID, j.State)
	return err
}

// pageFlags are --kinds, --limit and --offset of a matrix command.
type pageFlags struct {
	kinds         string
	limit, offset int
}

// addPageFlags adds --kinds, --limit and --offset to cmd; what names what
// --limit counts.
func addPageFlags(cmd *cobra.Command, what string) *pageFlags {
	var p pageFlags
	cmd.Flags().StringVar(&p.kinds, "kinds", "", "only these kinds (comma-separated)")
	cmd.Flags().IntVar(&p.limit, "limit", 0, "at most this many "+what+" (0: all)")
	cmd.Flags().IntVar(&p.offset, "offset", 0, "skip this many "+what+" first")
	return &p
}

// page is the apiclient.Page of the flags (--limit only when set).
func (p *pageFlags) page(cmd *cobra.Command) apiclient.Page {
	pg := apiclient.Page{Offset: p.offset}
	if p.kinds != "" {
		pg.Kinds = strings.Split(p.kinds, ",")
	}
	if cmd.Flags().Changed("limit") {
		pg.Limit = &p.limit
	}
	return pg
}

func newWhoAmICmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "whoami [-o json|yaml]",
		Short: "Show who the server takes you for: user, role, groups, how you authenticated",
		Long: `Show who the server takes you for: the user your jobs run as, your role and
what granted it, your groups, the principal or certificate that authenticated
you, and, through a proxy rule (--doas is not a flag: the API's ?doAs=), who
acts for whom.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON (-o json)")
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[v1.WhoAmI], error) {
		return api.WhoAmI(ctx)
	}, func(w io.Writer, who v1.WhoAmI, _ clockView) error {
		rows := [][]string{{"user:", who.User}, {"role:", who.Role + " (" + who.RoleRule + ")"}, {"groups:", dash(strings.Join(who.Groups, ","))},
			{"authenticated:", who.Principal + " by " + who.Method}}
		if who.RealUser != "" {
			rows = append(rows, []string{"acting for it:", who.RealUser + " (" + who.ProxyRule + ")"})
		}
		return writeTable(w, rows)
	})
	return cmd
}
