package queue

import (
	"encoding/base64"
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the report for people (colocd store check): the file,
// both meta pages, the records, each problem and each quarantined record.
func (r *Report) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	verdict := "clean"
	if !r.Clean() {
		verdict = fmt.Sprintf("%d problem(s)", len(r.Problems))
	}
	fmt.Fprintf(tw, "file\t%s\t%s\n", r.Path, verdict)
	fmt.Fprintf(tw, "size\t%d bytes, page size %d\n", r.Size, r.PageSize)
	for _, m := range r.Meta {
		state := "ok"
		if m.Damage != "" {
			state = "DAMAGED: " + m.Damage
		}
		fmt.Fprintf(tw, "meta page %d\ttxid %d, %d pages in use\t%s\n", m.Page, m.Txid, m.HighWater, state)
	}
	if r.Txid != 0 {
		fmt.Fprintf(tw, "opens at\ttxid %d, schema %d\n", r.Txid, r.Schema)
	}
	if r.Scanned {
		states := make([]string, 0, len(r.Jobs))
		total := 0
		for _, st := range States {
			if n := r.Jobs[st]; n > 0 {
				states = append(states, fmt.Sprintf("%s %d", st, n))
				total += n
			}
		}
		fmt.Fprintf(tw, "records\t%d jobs (%s), %d kind histories\n", total, strings.Join(states, ", "), r.Kinds)
	} else {
		fmt.Fprintf(tw, "records\tnot read: the file is too damaged for bbolt to read them safely\n")
	}
	salvage := false
	for _, p := range r.Problems {
		fmt.Fprintf(tw, "PROBLEM %s\t%s\t%s\n", p.Kind, p.Where, p.What)
		salvage = salvage || p.Kind == "pages" || p.Kind == "bbolt"
	}
	if salvage {
		fmt.Fprintf(tw, "next\tcolocd refuses this file: restore it from a backup, or copy what it still holds with `colocd store salvage --to NEW`\n")
	}
	for _, q := range r.Quarantined {
		fmt.Fprintf(tw, "quarantined\t%s/%s\t%s at %s; %d bytes: %s\n", q.Bucket, q.Key, q.Reason,
			q.At.Format(time.RFC3339), len(q.Raw), previewBytes(q.Raw))
	}
	return tw.Flush()
}

// preview shows the start of raw bytes: as text when printable, else base64.
func previewBytes(b []byte) string {
	const max = 80
	cut := b
	if len(cut) > max {
		cut = cut[:max]
	}
	for _, c := range cut {
		if c < 0x20 || c > 0x7e {
			return "base64 " + base64.StdEncoding.EncodeToString(cut) + ellipsis(len(b) > max)
		}
	}
	return fmt.Sprintf("%q", cut) + ellipsis(len(b) > max)
}

func ellipsis(more bool) string {
	if more {
		return "…"
	}
	return ""
}

// WriteText writes the salvage report for people (colocd store salvage):
// where it read from, what it copied, what it could not read, the jobs it
// lost, and the new file's check.
func (r *SalvageReport) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	verdict := "everything read"
	if !r.Complete() {
		verdict = fmt.Sprintf("%d part(s) unread, %d job(s) lost", len(r.Unread), len(r.Lost))
	}
	fmt.Fprintf(tw, "salvaged\t%s\t→ %s\t%s\n", r.From, r.To, verdict)
	fmt.Fprintf(tw, "read from\tmeta page %d, txid %d\n", r.Meta, r.Txid)
	names := make([]string, 0, len(r.Keys))
	for name := range r.Keys {
		names = append(names, name)
	}
	sort.Strings(names)
	counts := make([]string, 0, len(names))
	for _, name := range names {
		counts = append(counts, fmt.Sprintf("%s %d", name, r.Keys[name]))
	}
	fmt.Fprintf(tw, "keys copied\t%s\n", strings.Join(counts, ", "))
	for _, u := range r.Unread {
		fmt.Fprintf(tw, "UNREAD\t%s\n", u)
	}
	for _, c := range r.Recreated {
		fmt.Fprintf(tw, "recreated\t%s (lost, written empty)\n", c)
	}
	if r.Idem > 0 {
		fmt.Fprintf(tw, "restored\t%d idempotency key(s) from the job records\n", r.Idem)
	}
	for _, l := range r.Lost {
		where := "named only by its idempotency key"
		if l.State != "" {
			where = fmt.Sprintf("%s, seq %d", l.State, l.Seq)
		}
		fmt.Fprintf(tw, "LOST job\t%s\t%s (quarantined in the new file)\n", l.ID, where)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	fmt.Fprintln(w, "the new file, checked after its first open:")
	return r.Check.WriteText(w)
}
