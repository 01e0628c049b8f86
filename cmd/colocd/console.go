package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/queue"
)

// The console's views on the command line: the run summary and the nodes.

func newSummaryCmd() *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:        "summary [--json]",
		Short:      "Summarise the run since the daemon started: jobs, waits, admissions, goodness",
		SuggestFor: []string{"stats", "overview"},
		Long: `Summarise the run since the daemon started (GET /v1/summary): the store's jobs
by state; of the jobs submitted since, their states, mean wait to admission and
mean runtime; the admissions journaled (drawn from the learned choice, forced by
a rule, shadow); and the nodes' goodness G (Eq. 1, in [e, e⁴]).`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[apiclient.Summary], error) {
		return api.Summary(ctx)
	}, printSummary)
	return cmd
}

// printSummary prints a run summary, one fact a line.
func printSummary(w io.Writer, s apiclient.Summary, cv clockView) error {
	var b strings.Builder
	if h := cv.header(); h != "" {
		fmt.Fprintln(&b, h)
	}
	fmt.Fprintf(&b, "since %s: %s ago\n", cv.at(s.Since), cv.dur(s.Now.Sub(s.Since)))
	for _, d := range s.Degraded {
		fmt.Fprintf(&b, "DEGRADED: %s since %s (wall clock; the last %s call failed", d.Dependency, d.Since.Local().Format("2006-01-02 15:04:05 MST"), d.Op)
		if d.Error != "" {
			fmt.Fprintf(&b, ": %s", d.Error)
		}
		b.WriteString(")\n")
	}
	fmt.Fprintf(&b, "store: %s; %d ever submitted\n", countsText(s.Counts), s.SubmittedEver)
	run := s.Run
	scanned := strconv.Itoa(run.Scanned)
	if !run.Complete {
		scanned = "the newest " + scanned
	}
	fmt.Fprintf(&b, "submitted since (%s): %s\n", scanned, countsText(run.States))
	fmt.Fprintf(&b, "  admitted %d, mean wait %s, mean runtime %s\n", run.Admitted, secondsText(run.MeanWaitSeconds, cv), secondsText(run.MeanRuntimeSeconds, cv))
	a := s.Admissions
	var forced []string
	for _, k := range []string{"max_skips", "reservation"} {
		if n := a.Forced[k]; n > 0 {
			forced = append(forced, fmt.Sprintf("%d by %s", n, k))
		}
	}
	fmt.Fprintf(&b, "admissions journaled: %d, learned choice %d, forced %s, shadow %d\n", a.Scanned, a.Chosen, dash(strings.Join(forced, ", ")), a.Shadow)
	g := s.Goodness
	if g.Count == 0 || g.MeanG == nil {
		fmt.Fprintf(&b, "goodness: no node observed\n")
	} else {
		fmt.Fprintf(&b, "goodness G over %d node observations: mean %s, min %s, max %s (range %s to %s)\n",
			g.Count, fixed(*g.MeanG, 2), fixed(deref(g.MinG), 2), fixed(deref(g.MaxG), 2), fixed(g.Scale.Min, 2), fixed(g.Scale.Max, 2))
	}
	if f := s.FIFO; f != nil {
		fmt.Fprintf(&b, "against FIFO (the %d jobs that succeeded, simulated again from the same arrivals): mean completion %s vs %s (%s), makespan %s vs %s (%s)\n",
			f.Jobs, cv.dur(secsDur(f.MeanJCTSeconds)), cv.dur(secsDur(f.FIFOMeanJCTSeconds)), gainText(f.JCTGainPercent),
			cv.dur(secsDur(f.MakespanSeconds)), cv.dur(secsDur(f.FIFOMakespanSeconds)), gainText(f.MakespanGainPercent))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func secsDur(s float64) time.Duration { return time.Duration(s * float64(time.Second)) }

// gainText is a gain as a change: "−12.3 %" (shorter than FIFO), "+4.0 %".
func gainText(pct float64) string {
	if pct >= 0 {
		return fmt.Sprintf("−%.1f %%", pct)
	}
	return fmt.Sprintf("+%.1f %%", -pct)
}

// countsText is "pending 3, running 2", or "no jobs".
func countsText(counts map[queue.State]int) string {
	var parts []string
	for _, c := range apiclient.InStateOrder(counts) {
		parts = append(parts, fmt.Sprintf("%s %d", c.State, c.N))
	}
	if len(parts) == 0 {
		return "no jobs"
	}
	return strings.Join(parts, ", ")
}

// secondsText is a mean in seconds on the daemon's clock, "-" when none.
func secondsText(s *float64, cv clockView) string {
	if s == nil {
		return "-"
	}
	return cv.dur(seconds(*s))
}

func deref(p *float64) float64 {
	if p == nil {
		return 0
	}
	return *p
}

func newNodesCmd() *cobra.Command {
	var (
		sortBy string
		limit  int
		offset int
		asJSON bool
	)
	cmd := &cobra.Command{
		Use:   "nodes [--sort name|goodness] [--limit N] [--offset M] [--json]",
		Short: "List the cluster's nodes as the daemon last read them, with their goodness",
		Long: `List the cluster's nodes as the engine last read them (GET /v1/nodes): each
node's free room, its applications' containers, and the goodness G of its latest
record (Eq. 1, in [e, e⁴]; "-" without one). --sort goodness lists the lowest G
first. For the resource manager's own view, see "colocd yarn nodes".`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	cmd.Flags().StringVar(&sortBy, "sort", "name", "order: name or goodness (lowest G first)")
	cmd.Flags().IntVar(&limit, "limit", 50, "at most this many nodes")
	cmd.Flags().IntVar(&offset, "offset", 0, "the first node listed, in that order")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the server's JSON")
	cmd.RunE = viewRunE(c, &asJSON, func(ctx context.Context, api *apiclient.Client, _ []string) (apiclient.Reply[apiclient.NodeList], error) {
		return api.Nodes(ctx, apiclient.NodeOptions{Sort: sortBy, Limit: &limit, Offset: offset})
	}, printNodes)
	return cmd
}

// printNodes prints a page of nodes and the cluster's totals.
func printNodes(w io.Writer, l apiclient.NodeList, cv clockView) error {
	if !l.Available {
		_, err := fmt.Fprintln(w, "the daemon has not read the cluster yet")
		return err
	}
	if h := cv.header(); h != "" {
		if _, err := fmt.Fprintln(w, h); err != nil {
			return err
		}
	}
	rows := [][]string{{"NODE", "FREE MEM", "FREE VCORES", "CONTAINERS", "G", "APPLICATIONS"}}
	for _, n := range l.Nodes {
		g := "-"
		if n.G != nil {
			g = fixed(*n.G, 2)
		}
		var apps []string
		for _, a := range n.Apps {
			apps = append(apps, fmt.Sprintf("%s×%d", cmp.Or(a.Kind, a.AppID), a.Containers))
		}
		if more := n.AppsTotal - len(n.Apps); more > 0 {
			apps = append(apps, fmt.Sprintf("+%d more", more))
		}
		rows = append(rows, []string{n.Name, fmt.Sprintf("%d/%d MB", n.Free.MemoryMB, n.Capacity.MemoryMB),
			fmt.Sprintf("%d/%d", n.Free.VCores, n.Capacity.VCores), strconv.Itoa(n.Containers), g, dash(strings.Join(apps, " "))})
	}
	if err := writeTable(w, rows); err != nil {
		return err
	}
	read := ""
	if l.ReadAt != nil {
		read = ", read " + cv.at(*l.ReadAt)
	}
	_, err := fmt.Fprintf(w, "\n%d of %d nodes from %d (by %s); cluster free %d/%d MB, %d/%d vcores%s\n",
		len(l.Nodes), l.Total, l.Offset, l.Sort, l.Free.MemoryMB, l.Capacity.MemoryMB, l.Free.VCores, l.Capacity.VCores, read)
	return err
}
