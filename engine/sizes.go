package engine

import (
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/profile"
)

// nodeSizes says how each node's capacity compares with the reference
// node's, the node whose capacity profile amounts are fractions of
// (profile.Observation.Size). A cluster reports nodes of different
// hardware only through the vcores the resource manager advertises (its
// node report's totalResource), so a node's CPU is its vcores over the
// reference's (Options.ReferenceVCores); disk and network bandwidth no
// resource manager reports, so they come from each node's configured
// maxima (Options.NodeLimits) over the reference's (Options.Limits). A
// resource without both figures counts as the reference's.
type nodeSizes struct {
	refVCores int64
	ref       goodness.Limits
	limits    func(node string) (goodness.Limits, bool) // nil: every node is the reference's
}

// nodeSizes is the options' node sizes.
func (o Options) nodeSizes() nodeSizes {
	return nodeSizes{refVCores: o.ReferenceVCores, ref: o.Limits, limits: o.NodeLimits}
}

// limitsOf is node's maxima in bytes/s: its own, else the reference's.
func (s nodeSizes) limitsOf(node string) goodness.Limits {
	if s.limits != nil {
		if l, ok := s.limits(node); ok {
			return l
		}
	}
	return s.ref
}

// LimitsOf is each node's maxima: what nodes gives for it, else ref.
func LimitsOf(ref goodness.Limits, nodes func(node string) (goodness.Limits, bool)) func(node string) goodness.Limits {
	return nodeSizes{ref: ref, limits: nodes}.limitsOf
}

// LimitsByNode is Options.NodeLimits of a map from node name to maxima;
// nil for an empty map.
func LimitsByNode(m map[string]goodness.Limits) func(node string) (goodness.Limits, bool) {
	if len(m) == 0 {
		return nil
	}
	return func(node string) (goodness.Limits, bool) {
		l, ok := m[node]
		return l, ok
	}
}

// size is node's size, advertising vcores: zero when it is the
// reference's in every resource.
func (s nodeSizes) size(node string, vcores int64) profile.Vector {
	ratio := func(x, ref float64) float64 {
		if x > 0 && ref > 0 {
			return x / ref
		}
		return 1
	}
	l := s.limitsOf(node)
	cpu := ratio(float64(vcores), float64(s.refVCores))
	v := profile.Vector{cpu, cpu, ratio(l.DiskRead, s.ref.DiskRead), ratio(l.DiskWrite, s.ref.DiskWrite),
		ratio(l.NetRecv, s.ref.NetRecv), ratio(l.NetSent, s.ref.NetSent)}
	if v == (profile.Vector{1, 1, 1, 1, 1, 1}) {
		return profile.Vector{}
	}
	return v
}
