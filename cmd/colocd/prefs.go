package main

import (
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
)

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
	cmd.Flags().StringVar(&matrix, "matrix", string(v1.MatrixPi), "pi (the probabilities π), h (the raw preference scores H) or n (the pair observation counts)")
	_ = cmd.RegisterFlagCompletionFunc("matrix", cobra.FixedCompletions(
		[]string{string(v1.MatrixPi), string(v1.MatrixH), string(v1.MatrixN)}, cobra.ShellCompDirectiveNoFileComp))
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
		return printReply(out, r, c.format(asJSON), func(w io.Writer, p v1.Preferences) error { return printPrefs(w, p, m) })
	}
	return cmd
}

// prefsRow is row i (running kind running) of the table of matrix m.
func prefsRow(p v1.Preferences, i int, running string, m v1.Matrix) []string {
	count := func(j int) int64 {
		if i < len(p.PairObservations) && j < len(p.PairObservations[i]) {
			return p.PairObservations[i][j]
		}
		return 0
	}
	r := []string{running}
	for j := range p.Pi[i] {
		switch m {
		case v1.MatrixH:
			r = append(r, fixed(p.H[i][j], 3))
		case v1.MatrixN:
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
func priorText(p v1.Preferences) string {
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
func prefsFooter(p v1.Preferences) string {
	if p.Observations == 0 {
		return "no observation yet: every row is the prior (" + priorText(p) + "); no baseline goodness yet"
	}
	return fmt.Sprintf("%d observations; baseline goodness Ḡ = %.3f (the mean G the preferences are measured against)", p.Observations, p.Baseline)
}

// prefsMatrix is the matrix of --matrix, or of the deprecated --h.
func prefsMatrix(matrix string, oldH bool) (v1.Matrix, error) {
	switch m := v1.Matrix(matrix); {
	case oldH:
		return v1.MatrixH, nil
	case m == v1.MatrixPi, m == v1.MatrixH, m == v1.MatrixN:
		return m, nil
	}
	return "", usagef("--matrix %q: want %s, %s or %s", matrix, v1.MatrixPi, v1.MatrixH, v1.MatrixN)
}

// printPrefs prints matrix m (π with the pair counts, H, or the counts) as
// a table, a row per running kind, then the observations and the
// baseline, and which rows a page holds.
func printPrefs(w io.Writer, p v1.Preferences, m v1.Matrix) error {
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
	legend := map[v1.Matrix]string{
		v1.MatrixPi: "π(queued kind | running kind) (observations of the pair)",
		v1.MatrixH:  "H, the preference scores behind π (row: running kind, column: queued kind)",
		v1.MatrixN:  "observations of each pair (row: running kind, column: queued kind)",
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
