package api

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/queue"
)

// maxListScan bounds the jobs one page of GET /v1/jobs reads: a filter
// that matches few jobs answers a page with fewer than limit jobs, and a
// next_cursor, rather than reading the whole store in one request.
const maxListScan = 100_000

// jobFilter is what GET /v1/jobs selects: states, and jobs whose user,
// queue and kind are among those listed (none: any), that carry every
// label, submitted at or after since.
type jobFilter struct {
	states              []queue.State
	users, queues, kind []string
	labels              map[string]string
	since               time.Time
}

// parseJobFilter reads the filters of GET /v1/jobs.
func parseJobListFilter(q url.Values) (jobFilter, error) {
	var f jobFilter
	var err error
	if f.states, err = parseStates(q.Get("state")); err != nil {
		return f, err
	}
	list := func(name string) []string {
		var out []string
		for _, v := range q[name] {
			for item := range strings.SplitSeq(v, ",") {
				if item = strings.TrimSpace(item); item != "" && !slices.Contains(out, item) {
					out = append(out, item)
				}
			}
		}
		return out
	}
	f.users, f.queues, f.kind = list("user"), list("queue"), list("kind")
	for _, l := range q["label"] {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return f, errorf(http.StatusBadRequest, "label", "label %q: want key=value (repeat label for more)", l)
		}
		if f.labels == nil {
			f.labels = map[string]string{}
		}
		f.labels[k] = v
	}
	if v := q.Get("since"); v != "" {
		if f.since, err = time.Parse(time.RFC3339, v); err != nil {
			return f, errorf(http.StatusBadRequest, "since", "since %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", v)
		}
	}
	return f, nil
}

// match reports whether j passes every filter but the state.
func (f jobFilter) match(j queue.Job) bool {
	if (len(f.users) > 0 && !slices.Contains(f.users, j.User)) ||
		(len(f.queues) > 0 && !slices.Contains(f.queues, j.Queue)) ||
		(len(f.kind) > 0 && !slices.Contains(f.kind, j.Kind)) ||
		(!f.since.IsZero() && j.CreatedAt.Before(f.since)) {
		return false
	}
	for k, v := range f.labels {
		if got, ok := j.Labels[k]; !ok || got != v {
			return false
		}
	}
	return true
}

// digest names the filter, so that a cursor is used with the filters it
// was made for.
func (f jobFilter) digest() uint32 {
	h := sha256.New()
	fmt.Fprintf(h, "%v|%q|%q|%q|%d|", f.states, f.users, f.queues, f.kind, f.since.UnixNano())
	for _, k := range slices.Sorted(maps.Keys(f.labels)) {
		fmt.Fprintf(h, "%q=%q|", k, f.labels[k])
	}
	return binary.BigEndian.Uint32(h.Sum(nil))
}

// listCursor is where a listing goes on: the state (its index in the
// filter's states), the sequence number of the last job read in it and,
// in the FIFO, how many pending jobs were ahead of the next one.
type listCursor struct {
	State  int    `json:"s"`
	Seq    uint64 `json:"q"`
	Pos    int    `json:"p,omitempty"`
	Filter uint32 `json:"f"`
}

func (c listCursor) encode() string {
	b, _ := json.Marshal(c)
	return base64.RawURLEncoding.EncodeToString(b)
}

func decodeCursor(s string, f jobFilter) (listCursor, error) {
	var c listCursor
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || json.Unmarshal(b, &c) != nil || c.State < 0 || c.Pos < 0 {
		return c, errorf(http.StatusBadRequest, "cursor", "cursor %q is not one this server made (pass next_cursor as it came)", s)
	}
	if c.Filter != f.digest() || c.State >= len(f.states) {
		return c, errorf(http.StatusBadRequest, "cursor", "the cursor was made for other filters: send the same state, user, queue, kind, label and since as the request that returned it")
	}
	return c, nil
}

// listJobs: GET /v1/jobs?state=&user=&queue=&kind=&label=k=v&since=
// &limit=&cursor=[&estimate=1]. The default is the live queue (pending,
// admitted, running); state=all lists every job. Pending jobs come first,
// in queue order with their positions (counted over every pending job,
// filtered or not); the others follow newest first, state by state.
// limit caps the page; next_cursor continues it.
func (s *server) listJobs(w http.ResponseWriter, r *http.Request, p principal) error {
	q := r.URL.Query()
	limit, err := queryInt(r, "limit", defaultListLimit, maxListLimit)
	if err != nil {
		return err
	}
	f, err := parseJobListFilter(q)
	if err != nil {
		return err
	}
	estimate := false
	if v := q.Get("estimate"); v != "" {
		if estimate, err = strconv.ParseBool(v); err != nil {
			return errorf(http.StatusBadRequest, "estimate", "estimate %q is not 1, 0, true or false", v)
		}
	}
	cur := listCursor{Filter: f.digest()}
	if v := q.Get("cursor"); v != "" {
		if cur, err = decodeCursor(v, f); err != nil {
			return err
		}
	}
	out := v1.JobList{Jobs: []v1.Job{}, Now: s.now()}
	budget := maxListScan
	for cur.State < len(f.states) {
		st := f.states[cur.State]
		scanned, stop := 0, false
		last, end, err := s.store.Scan(st, cur.Seq, budget, func(j queue.Job) bool {
			scanned++
			pos := cur.Pos
			if st == queue.StatePending {
				cur.Pos++
			}
			if st != queue.StatePending && !f.since.IsZero() && j.CreatedAt.Before(f.since) {
				stop = true // newest first: every job after it is older
				return false
			}
			if f.match(j) {
				v := s.redact(j, p)
				if st == queue.StatePending {
					v.Position = &pos
				}
				out.Jobs = append(out.Jobs, v)
			}
			return len(out.Jobs) < limit
		})
		if err != nil {
			return fmt.Errorf("listing %s jobs: %w", st, err)
		}
		budget -= scanned
		cur.Seq = last
		if end || stop {
			cur = listCursor{State: cur.State + 1, Filter: cur.Filter}
		}
		if len(out.Jobs) >= limit || budget <= 0 {
			break
		}
	}
	if cur.State < len(f.states) {
		out.NextCursor = cur.encode()
	}
	counts, err := s.store.Counts()
	if err != nil {
		return fmt.Errorf("counting jobs: %w", err)
	}
	out.Counts = wireCounts(counts)
	out.Count = len(out.Jobs)
	if !estimate {
		writeJSON(w, http.StatusOK, out)
		return nil
	}
	est, err := s.estimateList(out, counts, slices.Contains(f.states, queue.StatePending))
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, est)
	return nil
}
