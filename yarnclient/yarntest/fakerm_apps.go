package yarntest

import (
	"net/http"
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

func (f *FakeRM) handleApps(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	states := map[string]bool{}
	for _, s := range splitComma(q.Get("states") + "," + q.Get("state")) {
		s = strings.ToUpper(s)
		if !appStates[s] {
			f.badRequest(w, "Invalid application-state "+s+" specified. It should be one of NEW, NEW_SAVING, SUBMITTED, ACCEPTED, RUNNING, FINISHED, FAILED, KILLED")
			return
		}
		states[s] = true
	}
	types := map[string]bool{}
	for _, s := range splitComma(q.Get("applicationTypes")) {
		types[strings.ToUpper(s)] = true
	}
	tags := map[string]bool{}
	for _, s := range splitComma(q.Get("applicationTags")) {
		tags[strings.ToLower(s)] = true
	}
	var times [4]int64
	for i, k := range []string{"startedTimeBegin", "startedTimeEnd", "finishedTimeBegin", "finishedTimeEnd"} {
		if v := q.Get(k); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				f.badRequest(w, k+" must be greater than 0")
				return
			}
			times[i] = n
		}
	}
	limit := 0
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			f.badRequest(w, "limit value must be greater then 0")
			return
		}
		limit = n
	}
	f.mu.Lock()
	var out []yarnclient.App
	for _, id := range f.appOrder {
		a := f.appView(f.apps[id])
		switch {
		case len(states) > 0 && !states[a.State],
			q.Get("finalStatus") != "" && !strings.EqualFold(q.Get("finalStatus"), a.FinalStatus),
			q.Get("user") != "" && q.Get("user") != a.User,
			q.Get("queue") != "" && (q.Get("queue") != a.Queue || (!f.opts.hadoop2 && yarnclient.TerminalState(a.State))),
			q.Get("name") != "" && q.Get("name") != a.Name,
			len(types) > 0 && !types[strings.ToUpper(a.ApplicationType)],
			len(tags) > 0 && !anyTag(a.Tags(), tags),
			times[0] > 0 && a.StartedTime < times[0],
			times[1] > 0 && a.StartedTime > times[1],
			times[2] > 0 && a.FinishedTime < times[2],
			times[3] > 0 && (a.FinishedTime == 0 || a.FinishedTime > times[3]):
			continue
		}
		out = append(out, a)
		if limit > 0 && len(out) == limit {
			break
		}
	}
	f.mu.Unlock()
	if len(out) == 0 {
		f.writeJSON(w, http.StatusOK, map[string]any{"apps": nil})
		return
	}
	f.writeJSON(w, http.StatusOK, map[string]any{"apps": map[string]any{"app": out}})
}

func anyTag(have []string, want map[string]bool) bool {
	for _, t := range have {
		if want[t] {
			return true
		}
	}
	return false
}

func (f *FakeRM) handleApp(w http.ResponseWriter, r *http.Request) {
	f.mu.Lock()
	a := f.lookup(w, r)
	if a == nil {
		f.mu.Unlock()
		return
	}
	app := f.appView(a)
	f.mu.Unlock()
	f.writeJSON(w, http.StatusOK, map[string]any{"app": app})
}
