package yarntest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/colocd/colocd/yarnclient"
)

// FakeTimeline is a Timeline Server's generic application history
// (GET /ws/v1/applicationhistory/apps/{appid}, TimelineServer.md) on
// httptest (127.0.0.1). A FakeRM publishes to it (FakeRM.PublishTo) as an
// RM with yarn.system-metrics-publisher.enabled does: an application is
// recorded when it is submitted and updated when it starts and ends, and
// stays after the RM forgets it. Safe for concurrent use.
type FakeTimeline struct {
	t   testing.TB
	srv *httptest.Server

	mu       sync.Mutex
	apps     map[string]yarnclient.HistoryApp
	down     bool
	requests int
}

// NewFakeTimeline starts a fake Timeline Server; it is closed by t.Cleanup.
func NewFakeTimeline(t testing.TB) *FakeTimeline {
	t.Helper()
	tl := &FakeTimeline{t: t, apps: map[string]yarnclient.HistoryApp{}}
	m := http.NewServeMux()
	m.HandleFunc("GET /ws/v1/applicationhistory/apps/{id}", tl.handleApp)
	m.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		tl.remoteException(w, http.StatusNotFound, "NotFoundException", "com.sun.jersey.api.NotFoundException",
			"null for uri: "+tl.srv.URL+r.URL.RequestURI())
	})
	tl.srv = httptest.NewServer(m)
	t.Cleanup(tl.srv.Close)
	return tl
}

// URL is the fake's base URL.
func (tl *FakeTimeline) URL() string { return tl.srv.URL }

// SetDown makes every request fail with 503, as a history service that is
// down behind a proxy would.
func (tl *FakeTimeline) SetDown(down bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.down = down
}

// Requests counts the requests received.
func (tl *FakeTimeline) Requests() int {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	return tl.requests
}

// Record stores (or replaces) what the history service knows of an app.
func (tl *FakeTimeline) Record(a yarnclient.HistoryApp) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	tl.apps[a.AppID] = a
}

// App returns the record of id.
func (tl *FakeTimeline) App(id string) (yarnclient.HistoryApp, bool) {
	tl.mu.Lock()
	defer tl.mu.Unlock()
	a, ok := tl.apps[id]
	return a, ok
}

// publish records an RM app as the history service would show it.
func (tl *FakeTimeline) publish(a yarnclient.App, submitted int64) {
	h := yarnclient.HistoryApp{
		AppID: a.ID, User: a.User, Name: a.Name, Queue: a.Queue, Type: a.ApplicationType,
		AppState: a.State, FinalAppStatus: a.FinalStatus, DiagnosticsInfo: a.Diagnostics,
		TrackingURL: a.TrackingURL, ApplicationTags: a.ApplicationTags,
	}
	h.Progress, h.SubmittedTime, h.StartedTime, h.FinishedTime = a.Progress, submitted, a.StartedTime, a.FinishedTime
	if a.FinishedTime > 0 {
		h.ElapsedTime = a.FinishedTime - a.StartedTime
	}
	tl.Record(h)
}

func (tl *FakeTimeline) handleApp(w http.ResponseWriter, r *http.Request) {
	tl.mu.Lock()
	tl.requests++
	down := tl.down
	a, ok := tl.apps[r.PathValue("id")]
	tl.mu.Unlock()
	if down {
		http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
		return
	}
	if !ok {
		// AHSWebServices (WebServices.getApp): an application the store does not hold.
		tl.remoteException(w, http.StatusNotFound, "NotFoundException", "org.apache.hadoop.yarn.webapp.NotFoundException",
			"java.lang.Exception: app with id: "+r.PathValue("id")+" not found")
		return
	}
	b, err := json.Marshal(a)
	if err != nil {
		tl.t.Errorf("yarntest: encode history app: %v", err)
		w.WriteHeader(http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Write(b)
}

func (tl *FakeTimeline) remoteException(w http.ResponseWriter, status int, exception, javaClass, message string) {
	b, _ := json.Marshal(map[string]any{"RemoteException": map[string]string{
		"exception": exception, "message": message, "javaClassName": javaClass,
	}})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(b)
}
