package api

import (
	"cmp"
	"net/http"
	"slices"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/journal"
)

// listDecisions: GET /v1/decisions?limit=N (default 50).
func (s *server) listDecisions(w http.ResponseWriter, r *http.Request, _ principal) error {
	limit, err := queryInt(r, "limit", defaultDecisions, maxListLimit)
	if err != nil {
		return err
	}
	out := v1.DecisionList{Decisions: []v1.DecisionRecord{}}
	if s.journal != nil {
		for _, d := range s.journal.Decisions(limit) {
			out.Decisions = append(out.Decisions, wireDecision(d))
		}
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// defaultGoodnessWindow is the window of GET /v1/goodness without from.
const defaultGoodnessWindow = 24 * time.Hour

// defaultGoodnessLimit is how many records GET /v1/goodness returns
// without limit.
const defaultGoodnessLimit = 1000

// listGoodness: GET /v1/goodness?from=RFC3339&to=RFC3339&limit=N (default:
// the last 24 hours up to now, the newest 1000 records; limit at most
// 10000). The pair and node summaries cover every record with
// from <= at < to.
func (s *server) listGoodness(w http.ResponseWriter, r *http.Request, _ principal) error {
	limit, err := queryInt(r, "limit", defaultGoodnessLimit, maxListLimit)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	to := s.now()
	if v := q.Get("to"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return errorf(http.StatusBadRequest, "to", "to %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", v)
		}
		to = t
	}
	from := s.goodnessWindowStart(to)
	if v := q.Get("from"); v != "" {
		t, err := time.Parse(time.RFC3339, v)
		if err != nil {
			return errorf(http.StatusBadRequest, "from", "from %q is not an RFC 3339 time such as 2026-12-01T10:00:00Z", v)
		}
		from = t
	}
	if !from.Before(to) {
		return errorf(http.StatusBadRequest, "from", "from (%s) must be before to (%s)", from.Format(time.RFC3339), to.Format(time.RFC3339))
	}
	out := v1.GoodnessList{From: from, To: to, Records: []v1.GoodnessRecord{}, Pairs: []v1.PairSummary{}, Nodes: []v1.NodeSummary{}}
	type pairKey struct{ chosen, given string }
	pairs := map[pairKey]*v1.PairSummary{}
	nodes := map[string]*v1.NodeSummary{}
	// The newest limit records, in a ring; the summaries see them all.
	tail := make([]journal.GoodnessRecord, 0, min(limit, 1024))
	next := 0
	summarise := func(rec journal.GoodnessRecord) {
		out.Total++
		if len(tail) < limit {
			tail = append(tail, rec)
		} else if limit > 0 {
			tail[next] = rec
			next = (next + 1) % limit
		}
		k := pairKey{rec.Chosen, rec.Given}
		p := pairs[k]
		if p == nil {
			p = &v1.PairSummary{Chosen: rec.Chosen, Given: rec.Given, MinG: rec.G, MaxG: rec.G}
			pairs[k] = p
		}
		p.Count++
		p.MeanG += (rec.G - p.MeanG) / float64(p.Count)
		p.MinG, p.MaxG = min(p.MinG, rec.G), max(p.MaxG, rec.G)
		n := nodes[rec.Node]
		if n == nil {
			n = &v1.NodeSummary{Node: rec.Node}
			nodes[rec.Node] = n
		}
		n.Count++
		n.MeanG += (rec.G - n.MeanG) / float64(n.Count)
	}
	if s.journal != nil {
		s.journal.EachGoodness(from, to, summarise)
	}
	for _, rec := range slices.Concat(tail[next:], tail[:next]) {
		out.Records = append(out.Records, wireGoodness(rec))
	}
	for _, p := range pairs {
		out.Pairs = append(out.Pairs, *p)
	}
	slices.SortFunc(out.Pairs, func(a, b v1.PairSummary) int {
		return cmp.Or(cmp.Compare(a.Chosen, b.Chosen), cmp.Compare(a.Given, b.Given))
	})
	for _, n := range nodes {
		out.Nodes = append(out.Nodes, *n)
	}
	slices.SortFunc(out.Nodes, func(a, b v1.NodeSummary) int { return cmp.Compare(a.Node, b.Node) })
	writeJSON(w, http.StatusOK, out)
	return nil
}
