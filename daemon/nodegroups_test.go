package daemon

import (
	"testing"

	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/goodness"
)

// The engine's node maxima from goodness.node_groups: the first group
// whose pattern matches the whole name, a field left at zero the
// reference's; a node no group matches gets the backend's (the simulator's
// node groups), else none.
func TestNodeGroupLimits(t *testing.T) {
	ref := goodness.Limits{DiskRead: 100e6, DiskWrite: 80e6, NetRecv: 125e6, NetSent: 125e6}
	g := goodnessConfig{NodeGroups: []nodeGroupConfig{
		{Hosts: `dn-ssd-[0-9]+`, DiskReadMBps: 2000, DiskWriteMBps: 1500},
		{Hosts: `dn-.*`, NetRecvMBps: 1250, NetSentMBps: 1250},
	}}
	simNode := goodness.Limits{DiskRead: 1, DiskWrite: 1, NetRecv: 1, NetSent: 1}
	backend := engine.LimitsByNode(map[string]goodness.Limits{"sim-7": simNode})
	of := g.nodeLimits(ref, backend)
	for node, want := range map[string]struct {
		lim goodness.Limits
		ok  bool
	}{
		"dn-ssd-12":     {goodness.Limits{DiskRead: 2000e6, DiskWrite: 1500e6, NetRecv: 125e6, NetSent: 125e6}, true},
		"dn-ssd-12.dc1": {goodness.Limits{DiskRead: 100e6, DiskWrite: 80e6, NetRecv: 1250e6, NetSent: 1250e6}, true}, // the second group: the first must match the whole name
		"dn-hdd-3":      {goodness.Limits{DiskRead: 100e6, DiskWrite: 80e6, NetRecv: 1250e6, NetSent: 1250e6}, true},
		"sim-7":         {simNode, true},
		"other":         {goodness.Limits{}, false},
	} {
		if lim, ok := of(node); lim != want.lim || ok != want.ok {
			t.Errorf("%s: %+v, %v; want %+v, %v", node, lim, ok, want.lim, want.ok)
		}
	}
	if (goodnessConfig{}).nodeLimits(ref, nil) != nil {
		t.Error("no groups and no backend's: want no node limits (every node the reference's)")
	}
	if got := engine.LimitsOf(ref, (goodnessConfig{}).nodeLimits(ref, backend))("sim-7"); got != simNode {
		t.Errorf("no groups: sim-7 = %+v, want the backend's", got)
	}
}
