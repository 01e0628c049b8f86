//go:build unix

package yarnclient_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// script writes an executable shell script into a temp dir.
func script(t testing.TB, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "submit.sh")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func readFile(t testing.TB, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestSubmitCommandInjectsTags(t *testing.T) {
	out := t.TempDir()
	sh := script(t, `
printf '%s\n' "$@" > "$OUT/args"
printf '%s\n' "$COLOCD_YARN_TAGS" > "$OUT/tags"
printf '%s\n' "$MY_TAGS" > "$OUT/mytags"
printf '%s|%s\n' "$COLOCD_JOB_ID" "$COLOCD_JOB_KIND" > "$OUT/job"
echo "submitted to yarn"
echo "a warning" >&2
`)
	c, _ := newClient(t, nil, deadaddr.URL(t))
	tags := yarnclient.JobTags("j-42", "etl")
	tests := map[string]struct {
		tagEnv  string
		envFile string
	}{
		"default variable": {"", "tags"},
		"custom variable":  {"MY_TAGS", "mytags"},
	}
	for name, tt := range tests {
		t.Run(name, func(t *testing.T) {
			spec := yarnclient.CommandSpec{
				Argv:   []string{sh, "--conf", "spark.yarn.tags={{tags}}", "--name", "{{kind}}-{{job_id}}", "plain arg"},
				Env:    []string{"OUT=" + out},
				TagEnv: tt.tagEnv, JobID: "j-42", Kind: "etl", Timeout: 30 * time.Second,
			}
			output, err := c.SubmitCommand(ctxT(t), spec, tags)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff("submitted to yarn\na warning\n", string(output)); diff != "" {
				t.Errorf("output (-want +got)\n%s", diff)
			}
			wantArgs := "--conf\nspark.yarn.tags=colocd-job-j-42,colocd-kind-etl\n--name\netl-j-42\nplain arg\n"
			if diff := cmp.Diff(wantArgs, readFile(t, filepath.Join(out, "args"))); diff != "" {
				t.Errorf("argv (-want +got)\n%s", diff)
			}
			if got := readFile(t, filepath.Join(out, tt.envFile)); got != "colocd-job-j-42,colocd-kind-etl\n" {
				t.Errorf("tag variable = %q", got)
			}
			if got := readFile(t, filepath.Join(out, "job")); got != "j-42|etl\n" {
				t.Errorf("job variables = %q", got)
			}
		})
	}
}

func TestSubmitCommandFailures(t *testing.T) {
	c, _ := newClient(t, nil, deadaddr.URL(t))
	t.Run("non-zero exit", func(t *testing.T) {
		sh := script(t, "echo 'Exception in thread main: queue not found' >&2\nexit 3\n")
		out, err := c.SubmitCommand(ctxT(t), yarnclient.CommandSpec{Argv: []string{sh}}, nil)
		var ce *yarnclient.CommandError
		if !errors.Is(err, yarnclient.ErrCommandFailed) || !errors.As(err, &ce) || ce.ExitCode != 3 || ce.TimedOut {
			t.Fatalf("err = %#v, want ErrCommandFailed with exit code 3", err)
		}
		if !bytes.Contains(out, []byte("queue not found")) || !bytes.Equal(out, ce.Output) {
			t.Errorf("output %q does not carry stderr", out)
		}
	})
	t.Run("missing program", func(t *testing.T) {
		_, err := c.SubmitCommand(ctxT(t), yarnclient.CommandSpec{Argv: []string{filepath.Join(t.TempDir(), "nope")}}, nil)
		if !errors.Is(err, yarnclient.ErrCommandFailed) || !errors.Is(err, os.ErrNotExist) {
			t.Errorf("err = %v, want ErrCommandFailed wrapping ErrNotExist", err)
		}
	})
	t.Run("timeout kills the process group", func(t *testing.T) {
		// The background sleep inherits stdout. Wait returns only when every
		// holder of the pipe is gone, or after WaitDelay (5 s): returning
		// sooner proves the whole group, grandchild included, was killed.
		sh := script(t, "sleep 60 &\necho started\nwait\n")
		start := time.Now()
		out, err := c.SubmitCommand(ctxT(t), yarnclient.CommandSpec{Argv: []string{sh}, Timeout: 300 * time.Millisecond}, nil)
		elapsed := time.Since(start)
		var ce *yarnclient.CommandError
		if !errors.Is(err, yarnclient.ErrCommandTimeout) || !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) || !ce.TimedOut {
			t.Fatalf("err = %v, want ErrCommandTimeout", err)
		}
		if errors.Is(err, exec.ErrWaitDelay) || elapsed > 4*time.Second {
			t.Errorf("took %v (%v): the background child kept the output pipe open, so it was not killed", elapsed, err)
		}
		if !bytes.Contains(out, []byte("started")) {
			t.Errorf("output %q lost what was printed before the kill", out)
		}
	})
	t.Run("cancelled", func(t *testing.T) {
		sh := script(t, "sleep 60\n")
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := c.SubmitCommand(ctx, yarnclient.CommandSpec{Argv: []string{sh}}, nil)
		if !errors.Is(err, context.Canceled) || errors.Is(err, yarnclient.ErrCommandTimeout) {
			t.Errorf("err = %v, want context.Canceled and no timeout", err)
		}
	})
	invalid := map[string]struct {
		spec yarnclient.CommandSpec
		tags []string
	}{
		"no argv":          {yarnclient.CommandSpec{}, nil},
		"empty program":    {yarnclient.CommandSpec{Argv: []string{""}}, nil},
		"bad env":          {yarnclient.CommandSpec{Argv: []string{"true"}, Env: []string{"NOEQUALS"}}, nil},
		"negative timeout": {yarnclient.CommandSpec{Argv: []string{"true"}, Timeout: -time.Second}, nil},
		"tag with comma":   {yarnclient.CommandSpec{Argv: []string{"true"}}, []string{"a,b"}},
	}
	for name, tt := range invalid {
		t.Run("invalid/"+name, func(t *testing.T) {
			if _, err := c.SubmitCommand(ctxT(t), tt.spec, tt.tags); !errors.Is(err, yarnclient.ErrInvalid) {
				t.Errorf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestSubmitCommandOutputIsBounded(t *testing.T) {
	c, _ := newClient(t, nil, deadaddr.URL(t))
	sh := script(t, "i=0\nwhile [ $i -lt 3000 ]; do echo \"line $i of a chatty submitter, padded to be long enough\"; i=$((i+1)); done\necho END\n")
	for name, limit := range map[string]int{"default 64 KiB": 0, "1000 bytes": 1000} {
		t.Run(name, func(t *testing.T) {
			out, err := c.SubmitCommand(ctxT(t), yarnclient.CommandSpec{Argv: []string{sh}, MaxOutput: limit}, nil)
			if err != nil {
				t.Fatal(err)
			}
			want := limit
			if want == 0 {
				want = yarnclient.DefaultMaxOutput
			}
			if len(out) != want || !bytes.HasSuffix(out, []byte("END\n")) {
				t.Errorf("kept %d bytes ending %q; want the last %d ending END", len(out), out[max(0, len(out)-20):], want)
			}
		})
	}
}

// TestSubmitCommandThenFindByTag runs a fake "spark-submit" (this test binary
// in helper mode) that submits an app with the tags it was given, then finds
// the app by tag.
func TestSubmitCommandThenFindByTag(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	c, _ := newClient(t, nil, rm.URL())
	ctx := ctxT(t)
	tags := yarnclient.JobTags("01J0ABC", "wordcount")
	spec := yarnclient.CommandSpec{
		Argv:  []string{os.Args[0], "--class", "WordCount", "--tags={{tags}}"},
		Env:   []string{helperEnv + "=submit", "HELPER_RM_URL=" + rm.URL()},
		JobID: "01J0ABC", Kind: "wordcount", Timeout: 30 * time.Second,
	}
	if _, found, err := c.FindAppByTag(ctx, tags[0]); err != nil || found {
		t.Fatalf("before the command: found %v, %v; want nothing", found, err)
	}
	out, err := c.SubmitCommand(ctx, spec, tags)
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	app, found, err := c.FindAppByTag(ctx, tags[0])
	if err != nil || !found {
		t.Fatalf("FindAppByTag = %v, %v", found, err)
	}
	if !bytes.Contains(out, []byte("Submitted application "+app.ID)) {
		t.Errorf("output %q does not name %s", out, app.ID)
	}
	if app.ApplicationType != "SPARK" || app.User != "spark" || !app.HasTag(tags[1]) {
		t.Errorf("found app %+v", app)
	}
	// Another job's tag does not match it.
	if _, found, err := c.FindAppByTag(ctx, yarnclient.JobTags("other", "wordcount")[0]); err != nil || found {
		t.Errorf("another job's tag: found %v, %v", found, err)
	}
}
