package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"math"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

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
func jobRunE(c *clientFlags, asJSON *bool, call func(*cobra.Command, *apiclient.Client, string) (apiclient.Reply[apiclient.Job], error),
	print func(io.Writer, apiclient.Job) error) func(*cobra.Command, []string) error {
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
func printJobState(w io.Writer, j apiclient.Job) error {
	_, err := fmt.Fprintf(w, "job %s is %s\n", j.ID, j.State)
	return err
}

// submitFlags are the flags of submit.
type submitFlags struct {
	file, kind, queue, deadline, idem string
	containers, vcores, priority      int
	memoryMB                          int64
	labels                            []string
	asJSON                            bool
	array                             bool // -f held a JSON array
	out                               *clientFlags
}

// jobFlags are submit's flags that describe the job: -f excludes them.
var jobFlags = []string{"kind", "queue", "priority", "containers", "memory-mb", "vcores", "deadline", "label"}

func newSubmitCmd() *cobra.Command {
	var s submitFlags
	cmd := &cobra.Command{
		Use:        "submit (-f job.json | --kind K [flags])",
		Short:      "Submit a job to the colocd queue",
		SuggestFor: []string{"add", "enqueue"},
		Long: `Submit a job: either a JSON file (-f job.json, "-" for stdin) in the API's shape

  {"kind": "kmeans", "queue": "default", "priority": 0,
   "resources": {"containers": 12, "memory_mb": 1536, "vcores": 1},
   "submit": {...backend-specific...}, "deadline": "2026-12-01T10:00:00Z",
   "labels": {"team": "search"}}

or flags (memory and vcores are per container). The job runs as you: the user
colocd authenticated (your Kerberos principal's, or the token's); a "user" in
the file is ignored. Every submission carries an idempotency key (one is made
up when --idempotency-key is not given), so that a 503 is retried as the
server's Retry-After says without ever making a second job; with
--idempotency-key, repeating the command never makes a second job either.

A file holding a JSON array submits each element in order, in one process
over one connection; the i-th job (from 1) gets the key K-i, so with
--idempotency-key K the whole batch can be repeated safely. It stops at the
first refusal, naming the element.

  colocd submit -f job.json --idempotency-key nightly-2026-12-01
  colocd submit -f configs/jobs/paper-queue-a.json --idempotency-key demo-queue-a
  colocd submit --kind kmeans --containers 12 --memory-mb 1536 --vcores 1 --label team=search`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	s.out = c
	f := cmd.Flags()
	f.StringVarP(&s.file, "file", "f", "", `job JSON file, or a JSON array of jobs ("-" for stdin)`)
	f.StringVar(&s.kind, "kind", "", "job kind (recurring job identity)")
	f.StringVar(&s.queue, "queue", "", "YARN queue")
	f.IntVar(&s.priority, "priority", 0, "priority passed to the cluster")
	f.IntVar(&s.containers, "containers", 0, "number of containers")
	f.Int64Var(&s.memoryMB, "memory-mb", 0, "memory per container, MB")
	f.IntVar(&s.vcores, "vcores", 0, "vcores per container")
	f.StringVar(&s.deadline, "deadline", "", "deadline: RFC 3339 time, or a duration from now on the daemon's clock (simulated time on the simulator) such as 2h")
	f.StringArrayVar(&s.labels, "label", nil, "label key=value (repeatable)")
	f.StringVar(&s.idem, "idempotency-key", "", "Idempotency-Key: a retry with the same key returns the same job")
	f.BoolVar(&s.asJSON, "json", false, "print the server's JSON")
	_ = cmd.RegisterFlagCompletionFunc("kind", completeKinds(c))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		bodies, err := s.bodies(cmd)
		if err != nil {
			return err
		}
		if s.idem == "" {
			s.idem = newIdempotencyKey()
		}
		if bodies == nil {
			r, err := s.submitFlags(cmd, api)
			if err != nil {
				return err
			}
			return printSubmitted(cmd.OutOrStdout(), r, s.out.format(s.asJSON))
		}
		return s.submitBatch(cmd, api, bodies)
	}
	return cmd
}

// printSubmitted prints one submission's reply.
func printSubmitted(w io.Writer, r apiclient.Reply[apiclient.Job], format string) error {
	return printReply(w, r, format, func(w io.Writer, j apiclient.Job) error {
		verb := "submitted"
		if r.Status == http.StatusOK {
			verb = "already submitted (same idempotency key)"
		}
		_, err := fmt.Fprintf(w, "%s job %s (kind %s, user %s, state %s)\n", verb, j.ID, j.Kind, j.User, j.State)
		return err
	})
}

// submitBatch submits the jobs of a file: one, or each element of an array
// with the keys <key>-1, <key>-2, … It stops at the first error, naming
// the element.
func (s *submitFlags) submitBatch(cmd *cobra.Command, api *apiclient.Client, bodies []json.RawMessage) error {
	w := cmd.OutOrStdout()
	if len(bodies) == 1 && !s.array {
		r, err := api.SubmitJSON(cmd.Context(), bodies[0], s.idem)
		if err != nil {
			return err
		}
		return printSubmitted(w, r, s.out.format(s.asJSON))
	}
	created, again := 0, 0
	for i, b := range bodies {
		key := ""
		if s.idem != "" {
			key = fmt.Sprintf("%s-%d", s.idem, i+1)
		}
		r, err := api.SubmitJSON(cmd.Context(), b, key)
		if err != nil {
			return fmt.Errorf("%s, job %d of %d: %w (the %d before it were submitted)", s.file, i+1, len(bodies), err, i)
		}
		if r.Status == http.StatusOK {
			again++
		} else {
			created++
		}
		if err := printSubmitted(w, r, s.out.format(s.asJSON)); err != nil {
			return err
		}
	}
	if s.asJSON {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d jobs from %s: %d submitted, %d already submitted (same idempotency key)\n", len(bodies), s.file, created, again)
	return err
}

// submitFlags sends the job the flags describe.
func (s *submitFlags) submitFlags(cmd *cobra.Command, api *apiclient.Client) (apiclient.Reply[apiclient.Job], error) {
	req, err := s.request(cmd, func() time.Time { return daemonNow(cmd.Context(), api) })
	if err != nil {
		return apiclient.Reply[apiclient.Job]{}, err
	}
	return api.Submit(cmd.Context(), req, s.idem)
}

// maxBatch bounds the jobs of one -f file.
const maxBatch = 10000

// bodies reads the file of -f: one job, or the elements of a JSON array
// (then s.array is set); nil without -f.
func (s *submitFlags) bodies(cmd *cobra.Command) ([]json.RawMessage, error) {
	if s.file == "" {
		return nil, nil
	}
	for _, name := range jobFlags {
		if cmd.Flags().Changed(name) {
			return nil, usagef("--%s cannot be combined with -f (put it in the file)", name)
		}
	}
	var (
		body []byte
		err  error
	)
	if s.file == "-" {
		body, err = io.ReadAll(cmd.InOrStdin())
	} else {
		body, err = os.ReadFile(s.file)
	}
	if err != nil {
		return nil, fmt.Errorf("reading job file: %w", err)
	}
	if !json.Valid(body) {
		return nil, usagef("%s is not valid JSON", s.file)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return []json.RawMessage{body}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(trimmed, &list); err != nil {
		return nil, usagef("%s: %v", s.file, err)
	}
	switch {
	case len(list) == 0:
		return nil, usagef("%s is an empty array: no job to submit", s.file)
	case len(list) > maxBatch:
		return nil, usagef("%s holds %d jobs, more than %d", s.file, len(list), maxBatch)
	}
	s.array = true
	return list, nil
}

// request is the job the flags describe.
// now is the daemon's clock, read only for a relative --deadline.
func (s *submitFlags) request(cmd *cobra.Command, now func() time.Time) (apiclient.JobRequest, error) {
	if s.kind == "" {
		return apiclient.JobRequest{}, usagef("need -f job.json or --kind")
	}
	req := apiclient.JobRequest{Kind: s.kind, Queue: s.queue, Priority: s.priority}
	if f := cmd.Flags(); f.Changed("containers") || f.Changed("memory-mb") || f.Changed("vcores") {
		req.Resources = &apiclient.ResourcesRequest{Containers: s.containers, MemoryMB: s.memoryMB, VCores: s.vcores}
	}
	if s.deadline != "" {
		var at time.Time
		if _, err := time.Parse(time.RFC3339, s.deadline); err != nil {
			at = now()
		}
		d, err := parseDeadline(s.deadline, at)
		if err != nil {
			return apiclient.JobRequest{}, err
		}
		req.Deadline = &d
	}
	for _, l := range s.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return apiclient.JobRequest{}, usagef("--label %q: want key=value", l)
		}
		if req.Labels == nil {
			req.Labels = map[string]string{}
		}
		req.Labels[k] = v
	}
	return req, nil
}

// parseDeadline accepts RFC 3339 or a positive duration from now.
func parseDeadline(s string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Format(time.RFC3339), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return "", usagef("--deadline %q: want an RFC 3339 time (2026-12-01T10:00:00Z) or a positive duration (90m)", s)
	}
	return now.Add(d).UTC().Format(time.RFC3339), nil
}

func newQueueCmd() *cobra.Command {
	var (
		state, users, kinds, queues, since, cursor string
		labels                                     []string
		limit                                      int
		all, asJSON                                bool
	)
	cmd := &cobra.Command{
		Use:        "queue [--state S[,S]] [--user U] [--kind K] [--label k=v] [--since T] [--limit N] [-o json|yaml|wide|name]",
		Short:      "List the queue: pending jobs in order, then admitted and running",
		SuggestFor: []string{"list", "ls", "jobs", "status"},
		Long: `List jobs. By default the live queue: pending jobs in FIFO order with their
position (0 = next in line; the learned policy may still pick another), then
admitted and running jobs, newest first. --state takes a comma-separated list
of states, or "all"; --user, --kind and --yarn-queue keep those (comma-separated),
--label k=v the jobs carrying that label (repeatable), --since those submitted
since an RFC 3339 time or a duration ago (2h). A page holds at most --limit
jobs; the next page is --cursor with the cursor printed below the table, or
--all follows every page.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVar(&state, "state", "", "states to list (pending,admitted,running,parked,succeeded,failed,killed,cancelled or all)")
	f.StringVar(&users, "user", "", "only these users' jobs (comma-separated)")
	f.StringVar(&kinds, "kind", "", "only jobs of these kinds (comma-separated)")
	f.StringVar(&queues, "yarn-queue", "", "only jobs in these YARN queues (comma-separated)")
	f.StringArrayVar(&labels, "label", nil, "only jobs with label key=value (repeatable)")
	f.StringVar(&since, "since", "", "only jobs submitted since: an RFC 3339 time, or a duration ago (2h)")
	f.StringVar(&cursor, "cursor", "", "continue a listing from the cursor a page printed")
	f.BoolVar(&all, "all", false, "follow every page (at most 100,000 jobs)")
	f.IntVar(&limit, "limit", 100, "at most this many jobs a page")
	f.BoolVar(&asJSON, "json", false, "print the server's JSON (-o json)")
	_ = cmd.RegisterFlagCompletionFunc("kind", completeKinds(c))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions([]string{"pending", "admitted", "running", "parked", "succeeded", "failed", "killed", "cancelled", "all"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[apiclient.JobList], error) {
		o := apiclient.ListOptions{Limit: &limit, Cursor: cursor}
		split := func(s string) []string {
			if s == "" {
				return nil
			}
			return strings.Split(s, ",")
		}
		o.States, o.Users, o.Kinds, o.Queues = split(state), split(users), split(kinds), split(queues)
		for _, l := range labels {
			k, v, ok := strings.Cut(l, "=")
			if !ok || k == "" {
				return apiclient.Reply[apiclient.JobList]{}, usagef("--label %q: want key=value", l)
			}
			if o.Labels == nil {
				o.Labels = map[string]string{}
			}
			o.Labels[k] = v
		}
		if since != "" {
			t, err := time.Parse(time.RFC3339, since)
			if err != nil {
				d, derr := time.ParseDuration(since)
				if derr != nil || d <= 0 {
					return apiclient.Reply[apiclient.JobList]{}, usagef("--since %q: want an RFC 3339 time or a positive duration (2h)", since)
				}
				t = daemonNow(ctx, api).Add(-d)
			}
			o.Since = t
		}
		r, err := api.Jobs(ctx, o)
		for all && err == nil && r.Body.NextCursor != "" && len(r.Body.Jobs) < 100_000 {
			o.Cursor = r.Body.NextCursor
			var next apiclient.Reply[apiclient.JobList]
			if next, err = api.Jobs(ctx, o); err == nil {
				r.Body.Jobs = append(r.Body.Jobs, next.Body.Jobs...)
				r.Body.Count, r.Body.NextCursor, r.Body.Counts = len(r.Body.Jobs), next.Body.NextCursor, next.Body.Counts
			}
		}
		if all && err == nil {
			r.Raw, err = json.Marshal(r.Body)
		}
		return r, err
	}, printQueue)
	return cmd
}

// printQueue prints the jobs listed, then the store's counts by state.
// Creation times are wall-clock; on the simulator a column gives the
// simulated time beside.
func printQueue(w io.Writer, list apiclient.JobList, cv clockView) error {
	if h := cv.header(); h != "" {
		if _, err := fmt.Fprintln(w, h); err != nil {
			return err
		}
	}
	head := []string{"POS", "ID", "KIND", "USER", "QUEUE", "STATE", "CONTAINERS", "SKIPS", "CREATED"}
	if cv.wide {
		head = append(head, "MEMORY_MB", "VCORES", "PRIORITY", "APPLICATION", "ADMITTED", "LABELS")
	}
	if cv.simulated() {
		head = append(head, "CREATED (SIMULATED)")
	}
	rows := [][]string{head}
	for _, j := range list.Jobs {
		pos := "-"
		if j.Position != nil {
			pos = strconv.Itoa(*j.Position)
		}
		row := []string{pos, j.ID, j.Kind, dash(j.User), dash(j.Queue), j.State.String(),
			strconv.Itoa(j.Resources.Containers), strconv.Itoa(j.Skips), dash(cv.wall(j.CreatedAt))}
		if cv.wide {
			admitted := ""
			if j.AdmittedAt != nil {
				admitted = cv.wall(*j.AdmittedAt)
			}
			var ls []string
			for _, k := range slices.Sorted(maps.Keys(j.Labels)) {
				ls = append(ls, k+"="+j.Labels[k])
			}
			row = append(row, strconv.FormatInt(j.Resources.MemoryMB, 10), strconv.Itoa(j.Resources.VCores), strconv.Itoa(j.Priority),
				dash(j.AppID), dash(admitted), dash(strings.Join(ls, ",")))
		}
		if cv.simulated() {
			row = append(row, j.CreatedAt.UTC().Format(simFormat))
		}
		rows = append(rows, row)
	}
	if err := writeTable(w, rows); err != nil {
		return err
	}
	var parts []string
	for _, c := range list.StateCounts() {
		parts = append(parts, fmt.Sprintf("%s %d", c.State, c.N))
	}
	if len(parts) == 0 {
		parts = []string{"no jobs"}
	}
	if _, err := fmt.Fprintf(w, "\n%d listed; in the store: %s\n", len(list.Jobs), strings.Join(parts, ", ")); err != nil {
		return err
	}
	if list.NextCursor != "" {
		_, err := fmt.Fprintf(w, "more: --cursor %s (same filters), or --all\n", list.NextCursor)
		return err
	}
	return nil
}

func newJobCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "job ID [--json]",
		Short: "Show one job: state, queue position, estimated wait, the decision that admitted it",
		Long: `Show one job: kind, user, queue, state; while pending its position in FIFO
order and the estimated wait (from the kinds' past runtimes and how many jobs
run at once); its resources, priority, skips, deadline and labels; the YARN
application, the times it was created, admitted, running and finished; and the
top candidates of the decision that admitted it. --json prints the server's
JSON, the whole decision record included.`,
		Args: exactArgs(1),
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON (-o json)")
	cmd.ValidArgsFunction = completeJobIDs(c, "all")
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, args []string) (apiclient.Reply[apiclient.Job], error) {
		return api.Job(ctx, args[0])
	}, printJob)
	return cmd
}

// printJob prints one job, its times on the wall clock (and the simulated
// one beside, on the simulator).
func printJob(w io.Writer, j apiclient.Job, cv clockView) error {
	var rows [][]string
	row := func(k, v string) {
		if v != "" {
			rows = append(rows, []string{k + ":", v})
		}
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return cv.at(*t)
	}
	row("id", j.ID)
	row("kind", j.Kind)
	row("user", j.User)
	row("queue", j.Queue)
	row("state", j.State.String())
	if j.Position != nil {
		row("position", fmt.Sprintf("%d (pending jobs ahead of it in FIFO order)", *j.Position))
	}
	if e := j.EstimatedWait; e != nil {
		if e.Seconds != nil {
			row("estimated wait", fmt.Sprintf("~%s (%d jobs ahead, %d with history, %d running at once)",
				cv.dur(seconds(*e.Seconds)), e.JobsAhead, e.WithHistory, e.Concurrency))
		} else {
			row("estimated wait", "unknown (no kind has finished yet)")
		}
		if e.RuntimeSeconds != nil {
			row("expected runtime", cv.dur(seconds(*e.RuntimeSeconds)))
		}
	}
	if cv.simulated() {
		row("clock", "simulated cluster, "+fmt.Sprintf("%g", cv.c.Speed)+"× real time: times are wall-clock with the simulated time beside")
	}
	r := j.Resources
	row("resources", fmt.Sprintf("%d containers × %d MB × %d vcores", r.Containers, r.MemoryMB, r.VCores))
	row("priority", strconv.Itoa(j.Priority))
	row("skips", strconv.Itoa(j.Skips))
	if j.Blocked > 0 {
		row("blocked", strconv.Itoa(j.Blocked)+" (overtaken while it did not fit)")
	}
	row("deadline", ts(j.Deadline))
	for _, k := range slices.Sorted(maps.Keys(j.Labels)) {
		row("label "+k, j.Labels[k])
	}
	row("application", j.AppID)
	row("created", ts(&j.CreatedAt))
	row("admitted", ts(j.AdmittedAt))
	row("running", ts(j.RunningAt))
	row("finished", ts(j.FinishedAt))
	row("diagnostics", j.Diagnostics)
	row("decision", decisionSummary(j))
	return writeTable(w, rows)
}

// decisionSummary renders the top candidates of the decision that
// admitted j; "" when there is none.
func decisionSummary(j apiclient.Job) string {
	d, err := j.DecisionRecord()
	switch {
	case err != nil:
		return "(unreadable)"
	case d == nil:
		return ""
	}
	var parts []string
	for i, c := range d.Candidates {
		if i == 5 {
			parts = append(parts, "…")
			break
		}
		parts = append(parts, fmt.Sprintf("%s %.1f%%", c.Kind, 100*c.Prob))
	}
	var ctx []string
	for _, c := range d.Context {
		ctx = append(ctx, c.Kind)
	}
	s := "candidates: " + strings.Join(parts, ", ")
	if len(ctx) > 0 {
		s += "; running: " + strings.Join(ctx, ", ")
	}
	if d.Forced != "" {
		s += "; forced: " + d.Forced
	}
	return s
}

func newCancelCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:        "cancel ID [--json]",
		Short:      "Cancel a pending job, or kill an admitted or running one",
		SuggestFor: []string{"kill", "delete", "rm"},
		Long: `Cancel a pending job, or kill an admitted or running one on the cluster.
Submitters may cancel their own jobs; admins anyone's. If the job was admitted
while it was being cancelled, the server refuses with a conflict: run the
command again to kill it.`,
		Args: exactArgs(1),
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON (-o json)")
	cmd.ValidArgsFunction = completeJobIDs(c)
	cmd.RunE = jobRunE(c, &asJSON, func(cmd *cobra.Command, api *apiclient.Client, id string) (apiclient.Reply[apiclient.Job], error) {
		return api.Cancel(cmd.Context(), id)
	}, printJobState)
	return cmd
}

func newResolveCmd() *cobra.Command {
	var (
		asJSON bool
		req    apiclient.ResolveRequest
	)
	cmd := &cobra.Command{
		Use:   "resolve ID --outcome requeue|succeeded|failed|killed --reason TEXT [--json]",
		Short: "Resolve a parked job (admin): run it again, or record how it ended",
		Long: `A job is parked when the cluster no longer knows its application and colocd
cannot prove it never ran (the ResourceManager restarted without recovery, or
dropped the ended application): colocd will not submit it again on its own.
Find out what happened (the RM's and the application history's logs, the job's
output), then:

  colocd resolve ID --outcome requeue --reason "never started: no output"
  colocd resolve ID --outcome succeeded --reason "output complete in /data/out"

requeue puts the job back at its place in the queue, to run under a new
application id; succeeded, failed or killed record how it ended. The reason
goes to the job's diagnostics with your user name. colocd queue --state parked
lists the parked jobs.`,
		Args: exactArgs(1),
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.Flags().StringVar(&req.Outcome, "outcome", "", "requeue | succeeded | failed | killed (required)")
	cmd.Flags().StringVar(&req.Reason, "reason", "", "what you found (required)")
	cmd.ValidArgsFunction = completeJobIDs(c, "parked")
	cmd.RunE = jobRunE(c, &asJSON, func(cmd *cobra.Command, api *apiclient.Client, id string) (apiclient.Reply[apiclient.Job], error) {
		return api.Resolve(cmd.Context(), id, req)
	}, printJobState)
	return cmd
}

func newPrefsCmd() *cobra.Command {
	var (
		asCSV, asJSON, oldH bool
		matrix              string
	)
	cmd := &cobra.Command{
		Use:   "prefs [--csv|--json] [--matrix pi|h|n] [--kinds K[,K]] [--limit N] [--offset M]",
		Short: "Show the learned co-location preferences π(queued kind | running kind)",
		Long: `Show the learned preferences. The table has one row per running kind and one
column per queued kind, as everywhere in colocd (status page, CSV, plots);
each cell is π(queued kind | running kind) with, in brackets, how many times
that pair was observed, and each row is a probability distribution (over every
kind the daemon knows: a row restricted by --kinds sums to at most 1). A row
never observed is still the prior, marked "prior": uniform, but for the kind's
own cell when learning.self_prior lowers it (H(a|a) = −self_prior). --matrix h shows
the raw preference scores H instead (the API's matrix=h; --h is its old,
deprecated name), --matrix n the observation counts alone. --kinds shows only those kinds, as rows and
columns, in that order; --limit and --offset show a page of the rows. The
server sends the whole matrix up to 100,000 cells (316 kinds): beyond, ask for
--kinds or --limit. --csv and --json print the server's CSV (header row
"running kind \ queued kind,<kinds>", one row per running kind) or JSON (kinds, rows, h, pi, observation counts, baseline,
total) for analysts.

  colocd prefs --kinds etl-daily,kmeans,terasort
  colocd prefs --matrix h --limit 20 --offset 40 --csv`,
		Args:       noArgs,
		SuggestFor: []string{"preferences", "matrix"},
	}
	c := addClientFlags(cmd)
	pg := addPageFlags(cmd, "rows")
	cmd.Flags().BoolVar(&asCSV, "csv", false, "print the matrix as CSV")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.Flags().StringVar(&matrix, "matrix", string(apiclient.MatrixPi), "pi (the probabilities π), h (the raw preference scores H) or n (the pair observation counts)")
	_ = cmd.RegisterFlagCompletionFunc("matrix", cobra.FixedCompletions(
		[]string{string(apiclient.MatrixPi), string(apiclient.MatrixH), string(apiclient.MatrixN)}, cobra.ShellCompDirectiveNoFileComp))
	// --h, the old name of --matrix h, is hidden and deprecated by hand:
	// pflag's MarkDeprecated prints its notice through cobra to stdout,
	// into the CSV or JSON a script reads.
	cmd.Flags().BoolVar(&oldH, "h", false, "the preference scores H instead of π (deprecated: --matrix h)")
	_ = cmd.Flags().MarkHidden("h")
	cmd.MarkFlagsMutuallyExclusive("csv", "json")
	cmd.MarkFlagsMutuallyExclusive("h", "matrix")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		m, err := prefsMatrix(matrix, oldH)
		if err != nil {
			return err
		}
		if oldH {
			fmt.Fprintln(cmd.ErrOrStderr(), "colocd: --h is deprecated, use --matrix h")
		}
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		page := pg.page(cmd)
		out := cmd.OutOrStdout()
		if asCSV {
			b, err := api.PreferencesCSVPage(cmd.Context(), m, page)
			if err != nil {
				return err
			}
			return writeRaw(out, b)
		}
		r, err := api.PreferencesPage(cmd.Context(), page)
		if err != nil {
			return err
		}
		return printReply(out, r, c.format(asJSON), func(w io.Writer, p apiclient.Preferences) error { return printPrefs(w, p, m) })
	}
	return cmd
}

// prefsRow is row i (running kind running) of the table of matrix m.
func prefsRow(p apiclient.Preferences, i int, running string, m apiclient.Matrix) []string {
	count := func(j int) int64 {
		if i < len(p.PairObservations) && j < len(p.PairObservations[i]) {
			return p.PairObservations[i][j]
		}
		return 0
	}
	r := []string{running}
	for j := range p.Pi[i] {
		switch m {
		case apiclient.MatrixH:
			r = append(r, fixed(p.H[i][j], 3))
		case apiclient.MatrixN:
			r = append(r, strconv.FormatInt(count(j), 10))
		default:
			r = append(r, fmt.Sprintf("%s (%d)", fixed(p.Pi[i][j], 3), count(j)))
		}
	}
	obs := int64(0)
	if i < len(p.RowObservations) {
		obs = p.RowObservations[i]
	}
	if obs == 0 {
		return append(r, "0 prior")
	}
	return append(r, strconv.FormatInt(obs, 10))
}

// priorText describes a row before any observation: uniform, but for
// the kind's own cell, which learning.self_prior lowers — a prior, not
// something learned.
func priorText(p apiclient.Preferences) string {
	k, sp := len(p.Kinds), p.Config.SelfPrior
	if p.KindsKnown > k {
		k = p.KindsKnown
	}
	if sp <= 0 || k < 2 {
		return "uniform"
	}
	self := math.Exp(-sp)
	z := self + float64(k-1)
	return fmt.Sprintf("uniform but for each kind's own cell, lowered by learning.self_prior %g: π(a|a) = %.2f against %.2f with %d kinds", sp, self/z, 1/z, k)
}

// prefsFooter says how many observations there are and what the baseline
// goodness is, or that there is none yet.
func prefsFooter(p apiclient.Preferences) string {
	if p.Observations == 0 {
		return "no observation yet: every row is the prior (" + priorText(p) + "); no baseline goodness yet"
	}
	return fmt.Sprintf("%d observations; baseline goodness Ḡ = %.3f (the mean G the preferences are measured against)", p.Observations, p.Baseline)
}

// prefsMatrix is the matrix of --matrix, or of the deprecated --h.
func prefsMatrix(matrix string, oldH bool) (apiclient.Matrix, error) {
	switch m := apiclient.Matrix(matrix); {
	case oldH:
		return apiclient.MatrixH, nil
	case m == apiclient.MatrixPi, m == apiclient.MatrixH, m == apiclient.MatrixN:
		return m, nil
	}
	return "", usagef("--matrix %q: want %s, %s or %s", matrix, apiclient.MatrixPi, apiclient.MatrixH, apiclient.MatrixN)
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

// printPrefs prints matrix m (π with the pair counts, H, or the counts) as
// a table, a row per running kind, then the observations and the
// baseline, and which rows a page holds.
func printPrefs(w io.Writer, p apiclient.Preferences, m apiclient.Matrix) error {
	if p.KindsKnown == 0 && len(p.Kinds) == 0 {
		_, err := fmt.Fprintln(w, "no kinds learned yet")
		return err
	}
	labels := p.Rows
	if labels == nil { // a server before ?limit=: every kind
		labels = p.Kinds
	}
	if len(p.Pi) != len(labels) || len(p.H) != len(labels) {
		return errors.New("server sent a matrix that does not match its kinds")
	}
	legend := map[apiclient.Matrix]string{
		apiclient.MatrixPi: "π(queued kind | running kind) (observations of the pair)",
		apiclient.MatrixH:  "H, the preference scores behind π (row: running kind, column: queued kind)",
		apiclient.MatrixN:  "observations of each pair (row: running kind, column: queued kind)",
	}[m]
	if _, err := fmt.Fprintln(w, legend); err != nil {
		return err
	}
	rows := [][]string{append(append([]string{"RUNNING \\ QUEUED"}, p.Kinds...), "OBS")}
	for i, running := range labels {
		rows = append(rows, prefsRow(p, i, running, m))
	}
	if err := writeTable(w, rows); err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "\n%s\n", prefsFooter(p)); err != nil {
		return err
	}
	if len(labels) == p.Total || p.Total == 0 {
		return nil
	}
	_, err := fmt.Fprintf(w, "rows %d to %d of %d (--offset, --limit for others)\n", p.Offset+1, p.Offset+len(labels), p.Total)
	return err
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
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[apiclient.WhoAmI], error) {
		return api.WhoAmI(ctx)
	}, func(w io.Writer, who apiclient.WhoAmI, _ clockView) error {
		rows := [][]string{{"user:", who.User}, {"role:", who.Role + " (" + who.RoleRule + ")"}, {"groups:", dash(strings.Join(who.Groups, ","))},
			{"authenticated:", who.Principal + " by " + who.Method}}
		if who.RealUser != "" {
			rows = append(rows, []string{"acting for it:", who.RealUser + " (" + who.ProxyRule + ")"})
		}
		return writeTable(w, rows)
	})
	return cmd
}
