package yarntest

import (
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"

	"github.com/colocd/colocd/yarnclient"
)

// AddApp seeds an application that was not submitted through the API (an
// app of another tenant, or one from before a restart). ID is allocated when
// empty; empty State is RUNNING. Tags are lower-cased like YARN does.
func (f *FakeRM) AddApp(a yarnclient.App) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a.ID == "" {
		a.ID = f.allocID()
	}
	if a.State == "" {
		a.State = "RUNNING"
	}
	if a.FinalStatus == "" {
		a.FinalStatus = "UNDEFINED"
	}
	if a.ClusterID == 0 {
		a.ClusterID = f.opts.clusterTS
	}
	if a.StartedTime == 0 {
		a.StartedTime = f.now().UnixMilli()
	}
	a.ApplicationTags = normTags(splitComma(a.ApplicationTags))
	if _, ok := f.apps[a.ID]; !ok {
		f.appOrder = append(f.appOrder, a.ID)
		f.submitted++
		if yarnclient.TerminalState(a.State) {
			f.countEndLocked(a.State)
			f.completedOrder = append(f.completedOrder, a.ID)
		}
	}
	f.apps[a.ID] = &fakeApp{app: a, resource: yarnclient.ResourceInfo{Memory: 1024, VCores: 1}}
	f.publishLocked(f.apps[a.ID])
	f.evictLocked()
	return a.ID
}

// PublishTo makes the RM send its applications to a Timeline Server, as
// yarn.system-metrics-publisher.enabled does: at submission, start and end.
func (f *FakeRM) PublishTo(tl *FakeTimeline) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.timeline = tl
}

func (f *FakeRM) countEndLocked(state string) {
	switch state {
	case "FAILED":
		f.failed++
	case "KILLED":
		f.killed++
	default:
		f.completed++
	}
}

// evictLocked forgets the oldest completed applications beyond the limit.
func (f *FakeRM) evictLocked() {
	for len(f.completedOrder) > f.opts.maxCompleted {
		id := f.completedOrder[0]
		f.completedOrder = f.completedOrder[1:]
		delete(f.apps, id)
		for i, x := range f.appOrder {
			if x == id {
				f.appOrder = append(f.appOrder[:i], f.appOrder[i+1:]...)
				break
			}
		}
	}
}

func (f *FakeRM) publishLocked(a *fakeApp) {
	if f.timeline == nil {
		return
	}
	sub := f.submittedAt[a.app.ID]
	if sub == 0 {
		sub = a.app.StartedTime
	}
	f.timeline.publish(f.appView(a), sub)
}

// App returns the app as the RM would serve it.
func (f *FakeRM) App(id string) (yarnclient.App, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a, ok := f.apps[id]
	if !ok {
		return yarnclient.App{}, false
	}
	return f.appView(a), true
}

// Apps returns every app, in submission order.
func (f *FakeRM) Apps() []yarnclient.App {
	f.mu.Lock()
	defer f.mu.Unlock()
	out := make([]yarnclient.App, 0, len(f.appOrder))
	for _, id := range f.appOrder {
		out = append(out, f.appView(f.apps[id]))
	}
	return out
}

// appView is the app as served: running totals filled in.
func (f *FakeRM) appView(a *fakeApp) yarnclient.App {
	app := a.app
	app.RunningContainers = len(a.containers)
	app.AllocatedMB, app.AllocatedVCores = 0, 0
	for _, c := range a.containers {
		app.AllocatedMB += c.AllocatedMB
		app.AllocatedVCores += c.AllocatedVCores
	}
	if yarnclient.TerminalState(app.State) {
		app.ElapsedTime = app.FinishedTime - app.StartedTime
	} else if app.StartedTime > 0 {
		now := f.clock
		if f.opts.now != nil {
			now = f.opts.now().UnixMilli()
		}
		app.ElapsedTime = now - app.StartedTime
		if app.ElapsedTime < 0 {
			app.ElapsedTime = 0
		}
	}
	return app
}

// normTags lower-cases, de-duplicates and sorts tags, joined with commas.
func normTags(tags []string) string {
	seen := map[string]bool{}
	var out []string
	for _, t := range tags {
		t = strings.ToLower(strings.TrimSpace(t))
		if t != "" && !seen[t] {
			seen[t] = true
			out = append(out, t)
		}
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

var appStates = map[string]bool{"NEW": true, "NEW_SAVING": true, "SUBMITTED": true, "ACCEPTED": true,
	"RUNNING": true, "FINISHED": true, "FAILED": true, "KILLED": true}

// appsQuery is GET /ws/v1/cluster/apps's filter, as RMWebServices.getApps
// reads it: the set-valued parameters (states, applicationTypes,
// applicationTags, deSelects) may repeat and each value may list several,
// comma-separated; the deprecated state joins states; a parameter the RM
// does not know is ignored, as Jersey does.
type appsQuery struct {
	states, types, tags map[string]bool
	finalStatus, user   string
	queue, name         string
	times               [4]int64 // startedTimeBegin, startedTimeEnd, finishedTimeBegin, finishedTimeEnd
	limit               int
}

// parseAppsQuery reads q; a value the RM refuses is an error message for
// a 400.
func parseAppsQuery(q url.Values) (appsQuery, string) {
	aq := appsQuery{states: map[string]bool{}, types: map[string]bool{}, tags: map[string]bool{},
		finalStatus: q.Get("finalStatus"), user: q.Get("user"), queue: q.Get("queue"), name: q.Get("name")}
	for _, s := range splitAll(append(q["states"], q.Get("state"))) {
		s = strings.ToUpper(s)
		if !appStates[s] {
			return aq, "Invalid application-state " + s + " specified. It should be one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED"
		}
		aq.states[s] = true
	}
	for _, s := range splitAll(q["applicationTypes"]) {
		aq.types[strings.ToUpper(s)] = true
	}
	for _, s := range splitAll(q["applicationTags"]) {
		aq.tags[strings.ToLower(s)] = true
	}
	for i, k := range []string{"startedTimeBegin", "startedTimeEnd", "finishedTimeBegin", "finishedTimeEnd"} {
		if v := q.Get(k); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return aq, k + " must be greater than 0"
			}
			aq.times[i] = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			return aq, "limit value must be greater then 0"
		}
		aq.limit = n
	}
	return aq, ""
}

// matches reports whether app a passes the filter (hadoop2: a 2.7 RM,
// whose queue filter also lists finished applications).
func (aq appsQuery) matches(a yarnclient.App, hadoop2 bool) bool {
	switch {
	case len(aq.states) > 0 && !aq.states[a.State],
		aq.finalStatus != "" && !strings.EqualFold(aq.finalStatus, a.FinalStatus),
		aq.user != "" && aq.user != a.User,
		aq.queue != "" && (aq.queue != a.Queue || (!hadoop2 && yarnclient.TerminalState(a.State))),
		aq.name != "" && aq.name != a.Name,
		len(aq.types) > 0 && !aq.types[strings.ToUpper(a.ApplicationType)],
		len(aq.tags) > 0 && !anyTag(a.Tags(), aq.tags),
		aq.times[0] > 0 && a.StartedTime < aq.times[0],
		aq.times[1] > 0 && a.StartedTime > aq.times[1],
		aq.times[2] > 0 && a.FinishedTime < aq.times[2],
		aq.times[3] > 0 && (a.FinishedTime == 0 || a.FinishedTime > aq.times[3]):
		return false
	}
	return true
}

func (f *FakeRM) handleApps(w http.ResponseWriter, r *http.Request) {
	aq, bad := parseAppsQuery(r.URL.Query())
	if bad != "" {
		f.badRequest(w, bad)
		return
	}
	f.mu.Lock()
	var out []*fakeApp
	for _, id := range f.appOrder {
		a := f.apps[id]
		if !aq.matches(f.appView(a), f.opts.hadoop2) {
			continue
		}
		out = append(out, a)
		if aq.limit > 0 && len(out) == aq.limit {
			break
		}
	}
	if len(out) == 0 {
		f.mu.Unlock()
		f.writeJSON(w, http.StatusOK, map[string]any{"apps": nil})
		return
	}
	// RMWebServices reads deSelects for each app it returns: with none to
	// return, a bad value goes unnoticed.
	des, bad := f.deSelects(r.URL.Query())
	if bad != "" {
		f.mu.Unlock()
		f.badRequest(w, bad)
		return
	}
	list := make([]appJSON, 0, len(out))
	for _, a := range out {
		list = append(list, f.served(a, des))
	}
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"apps": map[string]any{"app": list}})
}

func anyTag(have []string, want map[string]bool) bool {
	for _, t := range have {
		if want[t] {
			return true
		}
	}
	return false
}

// splitAll splits every value at commas, dropping blanks.
func splitAll(vals []string) []string {
	var out []string
	for _, v := range vals {
		out = append(out, splitComma(v)...)
	}
	return out
}

func (f *FakeRM) handleApp(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	des, bad := f.deSelects(r.URL.Query())
	if bad != "" {
		f.mu.Unlock()
		f.badRequest(w, bad)
		return
	}
	app := f.served(a, des)
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"app": app})
}

// deSelectTypes are the values of deSelects (DeSelectFields.DeSelectType:
// resourceRequests from YARN-6280, the others from YARN-6871), in the
// order the RM lists them.
var deSelectTypes = []string{"resourceRequests", "timeouts", "appNodeLabelExpression", "amNodeLabelExpression", "resourceInfo"}

// deSelects reads the deSelects parameter as DeSelectFields.initFields
// does: every value, split at commas, blank parts skipped, each part
// matched case-insensitively as it is (untrimmed); an unknown part is an
// error message for a 400. A 2.7 RM has no such parameter and ignores it.
func (f *FakeRM) deSelects(q url.Values) (map[string]bool, string) {
	out := map[string]bool{}
	if f.opts.hadoop2 {
		return out, ""
	}
	for _, field := range q["deSelects"] {
		for _, lit := range strings.Split(field, ",") {
			if strings.TrimSpace(lit) == "" {
				continue
			}
			known := ""
			for _, t := range deSelectTypes {
				if strings.EqualFold(t, lit) {
					known = t
				}
			}
			if known == "" {
				return nil, "Invalid deSelects string " + strings.TrimSpace(lit) + " specified. It should be one of [" +
					strings.Join(deSelectTypes, ", ") + "]"
			}
			out[known] = true
		}
	}
	return out, ""
}

// appJSON is an application as GET .../apps serves it: the App, its
// current attempt's resource requests unless deselected (3.x), and the
// label expressions unless deselected.
type appJSON struct {
	yarnclient.App
	ResourceRequests       []resourceRequest `json:"resourceRequests,omitempty"`
	AppNodeLabelExpression *string           `json:"appNodeLabelExpression,omitempty"`
	AMNodeLabelExpression  *string           `json:"amNodeLabelExpression,omitempty"`
}

// resourceRequest is one element of an app's resourceRequests, in the
// documented shape (ResourceManagerRest.md, 3.x, the apps example).
type resourceRequest struct {
	Capability          requestCapability `json:"capability"`
	NodeLabelExpression string            `json:"nodeLabelExpression"`
	NumContainers       int               `json:"numContainers"`
	Priority            requestPriority   `json:"priority"`
	RelaxLocality       bool              `json:"relaxLocality"`
	ResourceName        string            `json:"resourceName"`
}

type requestCapability struct {
	Memory       int64 `json:"memory"`
	VirtualCores int64 `json:"virtualCores"`
}

type requestPriority struct {
	Priority int `json:"priority"`
}

// served is app a as served, without the fields in deselect.
func (f *FakeRM) served(a *fakeApp, deselect map[string]bool) appJSON {
	out := appJSON{App: f.appView(a)}
	if e := out.App.AppNodeLabelExpression; !deselect["appNodeLabelExpression"] {
		out.AppNodeLabelExpression = &e
	}
	if e := out.App.AMNodeLabelExpression; !deselect["amNodeLabelExpression"] {
		out.AMNodeLabelExpression = &e
	}
	if deselect["resourceRequests"] || f.opts.hadoop2 || yarnclient.TerminalState(a.app.State) {
		return out
	}
	// The AM's request: outstanding until the attempt has its container.
	am := resourceRequest{Capability: requestCapability{Memory: a.resource.Memory, VirtualCores: a.resource.VCores},
		NumContainers: 1, RelaxLocality: true, ResourceName: "*"}
	if len(a.attempts) > 0 {
		am.NumContainers = 0
	}
	out.ResourceRequests = append([]resourceRequest{am}, a.requests...)
	return out
}
