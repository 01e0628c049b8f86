package yarnclient

import (
	"context"
	"errors"
	"fmt"
	"strings"
)

// The Timeline Server's generic application history (TimelineServer.md,
// "Generic Data REST APIs"; AHSWebServices and the AppInfo DAO in
// hadoop-yarn-server-common). The RM forgets applications: completed ones
// beyond yarn.resourcemanager.max-completed-applications, and every one on a
// restart without recovery. The history service keeps what the RM's system
// metrics publisher sent it (yarn.system-metrics-publisher.enabled), from
// the submission on.

// pathHistoryApp is /ws/v1/applicationhistory/apps/{appid} on the Timeline
// Server.
func pathHistoryApp(appID string) string { return "/ws/v1/applicationhistory/apps/" + appID }

// HistoryApp is one application as the history service reports it: a bare
// AppInfo object (no wrapper, unlike the RM's {"app": ...}).
type HistoryApp struct {
	AppID               string  `json:"appId"`
	CurrentAppAttemptID string  `json:"currentAppAttemptId,omitempty"`
	User                string  `json:"user"`
	Name                string  `json:"name"`
	Queue               string  `json:"queue"`
	Type                string  `json:"type"`
	Host                string  `json:"host,omitempty"`
	RPCPort             int64   `json:"rpcPort"`
	AppState            string  `json:"appState"` // NEW … RUNNING, FINISHED, FAILED, KILLED
	Progress            float64 `json:"progress"`
	DiagnosticsInfo     string  `json:"diagnosticsInfo"`
	OriginalTrackingURL string  `json:"originalTrackingUrl,omitempty"`
	TrackingURL         string  `json:"trackingUrl,omitempty"`
	FinalAppStatus      string  `json:"finalAppStatus"` // UNDEFINED, SUCCEEDED, FAILED, KILLED
	SubmittedTime       int64   `json:"submittedTime"`
	StartedTime         int64   `json:"startedTime"`
	FinishedTime        int64   `json:"finishedTime"`
	ElapsedTime         int64   `json:"elapsedTime"`
	ApplicationTags     string  `json:"applicationTags,omitempty"` // comma-separated (2.8+)
}

// HistoryApp asks the Timeline Server about appID. It fails with
// errNoTimeline when the client has no TimelineURL, and with ErrNotFound
// when the history service has no record of the application (404).
func (c *Client) HistoryApp(ctx context.Context, appID string) (HistoryApp, error) {
	if c.timeline == nil {
		return HistoryApp{}, errNoTimeline
	}
	if err := checkAppID("appID", appID); err != nil {
		return HistoryApp{}, err
	}
	resp, err := c.urlCall(ctx, c.timeline, get(pathHistoryApp(appID), nil))
	if err != nil {
		return HistoryApp{}, err
	}
	return decodeWith(resp, decodeHistoryApp)
}

func decodeHistoryApp(b []byte) (HistoryApp, error) {
	// The numbers may come quoted (Jersey's mapped notation), as elsewhere.
	type plain HistoryApp
	var raw struct {
		plain
		RPCPort       flexInt   `json:"rpcPort"`
		Progress      flexFloat `json:"progress"`
		SubmittedTime flexInt   `json:"submittedTime"`
		StartedTime   flexInt   `json:"startedTime"`
		FinishedTime  flexInt   `json:"finishedTime"`
		ElapsedTime   flexInt   `json:"elapsedTime"`
	}
	if err := unmarshalObject(b, &raw); err != nil {
		return HistoryApp{}, err
	}
	a := HistoryApp(raw.plain)
	a.RPCPort, a.Progress = int64(raw.RPCPort), float64(raw.Progress)
	a.SubmittedTime, a.StartedTime = int64(raw.SubmittedTime), int64(raw.StartedTime)
	a.FinishedTime, a.ElapsedTime = int64(raw.FinishedTime), int64(raw.ElapsedTime)
	if a.AppID == "" {
		return HistoryApp{}, errors.New(`missing "appId"`)
	}
	if a.AppState == "" {
		return HistoryApp{}, fmt.Errorf(`application %s: missing "appState"`, a.AppID)
	}
	return a, nil
}

// Tags are the application's tags.
func (a HistoryApp) Tags() []string {
	var out []string
	for _, t := range strings.Split(a.ApplicationTags, ",") {
		if t = strings.TrimSpace(t); t != "" {
			out = append(out, t)
		}
	}
	return out
}

// AppIDClusterTimestamp is the clusterTimestamp part of an application id
// application_<clusterTimestamp>_<seq>: the start time (ms) of the RM
// process that issued it, which GET /ws/v1/cluster/info reports as its id.
func AppIDClusterTimestamp(appID string) (int64, bool) {
	ts, _, ok := parseAppID(appID)
	return ts, ok
}
