package yarntest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/colocd/colocd/yarnclient"
)

// PlaceContainers adds one running container of the app's container size on
// each listed node (repeat an id for several). The app must be RUNNING.
func (f *FakeRM) PlaceContainers(appID string, nodeIDs ...string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[appID]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", appID)
	}
	if a.app.State != "RUNNING" || len(a.attempts) == 0 {
		return fmt.Errorf("yarntest: app %s is %s; start it first", appID, a.app.State)
	}
	now := f.now().UnixMilli()
	for _, id := range nodeIDs {
		n := f.node(id)
		if n == nil {
			return fmt.Errorf("yarntest: no node %q", id)
		}
		f.placeLocked(a, n, 20, now)
	}
	return nil
}

func (f *FakeRM) placeLocked(a *fakeApp, n *yarnclient.Node, priority int, now int64) yarnclient.Container {
	a.nextCID++
	ts, seq := splitAppID(a.app.ID)
	cid := fmt.Sprintf("container_%d_%04d_%02d_%06d", ts, seq, len(a.attempts)+boolInt(priority != 0), a.nextCID)
	c := yarnclient.Container{
		ContainerID: cid, AllocatedMB: a.resource.Memory, AllocatedVCores: a.resource.VCores,
		AssignedNodeID: n.ID, Priority: priority, StartedTime: now,
		LogURL:          "http://" + n.NodeHTTPAddress + "/node/containerlogs/" + cid + "/" + a.app.User,
		ContainerState:  "RUNNING",
		NodeHTTPAddress: "http://" + n.NodeHTTPAddress, NodeID: n.ID,
		AllocatedResources: []yarnclient.ResourceEntry{{Key: "memory-mb", Value: a.resource.Memory}, {Key: "vcores", Value: a.resource.VCores}},
	}
	a.containers = append(a.containers, c)
	n.NumContainers++
	n.UsedMemoryMB += a.resource.Memory
	n.AvailMemoryMB -= a.resource.Memory
	n.UsedVirtualCores += a.resource.VCores
	n.AvailableVirtualCores -= a.resource.VCores
	return c
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (f *FakeRM) releaseLocked(a *fakeApp) {
	for _, c := range a.containers {
		if n := f.node(c.NodeID); n != nil {
			n.NumContainers--
			n.UsedMemoryMB -= c.AllocatedMB
			n.AvailMemoryMB += c.AllocatedMB
			n.UsedVirtualCores -= c.AllocatedVCores
			n.AvailableVirtualCores += c.AllocatedVCores
		}
	}
	a.containers = nil
	for i := range a.attempts {
		if a.attempts[i].AppAttemptState == "RUNNING" {
			a.attempts[i].AppAttemptState = "FINISHED"
		}
	}
}

// NodeContainers returns what the NodeManager of nodeID would list at
// /ws/v1/node/containers: the running containers placed there. Feed it to a
// FakeNM for the Hadoop 2 placement fallback.
func (f *FakeRM) NodeContainers(nodeID string) []yarnclient.NMContainer {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []yarnclient.NMContainer
	for _, id := range f.appOrder {
		a := f.apps[id]
		for _, c := range a.containers {
			if c.NodeID != nodeID {
				continue
			}
			out = append(out, yarnclient.NMContainer{
				ID: c.ContainerID, State: "RUNNING", ExitCode: -1000, User: a.app.User,
				TotalMemoryNeededMB: c.AllocatedMB, TotalVCoresNeeded: c.AllocatedVCores,
				ContainerLogsLink: c.LogURL, NodeID: c.NodeID,
			})
		}
	}
	return out
}

func (f *FakeRM) handleAttempts(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	attempts := append([]yarnclient.AppAttempt(nil), a.attempts...)
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"appAttempts": map[string]any{"appAttempt": attempts}})
}

// handleContainers serves the 3.x attempt-containers endpoint in the
// documented shape, numbers as strings.
func (f *FakeRM) handleContainers(w http.ResponseWriter, r *http.Request) {
	if f.opts.hadoop2 {
		f.noResource(w, r)
		return
	}
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	attemptID := r.PathValue("attempt")
	var cs []yarnclient.Container
	found := false
	for _, at := range a.attempts {
		if id, _ := yarnclient.AttemptID(a.app.ID, at.ID); id == attemptID {
			found = true
			if at.ID == len(a.attempts) {
				cs = append(cs, a.containers...)
			}
		}
	}
	f.mu.Unlock()
	if !found {
		f.notFound(w, "appattempt with id: "+attemptID+" not found")
		return
	}
	list := make([]any, 0, len(cs))
	for _, c := range cs {
		list = append(list, quoteNumbers(c))
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"containers": map[string]any{"container": list}})
}

// quoteNumbers re-encodes v with every number as a string, like Jersey's
// mapped notation.
func quoteNumbers(v any) any {
	b, _ := json.Marshal(v)
	dec := json.NewDecoder(strings.NewReader(string(b)))
	dec.UseNumber()
	var tree any
	_ = dec.Decode(&tree)
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			for k, c := range t {
				t[k] = walk(c)
			}
		case []any:
			for i, c := range t {
				t[i] = walk(c)
			}
		case json.Number:
			return t.String()
		}
		return x
	}
	return walk(tree)
}

func splitAppID(id string) (int64, int) {
	rest := strings.TrimPrefix(id, "application_")
	a, b, _ := strings.Cut(rest, "_")
	ts, _ := strconv.ParseInt(a, 10, 64)
	seq, _ := strconv.Atoi(b)
	return ts, seq
}
