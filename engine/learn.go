package engine

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/profile"
)

// LearnReport says what one learning tick did.
type LearnReport struct {
	From, To time.Time
	// Skipped says the window was empty or inverted (the wall clock stepped
	// back): nothing was read nor learned.
	Skipped     bool
	Colocations int      // nodes with a qualifying co-location
	Observed    int      // nodes scored (goodness computed and journaled)
	Updates     int      // learner.Update calls
	Stale       []string // hosts without fresh metrics, skipped
	Invalid     []string // hosts whose usage failed validation, skipped
	// Unplaced are hosts whose placement read (Placer) cannot say what ran
	// there, skipped: an application of unknown kind, or a job the cluster
	// syncs saw over the whole interval that the samples miss.
	Unplaced []string
	// Profile is what the resource profile model's tick did.
	Profile profile.TickReport
	// Parts counts the nodes fitted from each kind's own usage
	// (profile.Observation.Parts; Options.ContainerUsage).
	Parts int
	// Goodness is, for each co-located node, its observed goodness and
	// what the profiles predicted for its containers before this tick.
	Goodness []goodnessCheck
}

// goodnessCheck is one node's observed and predicted goodness.
type goodnessCheck struct {
	Node                string
	Kinds               []string // the co-located kinds, earliest admitted first
	Observed, Predicted float64
}

// pairKey is an ordered kind pair: later was admitted after earlier (or
// earlier is a foreign kind, creditPair).
type pairKey struct {
	later, earlier string
	foreignEarlier bool // earlier is another tenant's: never chosen
}

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
// an error wrapping errMetrics and leaves the preferences as they were;
// admission goes on. An empty or inverted window (to not after from: the
// wall clock stepped back since the last tick) is skipped: nothing is read,
// an INFO line says so, and the backends are not marked down.
//
// Which kinds ran where comes from the presence the cluster syncs record,
// or, with a Placer, from its placement read, which also sees other
// tenants' applications as foreign kinds; a failing placement read fails
// the tick as the usage read does.
//
// A tick runs in three phases, as kueue's scheduler does: gather (the
// placement and usage reads, over the network, outside the engine's lock,
// taking it only to copy what they need and to place what was read), then
// plan and apply (the scores, the pair credits and the profiles'
// observations, and the one store command that persists them) under the
// lock. So a slow or hung metrics store holds up the tick alone: Kill,
// the preference import and reset, admission passes and syncs take the
// lock meanwhile. Ticks are serialised among themselves (learnMu).
func (e *Engine) Learn(ctx context.Context, from, to time.Time) (rep LearnReport, err error) {
	e.learnMu.Lock()
	defer e.learnMu.Unlock()
	// The window is in wall time: Round(0) strips time.Now's monotonic
	// reading, which would hide a step of the wall clock from the
	// comparison (and the query is made of the wall times).
	if !to.Round(0).After(from.Round(0)) {
		e.log.Info("learning tick skipped: empty or inverted window (the wall clock stepped back?)",
			e.clockKey("from"), from, e.clockKey("to"), to)
		return LearnReport{From: from, To: to, Skipped: true}, nil
	}
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
	in, err := e.gather(ctx, from, to)
	rep.Colocations, rep.Unplaced = len(in.colos), in.unplaced
	if err != nil || in.readings == nil {
		return rep, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	return rep, e.applyTick(in, from, to, &rep)
}

// tickInputs is what a learning tick's gather phase read: the
// co-locations and each node's compositions over the window, the hosts
// whose placement is unknown, and every host's usage reading (nil: nothing
// to learn from — no metrics source, or no host).
type tickInputs struct {
	colos    []colocation
	comps    map[string][]profile.KindCount
	unplaced []string
	hosts    []string
	readings map[string]Reading
	// apps are, per node, the kinds of the applications that ran there
	// (by application id; from the syncs' presence or the placement read),
	// and parts their own use (ContainerUsageSource): both empty without
	// one.
	apps  map[string][]appKind
	parts map[string]map[string]goodness.Usage
}

// gather is a tick's reads: what ran where (from the syncs' presence, or
// the Placer's read), then the usage of every node over [from, to]. The
// network reads run without mu; mu is taken to copy the nodes and the
// presence, and to place what the placement read gave.
func (e *Engine) gather(ctx context.Context, from, to time.Time) (tickInputs, error) {
	var in tickInputs
	e.mu.Lock()
	e.journalSpace()
	nodes := slices.Clone(e.nodes)
	placer := e.placer
	if placer == nil {
		var apps map[string][]appKind // with container usage: which application is which kind
		if e.parts != nil {
			apps = map[string][]appKind{}
		}
		in.colos, in.comps = e.colocations(from, to), e.compositions(from, to, apps)
		in.apps = apps
		e.prune(from)
	}
	e.mu.Unlock()
	if placer != nil {
		sorted := slices.Sorted(slices.Values(nodes))
		var pls []Placement
		var err error
		if len(sorted) > 0 && to.After(from) {
			pls, err = placer.src.Placements(ctx, sorted, from, to)
		}
		e.mu.Lock()
		pw, err := e.placeWindow(placer, pls, err, from, to)
		e.prune(from)
		e.mu.Unlock()
		in.colos, in.comps, in.unplaced = pw.colos, pw.comps, pw.unplaced
		if e.parts != nil {
			in.apps = pw.apps
		}
		if err != nil {
			e.backendError("metrics", err)
			return in, fmt.Errorf("learn [%s, %s]: %w: placement: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), errMetrics, err)
		}
	}
	if e.metrics == nil || !to.After(from) {
		return in, nil
	}
	// Every node: the profiles learn from all of them (idle ones give the
	// baseline), the pair preferences from the co-locations.
	hosts := nodes
	known := make(map[string]bool, len(hosts))
	for _, h := range hosts {
		known[h] = true
	}
	for _, c := range in.colos {
		if !known[c.node] {
			known[c.node] = true
			hosts = append(hosts, c.node)
		}
	}
	if len(hosts) == 0 {
		return in, nil
	}
	slices.Sort(hosts)
	readings, _, err := ReadUsage(ctx, e.metrics, hosts, from, to, e.sizes.limitsOf)
	if err != nil {
		e.backendError("metrics", err)
		return in, fmt.Errorf("learn [%s, %s]: %w: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), errMetrics, err)
	}
	if e.parts != nil && len(in.apps) > 0 {
		if in.parts, err = e.parts.ContainerUsage(ctx, hosts, from, to); err != nil {
			e.backendError("metrics", err)
			return in, fmt.Errorf("learn [%s, %s]: %w: container usage: %w", from.Format(time.RFC3339), to.Format(time.RFC3339), errMetrics, err)
		}
	}
	e.backendOK(backendMetrics)
	in.hosts, in.readings = hosts, readings
	return in, nil
}

// appKind is an application and its kind.
type appKind struct{ app, kind string }

// sortApps orders each node's applications by id: parts sum in that order,
// so a seed reproduces them.
func sortApps(apps map[string][]appKind) {
	for _, as := range apps {
		slices.SortFunc(as, func(a, b appKind) int { return strings.Compare(a.app, b.app) })
	}
}

// partsOf is node's kinds' own use (profile.Observation.Parts) from the
// container usage read: each kind's applications summed, in utilisation
// units of the node (lim), in the order of comps. Nil when an application
// of a kind of comps has no reading (its containers would count without
// their usage): the node is then fitted whole.
func partsOf(comps []profile.KindCount, apps []appKind, usage map[string]goodness.Usage, lim goodness.Limits) []profile.Part {
	if len(comps) == 0 || len(usage) == 0 {
		return nil
	}
	parts := make([]profile.Part, 0, len(comps))
	for _, kc := range comps {
		if kc.Containers <= 0 {
			continue
		}
		pt, found := profile.Part{Kind: kc.Kind}, false
		for _, a := range apps { // in id order
			if a.kind != kc.Kind {
				continue
			}
			u, ok := usage[a.app]
			if !ok {
				return nil
			}
			found = true
			v := profile.Usage(goodness.Usage{CPU: u.CPU, DiskRead: u.DiskRead, DiskWrite: u.DiskWrite}, lim)
			for r := range profile.NumResources {
				pt.Usage[r] += v[r]
			}
		}
		if !found {
			return nil
		}
		parts = append(parts, pt)
	}
	return parts
}

// tickPlan is what a tick learns from its inputs: the profiles'
// observations, the pair credits in the order the learner takes them, and
// the goodness records and checks of the co-located nodes.
type tickPlan struct {
	observations []profile.Observation
	credits      []pairCredit
	records      []journal.GoodnessRecord
	checks       []goodnessCheck
	observed     int
	stale        []string
	invalid      []rejected // hosts whose usage was rejected, in co-location order
}

// rejected is a host whose usage failed validation, and why.
type rejected struct {
	host string
	err  error
}

// pairCredit is goodness g for pair pk.
type pairCredit struct {
	pk pairKey
	g  float64
}

// tickRules are the settings a tick's plan follows.
type tickRules struct {
	limitsOf   func(node string) goodness.Limits // each node's maxima
	sizes      map[string]profile.Vector         // each node's size (absent: the reference node)
	pairReward PairReward
	aggregate  Aggregate
}

// goodnessPredictor is what the plan asks of the profiles as they were
// before the tick (profile.Predictor).
type goodnessPredictor interface {
	Prepare(kcs ...[]profile.KindCount)
	GoodnessOn(kc []profile.KindCount, size profile.Vector) float64
}

// planTick is a tick's plan, a pure function of what the gather read: the
// profiles' observations (each node's usage and the containers of each
// kind that ran there, time-weighted over the interval), and for every
// co-location whose node has a valid reading its goodness, journaled for
// each kind pair on it, and the pair credits — per node (AggregateNode) or
// once per pair with its mean over the nodes. The residual reward
// subtracts what predict (the profiles before this tick, so out of
// sample) expected.
func planTick(in tickInputs, predict goodnessPredictor, rules tickRules, now, from, to time.Time) tickPlan {
	var pl tickPlan
	for _, h := range in.hosts {
		r, ok := in.readings[h]
		if !ok || r.Usage.Validate() != nil || slices.Contains(in.unplaced, h) {
			continue // stale and invalid hosts are reported for co-locations below
		}
		pl.observations = append(pl.observations, profile.Observation{Node: h, Usage: profile.Usage(r.Usage, rules.limitsOf(h)), Containers: in.comps[h],
			Stall: profile.Stall{Known: r.Usage.Pressure, CPU: r.Usage.CPUPressure, IO: r.Usage.IOPressure}, Size: rules.sizes[h],
			Parts: partsOf(in.comps[h], in.apps[h], in.parts[h], rules.limitsOf(h))})
	}
	ahead := make([][]profile.KindCount, 0, len(in.colos))
	for _, c := range in.colos {
		if r, ok := in.readings[c.node]; ok && r.Err == nil {
			ahead = append(ahead, in.comps[c.node])
		}
	}
	predict.Prepare(ahead...)
	sum := map[pairKey]float64{}
	n := map[pairKey]int{}
	var order []pairKey
	for _, c := range in.colos {
		r, ok := in.readings[c.node]
		if !ok {
			pl.stale = append(pl.stale, c.node)
			continue
		}
		if r.Err != nil {
			pl.invalid = append(pl.invalid, rejected{c.node, r.Err})
			continue
		}
		g := r.Goodness
		pl.observed++
		pred := predict.GoodnessOn(in.comps[c.node], rules.sizes[c.node])
		pl.checks = append(pl.checks, goodnessCheck{Node: c.node, Kinds: c.kinds, Observed: g, Predicted: pred})
		if rules.pairReward == RewardResidual {
			g -= pred
		}
		for i := 0; i < len(c.kinds); i++ {
			for k := i + 1; k < len(c.kinds); k++ {
				pk, ok := creditPair(c, c.kinds[k], c.kinds[i])
				if !ok {
					continue
				}
				pl.records = append(pl.records, journal.GoodnessRecord{At: now, From: from, To: to, Node: c.node, Chosen: pk.later, Given: pk.earlier, G: g, Usage: r.Usage})
				if rules.aggregate == AggregateNode {
					pl.credits = append(pl.credits, pairCredit{pk, g})
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
		pl.credits = append(pl.credits, pairCredit{pk, sum[pk] / float64(n[pk])})
	}
	return pl
}

// applyTick is a tick's plan and apply, under mu: the plan (planTick) from
// the profiles as they are, then the goodness journaled, the credits to
// the learner, the observations to the profiles, the runtimes, and their
// persistence in one store command.
func (e *Engine) applyTick(in tickInputs, from, to time.Time, rep *LearnReport) error {
	pl := planTick(in, profile.NewPredictor(e.scoreSrc), tickRules{limitsOf: e.sizes.limitsOf, sizes: e.nodeSize, pairReward: e.pairReward, aggregate: e.aggregate},
		e.clock.Now(), from, to)
	rep.Observed, rep.Goodness, rep.Stale = pl.observed, pl.checks, pl.stale
	for _, r := range pl.invalid {
		e.log.Warn("learn: usage rejected", "node", r.host, "err", r.err)
		rep.Invalid = append(rep.Invalid, r.host)
	}
	for _, r := range pl.records {
		e.journalGoodness(r)
	}
	for _, c := range pl.credits {
		e.credit(c.pk, c.g, rep)
	}
	if len(pl.observations) > 0 {
		rep.Profile = e.profiles.Observe(pl.observations)
	}
	e.notePartsSeen(pl.observations, rep)
	e.creditRuntimes(in.comps, from, to)
	sort.Strings(rep.Stale)
	if e.mx != nil {
		e.mx.StaleHosts(len(rep.Stale))
		e.mx.LearningUpdates(rep.Updates)
	}
	if len(rep.Stale) > 0 {
		e.log.Warn("learn: hosts without fresh metrics skipped", "hosts", rep.Stale)
	}
	if len(rep.Unplaced) > 0 {
		e.log.Warn("learn: hosts whose placement is unknown skipped (an application of unknown kind, or the placement samples stopped)",
			"hosts", rep.Unplaced)
	}
	return e.persistLearned(true, true)
}

// notePartsSeen counts the tick's nodes fitted in parts (rep.Parts) and,
// with a container usage source, keeps Engine.apart true while at least
// half the nodes that ran something were; when none were, it warns: the
// source gives nothing to tell kinds apart with (a plugin without its
// cgroup reading), and the observe-first hold-back applies again.
func (e *Engine) notePartsSeen(obs []profile.Observation, rep *LearnReport) {
	if e.parts == nil {
		return
	}
	busy := 0
	for _, o := range obs {
		if len(o.Containers) > 0 {
			busy++
			if len(o.Parts) > 0 {
				rep.Parts++
			}
		}
	}
	if e.mx != nil {
		e.mx.ContainerUsageHosts(rep.Parts, busy-rep.Parts)
	}
	if busy == 0 {
		return
	}
	e.apart.Store(2*rep.Parts >= busy)
	if rep.Parts == 0 {
		e.log.Warn("learn: no node's applications had their own usage (learning.container_usage): is the colocd-telegraf-yarn plugin's cgroup_dir set, and the io controller enabled for YARN's cgroups (the plugin warns if not)? Kinds are fitted from node sums, and admission holds never-observed kinds back again",
			"nodes", busy)
	}
}

// creditPair is the pair credited for kind later admitted after earlier on
// c's node. A foreign kind (another tenant's application) is never
// admitted, so it is only ever given: beside a kind of colocd's it is the
// earlier one whatever the order, and two foreign kinds make no pair.
func creditPair(c colocation, later, earlier string) (pairKey, bool) {
	switch {
	case c.foreign[later] && c.foreign[earlier]:
		return pairKey{}, false
	case c.foreign[later]:
		return pairKey{later: earlier, earlier: later, foreignEarlier: true}, true
	}
	return pairKey{later: later, earlier: earlier, foreignEarlier: c.foreign[earlier]}, true
}

// credit applies goodness g of pair pk to the learner: H(later | earlier),
// and with credit symmetric H(earlier | later) unless earlier is foreign
// (never chosen).
func (e *Engine) credit(pk pairKey, g float64, rep *LearnReport) {
	e.learner.Update(pk.later, pk.earlier, g)
	rep.Updates++
	if e.creditMode == CreditSymmetric && !pk.foreignEarlier {
		e.learner.Update(pk.earlier, pk.later, g)
		rep.Updates++
	}
}

func (e *Engine) journalGoodness(r journal.GoodnessRecord) {
	if e.journal == nil {
		return
	}
	e.journalWrote(e.journal.AddGoodness(r))
}

// compositions is, per node, the containers of each kind that ran there
// during [from, to], each weighted by the share of the interval it was
// present (first seen at a sync to gone at a sync), summed in job-id
// order so that a seed reproduces the profiles bit for bit. With apps
// non-nil it also puts there, per node, the kind of each application
// that ran there, in application-id order.
func (e *Engine) compositions(from, to time.Time, apps map[string][]appKind) map[string][]profile.KindCount {
	out := map[string][]profile.KindCount{}
	span := float64(to.Sub(from))
	if span <= 0 {
		return out
	}
	var ids []string // one node's, reused
	for node, m := range e.presence {
		var kc []profile.KindCount
		// Job ids in order: the sums must not depend on map order.
		ids = ids[:0]
		for id := range m {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
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
			kc = addKindCount(kc, p.kind, float64(p.containers)*float64(end.Sub(start))/span)
			if apps != nil && p.app != "" {
				apps[node] = append(apps[node], appKind{p.app, p.kind})
			}
		}
		slices.SortFunc(kc, func(a, b profile.KindCount) int { return strings.Compare(a.Kind, b.Kind) })
		out[node] = kc
	}
	sortApps(apps)
	return out
}

// addKindCount adds c containers of kind to kc.
func addKindCount(kc []profile.KindCount, kind string, c float64) []profile.KindCount {
	i := slices.IndexFunc(kc, func(k profile.KindCount) bool { return k.Kind == kind })
	if i < 0 {
		return append(kc, profile.KindCount{Kind: kind, Containers: c})
	}
	kc[i].Containers += c
	return kc
}
