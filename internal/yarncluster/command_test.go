//go:build unix

package yarncluster_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// commandWorld is a fake RM, colocd's yarn section in command mode
// running yarntest.SparkSubmit, and the directory the script records
// into.
type commandWorld struct {
	rm     *yarntest.FakeRM
	cfg    yarncluster.Config
	key    []byte
	out    string // what the script recorded
	marker string // made by any injected code that runs
	rc     string // a file that makes marker: what BASH_ENV would run
}

func newCommandWorld(t *testing.T) *commandWorld {
	t.Helper()
	script := yarntest.SparkSubmit(t)
	w := &commandWorld{rm: yarntest.NewFakeRM(t), out: t.TempDir(), key: bytes.Repeat([]byte{7}, yarncluster.MinTagKeyBytes)}
	w.marker = filepath.Join(w.out, "pwned")
	w.rc = filepath.Join(t.TempDir(), "rc")
	if err := os.WriteFile(w.rc, []byte("id > "+w.marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User, cfg.Timeout, cfg.Submit = []string{w.rm.URL()}, "colocd", 10*time.Second, yarncluster.SubmitCommand
	cfg.Command.Argv = []string{script, "--master", "yarn", "--queue", "{{queue}}", "--conf", "spark.yarn.tags={{tags}}",
		"--class", "{{param.main_class}}", "{{param.jar}}", "{{param.input}}"}
	cfg.Command.Env = []string{"RM_URL=" + w.rm.URL(), "OUT=" + w.out}
	cfg.Command.Dir = t.TempDir()
	cfg.Command.Params = []yarncluster.CommandParam{
		{Name: "main_class", Pattern: `[A-Za-z_][A-Za-z0-9_.$]*`, Required: true},
		{Name: "jar", Pattern: `hdfs:///apps/[A-Za-z0-9_./-]+\.jar`, Required: true, MaxLength: 200},
		{Name: "input", Pattern: `[A-Za-z0-9_./=:-]*`},
	}
	w.cfg = cfg
	return w
}

// cluster adapts a client of w's config, validated.
func (w *commandWorld) cluster(t *testing.T) *yarncluster.Cluster {
	t.Helper()
	if err := w.cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	cc := w.cfg.ClientConfig(nil)
	cc.Retries = -1
	c, err := yarnclient.New(cc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.CloseIdleConnections)
	return yarncluster.New(c, w.cfg, nil, yarncluster.WithTagKey(w.key))
}

// ran reports whether the script ran.
func (w *commandWorld) ran() bool {
	_, err := os.Stat(filepath.Join(w.out, "args"))
	return err == nil
}

// noInjection fails the test if code a submitter injected ran.
func (w *commandWorld) noInjection(t *testing.T) {
	t.Helper()
	if b, err := os.ReadFile(w.marker); err == nil {
		t.Fatalf("injected code ran as colocd's user: %s", b)
	}
}

func (w *commandWorld) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(w.out, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func sparkJob(submit string) queue.Job {
	return queue.Job{ID: "01JOBALICE", Kind: "etl", User: "alice", Queue: "batch",
		Resources: queue.Resources{Containers: 2, MemoryMB: 1024, VCores: 1}, Submit: json.RawMessage(submit)}
}

const goodParams = `{"params":{"main_class":"org.example.Etl","jar":"hdfs:///apps/etl-1.2.jar"}}`

// TestCommandSubmission runs a job through the real bash submitter, with
// colocd's own environment holding BASH_ENV, HADOOP_USER_NAME and
// HADOOP_PROXY_USER: the command gets the configured argv, the declared
// parameters, the operator's environment and directory only; the
// application runs as colocd, in the job's queue, carrying the
// authenticated tag by which colocd finds it, once.
func TestCommandSubmission(t *testing.T) {
	w := newCommandWorld(t)
	t.Setenv("BASH_ENV", w.rc)
	t.Setenv("HADOOP_USER_NAME", "hdfs")
	t.Setenv("HADOOP_PROXY_USER", "hdfs")
	t.Setenv("COLOCD_TOKENS", "secret:admin:admin")
	y := w.cluster(t)
	ctx := context.Background()
	j := sparkJob(goodParams)
	if err := y.Prepare(&j); err != nil {
		t.Fatal(err)
	}
	token, err := y.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := y.Submit(ctx, token, j); err != nil {
		t.Fatal(err)
	}
	w.noInjection(t)
	apps := w.rm.Apps()
	if len(apps) != 1 {
		t.Fatalf("RM apps %+v, want one", apps)
	}
	app := apps[0]
	tags := app.Tags()
	var authTag string
	for _, tg := range tags {
		if strings.HasPrefix(tg, "colocd-app-"+token+"-") {
			authTag = tg
		}
	}
	if app.User != "colocd" || app.Queue != "batch" || authTag == "" || len(authTag) > 100 {
		t.Fatalf("application %+v: want colocd's, in batch, with an authenticated tag of at most 100 characters", app)
	}
	wantArgs := strings.Join([]string{"--master", "yarn", "--queue", "batch", "--conf", "spark.yarn.tags=" + strings.Join(append(yarnclient.JobTags(j.ID, j.Kind), authTag), ","),
		"--class", "org.example.Etl", "hdfs:///apps/etl-1.2.jar"}, "\n") + "\n"
	if diff := cmp.Diff(wantArgs, w.read(t, "args")); diff != "" {
		t.Errorf("argv (-want +got)\n%s", diff)
	}
	if got := strings.TrimSpace(w.read(t, "pwd")); got != w.cfg.Command.Dir {
		t.Errorf("working directory %q, want yarn.command.dir %q", got, w.cfg.Command.Dir)
	}
	env := w.read(t, "env")
	for _, bad := range []string{"BASH_ENV=", "HADOOP_USER_NAME=", "HADOOP_PROXY_USER=", "COLOCD_TOKENS="} {
		if strings.Contains("\x00"+env, "\x00"+bad) {
			t.Errorf("colocd's %s reached the command", bad)
		}
	}
	for _, good := range []string{"PATH=", "COLOCD_JOB_USER=alice", "COLOCD_JOB_QUEUE=batch", yarnclient.ParamEnv("jar") + "=hdfs:///apps/etl-1.2.jar"} {
		if !strings.Contains("\x00"+env, "\x00"+good) {
			t.Errorf("the command's environment lacks %s", good)
		}
	}
	st, err := y.App(ctx, token)
	if err != nil || st.ID != app.ID || st.User != "colocd" {
		t.Errorf("App(%s) = %+v, %v; want %s of colocd", token, st, err, app.ID)
	}
	if err := w.rm.StartApp(app.ID); err != nil {
		t.Fatal(err)
	}
	cs, err := y.State(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs.Apps) != 1 || cs.Apps[0].Reservation != token || cs.Apps[0].JobID != "" {
		t.Errorf("State apps %+v, want %s with reservation %s (its job is the engine's to say)", cs.Apps, app.ID, token)
	}
	// A retry of the same reservation finds the application: no second run.
	if err := os.Remove(filepath.Join(w.out, "args")); err != nil {
		t.Fatal(err)
	}
	if err := y.Submit(ctx, token, j); err != nil || w.ran() || len(w.rm.Apps()) != 1 {
		t.Errorf("a second Submit of %s: %v, command ran %v, %d apps; want nil, no run, one app", token, err, w.ran(), len(w.rm.Apps()))
	}
}

// TestCommandSubmitRefusals: what a submitter tried, each refused at
// Prepare (a 422 through the API) naming the field and the rule.
func TestCommandSubmitRefusals(t *testing.T) {
	w := newCommandWorld(t)
	y := w.cluster(t)
	long := `"hdfs:///apps/` + strings.Repeat("x", 200) + `.jar"`
	for name, tc := range map[string]struct {
		submit, field, why string
	}{
		"BASH_ENV":                  {`{"env":["BASH_ENV=$(id > /tmp/pwned)"]}`, "submit.env", "BASH_ENV"},
		"HADOOP_USER_NAME":          {`{"env":["HADOOP_USER_NAME=hdfs"],` + goodParams[1:], "submit.env", "another user"},
		"LD_PRELOAD":                {`{"env":["LD_PRELOAD=/tmp/x.so"]}`, "submit.env", "yarn.command.env"},
		"--proxy-user":              {`{"args":["--proxy-user","hdfs"]}`, "submit.args", "yarn.command.argv"},
		"dir /etc":                  {`{"dir":"/etc"}`, "submit.dir", "yarn.command.dir"},
		"unknown field":             {`{"params":{},"conf":{}}`, "submit.conf", "unknown field"},
		"shell in a parameter":      {`{"params":{"main_class":"Etl; id > /tmp/pwned","jar":"hdfs:///apps/a.jar"}}`, "submit.params[main_class]", "does not match yarn.command.params[0].pattern"},
		"command substitution":      {`{"params":{"main_class":"Etl","jar":"hdfs:///apps/$(id).jar"}}`, "submit.params[jar]", "does not match"},
		"an option where a value":   {`{"params":{"main_class":"Etl","jar":"hdfs:///apps/a.jar","input":"--proxy-user=hdfs"}}`, "submit.params[input]", "read it as an option"},
		"undeclared parameter":      {`{"params":{"main_class":"Etl","jar":"hdfs:///apps/a.jar","proxy_user":"hdfs"}}`, "submit.params[proxy_user]", "declares main_class, jar, input"},
		"too long":                  {`{"params":{"main_class":"Etl","jar":` + long + `}}`, "submit.params[jar]", "max_length 200"},
		"a newline":                 {`{"params":{"main_class":"Etl\n--proxy-user","jar":"hdfs:///apps/a.jar"}}`, "submit.params[main_class]", "control character"},
		"not a string":              {`{"params":{"main_class":1,"jar":"hdfs:///apps/a.jar"}}`, "submit.params[main_class]", "string"},
		"required":                  {`{"params":{"main_class":"Etl"}}`, "submit.params[jar]", "required"},
		"nothing given, required":   {``, "submit.params[main_class]", "required"},
		"a job's colocd-like value": {`{"params":{"main_class":"Etl","jar":"hdfs:///apps/a.jar","input":"x"},"tags":["colocd-job-1"]}`, "submit.tags", "unknown field"},
	} {
		t.Run(name, func(t *testing.T) {
			j := sparkJob(tc.submit)
			err := y.Prepare(&j)
			var fe *queue.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, queue.ErrRefused) {
				t.Fatalf("Prepare = %v, want a refused *queue.FieldError", err)
			}
			if fe.Field != tc.field || !strings.Contains(fe.Reason, tc.why) {
				t.Errorf("Prepare = %v, want field %s and %q", err, tc.field, tc.why)
			}
		})
	}
	t.Run("not an object", func(t *testing.T) {
		j := sparkJob(`["--proxy-user"]`)
		err := y.Prepare(&j)
		var fe *queue.FieldError
		if !errors.As(err, &fe) || fe.Field != "submit" || errors.Is(err, queue.ErrRefused) {
			t.Errorf("Prepare = %v, want a malformed submit (400)", err)
		}
	})
	t.Run("a queue the command does not pass", func(t *testing.T) {
		w.cfg.Command.Argv = slices.DeleteFunc(slices.Clone(w.cfg.Command.Argv), func(a string) bool { return a == "--queue" || a == "{{queue}}" })
		y := w.cluster(t)
		j := sparkJob(goodParams)
		err := y.Prepare(&j)
		var fe *queue.FieldError
		if !errors.As(err, &fe) || fe.Field != "queue" || !errors.Is(err, queue.ErrRefused) || !strings.Contains(fe.Reason, "{{queue}}") {
			t.Errorf("Prepare = %v, want queue refused for want of {{queue}}", err)
		}
		j.Queue = ""
		if err := y.Prepare(&j); err != nil {
			t.Errorf("without a queue: %v", err)
		}
	})
	if w.ran() {
		t.Error("Prepare ran the command")
	}
}

// TestCommandJobQueuedBeforeIsRefusedAtSubmit: a job stored before these
// checks (so never through Prepare) that carries an environment, arguments
// and a directory fails at admission; the command never runs, and neither
// does what BASH_ENV names.
func TestCommandJobQueuedBeforeIsRefusedAtSubmit(t *testing.T) {
	w := newCommandWorld(t)
	y := w.cluster(t)
	ctx := context.Background()
	for name, submit := range map[string]string{
		"env":  `{"env":["BASH_ENV=` + w.rc + `","HADOOP_USER_NAME=hdfs"]}`,
		"args": `{"args":["--proxy-user","hdfs"]}`,
		"dir":  `{"dir":"/etc"}`,
	} {
		t.Run(name, func(t *testing.T) {
			token, err := y.Reserve(ctx)
			if err != nil {
				t.Fatal(err)
			}
			err = y.Submit(ctx, token, sparkJob(submit))
			if !errors.Is(err, cluster.ErrRejected) || !errors.Is(err, queue.ErrRefused) {
				t.Errorf("Submit = %v, want a rejection", err)
			}
		})
	}
	w.noInjection(t)
	if w.ran() || len(w.rm.Apps()) != 0 {
		t.Errorf("command ran %v, RM apps %d; want neither", w.ran(), len(w.rm.Apps()))
	}
}

// TestCommandTagCannotBeForged: bob reads the token of alice's admitted
// job (its app_id) and submits an application carrying
// colocd-app-<token> and her job's tag before colocd runs the command;
// later he copies the authenticated tag off her application. Neither is
// taken for her job: colocd still runs the command, and the token
// resolves to the first application with the authenticated tag, also for
// a restarted colocd.
func TestCommandTagCannotBeForged(t *testing.T) {
	w := newCommandWorld(t)
	y := w.cluster(t)
	ctx := context.Background()
	token, err := y.Reserve(ctx)
	if err != nil {
		t.Fatal(err)
	}
	j := sparkJob(goodParams)
	forged := w.rm.AddApp(yarnclient.App{User: "bob", Queue: "batch",
		ApplicationTags: strings.Join(append(yarnclient.JobTags(j.ID, j.Kind), "colocd-app-"+token), ",")})
	if err := y.Submit(ctx, token, j); err != nil {
		t.Fatal(err)
	}
	if !w.ran() {
		t.Fatal("the forged tag stopped colocd from running the command")
	}
	var ours yarnclient.App
	for _, a := range w.rm.Apps() {
		if a.User == "colocd" {
			ours = a
		}
	}
	if st, err := y.App(ctx, token); err != nil || st.ID != ours.ID {
		t.Fatalf("App(%s) = %+v, %v; want colocd's %s", token, st, err, ours.ID)
	}
	authTag := ""
	for _, tg := range ours.Tags() {
		if strings.HasPrefix(tg, "colocd-app-") {
			authTag = tg
		}
	}
	copied := w.rm.AddApp(yarnclient.App{User: "bob", ApplicationTags: authTag + "," + yarnclient.JobTags(j.ID, j.Kind)[0]})
	if err := w.rm.StartApp(ours.ID); err != nil {
		t.Fatal(err)
	}
	for name, yc := range map[string]*yarncluster.Cluster{"running": y, "restarted": w.cluster(t)} {
		t.Run(name, func(t *testing.T) {
			if st, err := yc.App(ctx, token); err != nil || st.ID != ours.ID {
				t.Errorf("App(%s) = %+v, %v; want %s", token, st, err, ours.ID)
			}
			st, err := yc.State(ctx)
			if err != nil {
				t.Fatal(err)
			}
			got := map[string]string{}
			for _, a := range st.Apps {
				got[a.ID] = a.Reservation
			}
			if diff := cmp.Diff(map[string]string{ours.ID: token, forged: "", copied: ""}, got); diff != "" {
				t.Errorf("reservations (-want +got)\n%s", diff)
			}
		})
	}
	t.Run("without the key", func(t *testing.T) {
		other := *w
		other.key = bytes.Repeat([]byte{8}, yarncluster.MinTagKeyBytes)
		if _, err := other.cluster(t).App(ctx, token); !errors.Is(err, cluster.ErrUnknownApp) {
			t.Errorf("App(%s) with another key = %v, want ErrUnknownApp", token, err)
		}
		cfg := w.cfg
		c, err := yarnclient.New(cfg.ClientConfig(nil))
		if err != nil {
			t.Fatal(err)
		}
		if _, err := yarncluster.New(c, cfg, nil).Reserve(ctx); !errors.Is(err, yarncluster.ErrNoTagKey) {
			t.Errorf("Reserve without a key = %v, want ErrNoTagKey", err)
		}
	})
}

// TestCommandLegacyToken: a job admitted before command tags were
// authenticated (a 64-bit token, tag colocd-app-<token>) is still found.
func TestCommandLegacyToken(t *testing.T) {
	w := newCommandWorld(t)
	y := w.cluster(t)
	token := "cmd-1700000000000-0123456789abcdef"
	id := w.rm.AddApp(yarnclient.App{User: "colocd", ApplicationTags: "colocd-app-" + token})
	if st, err := y.App(context.Background(), token); err != nil || st.ID != id {
		t.Errorf("App(%s) = %+v, %v; want %s", token, st, err, id)
	}
}
