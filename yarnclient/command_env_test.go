//go:build unix

package yarnclient_test

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
)

// bashScript writes an executable bash script (Spark's, YARN's and
// Flink's launchers are bash scripts, which obey BASH_ENV).
func bashScript(t testing.TB, body string) string {
	t.Helper()
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("no bash")
	}
	p := filepath.Join(t.TempDir(), "spark-submit")
	if err := os.WriteFile(p, []byte("#!"+bash+"\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSubmitCommandEnvironmentIsTheSpecOnly runs a bash "submitter" that
// records its environment, with colocd's own environment holding what
// must never reach it: BASH_ENV (bash runs that file first, as the
// daemon's user), HADOOP_USER_NAME and HADOOP_PROXY_USER (act as another
// user), LD_PRELOAD, and COLOCD_* settings (API and InfluxDB secrets).
// The command sees Env and colocd's job variables only, and BASH_ENV's
// file never runs.
func TestSubmitCommandEnvironmentIsTheSpecOnly(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	rc := filepath.Join(dir, "rc")
	if err := os.WriteFile(rc, []byte("id > "+marker+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("BASH_ENV", rc)
	t.Setenv("ENV", rc)
	t.Setenv("HADOOP_USER_NAME", "hdfs")
	t.Setenv("HADOOP_PROXY_USER", "hdfs")
	t.Setenv("LD_LIBRARY_PATH", dir)
	t.Setenv("COLOCD_TOKENS", "secret:admin:admin")
	sh := bashScript(t, `env -0 > "$OUT/env"`+"\n")
	c, _ := newClient(t, nil, deadaddr.URL(t))
	spec := yarnclient.CommandSpec{
		Argv: []string{sh}, Env: []string{"OUT=" + dir, "JAVA_HOME=/usr/lib/jvm/default"},
		JobID: "01J0ABC", Kind: "etl", User: "alice", Queue: "batch",
		Params: map[string]string{"main_class": "org.example.Main"}, Timeout: 30 * time.Second,
	}
	if out, err := c.SubmitCommand(ctxT(t), spec, []string{"colocd-job-01j0abc"}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("BASH_ENV's file ran in the submitter (stat %s: %v)", marker, err)
	}
	got := map[string]string{}
	for kv := range strings.SplitSeq(strings.TrimSuffix(readFile(t, filepath.Join(dir, "env")), "\x00"), "\x00") {
		k, v, _ := strings.Cut(kv, "=")
		got[k] = v
	}
	// bash exports PWD, SHLVL and _ itself.
	for _, k := range []string{"PWD", "SHLVL", "_"} {
		delete(got, k)
	}
	want := map[string]string{
		"OUT": dir, "JAVA_HOME": "/usr/lib/jvm/default",
		"COLOCD_YARN_TAGS": "colocd-job-01j0abc", "COLOCD_JOB_ID": "01J0ABC", "COLOCD_JOB_KIND": "etl",
		"COLOCD_JOB_USER": "alice", "COLOCD_JOB_QUEUE": "batch", yarnclient.ParamEnv("main_class"): "org.example.Main",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the submitter's environment (-want +got)\n%s", diff)
	}
}

// TestSubmitCommandColocdVariablesWin: Env cannot override what colocd
// says of the job.
func TestSubmitCommandColocdVariablesWin(t *testing.T) {
	dir := t.TempDir()
	sh := script(t, `printf '%s|%s' "$COLOCD_JOB_USER" "$COLOCD_YARN_TAGS" > "$OUT/got"`+"\n")
	c, _ := newClient(t, nil, deadaddr.URL(t))
	spec := yarnclient.CommandSpec{Argv: []string{sh}, Env: []string{"OUT=" + dir, "COLOCD_JOB_USER=hdfs", "COLOCD_YARN_TAGS=x"},
		User: "alice", Timeout: 30 * time.Second}
	if out, err := c.SubmitCommand(ctxT(t), spec, []string{"t1"}); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if got := readFile(t, filepath.Join(dir, "got")); got != "alice|t1" {
		t.Errorf("the command saw %q, want alice|t1", got)
	}
}

// TestSubmitCommandParamIsOneArgument: a parameter's value, shell
// metacharacters and all, is one argument of a program run without a
// shell: nothing in it runs, and placeholders inside it stay as written.
func TestSubmitCommandParamIsOneArgument(t *testing.T) {
	dir := t.TempDir()
	marker := filepath.Join(dir, "pwned")
	sh := bashScript(t, `printf '%s\n' "$@" > "$OUT/args"`+"\n")
	c, _ := newClient(t, nil, deadaddr.URL(t))
	evil := "x; id > " + marker + " $(id > " + marker + ") `id > " + marker + "` {{user}}"
	spec := yarnclient.CommandSpec{
		Argv: []string{sh, "--class", "{{param.main_class}}", "--name={{kind}}-{{param.main_class}}", "{{param.optional}}", "--queue", "{{queue}}"},
		Env:  []string{"OUT=" + dir}, Kind: "etl", User: "alice", Queue: "batch",
		Params: map[string]string{"main_class": evil}, Timeout: 30 * time.Second,
	}
	if out, err := c.SubmitCommand(ctxT(t), spec, nil); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	if _, err := os.Stat(marker); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("a parameter's value ran (stat %s: %v)", marker, err)
	}
	want := strings.Join([]string{"--class", evil, "--name=etl-" + evil, "--queue", "batch"}, "\n") + "\n"
	if diff := cmp.Diff(want, readFile(t, filepath.Join(dir, "args"))); diff != "" {
		t.Errorf("argv (-want +got)\n%s", diff)
	}
}

func TestExpandArgv(t *testing.T) {
	spec := yarnclient.CommandSpec{
		Argv: []string{"{{param.a}}", "{{tags}}", "{{job_id}}/{{kind}}/{{user}}/{{queue}}", "{{param.a}}", "{{param.empty}}",
			"x={{param.empty}}", "{{nope}}", "{{param.a", "{{{{tags}}}}"},
		JobID: "J", Kind: "k", User: "u", Queue: "q", Params: map[string]string{"a": "{{tags}}", "empty": ""},
	}
	want := []string{"{{tags}}", "t1,t2", "J/k/u/q", "{{tags}}", "x=", "{{nope}}", "{{param.a", "{{{{tags}}}}"}
	if diff := cmp.Diff(want, spec.ExpandArgv([]string{"t1", "t2"})); diff != "" {
		t.Errorf("ExpandArgv (-want +got)\n%s", diff)
	}
}

func TestCheckArgv(t *testing.T) {
	declared := func(name string) bool { return name == "main_class" || name == "jar" }
	for name, tt := range map[string]struct {
		argv  []string
		index int // -1: fine
		why   string
	}{
		"spark-submit": {[]string{"spark-submit", "--queue", "{{queue}}", "--conf", "spark.yarn.tags={{tags}}",
			"--proxy-user", "{{user}}", "--class", "{{param.main_class}}", "{{param.jar}}"}, -1, ""},
		"Java inner class":         {[]string{"spark-submit", "--class", "org.example.Outer$Inner", "Main$"}, -1, ""},
		"shell reads variables":    {[]string{"/bin/sh", "-c", `exec spark-submit --conf "spark.yarn.tags=$COLOCD_YARN_TAGS" "$@"`, "sh", "{{param.jar}}"}, -1, ""},
		"bash -euc":                {[]string{"bash", "-euc", `flink run -Dyarn.tags="${COLOCD_YARN_TAGS}"`}, -1, ""},
		"no program":               {nil, 0, "program"},
		"empty program":            {[]string{" "}, 0, "program"},
		"program placeholder":      {[]string{"{{param.jar}}"}, 0, "program"},
		"variable never expanded":  {[]string{"spark-submit", "--conf", "spark.yarn.tags=${COLOCD_YARN_TAGS}"}, 2, "without a shell"},
		"bare variable":            {[]string{"flink", "run", "-Dyarn.tags=$COLOCD_YARN_TAGS"}, 2, "without a shell"},
		"unknown placeholder":      {[]string{"spark-submit", "{{tag}}"}, 1, "no placeholder"},
		"undeclared parameter":     {[]string{"spark-submit", "--class", "{{param.klass}}"}, 2, "no parameter"},
		"unclosed":                 {[]string{"spark-submit", "{{tags"}, 1, "not closed"},
		"placeholder in sh -c":     {[]string{"sh", "-c", "spark-submit --class {{param.main_class}}"}, 2, "shell script"},
		"placeholder in bash -xc":  {[]string{"/usr/bin/bash", "-xc", "flink run -Dyarn.tags={{tags}}"}, 2, "shell script"},
		"parameter of the script":  {[]string{"bash", "-c", `spark-submit "$1"`, "{{bogus}}"}, 3, "no placeholder"},
		"no declared params (nil)": {[]string{"spark-submit", "{{param.jar}}"}, 1, "no parameter"},
	} {
		t.Run(name, func(t *testing.T) {
			p := declared
			if strings.HasPrefix(name, "no declared") {
				p = nil
			}
			err := yarnclient.CheckArgv(tt.argv, p)
			if tt.index < 0 {
				if err != nil {
					t.Fatalf("CheckArgv: %v", err)
				}
				return
			}
			var ae *yarnclient.ArgvError
			if !errors.As(err, &ae) || !errors.Is(err, yarnclient.ErrInvalid) {
				t.Fatalf("err = %v, want an *ArgvError wrapping ErrInvalid", err)
			}
			if ae.Index != tt.index || !strings.Contains(ae.Reason, tt.why) {
				t.Errorf("err = %v, want argv[%d] and %q", err, tt.index, tt.why)
			}
		})
	}
}

func TestIsReservedTag(t *testing.T) {
	for tag, want := range map[string]bool{
		"colocd-job-01J0ABC": true, "Colocd-Kind-x": true, " COLOCD-app-1": true, "team-a,colocd-job-1": true,
		"colocd-": true, "team-a": false, "colocd": false, "my-colocd-job": false, "": false,
	} {
		if got := yarnclient.IsReservedTag(tag); got != want {
			t.Errorf("IsReservedTag(%q) = %v, want %v", tag, got, want)
		}
	}
}
