package daemon

import (
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// apiError is an error reply of the API.
type apiError struct {
	Error string `json:"error"`
	Field string `json:"field"`
}

// wantRefused posts body and checks the reply is a 422 naming field and
// saying why.
func wantRefused(t *testing.T, p *proc, body map[string]any, field, why string) {
	t.Helper()
	code, b := p.do(http.MethodPost, "/v1/jobs", body)
	var e apiError
	if err := json.Unmarshal(b, &e); err != nil {
		t.Fatalf("POST /v1/jobs: %d %s", code, b)
	}
	if code != http.StatusUnprocessableEntity || e.Field != field || !strings.Contains(e.Error, why) {
		t.Errorf("POST /v1/jobs %v: %d %+v, want 422 naming %s and %q", body, code, e, field, why)
	}
}

// clusterApps is GET /v1/cluster's applications: id → job id.
func clusterApps(p *proc, query string) map[string]string {
	var cs struct {
		Apps []struct {
			AppID string `json:"app_id"`
			JobID string `json:"job_id"`
			User  string `json:"user"`
		} `json:"apps"`
	}
	p.getJSON("/v1/cluster"+query, &cs)
	out := map[string]string{}
	for _, a := range cs.Apps {
		out[a.AppID] = a.JobID
	}
	return out
}

// restJobBody is a REST job of alice's (the admin token may submit as
// her) with the context's fields extra added.
func restJobBody(queueName string, extra map[string]any) map[string]any {
	sub := map[string]any{
		"application-name":  "wordcount",
		"am-container-spec": map[string]any{"commands": map[string]any{"command": "true"}},
	}
	for k, v := range extra {
		sub[k] = v
	}
	j := map[string]any{"kind": "wordcount", "user": "alice",
		"resources": map[string]any{"containers": 1, "memory_mb": 1024, "vcores": 1}, "submit": sub}
	if queueName != "" {
		j["queue"] = queueName
	}
	return j
}

// TestRESTJobOneQueueAndNoTakeoverProcess runs colocd serve against the
// fake RM: a job whose context names another queue than its own, or a
// tag of colocd's, is refused with a 422 naming the field; a job's queue
// comes from its context when it names none, and the RM runs it there.
// Bob's application, submitted straight to the RM with the tag of
// alice's job, is not hers: /v1/cluster shows it without a job, and her
// job succeeds when her own application does.
func TestRESTJobOneQueueAndNoTakeoverProcess(t *testing.T) {
	rm := newTestRM(t)
	addr := freeAddr(t)
	cfg := yarnDaemonConfig(t, t.TempDir(), addr, rm.URL())
	p := startServe(t, "..", cfg, addr, yarnTestToken)
	p.waitReady(20 * time.Second)

	wantRefused(t, p, restJobBody("batch", map[string]any{"queue": "prod"}), "submit.queue", `the job's queue "batch"`)
	wantRefused(t, p, restJobBody("", map[string]any{"application-tags": map[string]any{"tag": []string{"team-a", "Colocd-Job-01JOBOFBOB"}}}),
		"submit.application-tags[1]", "colocd's own")

	code, b := p.do(http.MethodPost, "/v1/jobs", restJobBody("", map[string]any{"queue": "prod"}))
	if code != http.StatusCreated {
		t.Fatalf("POST /v1/jobs: %d %s", code, b)
	}
	var created struct {
		ID    string `json:"id"`
		Queue string `json:"queue"`
	}
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatal(err)
	}
	if created.Queue != "prod" {
		t.Errorf("job queue %q, want prod (from submit.queue)", created.Queue)
	}
	var j apiJob
	poll(t, "alice's job to run", 20*time.Second, func() bool {
		j = p.job(created.ID)
		return j.State == "running"
	})
	if a, ok := rm.App(j.AppID); !ok || a.Queue != "prod" || a.User != "colocd" {
		t.Errorf("alice's application %+v, want colocd's in prod", a)
	}

	bob := rm.AddApp(yarnclient.App{User: "bob", Queue: "default", Name: "not alice's",
		ApplicationTags: strings.Join(yarnclient.JobTags(created.ID, "wordcount"), ",")})
	poll(t, "bob's application on /v1/cluster", 20*time.Second, func() bool {
		_, ok := clusterApps(p, "")[bob]
		return ok
	})
	if got := clusterApps(p, ""); got[bob] != "" || got[j.AppID] != created.ID {
		t.Errorf("/v1/cluster apps → jobs %v, want %s for %s and none for bob's %s", got, created.ID, j.AppID, bob)
	}
	if err := rm.FinishApp(j.AppID, "SUCCEEDED"); err != nil {
		t.Fatal(err)
	}
	poll(t, "alice's job to succeed beside bob's application", 20*time.Second, func() bool {
		return p.job(created.ID).State == "succeeded"
	})
	if got := clusterApps(p, "?jobs="+created.ID); len(got) != 0 {
		t.Errorf("/v1/cluster?jobs=%s: %v, want no application", created.ID, got)
	}
}

// TestCommandJobParamsOnlyProcess runs colocd serve in command mode with
// a bash spark-submit, from an environment holding BASH_ENV,
// HADOOP_USER_NAME and HADOOP_PROXY_USER. A job that sets the command's
// environment, arguments or directory, or a parameter with shell in it,
// is refused with a 422 naming the field; a job with declared parameters
// runs as colocd in its queue, BASH_ENV's file never runs, and bob's
// application with the job's tags is not the job's.
func TestCommandJobParamsOnlyProcess(t *testing.T) {
	rm := newTestRM(t)
	addr := freeAddr(t)
	dataDir, out := t.TempDir(), t.TempDir()
	marker := filepath.Join(out, "pwned")
	rc := filepath.Join(t.TempDir(), "rc")
	if err := os.WriteFile(rc, []byte("id > "+marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := fmt.Sprintf(`
listen: %s
data_dir: %s
log_level: debug
tokens: [{token: %s, user: admin, role: admin}]
backend: yarn
yarn:
  rm_urls: [%q]
  user: colocd
  timeout: 5s
  submit: command
  command:
    argv: [%q, --master, yarn, --queue, "{{queue}}", --conf, "spark.yarn.tags={{tags}}", --class, "{{param.main_class}}", "{{param.jar}}"]
    timeout: 20s
    env: [%q, %q]
    params:
      - {name: main_class, pattern: '[A-Za-z_][A-Za-z0-9_.]*', required: true}
      - {name: jar, pattern: 'hdfs:///apps/[A-Za-z0-9_./-]+\.jar', required: true}
influx: {url: "http://127.0.0.1:1", bucket: telegraf/autogen, timeout: 1s}
goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}
admission: {tick: 100ms}
learning: {schedule: "@every 1h"}
shutdown_timeout: 5s
`, addr, dataDir, yarnTestToken, rm.URL(), yarntest.SparkSubmit(t), "RM_URL="+rm.URL(), "OUT="+out)
	cfgFile := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(cfgFile, []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	p := startServe(t, "..", cfgFile, addr, yarnTestToken, "BASH_ENV="+rc, "HADOOP_USER_NAME=hdfs", "HADOOP_PROXY_USER=hdfs")
	p.waitReady(20 * time.Second)

	job := func(submit map[string]any) map[string]any {
		return map[string]any{"kind": "etl", "user": "alice", "queue": "batch",
			"resources": map[string]any{"containers": 1, "memory_mb": 1024, "vcores": 1}, "submit": submit}
	}
	params := map[string]any{"main_class": "org.example.Etl", "jar": "hdfs:///apps/etl.jar"}
	wantRefused(t, p, job(map[string]any{"env": []string{"BASH_ENV=" + rc}, "params": params}), "submit.env", "BASH_ENV")
	wantRefused(t, p, job(map[string]any{"env": []string{"HADOOP_USER_NAME=hdfs"}, "params": params}), "submit.env", "another user")
	wantRefused(t, p, job(map[string]any{"args": []string{"--proxy-user", "hdfs"}, "params": params}), "submit.args", "yarn.command.argv")
	wantRefused(t, p, job(map[string]any{"dir": "/etc", "params": params}), "submit.dir", "yarn.command.dir")
	wantRefused(t, p, job(map[string]any{"params": map[string]any{"main_class": "Etl; id > " + marker, "jar": "hdfs:///apps/etl.jar"}}),
		"submit.params[main_class]", "does not match")
	wantRefused(t, p, job(map[string]any{"params": map[string]any{"main_class": "Etl", "jar": "hdfs:///apps/etl.jar", "proxy_user": "hdfs"}}),
		"submit.params[proxy_user]", "no such parameter")
	if _, err := os.Stat(filepath.Join(out, "args")); err == nil {
		t.Fatal("a refused job ran the command")
	}

	code, b := p.do(http.MethodPost, "/v1/jobs", job(map[string]any{"params": params}))
	if code != http.StatusCreated {
		t.Fatalf("POST /v1/jobs: %d %s", code, b)
	}
	var created apiJob
	if err := json.Unmarshal(b, &created); err != nil {
		t.Fatal(err)
	}
	var app yarnclient.App
	poll(t, "the command's application", 20*time.Second, func() bool {
		apps := rm.Apps()
		if len(apps) == 0 {
			return false
		}
		app = apps[0]
		return true
	})
	if b, err := os.ReadFile(marker); err == nil {
		t.Fatalf("BASH_ENV from colocd's environment ran in the submitter: %s", b)
	}
	if app.User != "colocd" || app.Queue != "batch" {
		t.Errorf("application %+v, want colocd's (not hdfs's) in batch", app)
	}
	poll(t, "the job to run", 20*time.Second, func() bool { return p.job(created.ID).State == "running" })

	bob := rm.AddApp(yarnclient.App{User: "bob", ApplicationTags: strings.Join(
		append(yarnclient.JobTags(created.ID, "etl"), "colocd-app-"+p.job(created.ID).AppID), ",")})
	poll(t, "bob's application on /v1/cluster", 20*time.Second, func() bool {
		_, ok := clusterApps(p, "")[bob]
		return ok
	})
	if got := clusterApps(p, ""); got[bob] != "" || got[app.ID] != created.ID {
		t.Errorf("/v1/cluster apps → jobs %v, want %s for %s and none for bob's %s", got, created.ID, app.ID, bob)
	}
	if err := rm.FinishApp(app.ID, "SUCCEEDED"); err != nil {
		t.Fatal(err)
	}
	poll(t, "the job to succeed beside bob's application", 20*time.Second, func() bool {
		return p.job(created.ID).State == "succeeded"
	})
}
