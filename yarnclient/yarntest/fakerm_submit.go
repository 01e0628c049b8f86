package yarntest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/colocd/colocd/yarnclient"
)

// Submissions returns the accepted submissions that created an app, in
// order (a duplicate submission is not among them; see SubmitCalls).
func (f *FakeRM) Submissions() []yarnclient.SubmissionContext {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.SubmissionContext, len(f.submissions))
	for i, s := range f.submissions {
		out[i] = s.Clone()
	}
	return out
}

// SubmitCalls counts every POST /ws/v1/cluster/apps that reached the
// submission handler, accepted, duplicate or rejected.
func (f *FakeRM) SubmitCalls() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.submitCalls
}

func (f *FakeRM) allocID() string {
	id := yarnclient.FormatAppID(f.opts.clusterTS, f.nextSeq)
	f.nextSeq++
	return id
}

func (f *FakeRM) handleNewApp(w http.ResponseWriter, r *http.Request) {
	if _, ok := f.user(w, r); !ok {
		return
	}
	f.mu.Lock()
	id := f.allocID()
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{
		"application-id":              id,
		"maximum-resource-capability": map[string]int64{"memory": f.opts.maxMemory, "vCores": f.opts.maxVCores},
	})
}

func (f *FakeRM) handleSubmit(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	f.submitCalls++
	f.mu.Unlock()
	user, ok := f.user(w, r)
	if !ok {
		return
	}
	var sub yarnclient.SubmissionContext
	if err := json.NewDecoder(r.Body).Decode(&sub); err != nil {
		f.remoteException(w, http.StatusBadRequest, "WebApplicationException", "javax.ws.rs.WebApplicationException", "javax.xml.bind.UnmarshalException: "+err.Error())
		return
	}
	if !strings.HasPrefix(sub.ApplicationID, "application_") || strings.Count(sub.ApplicationID, "_") != 2 {
		f.badRequest(w, "Invalid ApplicationId: "+sub.ApplicationID)
		return
	}
	if sub.Resource != nil && (sub.Resource.Memory > f.opts.maxMemory || sub.Resource.VCores > f.opts.maxVCores) {
		f.badRequest(w, fmt.Sprintf("Invalid resource request, requested resource type=[memory-mb] < 0 or greater than maximum allowed allocation. Requested resource=<memory:%d, vCores:%d>, maximum allowed allocation=<memory:%d, vCores:%d>",
			sub.Resource.Memory, sub.Resource.VCores, f.opts.maxMemory, f.opts.maxVCores))
		return
	}
	creds, ok := f.decodeCredentials(w, sub)
	if !ok {
		return
	}
	f.mu.Lock()
	if _, dup := f.apps[sub.ApplicationID]; dup {
		f.mu.Unlock()
		if !f.opts.acceptResubmission {
			f.badRequest(w, "Application with id "+sub.ApplicationID+" is already present! Cannot add a duplicate!")
			return
		}
		// ClientRMService: "This is an earlier submitted application" — no-op.
		w.Header().Set("Location", f.URL()+yarnclient.PathApp(sub.ApplicationID))
		w.WriteHeader(http.StatusAccepted)
		return
	}
	f.submissions = append(f.submissions, sub.Clone())
	f.credentials[sub.ApplicationID] = creds
	a := f.newApp(sub, user)
	f.apps[sub.ApplicationID] = a
	f.appOrder = append(f.appOrder, sub.ApplicationID)
	f.submitted++
	f.submittedAt[sub.ApplicationID] = a.app.StartedTime
	f.publishLocked(a)
	if f.opts.autoStart {
		_ = f.startLocked(sub.ApplicationID)
	}
	f.mu.Unlock()
	if f.opts.onSubmit != nil {
		f.opts.onSubmit(sub.Clone())
	}
	w.Header().Set("Location", f.URL()+yarnclient.PathApp(sub.ApplicationID))
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusAccepted)
}

// newApp is the application the RM makes of a submission by user, with
// the RM's defaults for what it leaves out (ClientRMService,
// RMAppManager): name "N/A", queue "default", type "YARN", 1024 MB and 1
// vcore. Called with f.mu held.
func (f *FakeRM) newApp(sub yarnclient.SubmissionContext, user string) *fakeApp {
	name, queue, typ := sub.ApplicationName, sub.Queue, sub.ApplicationType
	if name == "" {
		name = "N/A"
	}
	if queue == "" {
		queue = "default"
	}
	if typ == "" {
		typ = "YARN"
	}
	res := yarnclient.ResourceInfo{Memory: 1024, VCores: 1}
	if sub.Resource != nil && sub.Resource.Memory > 0 {
		res.Memory = sub.Resource.Memory
	}
	if sub.Resource != nil && sub.Resource.VCores > 0 {
		res.VCores = sub.Resource.VCores
	}
	return &fakeApp{resource: res, app: yarnclient.App{
		ID: sub.ApplicationID, User: user, Name: name, Queue: queue, State: "ACCEPTED", FinalStatus: "UNDEFINED",
		TrackingUI: "UNASSIGNED", ClusterID: f.opts.clusterTS, ApplicationType: typ,
		ApplicationTags: normTags(sub.ApplicationTags), Priority: sub.Priority,
		StartedTime: f.now().UnixMilli(), UnmanagedApplication: sub.UnmanagedAM,
		LogAggregationStatus: "DISABLED", AppNodeLabelExpression: sub.AppNodeLabelExpression,
		AMNodeLabelExpression: sub.AMContainerNodeLabelExpression,
	}}
}
