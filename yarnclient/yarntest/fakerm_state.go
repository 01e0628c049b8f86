package yarntest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/colocd/colocd/yarnclient"
)

// StartApp moves an ACCEPTED app to RUNNING: attempt 1 starts and its AM
// container is placed on the first RUNNING node with room (on none when no
// node has room; the app still runs).
func (f *FakeRM) StartApp(id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.startLocked(id)
}

func (f *FakeRM) startLocked(id string) error {
	a, ok := f.apps[id]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", id)
	}
	switch a.app.State {
	case "NEW", "NEW_SAVING", "SUBMITTED", "ACCEPTED":
	default:
		return fmt.Errorf("yarntest: app %s is %s, not ACCEPTED", id, a.app.State)
	}
	now := f.now().UnixMilli()
	a.app.State = "RUNNING"
	a.app.LaunchTime = now
	a.app.TrackingUI = "ApplicationMaster"
	attempt := yarnclient.AppAttempt{ID: len(a.attempts) + 1, StartTime: now, AppAttemptState: "RUNNING"}
	for _, n := range f.nodes {
		if n.State == "RUNNING" && n.AvailMemoryMB >= a.resource.Memory && n.AvailableVirtualCores >= a.resource.VCores {
			c := f.placeLocked(a, n, 0, now)
			attempt.NodeID = n.ID
			attempt.NodeHTTPAddress = n.NodeHTTPAddress
			attempt.ContainerID = c.ContainerID
			attempt.LogsLink = "http://" + n.NodeHTTPAddress + "/node/containerlogs/" + c.ContainerID + "/" + a.app.User
			a.app.AMHostHTTPAddress = n.NodeHTTPAddress
			a.app.AMContainerLogs = attempt.LogsLink
			break
		}
	}
	a.attempts = append(a.attempts, attempt)
	f.publishLocked(a)
	return nil
}

// FinishApp ends an app with finalStatus: SUCCEEDED leaves it FINISHED,
// FAILED makes it FAILED and KILLED makes it KILLED. Its containers are
// released.
func (f *FakeRM) FinishApp(id, finalStatus string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[id]
	if !ok {
		return fmt.Errorf("yarntest: no app %q", id)
	}
	if yarnclient.TerminalState(a.app.State) {
		return fmt.Errorf("yarntest: app %s already %s", id, a.app.State)
	}
	state := map[string]string{"SUCCEEDED": "FINISHED", "FAILED": "FAILED", "KILLED": "KILLED"}[strings.ToUpper(finalStatus)]
	if state == "" {
		return fmt.Errorf("yarntest: final status %q is not SUCCEEDED, FAILED or KILLED", finalStatus)
	}
	f.endLocked(a, state, strings.ToUpper(finalStatus))
	return nil
}

func (f *FakeRM) endLocked(a *fakeApp, state, final string) {
	now := f.now().UnixMilli()
	a.app.State, a.app.FinalStatus = state, final
	a.app.FinishedTime = now
	a.app.Progress = 100
	a.app.TrackingUI = "History"
	f.releaseLocked(a)
	f.countEndLocked(state)
	f.completedOrder = append(f.completedOrder, a.app.ID)
	f.publishLocked(a)
	f.evictLocked()
}

func (f *FakeRM) handleGetState(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	state := a.app.State
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]string{"state": state})
}

func (f *FakeRM) handlePutState(w http.ResponseWriter, r *http.Request) {
	user, ok := f.user(w, r)
	if !ok {
		return
	}
	var body struct {
		State string `json:"state"`
	}
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		f.remoteException(w, http.StatusBadRequest, "WebApplicationException", "javax.ws.rs.WebApplicationException", "javax.xml.bind.UnmarshalException: "+err.Error())
		return
	}
	if !strings.EqualFold(body.State, "KILLED") {
		f.badRequest(w, "Only 'KILLED' is allowed as a target state.")
		return
	}
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	if !f.mayKill(user, a) {
		f.mu.Unlock()
		// RMWebServices.killApp: the AccessControlException as text.
		w.Header().Set("Content-Type", "text/plain")
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte("Unauthorized attempt to kill appid " + a.app.ID + " by remote user " + user))
		return
	}
	a.killPuts++
	prev := a.app.State
	if yarnclient.TerminalState(prev) {
		f.mu.Unlock()
		f.writeJSON(w, http.StatusOK, map[string]string{"state": prev})
		return
	}
	f.endLocked(a, "KILLED", "KILLED")
	a.app.Diagnostics = "Application killed by user."
	f.mu.Unlock()
	// The first PUT is answered 202 with the state before the kill, as in the
	// documented exchange; repeating it gets 200 KILLED.
	w.Header().Set("Location", f.URL()+yarnclient.PathApp(a.app.ID))
	f.writeJSON(w, http.StatusAccepted, map[string]string{"state": prev})
}
