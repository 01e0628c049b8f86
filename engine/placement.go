package engine

import (
	"context"
	"fmt"
	"maps"
	"math"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
)

// PlacementSource is where the learning tick reads which applications held
// containers on which node, when the cluster syncs are not to say it
// (learning.placement: influx: the yarn_containers points of the
// colocd-telegraf-yarn plugin, internal/metricsource.Placements). Unlike the
// syncs, which follow colocd's own applications, it sees every
// application, colocd's and other tenants'.
type PlacementSource interface {
	// Placements returns, for the given hosts (named as the cluster names
	// its nodes), every application with containers on one of them in
	// [from, to), summarised from its samples. Hosts that had none are
	// absent; an error means nothing was read.
	Placements(ctx context.Context, hosts []string, from, to time.Time) ([]Placement, error)
}

// Placement is one application on one node over a window, as sampled.
type Placement struct {
	Node string
	// App is the application id, application_<cluster timestamp>_<sequence>:
	// YARN numbers applications in submission order, and colocd reserves its
	// application's id when it admits the job, so the ids' order is the
	// admission order.
	App string
	// Kind is colocd's job kind or, with Foreign, the kind the placement
	// source named another tenant's application by (learning.foreign);
	// "" for an application not to be seen.
	Kind string
	// Foreign says the application is another tenant's: its kind is never
	// admitted, and counts against PlacementConfig.MaxForeignKinds.
	Foreign bool
	// Unknown says nothing but the application's id is known (the sampler
	// never had the resource manager's answer for it in the window): what
	// ran on its node is not known.
	Unknown bool
	// First and Last are its first and last sample in the window, Samples
	// how many there are.
	First, Last time.Time
	Samples     int
	// Containers is its mean number of containers on the node over the
	// samples.
	Containers float64
}

// PlacementConfig is how the learning tick reads placement.
type PlacementConfig struct {
	// Tolerance is how far from each edge of the learning window an
	// application's first and last samples may be for it to count as
	// present at that edge: the sampler's interval plus how late its
	// newest samples arrive (for Telegraf, interval + flush_interval,
	// with jitter). An application present at both edges was present over
	// the whole window.
	Tolerance time.Duration
	// ForeignKinds says the source names other tenants' applications as
	// kinds (learning.foreign: a kind mode but none, or name patterns),
	// each starting with ForeignPrefix. A foreign kind joins the
	// compositions (the profile model learns its profile) and the
	// co-locations (the pair preferences learn what a queued kind is worth
	// beside it); no job of it is ever admitted.
	ForeignKinds  bool
	ForeignPrefix string
	// MaxForeignKinds caps the foreign kinds learned (counting those the
	// learner and the profiles know, against api.max_kinds like any kind);
	// the applications of any further one count as ForeignPrefix +
	// "other".
	MaxForeignKinds int
}

// Defaults of the placement read (learning.placement_tolerance,
// learning.foreign).
const (
	// DefaultPlacementTolerance: Telegraf's interval of 10 s plus its
	// flush interval of 10 s, with room for jitter (configs/telegraf.conf).
	DefaultPlacementTolerance = 30 * time.Second
	DefaultForeignPrefix      = "foreign."
	DefaultForeignMaxKinds    = 16
	// foreignOverflow, after the prefix, is the kind of the applications
	// past MaxForeignKinds.
	foreignOverflow = "other"
)

var (
	// kindRE is queue.Job's kind rule.
	kindRE          = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,62}$`)
	foreignPrefixRE = regexp.MustCompile(`^[a-z0-9][a-z0-9._-]{0,31}$`)
)

// Validate reports the first bad setting as a *fieldError named by its key
// under learning.
func (c PlacementConfig) Validate() error {
	switch {
	case c.Tolerance < time.Second || c.Tolerance > time.Hour:
		return &fieldError{"placement_tolerance", fmt.Sprintf("must be in [1s, 1h], got %v", c.Tolerance)}
	case !foreignPrefixRE.MatchString(c.ForeignPrefix):
		return &fieldError{"foreign.prefix", fmt.Sprintf("%q must match %s (a kind's start, so that foreign kinds are told from colocd's)", c.ForeignPrefix, foreignPrefixRE)}
	case c.MaxForeignKinds < 1 || c.MaxForeignKinds > 1000:
		return &fieldError{"foreign.max_kinds", fmt.Sprintf("must be in [1, 1000], got %d", c.MaxForeignKinds)}
	}
	return nil
}

// Placer says where applications ran. Given as Options.Placement, it makes
// the learning tick take the compositions and co-locations it learns from
// from its PlacementSource instead of the presence the cluster syncs
// record (learning.placement: influx); without it nothing changes.
type Placer struct {
	src PlacementSource
	cfg PlacementConfig
	// refused are the foreign kinds past MaxKinds already logged (bounded
	// by maxRefusedLogged). The engine's lock guards it: only Learn uses it.
	refused map[string]bool
}

// maxRefusedLogged bounds the refused foreign kinds logged by name.
const maxRefusedLogged = 1024

// NewPlacer reads placement from src as c says.
func NewPlacer(src PlacementSource, c PlacementConfig) (*Placer, error) {
	if src == nil {
		return nil, fmt.Errorf("placer: a placement source is required")
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("placer: %w", err)
	}
	return &Placer{src: src, cfg: c, refused: map[string]bool{}}, nil
}

// unknownKind marks an application of which nothing but its id is known:
// the sampler never had the resource manager's answer for it in the window.
const unknownKind = "\x00unknown"

// placementKinds gives each placement its kind: colocd's, a foreign kind
// (at most MaxForeignKinds of them, counting those the learner and the
// profiles know already; the others' applications count as ForeignPrefix +
// "other"), unknownKind, or "" for an application not to be seen. New foreign kinds
// are taken in name order, so that a tick's outcome does not depend on the
// order of its placements; it also returns the foreign kinds it gave.
func (e *Engine) placementKinds(p *Placer, pls []Placement) (kinds []string, foreign map[string]bool) {
	prefix, maxKinds := p.cfg.ForeignPrefix, p.cfg.MaxForeignKinds
	overflow := prefix + foreignOverflow
	known := map[string]bool{}
	for _, k := range slices.Concat(e.learner.Kinds(), e.profiles.Kinds()) {
		if strings.HasPrefix(k, prefix) && k != overflow {
			known[k] = true
		}
	}
	kinds = make([]string, len(pls))
	wanted := map[string]bool{}
	for i, pl := range pls {
		switch {
		case pl.Unknown:
			kinds[i] = unknownKind
		case pl.Foreign:
			kinds[i] = pl.Kind
			if kinds[i] != "" && !known[kinds[i]] {
				wanted[kinds[i]] = true
			}
		default:
			kinds[i] = pl.Kind
		}
	}
	var refused []string
	for _, k := range slices.Sorted(maps.Keys(wanted)) {
		if len(known) < maxKinds {
			known[k] = true
			continue
		}
		if !p.refused[k] && len(p.refused) < maxRefusedLogged {
			p.refused[k] = true
			refused = append(refused, k)
		}
	}
	if len(refused) > 0 {
		e.log.Warn("learn: more foreign kinds than learning.foreign.max_kinds; their applications count as one kind",
			"max_kinds", maxKinds, "kind", overflow, "refused", refused)
	}
	foreign = map[string]bool{}
	for i, pl := range pls {
		if pl.Foreign && kinds[i] != "" {
			if !known[kinds[i]] {
				kinds[i] = overflow
			}
			foreign[kinds[i]] = true
		}
	}
	return kinds, foreign
}

// placedWindow is what Learn takes from a placement read.
type placedWindow struct {
	colos []colocation
	comps map[string][]profile.KindCount
	// unplaced are nodes whose composition is not known: an application
	// there of unknown kind, or a job the cluster syncs saw there over the
	// whole window that the samples do not show (the sampler stopped).
	unplaced []string
	// apps are, per placed node, its applications' kinds, in id order.
	apps map[string][]appKind
}

// placeWindow is a learning tick's placement over [from, to) (Learn's
// gather phase), from what the placement read gave (pls, or its error
// err): the kinds, the foreign view at the window's end, and the
// co-locations and compositions. Called under mu; it reads nothing over
// the network.
func (e *Engine) placeWindow(p *Placer, pls []Placement, err error, from, to time.Time) (placedWindow, error) {
	pw := placedWindow{comps: map[string][]profile.KindCount{}, apps: map[string][]appKind{}}
	if err != nil {
		e.foreign = foreignView{} // not known any more
		return pw, err
	}
	kinds, foreign := e.placementKinds(p, pls)
	e.foreign = foreignAtEnd(pls, kinds, foreign, to, p.cfg.Tolerance)
	stays := map[string][]stay{}
	skip := map[string]bool{}
	for i, pl := range pls {
		switch kinds[i] {
		case "":
			continue
		case unknownKind:
			skip[pl.Node] = true
			continue
		}
		stays[pl.Node] = append(stays[pl.Node], placementStay(pl, kinds[i], foreign[kinds[i]], from, to, p.cfg.Tolerance))
	}
	// A job the syncs saw on a node over the whole window that the samples
	// do not show: the sampler there stopped; nothing it says of the node
	// can be trusted.
	for node, m := range e.presence {
		for _, pr := range m {
			if !pr.since.After(from) && !pr.lastSeen.Before(to) &&
				!slices.ContainsFunc(stays[node], func(s stay) bool { return s.kind == pr.kind }) {
				skip[node] = true
			}
		}
	}
	for node, ss := range stays {
		if skip[node] {
			continue
		}
		pw.comps[node] = stayCompositions(ss, from, to)
		for _, s := range ss {
			pw.apps[node] = append(pw.apps[node], appKind{s.id, s.kind})
		}
		if c, ok := colocationOf(node, ss, e.maxKinds); ok {
			pw.colos = append(pw.colos, c)
		}
	}
	slices.SortFunc(pw.colos, func(a, b colocation) int { return strings.Compare(a.node, b.node) })
	sortApps(pw.apps)
	pw.unplaced = slices.Sorted(maps.Keys(skip))
	return pw, nil
}

// placementStay is one placement as a stay: present at an edge of the
// window when a sample is within tol of it; otherwise it arrived at its
// first sample, and left one sampling step (its samples' spacing, or tol
// with one sample) after its last.
func placementStay(pl Placement, kind string, foreign bool, from, to time.Time, tol time.Duration) stay {
	s := stay{kind: kind, id: pl.App, order: appOrder(pl.App), foreign: foreign, containers: pl.Containers,
		start: pl.First, end: to}
	atStart, atEnd := pl.First.Sub(from) <= tol, to.Sub(pl.Last) <= tol
	if atStart {
		s.start = from
	}
	if !atEnd {
		step := tol
		if pl.Samples > 1 {
			step = pl.Last.Sub(pl.First) / time.Duration(pl.Samples-1)
		}
		if s.end = pl.Last.Add(step); s.end.After(to) {
			s.end = to
		}
	}
	s.whole = atStart && atEnd
	return s
}

// stayCompositions is a node's containers of each kind, each weighted by
// the share of [from, to) it was there, summed in id order.
func stayCompositions(ss []stay, from, to time.Time) []profile.KindCount {
	span := float64(to.Sub(from))
	ss = slices.Clone(ss)
	slices.SortFunc(ss, func(a, b stay) int { return strings.Compare(a.id, b.id) })
	var kc []profile.KindCount
	for _, s := range ss {
		if !s.end.After(s.start) {
			continue
		}
		kc = addKindCount(kc, s.kind, s.containers*float64(s.end.Sub(s.start))/span)
	}
	slices.SortFunc(kc, func(a, b profile.KindCount) int { return strings.Compare(a.Kind, b.Kind) })
	return kc
}

// appOrder is the admission order of an application id: its cluster
// timestamp (when the RM started, milliseconds) and sequence number. An id
// of another shape sorts after every well-formed one.
func appOrder(id string) admission {
	parts := strings.Split(id, "_")
	if len(parts) == 3 && parts[0] == "application" {
		ts, err1 := strconv.ParseInt(parts[1], 10, 64)
		seq, err2 := strconv.ParseUint(parts[2], 10, 64)
		if err1 == nil && err2 == nil {
			return admission{at: time.UnixMilli(ts), seq: seq}
		}
	}
	return admission{at: time.Unix(1<<62, 0)}
}

// foreignView is where other tenants' applications ran when placement was
// last read: by node, and each application's foreign kind.
type foreignView struct {
	on   map[string][]foreignApp // node → applications there
	kind map[string]string       // application id → foreign kind
}

// foreignApp is another tenant's application on a node.
type foreignApp struct {
	app, kind  string
	containers int
}

// foreignAtEnd is the foreign applications of pls still sampled at the
// window's end (within tol of to), with their kinds; containers are the
// window's mean, rounded, at least one.
func foreignAtEnd(pls []Placement, kinds []string, foreign map[string]bool, to time.Time, tol time.Duration) foreignView {
	v := foreignView{on: map[string][]foreignApp{}, kind: map[string]string{}}
	for i, pl := range pls {
		if !pl.Foreign || !foreign[kinds[i]] || to.Sub(pl.Last) > tol {
			continue
		}
		c := max(int(math.Round(pl.Containers)), 1)
		v.on[pl.Node] = append(v.on[pl.Node], foreignApp{app: pl.App, kind: kinds[i], containers: c})
		v.kind[pl.App] = kinds[i]
	}
	return v
}

// nodeJobs are the foreign applications the last placement read saw on
// node that the cluster still runs (apps: its running applications by id,
// none of them colocd's), as the admission pass's node jobs.
func (v foreignView) nodeJobs(node string, apps map[string]*cluster.App) []pipeline.NodeJob {
	var out []pipeline.NodeJob
	for _, fa := range v.on[node] {
		if a, ok := apps[fa.app]; ok && a.JobID == "" {
			out = append(out, pipeline.NodeJob{Kind: fa.kind, Containers: fa.containers})
		}
	}
	return out
}
