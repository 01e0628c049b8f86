package yarntest

import (
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/colocd/colocd/yarnclient"
)

// AddNode adds (or replaces, by ID) a node. Empty fields get defaults: state
// RUNNING, rack /default-rack, nodeHostName from the id, nodeHTTPAddress
// <host>:8042, 8192 MB and 8 vcores available. Containers the fake places on
// the node move memory and vcores from available to used.
func (f *FakeRM) AddNode(n yarnclient.Node) {
	if n.ID == "" {
		f.t.Fatalf("yarntest: AddNode: empty ID")
	}
	host, _, err := net.SplitHostPort(n.ID)
	if err != nil {
		host = n.ID
	}
	if n.State == "" {
		n.State = "RUNNING"
	}
	if n.Rack == "" {
		n.Rack = "/default-rack"
	}
	if n.NodeHostName == "" {
		n.NodeHostName = host
	}
	if n.NodeHTTPAddress == "" {
		n.NodeHTTPAddress = host + ":8042"
	}
	if n.AvailMemoryMB == 0 && n.UsedMemoryMB == 0 {
		n.AvailMemoryMB = 8192
	}
	if n.AvailableVirtualCores == 0 && n.UsedVirtualCores == 0 {
		n.AvailableVirtualCores = 8
	}
	if n.HealthReport == "" && f.opts.hadoop2 {
		n.HealthStatus, n.HealthReport = "Healthy", "Healthy"
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if n.LastHealthUpdate == 0 {
		n.LastHealthUpdate = f.now().UnixMilli()
	}
	if i, ok := f.nodeIndex[n.ID]; ok {
		f.nodes[i] = &n
		return
	}
	f.nodeIndex[n.ID] = len(f.nodes)
	f.nodes = append(f.nodes, &n)
}

// SetNodeState changes a node's state (e.g. LOST, UNHEALTHY).
func (f *FakeRM) SetNodeState(nodeID, state string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := f.node(nodeID)
	if n == nil {
		return fmt.Errorf("yarntest: no node %q", nodeID)
	}
	n.State = state
	return nil
}

// Nodes returns copies of the nodes.
func (f *FakeRM) Nodes() []yarnclient.Node {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.Node, len(f.nodes))
	for i, n := range f.nodes {
		out[i] = *n
	}
	return out
}

func (f *FakeRM) node(id string) *yarnclient.Node {
	if i, ok := f.nodeIndex[id]; ok {
		return f.nodes[i]
	}
	return nil
}

// Restart restarts the RM process: a new cluster timestamp (ms), so new
// application ids differ from the old ones, the application counter and the
// queue metrics start again, and reserved but unsubmitted ids are gone.
// With recover (yarn.resourcemanager.recovery.enabled, work-preserving) the
// applications are recovered as they were; without, the RM forgets every
// application and their containers are released (the NodeManagers kill
// them when they resync).
func (f *FakeRM) Restart(clusterTimestamp int64, recover bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.opts.clusterTS = clusterTimestamp
	f.nextSeq = 1
	f.submitted, f.completed, f.failed, f.killed = 0, 0, 0, 0
	if recover {
		return
	}
	for _, a := range f.apps {
		f.releaseLocked(a)
	}
	f.apps = map[string]*fakeApp{}
	f.appOrder, f.completedOrder = nil, nil
}

func (f *FakeRM) handleInfo(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	ha := "ACTIVE"
	if f.standby {
		ha = "STANDBY"
	}
	info := yarnclient.ClusterInfo{
		ID: f.opts.clusterTS, StartedOn: f.opts.clusterTS, State: "STARTED", HAState: ha,
		RMStateStoreName:              "org.apache.hadoop.yarn.server.resourcemanager.recovery.NullRMStateStore",
		ResourceManagerVersion:        "3.3.6",
		ResourceManagerBuildVersion:   "3.3.6 from colocd yarntest",
		ResourceManagerVersionBuiltOn: "2023-06-18T08:22Z",
		HadoopVersion:                 "3.3.6",
		HadoopBuildVersion:            "3.3.6 from colocd yarntest",
		HadoopVersionBuiltOn:          "2023-06-18T08:22Z",
		HAZooKeeperConnectionState:    "CONNECTED",
	}
	if f.opts.hadoop2 {
		info.ResourceManagerVersion, info.HadoopVersion = "2.7.7", "2.7.7"
		info.ResourceManagerBuildVersion, info.HadoopBuildVersion = "2.7.7 from colocd yarntest", "2.7.7 from colocd yarntest"
	}
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"clusterInfo": info})
}

func (f *FakeRM) handleMetrics(w http.ResponseWriter, _ *http.Request) {
	f.mu.Lock()
	var m yarnclient.ClusterMetrics
	for _, n := range f.nodes {
		m.TotalNodes++
		switch n.State {
		case "RUNNING", "NEW":
			m.ActiveNodes++
		case "LOST":
			m.LostNodes++
		case "UNHEALTHY":
			m.UnhealthyNodes++
		case "DECOMMISSIONING":
			m.DecommissioningNodes++
		case "DECOMMISSIONED":
			m.DecommissionedNodes++
		case "REBOOTED":
			m.RebootedNodes++
		case "SHUTDOWN":
			m.ShutdownNodes++
		}
		if n.State == "RUNNING" || n.State == "UNHEALTHY" || n.State == "DECOMMISSIONING" {
			m.AllocatedMB += n.UsedMemoryMB
			m.AvailableMB += n.AvailMemoryMB
			m.AllocatedVirtualCores += n.UsedVirtualCores
			m.AvailableVirtualCores += n.AvailableVirtualCores
			m.ContainersAllocated += n.NumContainers
		}
	}
	m.TotalMB = m.AllocatedMB + m.AvailableMB
	m.TotalVirtualCores = m.AllocatedVirtualCores + m.AvailableVirtualCores
	// QueueMetrics: counters since the RM started (appsCompleted counts the
	// successful ends only: finishApp increments appsKilled, appsFailed or
	// appsCompleted), gauges for what runs or waits now.
	m.AppsSubmitted, m.AppsCompleted, m.AppsFailed, m.AppsKilled = f.submitted, f.completed, f.failed, f.killed
	for _, a := range f.apps {
		switch a.app.State {
		case "RUNNING":
			m.AppsRunning++
		case "FINISHED", "FAILED", "KILLED":
		default:
			m.AppsPending++
		}
	}
	m.TotalUsedResourcesAcrossPartition = &yarnclient.ResourceInfo{Memory: m.AllocatedMB, VCores: m.AllocatedVirtualCores}
	m.TotalClusterResourcesAcrossPartition = &yarnclient.ResourceInfo{Memory: m.TotalMB, VCores: m.TotalVirtualCores}
	m.TotalReservedResourcesAcrossPartition = &yarnclient.ResourceInfo{}
	m.TotalAllocatedContainersAcrossPartition = m.ContainersAllocated
	m.CrossPartitionMetricsAvailable = true
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"clusterMetrics": m})
}

var nodeStates = map[string]bool{"NEW": true, "RUNNING": true, "UNHEALTHY": true, "DECOMMISSIONING": true,
	"DECOMMISSIONED": true, "LOST": true, "REBOOTED": true, "SHUTDOWN": true}

func (f *FakeRM) handleNodes(w http.ResponseWriter, r *http.Request) {
	want := map[string]bool{}
	param := r.URL.Query().Get("states")
	if f.opts.hadoop2 {
		param = r.URL.Query().Get("state") // 2.7 knows one state, and ignores "states"
	}
	for _, s := range splitComma(param) {
		s = strings.ToUpper(s)
		if !nodeStates[s] {
			f.badRequest(w, "Invalid node state: "+s)
			return
		}
		want[s] = true
	}
	f.mu.Lock()
	var nodes []yarnclient.Node
	for _, n := range f.nodes {
		if len(want) == 0 || want[n.State] {
			nodes = append(nodes, *n)
		}
	}
	f.mu.Unlock()
	if len(nodes) == 0 {
		f.writeJSON(w, http.StatusOK, map[string]any{"nodes": nil})
		return
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"nodes": map[string]any{"node": nodes}})
}
