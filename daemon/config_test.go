package daemon

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"
)

// env returns a LookupEnv over m (no process environment).
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func writeFile(tb testing.TB, name, body string) string {
	tb.Helper()
	p := filepath.Join(tb.TempDir(), name)
	if err := os.WriteFile(p, []byte(body), 0o600); err != nil {
		tb.Fatal(err)
	}
	return p
}

func TestConfigDefaults(t *testing.T) {
	got, err := Load(LoadOptions{LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(DefaultConfig(), got); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if err := DefaultConfig().Validate(); err != nil {
		t.Errorf("DefaultConfig().Validate() = %v", err)
	}
}

func TestConfigFileEnvFlags(t *testing.T) {
	file := writeFile(t, "c.yaml", `
listen: 127.0.0.1:9000
data_dir: /tmp/x
backend: yarn
yarn:
  rm_urls: [http://rm1:8088]
  user: alice
influx:
  url: http://influx:8086
  bucket: telegraf/autogen
goodness: {disk_read_mbps: 500, disk_write_mbps: 400, net_recv_mbps: 125, net_sent_mbps: 125}
learning:
  schedule: "*/5 * * * *"
  credit: symmetric
pipeline:
  fairness:
    enabled: true
    weights: {alice: 2}
tokens:
  - {token: file-token-123, user: ana, role: submitter}
`)
	e := map[string]string{
		"COLOCD_YARN_RM_URLS":              "http://rm1:8088, http://rm2:8088",
		"COLOCD_INFLUX_TOKEN":              "user:secret",
		"COLOCD_LEARNING_STEP_SIZE":        "0.2",
		"COLOCD_ADMISSION_TICK":            "5s",
		"COLOCD_ADMISSION_MODE":            "shadow",
		"COLOCD_LISTEN":                    "127.0.0.1:9001", // overridden by the flag below
		"COLOCD_LOG_LEVEL":                 "debug",
		"COLOCD_PIPELINE_WINDOW_ENABLED":   "false",
		"COLOCD_PIPELINE_FAIRNESS_WEIGHTS": "bob=3, carol=0.5",
		"COLOCD_TOKENS":                    "env-token-123:ops:admin,env-token-456:bot:reader",
		"COLOCD_INFLUXD":                   "/not/a/key", // a COLOCD_ variable that is not a key: ignored
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("listen", "", "")
	fs.String("data-dir", "", "")
	fs.String("log-level", "", "")
	if err := fs.Parse([]string{"--listen", "127.0.0.1:9002"}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(LoadOptions{File: file, Flags: fs, LookupEnv: env(e)})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen = "127.0.0.1:9002"
	want.DataDir = "/tmp/x"
	want.LogLevel = "debug"
	want.Backend = BackendYarn
	want.Yarn.RMURLs = []string{"http://rm1:8088", "http://rm2:8088"}
	want.Yarn.User = "alice"
	want.Influx.URL = "http://influx:8086"
	want.Influx.Bucket = "telegraf/autogen"
	want.Influx.Token = "user:secret"
	want.Goodness = GoodnessConfig{DiskReadMBps: 500, DiskWriteMBps: 400, NetRecvMBps: 125, NetSentMBps: 125}
	want.Learning.Schedule = "*/5 * * * *"
	want.Learning.Credit = CreditSymmetric
	want.Learning.StepSize = 0.2
	want.Admission.Tick = 5 * time.Second
	want.Admission.Mode = ModeShadow
	want.Pipeline.Window.Enabled = false
	want.Pipeline.Fairness.Enabled = true
	want.Pipeline.Fairness.Weights = map[string]float64{"bob": 3, "carol": 0.5}
	want.Tokens = []TokenConfig{{Token: "env-token-123", User: "ops", Role: "admin"}, {Token: "env-token-456", User: "bot", Role: "reader"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
}

func TestConfigFlagWithoutFileOrEnv(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("data-dir", "", "")
	fs.String("listen", "", "")
	if err := fs.Parse([]string{"--data-dir", "/srv/colocd"}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(LoadOptions{Flags: fs, LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	if got.DataDir != "/srv/colocd" || got.Listen != DefaultConfig().Listen {
		t.Errorf("data_dir %q listen %q, want /srv/colocd and the default listen", got.DataDir, got.Listen)
	}
}

func TestConfigTokenFile(t *testing.T) {
	tf := writeFile(t, "tokens", "# comment\n\nfile-secret-1:ana:submitter\nfile-secret-2:root:admin\n")
	got, err := Load(LoadOptions{LookupEnv: env(map[string]string{"COLOCD_TOKEN_FILE": tf})})
	if err != nil {
		t.Fatal(err)
	}
	want := []TokenConfig{{Token: "file-secret-1", User: "ana", Role: "submitter"}, {Token: "file-secret-2", User: "root", Role: "admin"}}
	if diff := cmp.Diff(want, got.Tokens); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	_, err = Load(LoadOptions{LookupEnv: env(map[string]string{"COLOCD_TOKEN_FILE": filepath.Join(t.TempDir(), "none")})})
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "token_file" {
		t.Errorf("missing token file: err = %v, want a ConfigError on token_file", err)
	}
}

// TestConfigBad loads every testdata/config/*.bad.yaml and checks the error
// names the key (prometheus config_test style).
func TestConfigBad(t *testing.T) {
	want := map[string]string{
		"unknown-top": "lisen", "unknown-nested": "learning.stepsize", "listen": "listen",
		"log-level": "log_level", "log-format": "log_format", "tls": "tls.key_file",
		"token-short": "tokens[0].token", "token-role": "tokens[0].role", "token-dup": "tokens[1].token",
		"max-body": "api.max_body_bytes", "backend": "backend", "sim-speed": "sim.speed",
		"sim-interval": "sim.metrics_interval", "yarn-rm": "yarn.rm_urls", "yarn-rm-url": "yarn.rm_urls[0]",
		"yarn-submit": "yarn.submit", "yarn-command": "yarn.command.argv", "influx-url": "influx.url",
		"goodness-yarn": "goodness.net_recv_mbps", "goodness-neg": "goodness.disk_read_mbps",
		"schedule": "learning.schedule", "step": "learning.step_size", "baseline": "learning.baseline",
		"alpha": "learning.recency_alpha", "self-prior": "learning.self_prior", "credit": "learning.credit", "aggregate": "learning.aggregate", "kinds": "learning.max_kinds_per_node",
		"tick": "admission.tick", "max-running": "admission.max_running", "mode": "admission.mode",
		"window": "pipeline.window.size", "kappa": "pipeline.fairness.kappa",
		"weights": "pipeline.fairness.weights[alice]", "select": "pipeline.select.mode",
		"retention": "retention.schedule", "retention-age": "retention.finished_after",
		"shutdown": "shutdown_timeout", "journal": "journal.max_decisions",
	}
	// Errors of the decoder (not of Validate) only mention the key.
	mention := map[string]string{"duration": "admission.tick", "type": "admission.max_running", "yaml-syntax": "parse"}
	files, err := filepath.Glob("testdata/config/*.bad.yaml")
	if err != nil || len(files) == 0 {
		t.Fatalf("no bad configs: %v", err)
	}
	seen := map[string]bool{}
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".bad.yaml")
		seen[name] = true
		t.Run(name, func(t *testing.T) {
			_, err := Load(LoadOptions{File: f, LookupEnv: env(nil)})
			if !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v, want one wrapping ErrConfig", err)
			}
			if m, ok := mention[name]; ok {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %q, want it to mention %q", err, m)
				}
				return
			}
			key, ok := want[name]
			if !ok {
				t.Fatalf("no expectation for %s (err %v)", name, err)
			}
			var ce *ConfigError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want *ConfigError", err, err)
			}
			if ce.Key != key {
				t.Errorf("key = %q, want %q (err %v)", ce.Key, key, err)
			}
		})
	}
	for name := range want {
		if !seen[name] {
			t.Errorf("testdata/config/%s.bad.yaml is missing", name)
		}
	}
}

func TestConfigEnvNames(t *testing.T) {
	if got := EnvName("yarn.rm_urls"); got != "COLOCD_YARN_RM_URLS" {
		t.Errorf("EnvName = %q", got)
	}
	// Every key is settable from the environment: a value that breaks it is
	// reported naming that key (or its first item).
	for _, tc := range []struct{ key, bad string }{
		{"listen", "nope"}, {"backend", "k8s"}, {"learning.schedule", "x"}, {"admission.mode", "x"},
		{"sim.speed", "-1"}, {"retention.schedule", "x"}, {"shutdown_timeout", "1ns"}, {"log_level", "loud"},
		{"pipeline.select.mode", "x"}, {"learning.credit", "x"}, {"api.max_body_bytes", "1"},
	} {
		_, err := Load(LoadOptions{LookupEnv: env(map[string]string{EnvName(tc.key): tc.bad})})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Key != tc.key {
			t.Errorf("%s=%q: err = %v, want a ConfigError naming %s", EnvName(tc.key), tc.bad, err, tc.key)
		}
	}
}

// TestShippedConfigs loads configs/colocd.yaml and configs/demo.yaml and
// checks that the production file shows every key.
func TestShippedConfigs(t *testing.T) {
	tf := writeFile(t, "tokens", "ops-secret-123:ops:admin\n")
	prod, err := Load(LoadOptions{File: "../configs/colocd.yaml", LookupEnv: env(map[string]string{"COLOCD_TOKEN_FILE": tf})})
	if err != nil {
		t.Fatalf("configs/colocd.yaml: %v", err)
	}
	if prod.Backend != BackendYarn || len(prod.Yarn.RMURLs) != 2 {
		t.Errorf("production config: backend %q, rm_urls %v", prod.Backend, prod.Yarn.RMURLs)
	}
	if diff := cmp.Diff(DefaultConfig().Influx.Schema, prod.Influx.Schema); diff != "" {
		t.Errorf("configs/colocd.yaml schema differs from the collector's defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultConfig().Pipeline, prod.Pipeline); diff != "" {
		t.Errorf("configs/colocd.yaml pipeline differs from the defaults (-want +got):\n%s", diff)
	}
	raw, err := os.ReadFile("../configs/colocd.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	var present []string
	var walk func(m map[string]any, prefix string)
	walk = func(m map[string]any, prefix string) {
		for k, v := range m {
			if sub, ok := v.(map[string]any); ok && !slices.Contains(mapKeys(), prefix+k) {
				walk(sub, prefix+k+".")
				continue
			}
			present = append(present, prefix+k)
		}
	}
	walk(doc, "")
	for _, k := range Keys() {
		if !slices.Contains(present, k) {
			t.Errorf("configs/colocd.yaml does not show key %s", k)
		}
	}

	demo, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatalf("configs/demo.yaml: %v", err)
	}
	want := []TokenConfig{{Token: "demo-submitter", User: "demo", Role: "submitter"}, {Token: "demo-admin", User: "admin", Role: "admin"}}
	if diff := cmp.Diff(want, demo.Tokens); diff != "" {
		t.Errorf("demo tokens (-want +got):\n%s", diff)
	}
	if demo.Backend != BackendSim || demo.Sim.Speed != 600 || demo.Listen != "127.0.0.1:8080" || demo.DataDir != "./.cache/demo" ||
		demo.Sim.Workload != "configs/workloads/paper-queue-a.yaml" || demo.Learning.Schedule != "@every 60s" {
		t.Errorf("demo config: %+v", demo)
	}
}
