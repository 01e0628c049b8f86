package yarntest

import (
	"encoding/json"
	"net/http"
	"strings"
)

// writeJSON writes v; for Hadoop 2 the 3.x-only keys are removed first.
func (f *FakeRM) writeJSON(w http.ResponseWriter, status int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		f.t.Errorf("yarntest: encode answer: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	if f.opts.hadoop2 {
		var tree any
		if err := json.Unmarshal(b, &tree); err == nil {
			stripKeys(tree, hadoop3Only)
			b, _ = json.Marshal(tree)
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	w.Write(b)
}

// hadoop3Only are the keys a 2.7 RM does not send.
var hadoop3Only = map[string]bool{
	"haZooKeeperConnectionState": true, "rmStateStoreName": true,
	"decommissioningNodes": true, "shutdownNodes": true, "pendingMB": true, "pendingVirtualCores": true,
	"totalUsedResourcesAcrossPartition": true, "totalClusterResourcesAcrossPartition": true,
	"totalReservedResourcesAcrossPartition": true, "totalAllocatedContainersAcrossPartition": true,
	"crossPartitionMetricsAvailable": true,
	"version":                        true, "resourceUtilization": true, "totalResource": true,
	"priority": true, "logAggregationStatus": true, "queueUsagePercentage": true, "clusterUsagePercentage": true,
	"preemptedResourceMB": true, "preemptedResourceVCores": true, "numNonAMContainerPreempted": true,
	"numAMContainerPreempted": true, "unmanagedApplication": true, "appNodeLabelExpression": true,
	"amNodeLabelExpression": true, "amRPCAddress": true, "launchTime": true, "applicationPriority": true,
	"reservedMB": true, "reservedVCores": true,
	"appAttemptState": true, "appAttemptId": true,
	"executionType": true, "containerLogFiles": true, "resourceRequests": true,
}

func stripKeys(v any, keys map[string]bool) {
	switch t := v.(type) {
	case map[string]any:
		for k, c := range t {
			if keys[k] {
				delete(t, k)
				continue
			}
			stripKeys(c, keys)
		}
	case []any:
		for _, c := range t {
			stripKeys(c, keys)
		}
	}
}

// remoteException writes YARN's error body.
func (f *FakeRM) remoteException(w http.ResponseWriter, status int, exception, javaClass, message string) {
	f.writeJSON(w, status, map[string]any{"RemoteException": map[string]string{
		"exception": exception, "message": message, "javaClassName": javaClass,
	}})
}

func (f *FakeRM) notFound(w http.ResponseWriter, msg string) {
	f.remoteException(w, http.StatusNotFound, "NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException", "java.lang.Exception: "+msg)
}

func (f *FakeRM) badRequest(w http.ResponseWriter, msg string) {
	f.remoteException(w, http.StatusBadRequest, "BadRequestException", "org.apache.hadoop.yarn.webapp.BadRequestException", "java.lang.Exception: "+msg)
}

// noResource is Jersey's answer for a path no resource matches.
func (f *FakeRM) noResource(w http.ResponseWriter, r *http.Request) {
	f.remoteException(w, http.StatusNotFound, "NotFoundException", "com.sun.jersey.api.NotFoundException",
		"null for uri: "+f.URL()+r.URL.RequestURI())
}

// lookup finds the app of the {id} path value, answering 400/404 itself.
func (f *FakeRM) lookup(w http.ResponseWriter, r *http.Request) *fakeApp {
	id := r.PathValue("id")
	if !strings.HasPrefix(id, "application_") || strings.Count(id, "_") != 2 {
		f.badRequest(w, "Invalid ApplicationId: "+id)
		return nil
	}
	a, ok := f.apps[id]
	if !ok {
		f.notFound(w, "app with id: "+id+" not found")
		return nil
	}
	return a
}

// user returns the caller's user.name, answering 401 itself when the fake
// requires one and there is none.
func (f *FakeRM) user(w http.ResponseWriter, r *http.Request) (string, bool) {
	u := r.URL.Query().Get("user.name")
	if u == "" && f.opts.requireUser {
		f.remoteException(w, http.StatusUnauthorized, "AuthorizationException",
			"org.apache.hadoop.security.authorize.AuthorizationException",
			"Unable to obtain user name, user not authenticated")
		return "", false
	}
	if u == "" {
		u = "dr.who"
	}
	return u, true
}

func splitComma(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
