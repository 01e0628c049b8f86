package yarntest_test

import (
	"encoding/json"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

type answer struct {
	status int
	header http.Header
	body   []byte
}

func do(t testing.TB, method, url, body string) answer {
	t.Helper()
	var r io.Reader
	if body != "" {
		r = strings.NewReader(body)
	}
	req, err := http.NewRequest(method, url, r)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return answer{resp.StatusCode, resp.Header, b}
}

// keySet collects the keys of every object found at path (a list of keys;
// "*" walks into every element of an array or a bare object).
func keySet(t testing.TB, body []byte, path ...string) map[string]bool {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("not JSON: %v: %s", err, body)
	}
	out := map[string]bool{}
	var walk func(v any, path []string)
	walk = func(v any, path []string) {
		if len(path) == 0 {
			if m, ok := v.(map[string]any); ok {
				for k := range m {
					out[k] = true
				}
			}
			return
		}
		if path[0] == "*" {
			switch x := v.(type) {
			case []any:
				for _, e := range x {
					walk(e, path[1:])
				}
			case map[string]any:
				walk(x, path[1:])
			}
			return
		}
		if m, ok := v.(map[string]any); ok {
			walk(m[path[0]], path[1:])
		}
	}
	walk(v, path)
	return out
}

func docKeys(t testing.TB, file string, path ...string) map[string]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "testdata", file))
	if err != nil {
		t.Fatal(err)
	}
	return keySet(t, b, path...)
}

func extra(got, allowed map[string]bool, more ...string) []string {
	for _, k := range more {
		allowed[k] = true
	}
	var out []string
	for k := range got {
		if !allowed[k] {
			out = append(out, k)
		}
	}
	sort.Strings(out)
	return out
}

func populated(t testing.TB, opts ...yarntest.Option) (*yarntest.FakeRM, string) {
	rm := yarntest.NewFakeRM(t, opts...)
	rm.AddNode(yarnclient.Node{ID: "w1:45454"})
	rm.AddNode(yarnclient.Node{ID: "w2:45454"})
	id := rm.AddApp(yarnclient.App{Name: "a", User: "u", State: "ACCEPTED", ApplicationTags: "t1"})
	if err := rm.StartApp(id); err != nil {
		t.Fatal(err)
	}
	if err := rm.PlaceContainers(id, "w2:45454"); err != nil {
		t.Fatal(err)
	}
	return rm, id
}

// TestServedShapes checks that every object the fake serves uses only keys
// the documentation shows for that version (plus the few fields the docs'
// tables or the DAO sources list but their examples omit).
func TestServedShapes(t *testing.T) {
	type shape struct {
		path    string
		at      []string
		doc     string
		docAt   []string
		allowed []string
	}
	attempt := func(id string) string { a, _ := yarnclient.AttemptID(id, 1); return a }
	v3 := func(id string) []shape {
		return []shape{
			{yarnclient.PathClusterInfo, []string{"clusterInfo"}, "cluster-info/hadoop-3.json", []string{"clusterInfo"}, nil},
			{yarnclient.PathClusterMetrics, []string{"clusterMetrics"}, "cluster-metrics/hadoop-3-resourceinfo.json", []string{"clusterMetrics"}, nil},
			{yarnclient.PathNodes, []string{"nodes", "node", "*"}, "nodes/hadoop-3.json", []string{"nodes", "node", "*"}, nil},
			{yarnclient.PathApps, []string{"apps", "app", "*"}, "apps/hadoop-3.json", []string{"apps", "app", "*"}, []string{"launchTime"}},
			// One app is the same AppInfo as in the list, whose example
			// shows resourceRequests; the one-app example predates them.
			{yarnclient.PathApp(id), []string{"app"}, "app/hadoop-3.json", []string{"app"}, []string{"launchTime", "resourceRequests"}},
			{yarnclient.PathAppAttempts(id), []string{"appAttempts", "appAttempt", "*"}, "appattempts/hadoop-3.json", []string{"appAttempts", "appAttempt", "*"}, nil},
			{yarnclient.PathAttemptContainers(id, attempt(id)), []string{"containers", "container", "*"}, "attempt-containers/hadoop-3.json", []string{"containers", "container", "*"}, nil},
		}
	}
	v2 := func(id string) []shape {
		return []shape{
			{yarnclient.PathClusterInfo, []string{"clusterInfo"}, "cluster-info/hadoop-2.7.json", []string{"clusterInfo"}, []string{"haState"}},
			{yarnclient.PathClusterMetrics, []string{"clusterMetrics"}, "cluster-metrics/hadoop-2.7.json", []string{"clusterMetrics"}, nil},
			{yarnclient.PathNodes, []string{"nodes", "node", "*"}, "nodes/hadoop-2.7.json", []string{"nodes", "node", "*"}, nil},
			{yarnclient.PathApps, []string{"apps", "app", "*"}, "apps/hadoop-2.7.json", []string{"apps", "app", "*"}, []string{"applicationType", "applicationTags"}},
			{yarnclient.PathAppAttempts(id), []string{"appAttempts", "appAttempt", "*"}, "appattempts/hadoop-2.7.json", []string{"appAttempts", "appAttempt", "*"}, nil},
		}
	}
	for name, tc := range map[string]struct {
		opts   []yarntest.Option
		shapes func(string) []shape
	}{"hadoop 3": {nil, v3}, "hadoop 2.7": {[]yarntest.Option{yarntest.Hadoop2()}, v2}} {
		rm, id := populated(t, tc.opts...)
		for _, s := range tc.shapes(id) {
			t.Run(name+s.path, func(t *testing.T) {
				a := do(t, "GET", rm.URL()+s.path, "")
				if a.status != 200 {
					t.Fatalf("status %d: %s", a.status, a.body)
				}
				got := keySet(t, a.body, s.at...)
				if len(got) == 0 {
					t.Fatalf("no object at %v in %s", s.at, a.body)
				}
				if bad := extra(got, docKeys(t, s.doc, s.docAt...), s.allowed...); len(bad) > 0 {
					t.Errorf("undocumented keys %v", bad)
				}
			})
		}
	}
}

func TestStandbyAnswers(t *testing.T) {
	active := yarntest.NewFakeRM(t)
	for name, tt := range map[string]struct {
		opts     []yarntest.Option
		active   string
		status   int
		location string
		body     string
	}{
		"3.x":              {nil, active.URL(), 307, active.URL() + "/ws/v1/cluster/apps?states=RUNNING", "This is standby RM. The redirect url is: /ws/v1/cluster/apps?states=RUNNING"},
		"3.x, none active": {nil, "", 307, "", "Can not find any active RM"},
		"2.x":              {[]yarntest.Option{yarntest.Hadoop2()}, active.URL(), 200, "", "This is standby RM. Redirecting to the current active RM: " + active.URL() + "/ws/v1/cluster/apps"},
	} {
		t.Run(name, func(t *testing.T) {
			rm := yarntest.NewFakeRM(t, tt.opts...)
			rm.SetStandby(true)
			rm.SetActiveURL(tt.active)
			a := do(t, "GET", rm.URL()+"/ws/v1/cluster/apps?states=RUNNING", "")
			if a.status != tt.status || a.header.Get("Location") != tt.location || !strings.Contains(string(a.body), tt.body) {
				t.Errorf("got %d Location %q body %q; want %d %q containing %q", a.status, a.header.Get("Location"), a.body, tt.status, tt.location, tt.body)
			}
			info := do(t, "GET", rm.URL()+yarnclient.PathClusterInfo, "")
			if info.status != 200 || !strings.Contains(string(info.body), `"haState":"STANDBY"`) {
				t.Errorf("standby cluster info: %d %s", info.status, info.body)
			}
		})
	}
}

func TestWrites(t *testing.T) {
	rm := yarntest.NewFakeRM(t, yarntest.ClusterTimestamp(1404198295326))
	a := do(t, "POST", rm.URL()+yarnclient.PathNewApplication+"?user.name=u", "")
	if diff := cmp.Diff(`{"application-id":"application_1404198295326_0001","maximum-resource-capability":{"memory":8192,"vCores":32}}`, string(a.body)); diff != "" || a.status != 200 {
		t.Errorf("new-application %d (-want +got)\n%s", a.status, diff)
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "submit", "tags-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(b), "application_1404204891930_0002", "application_1404198295326_0001", 1)
	sub := do(t, "POST", rm.URL()+yarnclient.PathApps+"?user.name=u", body)
	if sub.status != 202 || sub.header.Get("Location") != rm.URL()+"/ws/v1/cluster/apps/application_1404198295326_0001" || len(sub.body) != 0 {
		t.Errorf("submit: %d Location %q body %q", sub.status, sub.header.Get("Location"), sub.body)
	}
	app, _ := rm.App("application_1404198295326_0001")
	if app.ApplicationTags != "tag 2,tag1" || app.Queue != "testqueue" || app.Priority != 3 || app.User != "u" || app.State != "ACCEPTED" {
		t.Errorf("submitted app %+v", app)
	}

	kill := func() answer {
		return do(t, "PUT", rm.URL()+yarnclient.PathAppState(app.ID)+"?user.name=u", `{"state":"KILLED"}`)
	}
	if a := kill(); a.status != 202 || string(a.body) != `{"state":"ACCEPTED"}` {
		t.Errorf("first kill: %d %s; want the documented 202 with the previous state", a.status, a.body)
	}
	if a := kill(); a.status != 200 || string(a.body) != `{"state":"KILLED"}` {
		t.Errorf("second kill: %d %s; want 200 KILLED", a.status, a.body)
	}
	bad := do(t, "PUT", rm.URL()+yarnclient.PathAppState(app.ID), `{"state":"RUNNING"}`)
	if bad.status != 400 || !strings.Contains(string(bad.body), `Only 'KILLED' is allowed as a target state.`) {
		t.Errorf("bad target state: %d %s", bad.status, bad.body)
	}
	if err := rm.FinishApp(app.ID, "SUCCEEDED"); err == nil {
		t.Error("FinishApp of a killed app succeeded")
	}
	if err := rm.FinishApp("application_1_0001", "SUCCEEDED"); err == nil {
		t.Error("FinishApp of an unknown app succeeded")
	}
	empty := do(t, "GET", rm.URL()+yarnclient.PathApps+"?states=RUNNING", "")
	if string(empty.body) != `{"apps":null}` {
		t.Errorf("no match: %s, want {\"apps\":null}", empty.body)
	}
}

// OnSubmit is told of each submission that created an application, once,
// before the submitter has its answer; a duplicate is not one.
func TestOnSubmit(t *testing.T) {
	got := make(chan string, 2)
	rm := yarntest.NewFakeRM(t, yarntest.ClusterTimestamp(1404198295326), yarntest.OnSubmit(func(s yarnclient.SubmissionContext) {
		got <- s.ApplicationID
	}))
	do(t, "POST", rm.URL()+yarnclient.PathNewApplication+"?user.name=u", "")
	b, err := os.ReadFile(filepath.Join("..", "testdata", "submit", "tags-request.json"))
	if err != nil {
		t.Fatal(err)
	}
	body := strings.Replace(string(b), "application_1404204891930_0002", "application_1404198295326_0001", 1)
	if a := do(t, "POST", rm.URL()+yarnclient.PathApps+"?user.name=u", body); a.status != 202 {
		t.Fatalf("submit: %d %s", a.status, a.body)
	}
	select {
	case id := <-got:
		if id != "application_1404198295326_0001" {
			t.Errorf("OnSubmit got %s", id)
		}
	default:
		t.Fatal("OnSubmit not called before the submission was answered")
	}
	if a := do(t, "POST", rm.URL()+yarnclient.PathApps+"?user.name=u", body); a.status != 400 {
		t.Fatalf("duplicate submit: %d %s, want 400", a.status, a.body)
	}
	select {
	case id := <-got:
		t.Errorf("OnSubmit told of the duplicate %s", id)
	default:
	}
}

func TestFaultOrder(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Status: 500, Times: 1})
	rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Status: 503, Times: 1})
	rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Method: "POST", Status: 418})
	var got []int
	for range 3 {
		got = append(got, do(t, "GET", rm.URL()+yarnclient.PathClusterMetrics, "").status)
	}
	if diff := cmp.Diff([]int{500, 503, 200}, got); diff != "" {
		t.Errorf("(-want +got)\n%s", diff)
	}
	if n := rm.Requests("GET", yarnclient.PathClusterMetrics); n != 3 {
		t.Errorf("Requests = %d, want 3", n)
	}
	rm.InjectFault(yarnclient.PathNodes, yarntest.Fault{Reset: true})
	if _, err := http.Get(rm.URL() + yarnclient.PathNodes); err == nil {
		t.Error("a reset request got an answer")
	}
	rm.ClearFaults()
	if a := do(t, "GET", rm.URL()+yarnclient.PathNodes, ""); a.status != 200 {
		t.Errorf("after ClearFaults: %d", a.status)
	}
}

func TestFakeNM(t *testing.T) {
	nm := yarntest.NewFakeNM(t)
	if a := do(t, "GET", nm.URL()+yarnclient.PathNMContainers, ""); strings.TrimSpace(string(a.body)) != `{"containers":{}}` {
		t.Errorf("idle NM: %s", a.body)
	}
	nm.SetContainers([]yarnclient.NMContainer{{ID: "container_1326121700862_0006_01_000001", State: "RUNNING", ExitCode: -1000,
		User: "user1", TotalMemoryNeededMB: 2048, TotalVCoresNeeded: 1, NodeID: "host.domain.com:8041"}})
	a := do(t, "GET", nm.URL()+yarnclient.PathNMContainers, "")
	got := keySet(t, a.body, "containers", "container", "*")
	if bad := extra(got, docKeys(t, "nm-containers/hadoop-3.json", "containers", "container", "*")); len(bad) > 0 || len(got) == 0 {
		t.Errorf("NM container keys %v, undocumented %v", got, bad)
	}
	if a := do(t, "GET", nm.URL()+"/ws/v1/node/apps", ""); a.status != 404 {
		t.Errorf("unknown path: %d", a.status)
	}
}
