package engine

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
)

// LearnReport says what one learning tick did.
type LearnReport struct {
	From, To    time.Time
	Colocations int      // nodes with a qualifying co-location
	Observed    int      // nodes scored (goodness computed and journaled)
	Updates     int      // learner.Update calls
	Stale       []string // hosts without fresh metrics, skipped
	Invalid     []string // hosts whose usage failed validation, skipped
	// Profile is what the resource profile model's tick did.
	Profile profile.TickReport
	// Goodness is, for each co-located node, its observed goodness and
	// what the profiles predicted for its containers before this tick.
	Goodness []GoodnessCheck
}

// GoodnessCheck is one node's observed and predicted goodness.
type GoodnessCheck struct {
	Node                string
	Kinds               []string // the co-located kinds, earliest admitted first
	Observed, Predicted float64
}

// pairKey is an ordered kind pair: later was admitted after earlier.
type pairKey struct{ later, earlier string }

// Learn runs one learning tick over [from, to] (paper §5.3): every node that
// had containers of exactly two distinct kinds (up to
// learning.max_kinds_per_node), or of two or more jobs of one kind (its
// pair with itself), for the whole interval is scored with Eq. 1
// from its mean usage and journaled. The goodness credits the kind admitted
// later given the one that ran before it (both ways with symmetric credit):
// with learning.aggregate "pair" (the paper's "goodness per combination of
// co-located jobs") one update per kind pair with the mean goodness of its
// nodes, with "node" one update per node. Hosts with stale or missing
// metrics are skipped and reported. What the tick changed in the
// preferences and the profiles is persisted, in one transaction (the rows
// of the kinds it updated, persist.go). A failing metrics source returns
// an error wrapping ErrMetrics and leaves the preferences as they were;
// admission goes on.
func (e *Engine) Learn(ctx context.Context, from, to time.Time) (rep LearnReport, err error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	start := e.wall() // the tick's duration, for the log only
	defer func() {
		if err != nil || e.metrics == nil { // no metrics source: no learning to report; errors: the caller's
			return
		}
		if e.mx != nil {
			e.mx.LearningTick(e.clock.Now())
		}
		e.logTick(rep, e.wall().Sub(start))
	}()
	rep = LearnReport{From: from, To: to}
	colos := e.colocations(from, to)
	comps := e.compositions(from, to)
	e.prune(from)
	rep.Colocations = len(colos)
	if e.metrics == nil || !to.After(from) {
		return rep, nil
	}
	// Every node: the profiles learn from all of them (idle ones give the
	// baseline), the pair preferences from the co-locations.
	hosts := slices.Clone(e.nodes)
	known := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		known[h] = true
	}
	for _, c := range colos {
		if !known[c.node] {
			known[c.node] = true
			hosts = append(hosts, c.node)
		}
	}
	if len(hosts) == 0 {
		return rep, nil
	}
	slices.Sort(hosts)
	readings, _, err := ReadUsage(ctx, e.metrics, hosts, from, to, e.limits)
	if err != nil {
		e.backendError("metrics")
		return rep, fmt.Errorf("learn [%s, %s]: %w: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), ErrMetrics, err)
	}
	e.backendOK(backendMetrics)
	// The profiles' observations: each node's usage and the containers of
	// each kind that ran there, time-weighted over the interval.
	var obs []profile.Observation
	for _, h := range hosts {
		r, ok := readings[h]
		if !ok || r.Usage.Validate() != nil {
			continue // stale and invalid hosts are reported for co-locations below
		}
		obs = append(obs, profile.Observation{Node: h, Usage: profile.Usage(r.Usage, e.limits), Containers: comps[h]})
	}
	e.learnPairs(colos, comps, readings, from, to, &rep)
	if len(obs) > 0 {
		rep.Profile = e.profiles.Observe(obs)
	}
	sort.Strings(rep.Stale)
	if e.mx != nil {
		e.mx.StaleHosts(len(rep.Stale))
		e.mx.LearningUpdates(rep.Updates)
	}
	if len(rep.Stale) > 0 {
		e.log.Warn("learn: hosts without fresh metrics skipped", "hosts", rep.Stale)
	}
	if err = e.persistLearned(true, true); err != nil {
		return rep, err
	}
	return rep, nil
}

// learnPairs scores every co-location whose node has a reading, journals
// the goodness of each kind pair on it and credits the learner: per node
// (AggregateNode) or once per pair with its mean over the nodes.
func (e *Engine) learnPairs(colos []colocation, comps map[string][]profile.KindCount, readings map[string]Reading, from, to time.Time, rep *LearnReport) {
	now := e.clock.Now()
	predict := profile.NewPredictor(e.scoreSrc) // the profiles before this tick
	sum := map[pairKey]float64{}
	n := map[pairKey]int{}
	var order []pairKey
	for _, c := range colos {
		r, ok := readings[c.node]
		if !ok {
			rep.Stale = append(rep.Stale, c.node)
			continue
		}
		if r.Err != nil {
			e.log.Warn("learn: usage rejected", "node", c.node, "err", r.Err)
			rep.Invalid = append(rep.Invalid, c.node)
			continue
		}
		g := r.Goodness
		rep.Observed++
		// The residual: what the profiles did not predict. Prediction before
		// this tick is folded in, so it is out of sample.
		pred := predict.Goodness(comps[c.node])
		rep.Goodness = append(rep.Goodness, GoodnessCheck{Node: c.node, Kinds: c.kinds, Observed: g, Predicted: pred})
		if e.pairReward == RewardResidual {
			g -= pred
		}
		for i := 0; i < len(c.kinds); i++ {
			for k := i + 1; k < len(c.kinds); k++ {
				pk := pairKey{later: c.kinds[k], earlier: c.kinds[i]}
				e.journalGoodness(journal.GoodnessRecord{At: now, From: from, To: to, Node: c.node, Chosen: pk.later, Given: pk.earlier, G: g, Usage: r.Usage})
				if e.aggregate == AggregateNode {
					e.credit(pk, g, rep)
					continue
				}
				if n[pk] == 0 {
					order = append(order, pk)
				}
				sum[pk] += g
				n[pk]++
			}
		}
	}
	for _, pk := range order { // pair aggregation: nodes in name order, pairs in first-seen order
		e.credit(pk, sum[pk]/float64(n[pk]), rep)
	}
}

// credit applies goodness g of pair pk to the learner.
func (e *Engine) credit(pk pairKey, g float64, rep *LearnReport) {
	e.learner.Update(pk.later, pk.earlier, g)
	rep.Updates++
	if e.creditMode == CreditSymmetric {
		e.learner.Update(pk.earlier, pk.later, g)
		rep.Updates++
	}
}

func (e *Engine) journalGoodness(r journal.GoodnessRecord) {
	if e.journal == nil {
		return
	}
	if err := e.journal.AddGoodness(r); err != nil {
		e.log.Warn("journal goodness", "err", err)
	}
}

// compositions is, per node, the containers of each kind that ran there
// during [from, to], each weighted by the share of the interval it was
// present (first seen at a sync to gone at a sync), summed in job-id
// order so that a seed reproduces the profiles bit for bit.
func (e *Engine) compositions(from, to time.Time) map[string][]profile.KindCount {
	out := map[string][]profile.KindCount{}
	span := float64(to.Sub(from))
	if span <= 0 {
		return out
	}
	for node, m := range e.presence {
		var kc []profile.KindCount
		// Job ids in order: the sums must not depend on map order.
		for _, id := range slices.Sorted(maps.Keys(m)) {
			p := m[id]
			start := p.since
			if start.Before(from) {
				start = from
			}
			end := to
			if !p.goneAt.IsZero() && p.goneAt.Before(to) {
				end = p.goneAt
			}
			if !end.After(start) {
				continue
			}
			c := float64(p.containers) * float64(end.Sub(start)) / span
			i := slices.IndexFunc(kc, func(k profile.KindCount) bool { return k.Kind == p.kind })
			if i < 0 {
				kc = append(kc, profile.KindCount{Kind: p.kind, Containers: c})
			} else {
				kc[i].Containers += c
			}
		}
		slices.SortFunc(kc, func(a, b profile.KindCount) int { return strings.Compare(a.Kind, b.Kind) })
		out[node] = kc
	}
	return out
}
