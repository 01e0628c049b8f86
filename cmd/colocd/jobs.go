package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
)

// queueFlags are the flags of queue.
type queueFlags struct {
	state, users, kinds, queues, since, cursor string
	labels                                     []string
	limit                                      int
	all, asJSON                                bool
}

func newQueueCmd() *cobra.Command {
	var q queueFlags
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
	f.StringVar(&q.state, "state", "", "states to list (pending,admitted,running,parked,succeeded,failed,killed,cancelled or all)")
	f.StringVar(&q.users, "user", "", "only these users' jobs (comma-separated)")
	f.StringVar(&q.kinds, "kind", "", "only jobs of these kinds (comma-separated)")
	f.StringVar(&q.queues, "yarn-queue", "", "only jobs in these YARN queues (comma-separated)")
	f.StringArrayVar(&q.labels, "label", nil, "only jobs with label key=value (repeatable)")
	f.StringVar(&q.since, "since", "", "only jobs submitted since: an RFC 3339 time, or a duration ago (2h)")
	f.StringVar(&q.cursor, "cursor", "", "continue a listing from the cursor a page printed")
	f.BoolVar(&q.all, "all", false, "follow every page (at most 100,000 jobs)")
	f.IntVar(&q.limit, "limit", 100, "at most this many jobs a page")
	f.BoolVar(&q.asJSON, "json", false, "print the server's JSON (-o json)")
	_ = cmd.RegisterFlagCompletionFunc("kind", completeKinds(c))
	_ = cmd.RegisterFlagCompletionFunc("state", cobra.FixedCompletions([]string{"pending", "admitted", "running", "parked", "succeeded", "failed", "killed", "cancelled", "all"}, cobra.ShellCompDirectiveNoFileComp))
	cmd.RunE = viewRunE(c, &q.asJSON, q.list, printQueue)
	return cmd
}

// list reads the page the flags select, or with --all every page.
func (q *queueFlags) list(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[v1.JobList], error) {
	o, err := q.options(ctx, api)
	if err != nil {
		return apiclient.Reply[v1.JobList]{}, err
	}
	r, err := api.Jobs(ctx, o)
	for q.all && err == nil && r.Body.NextCursor != "" && len(r.Body.Jobs) < 100_000 {
		o.Cursor = r.Body.NextCursor
		var next apiclient.Reply[v1.JobList]
		if next, err = api.Jobs(ctx, o); err == nil {
			r.Body.Jobs = append(r.Body.Jobs, next.Body.Jobs...)
			r.Body.Count, r.Body.NextCursor, r.Body.Counts = len(r.Body.Jobs), next.Body.NextCursor, next.Body.Counts
		}
	}
	if q.all && err == nil {
		r.Raw, err = json.Marshal(r.Body)
	}
	return r, err
}

// options are the ListOptions of the flags; --since as a duration is
// counted back from the daemon's clock.
func (q *queueFlags) options(ctx context.Context, api *apiclient.Client) (apiclient.ListOptions, error) {
	o := apiclient.ListOptions{Limit: &q.limit, Cursor: q.cursor}
	split := func(s string) []string {
		if s == "" {
			return nil
		}
		return strings.Split(s, ",")
	}
	o.States, o.Users, o.Kinds, o.Queues = split(q.state), split(q.users), split(q.kinds), split(q.queues)
	for _, l := range q.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return o, usagef("--label %q: want key=value", l)
		}
		if o.Labels == nil {
			o.Labels = map[string]string{}
		}
		o.Labels[k] = v
	}
	if q.since != "" {
		t, err := time.Parse(time.RFC3339, q.since)
		if err != nil {
			d, derr := time.ParseDuration(q.since)
			if derr != nil || d <= 0 {
				return o, usagef("--since %q: want an RFC 3339 time or a positive duration (2h)", q.since)
			}
			t = daemonNow(ctx, api).Add(-d)
		}
		o.Since = t
	}
	return o, nil
}

// printQueue prints the jobs listed, then the store's counts by state.
// Creation times are wall-clock; on the simulator a column gives the
// simulated time beside.
func printQueue(w io.Writer, list v1.JobList, cv clockView) error {
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
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, args []string) (apiclient.Reply[v1.Job], error) {
		return api.Job(ctx, args[0])
	}, printJob)
	return cmd
}

// printJob prints one job, its times on the wall clock (and the simulated
// one beside, on the simulator).
func printJob(w io.Writer, j v1.Job, cv clockView) error {
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
func decisionSummary(j v1.Job) string {
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
	cmd.RunE = jobRunE(c, &asJSON, func(cmd *cobra.Command, api *apiclient.Client, id string) (apiclient.Reply[v1.Job], error) {
		return api.Cancel(cmd.Context(), id)
	}, printJobState)
	return cmd
}

func newResolveCmd() *cobra.Command {
	var (
		asJSON bool
		req    v1.ResolveRequest
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
	cmd.RunE = jobRunE(c, &asJSON, func(cmd *cobra.Command, api *apiclient.Client, id string) (apiclient.Reply[v1.Job], error) {
		return api.Resolve(cmd.Context(), id, req)
	}, printJobState)
	return cmd
}
