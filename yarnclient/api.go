package yarnclient

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"
)

// Paths of the endpoints used (ResourceManagerRest.md, NodeManagerRest.md).
const (
	PathClusterInfo    = "/ws/v1/cluster/info"
	PathClusterMetrics = "/ws/v1/cluster/metrics"
	PathNodes          = "/ws/v1/cluster/nodes"
	PathApps           = "/ws/v1/cluster/apps"
	PathNewApplication = "/ws/v1/cluster/apps/new-application"
	PathNMContainers   = "/ws/v1/node/containers"
)

// PathApp is /ws/v1/cluster/apps/{appid}.
func PathApp(appID string) string { return PathApps + "/" + appID }

// PathAppState is /ws/v1/cluster/apps/{appid}/state.
func PathAppState(appID string) string { return PathApp(appID) + "/state" }

// PathAppAttempts is /ws/v1/cluster/apps/{appid}/appattempts.
func PathAppAttempts(appID string) string { return PathApp(appID) + "/appattempts" }

// PathAttemptContainers is
// /ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}/containers (3.x).
func PathAttemptContainers(appID, attemptID string) string {
	return PathAppAttempts(appID) + "/" + attemptID + "/containers"
}

func get(path string, q url.Values) request {
	return request{method: http.MethodGet, path: path, query: q, idempotent: true, ok: status200}
}

// ClusterInfo returns GET /ws/v1/cluster/info. The RM answers this one even
// when it is standby (RMWebAppFilter does not redirect it), with haState
// STANDBY; with several RMs configured the client then asks the others and
// returns the active one's answer, or the standby's when none is active.
func (c *Client) ClusterInfo(ctx context.Context) (ClusterInfo, error) {
	r := get(PathClusterInfo, nil)
	resp, err := c.rmCall(ctx, r)
	if err != nil {
		return ClusterInfo{}, err
	}
	info, err := decodeWith(resp, decodeClusterInfo)
	if err != nil || !strings.EqualFold(info.HAState, "STANDBY") || len(c.rms) == 1 {
		return info, err
	}
	start := int(c.active.Load())
	for k := 1; k < len(c.rms); k++ {
		i := (start + k) % len(c.rms)
		resp, err := c.send(ctx, c.rms[i], r)
		if err != nil || resp.status != http.StatusOK {
			continue
		}
		other, err := decodeClusterInfo(resp.body)
		if err != nil || strings.EqualFold(other.HAState, "STANDBY") {
			continue
		}
		c.active.Store(int32(i))
		c.log.Info("active resource manager", "rm", c.rms[i].String())
		return other, nil
	}
	return info, nil
}

// ClusterMetrics returns GET /ws/v1/cluster/metrics.
func (c *Client) ClusterMetrics(ctx context.Context) (ClusterMetrics, error) {
	resp, err := c.rmCall(ctx, get(PathClusterMetrics, nil))
	if err != nil {
		return ClusterMetrics{}, err
	}
	return decodeWith(resp, decodeClusterMetrics)
}

// Nodes returns GET /ws/v1/cluster/nodes, restricted to the given states
// (NEW, RUNNING, UNHEALTHY, DECOMMISSIONING, DECOMMISSIONED, LOST, REBOOTED,
// SHUTDOWN; any case) when some are given. The states go to the RM as the
// 3.x "states" parameter and are also applied here, because 2.7 only knows a
// single "state".
func (c *Client) Nodes(ctx context.Context, states ...string) ([]Node, error) {
	var q url.Values
	want := map[string]bool{}
	for _, s := range states {
		if s = strings.ToUpper(strings.TrimSpace(s)); s != "" {
			want[s] = true
		}
	}
	if len(want) > 0 {
		q = url.Values{"states": {strings.Join(sortedKeys(want), ",")}}
	}
	resp, err := c.rmCall(ctx, get(PathNodes, q))
	if err != nil {
		return nil, err
	}
	nodes, err := decodeWith(resp, decodeNodes)
	if err != nil || len(want) == 0 {
		return nodes, err
	}
	out := nodes[:0]
	for _, n := range nodes {
		if want[strings.ToUpper(n.State)] {
			out = append(out, n)
		}
	}
	return out, nil
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// AppsFilter holds the documented query parameters of GET /ws/v1/cluster/apps.
// Zero fields are not sent.
type AppsFilter struct {
	States            []string // YarnApplicationState names, any case
	FinalStatus       string
	User              string
	Queue             string // 3.x: only unfinished apps currently in the queue
	Limit             int
	StartedTimeBegin  time.Time
	StartedTimeEnd    time.Time
	FinishedTimeBegin time.Time
	FinishedTimeEnd   time.Time
	ApplicationTypes  []string
	ApplicationTags   []string // any of; lower-cased, as YARN stores tags
	Name              string   // 3.x
}

// Values encodes f as query parameters. resourceRequests are always
// deselected, as App does not carry them: deSelects=resourceRequests
// (YARN-6280: Hadoop 2.9 and 3.x; an older RM ignores the parameter, as
// Jersey ignores every parameter a resource does not declare) spares the
// RM and the client the pending requests of every application, one per
// host and rack an application asked for.
func (f AppsFilter) Values() url.Values {
	q := url.Values{}
	join := func(key string, l []string, lower bool) {
		var parts []string
		for _, s := range l {
			s = strings.TrimSpace(s)
			if lower {
				s = strings.ToLower(s)
			}
			if s != "" {
				parts = append(parts, s)
			}
		}
		if len(parts) > 0 {
			q.Set(key, strings.Join(parts, ","))
		}
	}
	states := make([]string, len(f.States))
	for i, s := range f.States {
		states[i] = strings.ToUpper(s)
	}
	join("states", states, false)
	join("applicationTypes", f.ApplicationTypes, false)
	join("applicationTags", f.ApplicationTags, true)
	set := func(key, v string) {
		if v != "" {
			q.Set(key, v)
		}
	}
	set("finalStatus", f.FinalStatus)
	set("user", f.User)
	set("queue", f.Queue)
	set("name", f.Name)
	if f.Limit > 0 {
		q.Set("limit", strconv.Itoa(f.Limit))
	}
	ms := func(key string, t time.Time) {
		if !t.IsZero() {
			q.Set(key, strconv.FormatInt(t.UnixMilli(), 10))
		}
	}
	ms("startedTimeBegin", f.StartedTimeBegin)
	ms("startedTimeEnd", f.StartedTimeEnd)
	ms("finishedTimeBegin", f.FinishedTimeBegin)
	ms("finishedTimeEnd", f.FinishedTimeEnd)
	q.Set("deSelects", "resourceRequests")
	return q
}

// Apps returns GET /ws/v1/cluster/apps with the filter's parameters. YARN's
// {"apps":null} (nothing matched) is an empty result.
func (c *Client) Apps(ctx context.Context, f AppsFilter) ([]App, error) {
	resp, err := c.rmCall(ctx, get(PathApps, f.Values()))
	if err != nil {
		return nil, err
	}
	return decodeWith(resp, decodeApps)
}

// App returns GET /ws/v1/cluster/apps/{appid}; an id the RM does not know is
// a *RemoteError matching ErrNotFound. resourceRequests are deselected, as
// in Apps (an application waiting for containers lists its outstanding
// requests).
func (c *Client) App(ctx context.Context, appID string) (App, error) {
	if err := checkAppID("appID", appID); err != nil {
		return App{}, err
	}
	resp, err := c.rmCall(ctx, get(PathApp(appID), url.Values{"deSelects": {"resourceRequests"}}))
	if err != nil {
		return App{}, err
	}
	return decodeWith(resp, decodeApp)
}

// AppState returns GET /ws/v1/cluster/apps/{appid}/state: the
// YarnApplicationState.
func (c *Client) AppState(ctx context.Context, appID string) (string, error) {
	if err := checkAppID("appID", appID); err != nil {
		return "", err
	}
	resp, err := c.rmCall(ctx, get(PathAppState(appID), nil))
	if err != nil {
		return "", err
	}
	return decodeWith(resp, decodeAppState)
}

// AppAttempts returns GET /ws/v1/cluster/apps/{appid}/appattempts.
func (c *Client) AppAttempts(ctx context.Context, appID string) ([]AppAttempt, error) {
	if err := checkAppID("appID", appID); err != nil {
		return nil, err
	}
	resp, err := c.rmCall(ctx, get(PathAppAttempts(appID), nil))
	if err != nil {
		return nil, err
	}
	return decodeWith(resp, decodeAppAttempts)
}

// AttemptContainers returns the 3.x
// GET /ws/v1/cluster/apps/{appid}/appattempts/{appattemptid}/containers.
// attemptID is the full "appattempt_..." id (see AttemptID). Hadoop 2.7 has no
// such endpoint and answers 404 (ErrNotFound).
func (c *Client) AttemptContainers(ctx context.Context, appID, attemptID string) ([]Container, error) {
	if err := checkAppID("appID", appID); err != nil {
		return nil, err
	}
	if err := checkIDChars("attemptID", attemptID); err != nil {
		return nil, err
	}
	resp, err := c.rmCall(ctx, get(PathAttemptContainers(appID, attemptID), nil))
	if err != nil {
		return nil, err
	}
	return decodeWith(resp, decodeContainers)
}

// NodeContainers returns a NodeManager's GET /ws/v1/node/containers.
// nodeHTTPAddress is a node's nodeHTTPAddress ("host:8042", reached with the
// scheme of the first RM URL) or a full URL.
func (c *Client) NodeContainers(ctx context.Context, nodeHTTPAddress string) ([]NMContainer, error) {
	base, err := c.nmBase(nodeHTTPAddress)
	if err != nil {
		return nil, err
	}
	resp, err := c.urlCall(ctx, base, get(PathNMContainers, nil))
	if err != nil {
		return nil, err
	}
	return decodeWith(resp, decodeNMContainers)
}

func (c *Client) nmBase(addr string) (*url.URL, error) {
	addr = strings.TrimSpace(addr)
	if addr == "" {
		return nil, fmt.Errorf("%w: nodeHTTPAddress: empty", ErrInvalid)
	}
	if !strings.Contains(addr, "://") {
		addr = c.rms[0].Scheme + "://" + addr
	}
	u, err := parseRMURL(addr)
	if err != nil {
		return nil, fmt.Errorf("%w: nodeHTTPAddress: %v", ErrInvalid, err)
	}
	return u, nil
}

// NewApplication reserves an application id: POST
// /ws/v1/cluster/apps/new-application. Never retried: a retry would only
// waste an id, but it is a write. The RM does not tie the id to the user
// who asked for it: any user may submit under it.
func (c *Client) NewApplication(ctx context.Context, opts ...CallOption) (NewApplication, error) {
	o, err := applyCallOptions(opts)
	if err != nil {
		return NewApplication{}, err
	}
	resp, err := c.rmCall(ctx, request{method: http.MethodPost, path: PathNewApplication, ok: status200, as: o.as})
	if err != nil {
		return NewApplication{}, err
	}
	return decodeWith(resp, decodeNewApplication)
}

// SubmitApp submits sub (POST /ws/v1/cluster/apps) and returns the Location
// header of the 202 Accepted answer. It is sent at most once to an RM that
// accepted the connection, and never retried: after an error the caller must
// ask the RM (App) whether sub.ApplicationID exists before submitting again.
// (The RM itself treats a second submission of an id it knows as a no-op.)
// With As(user) the application is user's: its "user" in the RM's reports,
// the owner its ACLs and its containers run as.
func (c *Client) SubmitApp(ctx context.Context, sub SubmissionContext, opts ...CallOption) (string, error) {
	if err := checkAppID("ApplicationID", sub.ApplicationID); err != nil {
		return "", err
	}
	o, err := applyCallOptions(opts)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false) // pass "<LOG_DIR>" and friends through as written
	if err := enc.Encode(sub); err != nil {
		return "", fmt.Errorf("yarnclient: encode submission of %s: %w", sub.ApplicationID, err)
	}
	body := bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
	resp, err := c.rmCall(ctx, request{method: http.MethodPost, path: PathApps, body: body, ok: status2xx, as: o.as})
	if err != nil {
		return "", err
	}
	loc := resp.header.Get("Location")
	c.log.Info("submitted application", "app", sub.ApplicationID, "queue", sub.Queue, "location", loc, "as", o.as)
	return loc, nil
}

// KillApp asks the RM to kill an application: PUT
// /ws/v1/cluster/apps/{appid}/state with {"state":"KILLED"}. Both the 202
// (kill under way) and the 200 (done, or already final) answers are success.
// Never retried. The RM lets the application's owner kill it, and users
// its MODIFY_APP ACL, yarn.admin.acl or its queue's administrators name
// (with yarn.acl.enable); As(owner) kills as the owner.
func (c *Client) KillApp(ctx context.Context, appID string, opts ...CallOption) error {
	if err := checkAppID("appID", appID); err != nil {
		return err
	}
	o, err := applyCallOptions(opts)
	if err != nil {
		return err
	}
	_, err = c.rmCall(ctx, request{
		method: http.MethodPut, path: PathAppState(appID),
		body: []byte(`{"state":"KILLED"}`), ok: status2xx, as: o.as,
	})
	return err
}

// FindAppByTag returns the application carrying tag (GET
// /ws/v1/cluster/apps?applicationTags=tag), the most recently started one if
// several do. Apps are checked for the tag here too, so an RM that ignores the
// parameter cannot return a stranger. found is false when none carries it.
func (c *Client) FindAppByTag(ctx context.Context, tag string) (app App, found bool, err error) {
	apps, err := c.AppsByTag(ctx, tag)
	if err != nil {
		return App{}, false, err
	}
	for _, a := range apps {
		if !found || a.StartedTime > app.StartedTime || (a.StartedTime == app.StartedTime && a.ID > app.ID) {
			app, found = a, true
		}
	}
	return app, found, nil
}

// AppsByTag returns every application carrying tag (GET
// /ws/v1/cluster/apps?applicationTags=tag), in the RM's order. Apps are
// checked for the tag here too, so an RM that ignores the parameter cannot
// return a stranger. Any user can tag an application: a tag says nothing
// about who submitted it.
func (c *Client) AppsByTag(ctx context.Context, tag string) ([]App, error) {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if tag == "" || strings.Contains(tag, ",") {
		return nil, fmt.Errorf("%w: tag: %q must be non-empty and without commas", ErrInvalid, tag)
	}
	apps, err := c.Apps(ctx, AppsFilter{ApplicationTags: []string{tag}})
	if err != nil {
		return nil, err
	}
	out := apps[:0]
	for _, a := range apps {
		if a.HasTag(tag) {
			out = append(out, a)
		}
	}
	return out, nil
}

// checkAppID checks that id looks like application_<clusterTimestamp>_<seq>.
func checkAppID(field, id string) error {
	if _, _, ok := parseAppID(id); !ok {
		return fmt.Errorf("%w: %s: %q is not an application id (application_<clusterTimestamp>_<sequence>)", ErrInvalid, field, id)
	}
	return nil
}

// checkIDChars keeps ids that go into a URL path to a safe alphabet.
func checkIDChars(field, id string) error {
	if id == "" {
		return fmt.Errorf("%w: %s: empty", ErrInvalid, field)
	}
	for _, r := range id {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '_' || r == '-' || r == '.') {
			return fmt.Errorf("%w: %s: %q has a character outside [A-Za-z0-9_.-]", ErrInvalid, field, id)
		}
	}
	return nil
}
