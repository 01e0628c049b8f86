package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// serveEnv is what `colocd serve` needs to start on the simulator from
// this directory: a token and the workload.
func serveEnv(t *testing.T) {
	t.Setenv("COLOCD_TOKENS", "refusal-test-token:ops:admin")
	t.Setenv("COLOCD_SIM_WORKLOAD", "../../configs/workloads/paper-queue-a.yaml")
}

// runServe runs `colocd serve args` in-process under ctx.
func runServe(ctx context.Context, args ...string) (code int, stderr string) {
	var out, errOut bytes.Buffer
	code = run(ctx, append([]string{"serve"}, args...), &out, &errOut)
	return code, errOut.String()
}

// TestServeRefusesConfigMistakes: `colocd serve` with a misspelt COLOCD_*
// variable, a value of the wrong type or a config file naming a key twice
// exits with the configuration status, naming the variable or key,
// before it starts anything.
func TestServeRefusesConfigMistakes(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		name    string
		env     map[string]string
		file    string
		mention []string // in stderr
	}{
		{"env typo", map[string]string{"COLOCD_ADMISSION_MAX_RUNING": "3"}, "",
			[]string{"environment variable COLOCD_ADMISSION_MAX_RUNING", "did you mean COLOCD_ADMISSION_MAX_RUNNING?"}},
		{"env unknown", map[string]string{"COLOCD_FOO": "1"}, "", []string{"environment variable COLOCD_FOO"}},
		{"env fraction", map[string]string{"COLOCD_ADMISSION_MAX_RUNNING": "3.7"}, "",
			[]string{"config key admission.max_running (environment variable COLOCD_ADMISSION_MAX_RUNNING)", "3.7"}},
		{"env overflow", map[string]string{"COLOCD_API_MAX_BODY_BYTES": "99999999999999999999"}, "",
			[]string{"config key api.max_body_bytes", "out of range for an integer", "99999999999999999999"}},
		{"env journal too large", map[string]string{"COLOCD_JOURNAL_MAX_DECISIONS": "200000000"}, "",
			[]string{"config key journal.max_decisions", "200000000"}},
		{"file key twice", nil, "Listen: 127.0.0.1:0\nlisten: 127.0.0.1:0\n", []string{"config key listen", `"Listen" on line 1`}},
		{"file bare duration", nil, "retention:\n  finished_after: 3600\n", []string{"config key retention.finished_after", "unit"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			serveEnv(t)
			for k, v := range tc.env {
				t.Setenv(k, v)
			}
			args := []string{"--data-dir", t.TempDir(), "--listen", "127.0.0.1:0"}
			if tc.file != "" {
				p := filepath.Join(t.TempDir(), "colocd.yaml")
				if err := os.WriteFile(p, []byte(tc.file), 0o600); err != nil {
					t.Fatal(err)
				}
				args = append(args, "--config", p)
			}
			// Were the mistake let through, serve would run until this
			// deadline and exit 0.
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			code, stderr := runServe(ctx, args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (configuration error); stderr %q", code, exitUsage, stderr)
			}
			for _, m := range tc.mention {
				if !strings.Contains(stderr, m) {
					t.Errorf("stderr %q does not mention %q", stderr, m)
				}
			}
		})
	}
}

// TestCommandsAcceptVariablesThatAreNotKeys sets every COLOCD_* variable
// that is not a config key (the client's, the Makefile's, the tests'), as
// a developer's shell may have them, and checks that serve, sim, yarn and
// the client commands still run.
func TestCommandsAcceptVariablesThatAreNotKeys(t *testing.T) {
	isolate(t)
	for name := range daemon.EnvNotKeys() {
		t.Setenv(name, "set-by-the-shell")
	}
	t.Setenv("COLOCD_REQUIRE_TOOLS", "") // as make unit sets it
	t.Setenv("COLOCD_CONFIG", "")        // read as the config file: no file
	api := startAPI(t)
	t.Setenv("COLOCD_SERVER", api.url)
	t.Setenv("COLOCD_TOKEN", cliReader)

	t.Run("serve", func(t *testing.T) {
		serveEnv(t)
		ctx, cancel := context.WithCancel(context.Background())
		cancel() // load the config, start, stop at once
		code, stderr := runServe(ctx, "--data-dir", t.TempDir(), "--listen", "127.0.0.1:0")
		if code != exitOK || !strings.Contains(stderr, "colocd serving") {
			t.Errorf("exit %d, stderr %q; want 0 after serving", code, stderr)
		}
	})
	t.Run("sim", func(t *testing.T) {
		if code, _, stderr := runCmd(t, "sim", "--workload", writeSimWorkload(t), "--policy", "ra"); code != exitOK {
			t.Errorf("exit %d: %s", code, stderr)
		}
	})
	t.Run("yarn", func(t *testing.T) {
		rm := yarntest.NewFakeRM(t)
		rm.AddNode(yarnclient.Node{ID: "worker1:8041"})
		if code, out, stderr := runCmd(t, "yarn", "nodes", "--rm", rm.URL()); code != exitOK || !strings.Contains(out, "worker1") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
	t.Run("client", func(t *testing.T) {
		if code, out, stderr := runCmd(t, "queue"); code != exitOK || !strings.Contains(out, "no jobs") {
			t.Errorf("exit %d, stdout %q, stderr %q", code, out, stderr)
		}
	})
}
