package yarntest

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/colocd/colocd/yarnclient"
)

// Population is a large production cluster for a FakeRM (Populate): Nodes
// NodeManagers of 32 vcores and 128 GB, 40 to a rack, with the 3.x node
// report (version, resource utilization); and Apps running applications
// of other tenants (Spark, MapReduce and Tez jobs of 24 users in 8
// queues), each with an AM and executors of 1, 2 or 4 vcores (4 GB a
// vcore) placed on random nodes with room, holding Load of the cluster's
// vcores in all, their application reports filled in as a running
// application's are, and their satisfied locality requests listed as
// resourceRequests (3.x). The same Population gives the same cluster.
type Population struct {
	Nodes int
	Apps  int
	Load  float64 // share of the nodes' vcores the applications hold; 0: 0.6
	Seed  uint64
}

// Populate starts the fake with the cluster p describes.
func Populate(p Population) Option { return func(o *options) { o.population = &p } }

// Node size of a Population.
const (
	populationVCores   = 32
	populationMemoryMB = 128 << 10
	populationRack     = 40 // nodes per rack
)

// populate adds p's nodes and applications; called by NewFakeRM.
func (f *FakeRM) populate(p Population) {
	rng := rand.New(rand.NewPCG(p.Seed, 0x5eed))
	if p.Load <= 0 {
		p.Load = 0.6
	}
	for i := range p.Nodes {
		host := fmt.Sprintf("nm%05d.dc1.example.org", i+1)
		f.nodeIndex[host+":8041"] = len(f.nodes)
		f.nodes = append(f.nodes, &yarnclient.Node{
			Rack: fmt.Sprintf("/dc1/rack%03d", i/populationRack+1), State: "RUNNING", ID: host + ":8041",
			NodeHostName: host, NodeHTTPAddress: host + ":8042", LastHealthUpdate: f.opts.clusterTS - int64(rng.IntN(3000)),
			Version: "3.3.6", AvailMemoryMB: populationMemoryMB, AvailableVirtualCores: populationVCores,
			ResourceUtilization: &yarnclient.ResourceUtilization{NodePhysicalMemoryMB: 6000 + int64(rng.IntN(4000)),
				NodeVirtualMemoryMB: 9000 + int64(rng.IntN(6000)), NodeCPUUsage: 0.02 + 0.05*rng.Float64()},
		})
	}
	if p.Nodes == 0 || p.Apps == 0 {
		return
	}
	// Application sizes: heavy-tailed weights, scaled to the load.
	weights := make([]float64, p.Apps)
	var sum float64
	for i := range weights {
		weights[i] = math.Exp(1.5 * rng.NormFloat64())
		sum += weights[i]
	}
	want := p.Load * float64(p.Nodes*populationVCores)
	for i, w := range weights {
		f.populateApp(rng, i, max(1, int(want*w/sum)))
	}
}

// populateApp adds running application i of other tenants, holding
// about vcores vcores.
func (f *FakeRM) populateApp(rng *rand.Rand, i, vcores int) {
	types := []string{"SPARK", "MAPREDUCE", "TEZ"}
	each := []int64{1, 2, 4}[rng.IntN(3)]
	user := fmt.Sprintf("tenant%02d", rng.IntN(24))
	now := f.opts.clusterTS + 3_600_000
	started := now - int64(rng.IntN(3_600_000))
	id := f.allocID()
	a := &fakeApp{resource: yarnclient.ResourceInfo{Memory: 4096 * each, VCores: each}, app: yarnclient.App{
		ID: id, User: user, Name: fmt.Sprintf("%s-job-%05d", user, i), Queue: fmt.Sprintf("tenant-q%d", rng.IntN(8)),
		State: "RUNNING", FinalStatus: "UNDEFINED", Progress: float64(rng.IntN(95)), TrackingUI: "ApplicationMaster",
		TrackingURL: "http://rm1.dc1.example.org:8088/proxy/" + id + "/", ClusterID: f.opts.clusterTS,
		ApplicationType: types[rng.IntN(len(types))], StartedTime: started, LaunchTime: started + 900,
		LogAggregationStatus: "NOT_START", QueueUsagePercentage: 0.5 + 2*rng.Float64(), ClusterUsagePercentage: 0.1,
		MemorySeconds: int64(rng.IntN(1 << 30)), VCoreSeconds: int64(rng.IntN(1 << 20)),
	}}
	f.apps[id] = a
	f.appOrder = append(f.appOrder, id)
	f.submitted++
	attempt := yarnclient.AppAttempt{ID: 1, StartTime: started, AppAttemptState: "RUNNING"}
	var racks, hosts []string
	for c := 0; c*int(each) < vcores; c++ {
		n := f.roomyNode(rng, a.resource)
		if n == nil {
			break // the cluster is full
		}
		ct := f.placeLocked(a, n, boolInt(c > 0)*20, started)
		if c == 0 {
			attempt.NodeID, attempt.NodeHTTPAddress, attempt.ContainerID = n.ID, n.NodeHTTPAddress, ct.ContainerID
			attempt.LogsLink = "http://" + n.NodeHTTPAddress + "/node/containerlogs/" + ct.ContainerID + "/" + user
			a.app.AMHostHTTPAddress, a.app.AMContainerLogs = n.NodeHTTPAddress, attempt.LogsLink
		}
		if !slices.Contains(racks, n.Rack) {
			racks = append(racks, n.Rack)
		}
		if len(hosts) < 20 {
			hosts = append(hosts, n.NodeHostName)
		}
	}
	a.attempts = append(a.attempts, attempt)
	// The executors' requests, satisfied: off-switch, per rack and per
	// host (the first 20), as an AM asking for locality leaves them.
	req := func(name string) resourceRequest {
		return resourceRequest{Capability: requestCapability{Memory: a.resource.Memory, VirtualCores: a.resource.VCores},
			Priority: requestPriority{Priority: 20}, RelaxLocality: true, ResourceName: name}
	}
	a.requests = append(a.requests, req("*"))
	for _, r := range racks {
		a.requests = append(a.requests, req(r))
	}
	for _, h := range hosts {
		a.requests = append(a.requests, req(h))
	}
}

// roomyNode returns a random running node with room for one container of
// res, nil when none has.
func (f *FakeRM) roomyNode(rng *rand.Rand, res yarnclient.ResourceInfo) *yarnclient.Node {
	fits := func(n *yarnclient.Node) bool {
		return n.State == "RUNNING" && n.AvailMemoryMB >= res.Memory && n.AvailableVirtualCores >= res.VCores
	}
	for range 8 {
		if n := f.nodes[rng.IntN(len(f.nodes))]; fits(n) {
			return n
		}
	}
	start := rng.IntN(len(f.nodes))
	for k := range f.nodes {
		if n := f.nodes[(start+k)%len(f.nodes)]; fits(n) {
			return n
		}
	}
	return nil
}
