package queue

import (
	"encoding/base64"
	"fmt"
	"io"
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
	for _, p := range r.Problems {
		fmt.Fprintf(tw, "PROBLEM %s\t%s\t%s\n", p.Kind, p.Where, p.What)
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
