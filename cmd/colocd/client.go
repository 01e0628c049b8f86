package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/queue"
)

// Client defaults and environment variables.
const (
	defaultServer  = "http://127.0.0.1:8080"
	envServer      = "COLOCD_SERVER"
	envToken       = "COLOCD_TOKEN"
	clientTimeout  = 30 * time.Second
	maxClientReply = 64 << 20
)

// clientCommands returns the HTTP API client commands: submit, queue, job,
// cancel, prefs, profiles (profiles.go). Each takes --server (env
// COLOCD_SERVER) and --token (env COLOCD_TOKEN); they print tables for
// people and, with --json, the server's JSON for scripts. A non-2xx reply becomes an error carrying the
// server's message (printed on stderr by main, exit status 1).
func clientCommands() []*cobra.Command {
	return []*cobra.Command{newSubmitCmd(), newQueueCmd(), newJobCmd(), newCancelCmd(), newResolveCmd(), newPrefsCmd(), newProfilesCmd()}
}

// apiClient is one command's connection settings.
type apiClient struct {
	server  string
	token   string
	timeout time.Duration
	hc      *http.Client
}

// addClientFlags registers --server, --token and --timeout on cmd.
func addClientFlags(cmd *cobra.Command) *apiClient {
	c := &apiClient{}
	f := cmd.Flags()
	f.StringVar(&c.server, "server", defaultServer, "colocd API base URL (env "+envServer+")")
	f.StringVar(&c.token, "token", "", "bearer token (env "+envToken+")")
	f.DurationVar(&c.timeout, "timeout", clientTimeout, "timeout of the whole request")
	return c
}

// resolve applies the environment to flags the user did not set and
// checks them.
func (c *apiClient) resolve(cmd *cobra.Command) error {
	if !cmd.Flags().Changed("server") {
		if v := os.Getenv(envServer); v != "" {
			c.server = v
		}
	}
	if !cmd.Flags().Changed("token") {
		c.token = os.Getenv(envToken)
	}
	u, err := url.Parse(c.server)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return usagef("--server %q: want a URL like %s", c.server, defaultServer)
	}
	c.server = strings.TrimRight(c.server, "/")
	if c.token == "" {
		return usagef("no token: pass --token or set %s", envToken)
	}
	if c.timeout <= 0 {
		return usagef("--timeout must be positive, got %s", c.timeout)
	}
	c.hc = &http.Client{Timeout: c.timeout}
	return nil
}

// apiError is a non-2xx reply: the server's {"error", "field"}.
type apiError struct {
	Status  int
	Message string
	Field   string
}

func (e *apiError) Error() string {
	msg := e.Message
	if e.Field != "" && !strings.Contains(msg, e.Field) {
		msg += " (field " + e.Field + ")"
	}
	return fmt.Sprintf("server: %s (HTTP %d)", msg, e.Status)
}

// do sends one request and returns the body of a 2xx reply.
func (c *apiClient) do(ctx context.Context, method, path string, body []byte, header map[string]string) (int, []byte, error) {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, c.server+path, rd)
	if err != nil {
		return 0, nil, fmt.Errorf("building request: %w", err)
	}
	req.Header.Set("Authorization", "Bearer "+c.token)
	req.Header.Set("Accept", "application/json")
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range header {
		req.Header.Set(k, v)
	}
	res, err := c.hc.Do(req)
	if err != nil {
		return 0, nil, fmt.Errorf("%s %s: %w", method, c.server+path, err)
	}
	defer res.Body.Close()
	b, err := io.ReadAll(io.LimitReader(res.Body, maxClientReply))
	if err != nil {
		return res.StatusCode, nil, fmt.Errorf("%s %s: reading reply: %w", method, path, err)
	}
	if res.StatusCode/100 != 2 {
		e := &apiError{Status: res.StatusCode}
		var eb struct {
			Error string `json:"error"`
			Field string `json:"field"`
		}
		if json.Unmarshal(b, &eb) == nil && eb.Error != "" {
			e.Message, e.Field = eb.Error, eb.Field
		} else {
			e.Message = strings.TrimSpace(string(b))
			if e.Message == "" {
				e.Message = http.StatusText(res.StatusCode)
			}
		}
		return res.StatusCode, b, e
	}
	return res.StatusCode, b, nil
}

// clientJob is a job as the API returns it.
type clientJob struct {
	queue.Job
	Position      *int `json:"position"`
	EstimatedWait *struct {
		Seconds        *float64 `json:"seconds"`
		JobsAhead      int      `json:"jobs_ahead"`
		WithHistory    int      `json:"jobs_ahead_with_history"`
		Concurrency    int      `json:"concurrency"`
		RuntimeSeconds *float64 `json:"runtime_seconds"`
	} `json:"estimated_wait"`
}

func newTable(w io.Writer) *tabwriter.Writer { return tabwriter.NewWriter(w, 0, 4, 2, ' ', 0) }

// jobRunE runs method on /v1/jobs/{ID} and prints the reply: the server's
// JSON with --json, else through print.
func jobRunE(c *apiClient, method string, asJSON *bool, print func(io.Writer, clientJob) error) func(*cobra.Command, []string) error {
	return func(cmd *cobra.Command, args []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		_, b, err := c.do(cmd.Context(), method, "/v1/jobs/"+url.PathEscape(args[0]), nil, nil)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if *asJSON {
			return writeRaw(out, b)
		}
		var j clientJob
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		return print(out, j)
	}
}

func writeRaw(w io.Writer, b []byte) error {
	if !bytes.HasSuffix(b, []byte("\n")) {
		b = append(b, '\n')
	}
	_, err := w.Write(b)
	return err
}

// jobSpec is the submit body; flags fill it when there is no -f.
type jobSpec struct {
	Kind      string            `json:"kind"`
	Queue     string            `json:"queue,omitempty"`
	Priority  int               `json:"priority,omitempty"`
	Resources *queue.Resources  `json:"resources,omitempty"`
	Deadline  string            `json:"deadline,omitempty"`
	Labels    map[string]string `json:"labels,omitempty"`
}

func newSubmitCmd() *cobra.Command {
	var (
		file, kind, q, deadline, idem string
		containers, vcores, priority  int
		memoryMB                      int64
		labels                        []string
		asJSON                        bool
	)
	cmd := &cobra.Command{
		Use:   "submit (-f job.json | --kind K [flags])",
		Short: "Submit a job to the colocd queue",
		Long: `Submit a job: either a JSON file (-f job.json, "-" for stdin) in the API's shape

  {"kind": "kmeans", "queue": "default", "priority": 0,
   "resources": {"containers": 12, "memory_mb": 1536, "vcores": 1},
   "submit": {...backend-specific...}, "deadline": "2026-12-01T10:00:00Z",
   "labels": {"team": "search"}}

or flags (memory and vcores are per container). The job runs as the token's
user. With --idempotency-key, repeating the command never makes a second job.

  colocd submit -f job.json --idempotency-key nightly-2026-12-01
  colocd submit --kind kmeans --containers 12 --memory-mb 1536 --vcores 1 --label team=search`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	f := cmd.Flags()
	f.StringVarP(&file, "file", "f", "", `job JSON file ("-" for stdin)`)
	f.StringVar(&kind, "kind", "", "job kind (recurring job identity)")
	f.StringVar(&q, "queue", "", "YARN queue")
	f.IntVar(&priority, "priority", 0, "priority passed to the cluster")
	f.IntVar(&containers, "containers", 0, "number of containers")
	f.Int64Var(&memoryMB, "memory-mb", 0, "memory per container, MB")
	f.IntVar(&vcores, "vcores", 0, "vcores per container")
	f.StringVar(&deadline, "deadline", "", "deadline: RFC 3339 time, or a duration from now such as 2h")
	f.StringArrayVar(&labels, "label", nil, "label key=value (repeatable)")
	f.StringVar(&idem, "idempotency-key", "", "Idempotency-Key: a retry with the same key returns the same job")
	f.BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		var body []byte
		jobFlags := []string{"kind", "queue", "priority", "containers", "memory-mb", "vcores", "deadline", "label"}
		if file != "" {
			for _, name := range jobFlags {
				if f.Changed(name) {
					return usagef("--%s cannot be combined with -f (put it in the file)", name)
				}
			}
			var err error
			if file == "-" {
				body, err = io.ReadAll(cmd.InOrStdin())
			} else {
				body, err = os.ReadFile(file)
			}
			if err != nil {
				return fmt.Errorf("reading job file: %w", err)
			}
			if !json.Valid(body) {
				return usagef("%s is not valid JSON", file)
			}
		} else {
			if kind == "" {
				return usagef("need -f job.json or --kind")
			}
			spec := jobSpec{Kind: kind, Queue: q, Priority: priority}
			if f.Changed("containers") || f.Changed("memory-mb") || f.Changed("vcores") {
				spec.Resources = &queue.Resources{Containers: containers, MemoryMB: memoryMB, VCores: vcores}
			}
			if deadline != "" {
				d, err := parseDeadline(deadline, time.Now())
				if err != nil {
					return err
				}
				spec.Deadline = d
			}
			for _, l := range labels {
				k, v, ok := strings.Cut(l, "=")
				if !ok || k == "" {
					return usagef("--label %q: want key=value", l)
				}
				if spec.Labels == nil {
					spec.Labels = map[string]string{}
				}
				spec.Labels[k] = v
			}
			body, _ = json.Marshal(spec)
		}
		var hdr map[string]string
		if idem != "" {
			hdr = map[string]string{"Idempotency-Key": idem}
		}
		code, b, err := c.do(cmd.Context(), http.MethodPost, "/v1/jobs", body, hdr)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asJSON {
			return writeRaw(out, b)
		}
		var j clientJob
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		verb := "submitted"
		if code == http.StatusOK {
			verb = "already submitted (same idempotency key)"
		}
		_, err = fmt.Fprintf(out, "%s job %s (kind %s, user %s, state %s)\n", verb, j.ID, j.Kind, j.User, j.State)
		return err
	}
	return cmd
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
		state  string
		limit  int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "queue [--state S[,S]] [--limit N] [--json]",
		Short: "List the queue: pending jobs in order, then admitted and running",
		Long: `List jobs. By default the live queue: pending jobs in FIFO order with their
position (0 = next in line; the learned policy may still pick another), then
admitted and running jobs, newest first. --state takes a comma-separated list
of states, or "all".`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().StringVar(&state, "state", "", "states to list (pending,admitted,running,parked,succeeded,failed,killed,cancelled or all)")
	cmd.Flags().IntVar(&limit, "limit", 100, "at most this many jobs")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		v := url.Values{"limit": {strconv.Itoa(limit)}}
		if state != "" {
			v.Set("state", state)
		}
		_, b, err := c.do(cmd.Context(), http.MethodGet, "/v1/jobs?"+v.Encode(), nil, nil)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asJSON {
			return writeRaw(out, b)
		}
		var list struct {
			Jobs   []clientJob         `json:"jobs"`
			Counts map[queue.State]int `json:"counts"`
		}
		if err := json.Unmarshal(b, &list); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		tw := newTable(out)
		fmt.Fprintln(tw, "POS\tID\tKIND\tUSER\tQUEUE\tSTATE\tCONTAINERS\tSKIPS\tCREATED")
		for _, j := range list.Jobs {
			pos := "-"
			if j.Position != nil {
				pos = strconv.Itoa(*j.Position)
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%d\t%d\t%s\n", pos, j.ID, j.Kind, dash(j.User), dash(j.Queue),
				j.State, j.Resources.Containers, j.Skips, j.CreatedAt.Local().Format(time.DateTime))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		var parts []string
		for _, s := range queue.States {
			if n := list.Counts[s]; n > 0 {
				parts = append(parts, fmt.Sprintf("%s %d", s, n))
			}
		}
		if len(parts) == 0 {
			parts = []string{"no jobs"}
		}
		_, err = fmt.Fprintf(out, "\n%d listed; in the store: %s\n", len(list.Jobs), strings.Join(parts, ", "))
		return err
	}
	return cmd
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func newJobCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "job ID [--json]",
		Short: "Show one job: state, queue position, estimated wait, the decision that admitted it",
		Args:  exactArgs(1),
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = jobRunE(c, http.MethodGet, &asJSON, printJob)
	return cmd
}

func printJob(w io.Writer, j clientJob) error {
	tw := newTable(w)
	row := func(k, v string) {
		if v != "" {
			fmt.Fprintf(tw, "%s:\t%s\n", k, v)
		}
	}
	ts := func(t *time.Time) string {
		if t == nil {
			return ""
		}
		return t.Local().Format(time.DateTime)
	}
	row("id", j.ID)
	row("kind", j.Kind)
	row("user", j.User)
	row("queue", j.Queue)
	row("state", string(j.State))
	if j.Position != nil {
		row("position", fmt.Sprintf("%d (pending jobs ahead of it in FIFO order)", *j.Position))
	}
	if e := j.EstimatedWait; e != nil {
		if e.Seconds != nil {
			row("estimated wait", fmt.Sprintf("~%s (%d jobs ahead, %d with history, %d running at once)",
				(time.Duration(*e.Seconds)*time.Second).Round(time.Second), e.JobsAhead, e.WithHistory, e.Concurrency))
		} else {
			row("estimated wait", "unknown (no kind has finished yet)")
		}
		if e.RuntimeSeconds != nil {
			row("expected runtime", (time.Duration(*e.RuntimeSeconds) * time.Second).Round(time.Second).String())
		}
	}
	r := j.Resources
	row("resources", fmt.Sprintf("%d containers × %d MB × %d vcores", r.Containers, r.MemoryMB, r.VCores))
	row("priority", strconv.Itoa(j.Priority))
	row("skips", strconv.Itoa(j.Skips))
	if j.Deadline != nil {
		row("deadline", ts(j.Deadline))
	}
	for _, k := range sortedKeys(j.Labels) {
		row("label "+k, j.Labels[k])
	}
	row("application", j.AppID)
	row("created", ts(&j.CreatedAt))
	row("admitted", ts(j.AdmittedAt))
	row("running", ts(j.RunningAt))
	row("finished", ts(j.FinishedAt))
	row("diagnostics", j.Diagnostics)
	if len(j.Decision) > 0 {
		row("decision", decisionSummary(j.Decision))
	}
	return tw.Flush()
}

// decisionSummary renders the admitting decision's top candidates.
func decisionSummary(raw json.RawMessage) string {
	var d struct {
		Forced     string `json:"forced"`
		Candidates []struct {
			Kind string  `json:"kind"`
			Prob float64 `json:"prob"`
		} `json:"candidates"`
		Context []struct {
			Kind string `json:"kind"`
		} `json:"context"`
	}
	if json.Unmarshal(raw, &d) != nil {
		return "(unreadable)"
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

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	for i := 1; i < len(keys); i++ {
		for j := i; j > 0 && keys[j] < keys[j-1]; j-- {
			keys[j], keys[j-1] = keys[j-1], keys[j]
		}
	}
	return keys
}

func newCancelCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "cancel ID [--json]",
		Short: "Cancel a pending job, or kill an admitted or running one",
		Long: `Cancel a pending job, or kill an admitted or running one on the cluster.
Submitters may cancel their own jobs; admins anyone's. If the job was admitted
while it was being cancelled, the server refuses with a conflict: run the
command again to kill it.`,
		Args: exactArgs(1),
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = jobRunE(c, http.MethodDelete, &asJSON, func(out io.Writer, j clientJob) error {
		_, err := fmt.Fprintf(out, "job %s is %s\n", j.ID, j.State)
		return err
	})
	return cmd
}

func newResolveCmd() *cobra.Command {
	var (
		asJSON          bool
		outcome, reason string
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
	cmd.Flags().StringVar(&outcome, "outcome", "", "requeue | succeeded | failed | killed (required)")
	cmd.Flags().StringVar(&reason, "reason", "", "what you found (required)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		body, err := json.Marshal(map[string]string{"outcome": outcome, "reason": reason})
		if err != nil {
			return err
		}
		_, b, err := c.do(cmd.Context(), http.MethodPost, "/v1/jobs/"+url.PathEscape(args[0])+"/resolve", body, nil)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asJSON {
			return writeRaw(out, b)
		}
		var j clientJob
		if err := json.Unmarshal(b, &j); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		_, err = fmt.Fprintf(out, "job %s is %s\n", j.ID, j.State)
		return err
	}
	return cmd
}

func newPrefsCmd() *cobra.Command {
	var (
		asCSV, asJSON, raw bool
	)
	cmd := &cobra.Command{
		Use:   "prefs [--csv|--json] [--h]",
		Short: "Show the learned co-location preferences π(queued kind | running kind)",
		Long: `Show the learned preferences. The table has one row per running kind and one
column per queued kind; each row is the probability distribution π(·|running).
--h shows the raw preference scores H instead. --csv and --json print the
server's CSV (header row "given,<kinds>") or JSON (kinds, h, pi, observation
counts, baseline) for analysts.`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asCSV, "csv", false, "print the matrix as CSV")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.Flags().BoolVar(&raw, "h", false, "the preference scores H instead of π")
	cmd.MarkFlagsMutuallyExclusive("csv", "json")
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		if err := c.resolve(cmd); err != nil {
			return err
		}
		matrix := "pi"
		if raw {
			matrix = "h"
		}
		path := "/v1/preferences"
		if asCSV {
			path += "?format=csv&matrix=" + matrix
		}
		_, b, err := c.do(cmd.Context(), http.MethodGet, path, nil, nil)
		if err != nil {
			return err
		}
		out := cmd.OutOrStdout()
		if asCSV || asJSON {
			return writeRaw(out, b)
		}
		var p struct {
			Kinds           []string    `json:"kinds"`
			H               [][]float64 `json:"h"`
			Pi              [][]float64 `json:"pi"`
			Baseline        float64     `json:"baseline"`
			Observations    int64       `json:"observations"`
			RowObservations []int64     `json:"row_observations"`
		}
		if err := json.Unmarshal(b, &p); err != nil {
			return fmt.Errorf("decoding reply: %w", err)
		}
		if len(p.Kinds) == 0 {
			_, err := fmt.Fprintln(out, "no kinds learned yet")
			return err
		}
		m := p.Pi
		if raw {
			m = p.H
		}
		if len(m) != len(p.Kinds) {
			return errors.New("server sent a matrix that does not match its kinds")
		}
		tw := newTable(out)
		fmt.Fprint(tw, "RUNNING \\ QUEUED")
		for _, k := range p.Kinds {
			fmt.Fprintf(tw, "\t%s", k)
		}
		fmt.Fprint(tw, "\tOBS\n")
		for i, given := range p.Kinds {
			fmt.Fprint(tw, given)
			for _, v := range m[i] {
				fmt.Fprintf(tw, "\t%s", fmtCell(v))
			}
			obs := int64(0)
			if i < len(p.RowObservations) {
				obs = p.RowObservations[i]
			}
			fmt.Fprintf(tw, "\t%d\n", obs)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		_, err = fmt.Fprintf(out, "\n%d observations, baseline Ḡ = %.3f\n", p.Observations, p.Baseline)
		return err
	}
	return cmd
}

func fmtCell(v float64) string {
	if math.IsNaN(v) || math.IsInf(v, 0) {
		return "-"
	}
	return strconv.FormatFloat(v, 'f', 3, 64)
}
