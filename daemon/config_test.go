package daemon

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/pflag"
	"gopkg.in/yaml.v3"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon/api"
	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/metricsource"
	"github.com/colocd/colocd/internal/yarncluster"
)

// env returns a LookupEnv over m (no process environment, and none listed).
func env(m map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

// environ returns an Environ over m (no process environment).
func environ(m map[string]string) func() []string {
	return func() []string {
		var out []string
		for k, v := range m {
			out = append(out, k+"="+v)
		}
		return out
	}
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
		"COLOCD_INFLUXD":                   "/not/a/key", // a COLOCD_ variable that is not a key: left to its reader
		"PATH":                             "/usr/bin",
	}
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("listen", "", "")
	fs.String("data-dir", "", "")
	fs.String("log-level", "", "")
	if err := fs.Parse([]string{"--listen", "127.0.0.1:9002"}); err != nil {
		t.Fatal(err)
	}
	got, err := Load(LoadOptions{File: file, Flags: fs, Environ: environ(e)})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Listen = "127.0.0.1:9002"
	want.DataDir = "/tmp/x"
	want.LogLevel = "debug"
	want.Backend = backendYarn
	want.Yarn.RMURLs = []string{"http://rm1:8088", "http://rm2:8088"}
	want.Yarn.User = "alice"
	want.Influx.URL = "http://influx:8086"
	want.Influx.Bucket = "telegraf/autogen"
	want.Influx.Token = "user:secret"
	want.Goodness = goodnessConfig{DiskReadMBps: 500, DiskWriteMBps: 400, NetRecvMBps: 125, NetSentMBps: 125}
	want.Learning.Schedule = "*/5 * * * *"
	want.Learning.Credit = engine.CreditSymmetric
	want.Learning.StepSize = 0.2
	want.Admission.Tick = 5 * time.Second
	want.Admission.Mode = engine.ModeShadow
	want.Pipeline.Window.Enabled = false
	want.Pipeline.Fairness.Enabled = true
	want.Pipeline.Fairness.Weights = map[string]float64{"bob": 3, "carol": 0.5}
	want.Tokens = []tokenConfig{{Token: "env-token-123", User: "ops", Role: api.RoleAdmin}, {Token: "env-token-456", User: "bot", Role: api.RoleReader}}
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

// TestConfigFlagErrorNamesNoVariable: a bad flag value is the flag's, even
// when the environment sets the same key.
func TestConfigFlagErrorNamesNoVariable(t *testing.T) {
	fs := pflag.NewFlagSet("t", pflag.ContinueOnError)
	fs.String("listen", "", "")
	if err := fs.Parse([]string{"--listen", "nope"}); err != nil {
		t.Fatal(err)
	}
	_, err := Load(LoadOptions{Flags: fs, Environ: environ(map[string]string{"COLOCD_LISTEN": "127.0.0.1:9000"})})
	var ce *configError
	if !errors.As(err, &ce) || ce.Key != "listen" || ce.Env != "" {
		t.Errorf("err = %v, want a configError on listen naming no variable", err)
	}
}

func TestConfigTokenFile(t *testing.T) {
	tf := writeFile(t, "tokens", "# comment\n\nfile-secret-1:ana:submitter\nfile-secret-2:root:admin\n")
	got, err := Load(LoadOptions{LookupEnv: env(map[string]string{"COLOCD_TOKEN_FILE": tf})})
	if err != nil {
		t.Fatal(err)
	}
	want := []tokenConfig{{Token: "file-secret-1", User: "ana", Role: api.RoleSubmitter}, {Token: "file-secret-2", User: "root", Role: api.RoleAdmin}}
	if diff := cmp.Diff(want, got.Tokens); diff != "" {
		t.Errorf("tokens (-want +got):\n%s", diff)
	}
	_, err = Load(LoadOptions{LookupEnv: env(map[string]string{"COLOCD_TOKEN_FILE": filepath.Join(t.TempDir(), "none")})})
	var ce *configError
	if !errors.As(err, &ce) || ce.Key != "token_file" {
		t.Errorf("missing token file: err = %v, want a configError on token_file", err)
	}
}

// TestConfigBad loads every testdata/config/*.bad.yaml and checks the error
// names the key (prometheus config_test style).
func TestConfigBad(t *testing.T) {
	want := map[string]string{
		"unknown-top": "lisen", "unknown-nested": "learning.stepsize", "listen": "listen",
		"log-level": "log_level", "log-format": "log_format", "tls": "tls.key_file",
		"token-short": "tokens[0].token", "token-role": "tokens[0].role", "token-norole": "tokens[0].role", "token-dup": "tokens[1].token",
		"max-body": "api.max_body_bytes", "backend": "backend", "sim-speed": "sim.speed",
		"sim-interval": "sim.metrics_interval", "yarn-rm": "yarn.rm_urls", "yarn-rm-url": "yarn.rm_urls[0]",
		"yarn-submit": "yarn.submit", "yarn-command": "yarn.command.argv", "influx-url": "influx.url",
		"yarn-command-var": "yarn.command.argv[5]", "yarn-command-param": "yarn.command.argv[1]",
		"yarn-command-pattern": "yarn.command.params[0].pattern", "yarn-command-env": "yarn.command.env[0]",
		"goodness-yarn": "goodness.net_recv_mbps", "goodness-neg": "goodness.disk_read_mbps", "reference-vcores": "goodness.reference_vcores",
		"schedule": "learning.schedule", "step": "learning.step_size", "baseline": "learning.baseline",
		"alpha": "learning.recency_alpha", "self-prior": "learning.self_prior", "credit": "learning.credit", "aggregate": "learning.aggregate", "kinds": "learning.max_kinds_per_node",
		"tick": "admission.tick", "max-running": "admission.max_running", "mode": "admission.mode", "backoff": "admission.backoff.max",
		"window": "pipeline.window.size", "kappa": "pipeline.fairness.kappa",
		"weights": "pipeline.fairness.weights[alice]", "select": "pipeline.select.mode",
		"retention": "retention.schedule", "retention-age": "retention.finished_after",
		"shutdown": "shutdown_timeout", "duration": "admission.tick", "type": "admission.max_running",
		"case-twins": "listen", "fraction": "admission.max_running", "overflow": "api.max_body_bytes",
		"bare-duration": "retention.finished_after", "negative-duration": "yarn.timeout", "bool-yes": "pipeline.window.enabled",
		"journal": "journal.max_decisions",
		"ha-sim":  "ha.zookeeper.connect", "ha-command": "yarn.submit", "ha-connect": "ha.zookeeper.connect",
		"ha-root": "ha.zookeeper.root", "ha-auth": "ha.zookeeper.auth", "ha-session": "ha.zookeeper.session_timeout",
		"ha-keep": "ha.keep_entries", "ha-forward": "ha.forward_key_file",
		"api-auth": "api.auth", "api-acl": "api.acl.admin", "api-kerberos": "api.kerberos.keytab",
		"api-auth-to-local": "api.kerberos.auth_to_local", "api-proxy-hosts": "api.proxy_users[0].hosts",
		"api-proxy-nobody": "api.proxy_users[0].users", "tls-client": "tls.client_ca_file",
		"token-expires": "tokens[0].expires", "yarn-hadoop-conf": "yarn.hadoop_conf_dir", "yarn-hadoop-rm": "yarn.hadoop_conf_dir",
		"yarn-cert": "yarn.key_file", "yarn-cert-file": "yarn.cert_file", "container-usage": "influx.url",
		"node-group-hosts": "goodness.node_groups[0].hosts", "node-group-empty": "goodness.node_groups[0]",
		"node-group-neg": "goodness.node_groups[1].net_recv_mbps", "node-group-key": "goodness.node_groups[0].disk_read_mpbs",
	}
	// A file that is not YAML has no key to name.
	mention := map[string]string{"yaml-syntax": "parse"}
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
			var ce *configError
			if !errors.As(err, &ce) {
				t.Fatalf("err = %v (%T), want *configError", err, err)
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
	if got := envName("yarn.rm_urls"); got != "COLOCD_YARN_RM_URLS" {
		t.Errorf("envName = %q", got)
	}
	// Every key is settable from the environment: a value that breaks it is
	// reported naming that key (or its first item).
	for _, tc := range []struct{ key, bad string }{
		{"listen", "nope"}, {"backend", "k8s"}, {"learning.schedule", "x"}, {"admission.mode", "x"},
		{"sim.speed", "-1"}, {"retention.schedule", "x"}, {"shutdown_timeout", "1ns"}, {"log_level", "loud"},
		{"pipeline.select.mode", "x"}, {"learning.credit", "x"}, {"api.max_body_bytes", "1"},
		{"data_dir_reserve_bytes", "-1"}, {"data_dir_reserve_bytes", "64MiB"},
	} {
		_, err := Load(LoadOptions{Environ: environ(map[string]string{envName(tc.key): tc.bad})})
		var ce *configError
		if !errors.As(err, &ce) || ce.Key != tc.key || ce.Env != envName(tc.key) {
			t.Errorf("%s=%q: err = %v, want a configError naming %s and its variable", envName(tc.key), tc.bad, err, tc.key)
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
	if prod.Backend != backendYarn || len(prod.Yarn.RMURLs) != 2 {
		t.Errorf("production config: backend %q, rm_urls %v", prod.Backend, prod.Yarn.RMURLs)
	}
	if diff := cmp.Diff(DefaultConfig().Influx.Schema, prod.Influx.Schema); diff != "" {
		t.Errorf("configs/colocd.yaml schema differs from the collector's defaults (-want +got):\n%s", diff)
	}
	if diff := cmp.Diff(DefaultConfig().Prometheus, prod.Prometheus); diff != "" {
		t.Errorf("configs/colocd.yaml prometheus differs from the defaults (-want +got):\n%s", diff)
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
	for _, k := range configKeys() {
		if !slices.Contains(present, k) {
			t.Errorf("configs/colocd.yaml does not show key %s", k)
		}
	}

	demo, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatalf("configs/demo.yaml: %v", err)
	}
	want := []tokenConfig{{Token: "demo-submitter", User: "demo", Role: api.RoleSubmitter}, {Token: "demo-admin", User: "admin", Role: api.RoleAdmin}}
	if diff := cmp.Diff(want, demo.Tokens); diff != "" {
		t.Errorf("demo tokens (-want +got):\n%s", diff)
	}
	if demo.Backend != backendSim || demo.Sim.Speed != 60 || demo.Listen != "127.0.0.1:8080" || demo.DataDir != "./.cache/demo" ||
		demo.Sim.Workload != "configs/workloads/paper-queue-a.yaml" || demo.Learning.Schedule != "@every 60s" {
		t.Errorf("demo config: %+v", demo)
	}
}

// TestConfigRefusals loads, as `colocd serve` does, configs that used to
// pass with a value silently ignored, coerced or truncated, and checks
// that each stops start-up with a *configError naming the key (or the
// variable) and what is wrong.
func TestConfigRefusals(t *testing.T) {
	for _, tc := range []struct {
		name    string
		file    string            // YAML, "" for none
		env     map[string]string // COLOCD_* variables
		key     string            // configError.Key
		envName string            // configError.Env
		mention []string          // in the message
	}{
		// The environment names no key.
		{name: "env typo", env: map[string]string{"COLOCD_ADMISSION_MAX_RUNING": "3"},
			envName: "COLOCD_ADMISSION_MAX_RUNING", mention: []string{"did you mean COLOCD_ADMISSION_MAX_RUNNING?"}},
		{name: "env unknown", env: map[string]string{"COLOCD_FOO": "1"}, envName: "COLOCD_FOO", mention: []string{"no config key"}},
		{name: "env typo among good ones", env: map[string]string{"COLOCD_LEARNING_STEPSIZE": "0.1", "COLOCD_LISTEN": "127.0.0.1:9000", "COLOCD_SERVER": "http://x"},
			envName: "COLOCD_LEARNING_STEPSIZE", mention: []string{"did you mean COLOCD_LEARNING_STEP_SIZE?"}},
		{name: "env section", env: map[string]string{"COLOCD_ADMISSION": "x"}, envName: "COLOCD_ADMISSION"},

		// Keys that viper would merge silently.
		{name: "file case twins", file: "Listen: 127.0.0.1:1\nlisten: 127.0.0.1:2\n", key: "listen",
			mention: []string{`"Listen" on line 1`, `"listen" on line 2`}},
		{name: "file nested case twins", file: "admission:\n  max_running: 1\n  MAX_RUNNING: 2\n", key: "admission.max_running",
			mention: []string{`"max_running" on line 2`, `"MAX_RUNNING" on line 3`}},
		{name: "file section twins", file: "admission:\n  tick: 5s\nAdmission:\n  mode: shadow\n", key: "admission",
			mention: []string{`"admission" on line 1`, `"Admission" on line 3`}},
		{name: "file repeated key", file: "learning:\n  clip: 1\n  clip: 2\n", key: "learning.clip", mention: []string{"line 2", "line 3"}},
		{name: "file token field twins", file: "tokens:\n  - {token: abcdefgh1, user: a, User: b, role: admin}\n", key: "tokens[0].user"},

		// Integers.
		{name: "file fraction", file: "admission:\n  max_running: 3.7\n", key: "admission.max_running", mention: []string{"integer", "3.7"}},
		{name: "env fraction", env: map[string]string{"COLOCD_ADMISSION_MAX_RUNNING": "3.7"}, key: "admission.max_running",
			envName: "COLOCD_ADMISSION_MAX_RUNNING", mention: []string{"integer", "3.7"}},
		{name: "file fraction window", file: "pipeline:\n  window:\n    size: 2.5\n", key: "pipeline.window.size", mention: []string{"2.5"}},
		{name: "file fraction seed", file: "sim:\n  seed: 1.5\n", key: "sim.seed", mention: []string{"1.5"}},
		{name: "file fraction explore observations", file: "pipeline:\n  select:\n    explore_observations: 0.5\n",
			key: "pipeline.select.explore_observations", mention: []string{"0.5"}},
		{name: "file overflow exponent", file: "api:\n  max_body_bytes: 1e30\n", key: "api.max_body_bytes",
			mention: []string{"out of range for an integer", "1e30"}},
		{name: "file overflow digits", file: "api:\n  max_body_bytes: 99999999999999999999\n", key: "api.max_body_bytes",
			mention: []string{"out of range for an integer", "99999999999999999999"}},
		{name: "env overflow digits", env: map[string]string{"COLOCD_API_MAX_BODY_BYTES": "99999999999999999999"}, key: "api.max_body_bytes",
			envName: "COLOCD_API_MAX_BODY_BYTES", mention: []string{"out of range for an integer", "99999999999999999999"}},
		{name: "file negative seed", file: "sim:\n  seed: -1\n", key: "sim.seed", mention: []string{"-1"}},
		{name: "env empty integer", env: map[string]string{"COLOCD_ADMISSION_MAX_RUNNING": ""}, key: "admission.max_running",
			envName: "COLOCD_ADMISSION_MAX_RUNNING", mention: []string{"empty"}},
		{name: "file null integer", file: "admission:\n  max_running:\n", key: "admission.max_running", mention: []string{"no value"}},

		// Durations.
		{name: "file bare number duration", file: "retention:\n  finished_after: 3600\n", key: "retention.finished_after",
			mention: []string{"unit", "3600"}},
		{name: "env bare number duration", env: map[string]string{"COLOCD_SHUTDOWN_TIMEOUT": "30"}, key: "shutdown_timeout",
			envName: "COLOCD_SHUTDOWN_TIMEOUT", mention: []string{"unit", "30"}},
		{name: "env not a duration", env: map[string]string{"COLOCD_ADMISSION_TICK": "abc"}, key: "admission.tick",
			envName: "COLOCD_ADMISSION_TICK", mention: []string{`"abc"`}},
		{name: "file negative duration", file: "yarn:\n  timeout: -5s\n", key: "yarn.timeout", mention: []string{"negative", "-5s"}},
		{name: "env negative duration", env: map[string]string{"COLOCD_INFLUX_STALE_AFTER": "-1m"}, key: "influx.stale_after",
			envName: "COLOCD_INFLUX_STALE_AFTER", mention: []string{"negative"}},

		// Booleans.
		{name: "file yes", file: "pipeline:\n  window:\n    enabled: yes\n", key: "pipeline.window.enabled", mention: []string{"true or false", "yes"}},
		{name: "env yes", env: map[string]string{"COLOCD_PIPELINE_FIT_ENABLED": "yes"}, key: "pipeline.fit.enabled",
			envName: "COLOCD_PIPELINE_FIT_ENABLED", mention: []string{"true or false", "yes"}},
		{name: "file number bool", file: "pipeline:\n  fit:\n    per_node: 2\n", key: "pipeline.fit.per_node", mention: []string{"true or false", "2"}},

		// Numbers.
		{name: "file infinite", file: "learning:\n  clip: .inf\n", key: "learning.clip", mention: []string{"finite"}},
		{name: "env infinite", env: map[string]string{"COLOCD_LEARNING_CLIP": "Inf"}, key: "learning.clip",
			envName: "COLOCD_LEARNING_CLIP", mention: []string{"finite"}},
		{name: "env weight twice", env: map[string]string{"COLOCD_PIPELINE_FAIRNESS_WEIGHTS": "alice=1,bob=2,alice=3"},
			key: "pipeline.fairness.weights[alice]", envName: "COLOCD_PIPELINE_FAIRNESS_WEIGHTS", mention: []string{"twice"}},

		// Host names.
		{name: "file hosts mode", file: "metrics:\n  hosts:\n    mode: fqdn\n", key: "metrics.hosts.mode", mention: []string{"same, short or domain", "fqdn"}},
		{name: "file hosts domain missing", file: "metrics:\n  hosts:\n    mode: domain\n", key: "metrics.hosts.domain"},
		{name: "file hosts map list", file: "metrics:\n  hosts:\n    map: {node1: [a, b]}\n", key: "metrics.hosts.map[node1]", mention: []string{"a list"}},
		{name: "env hosts map item", env: map[string]string{"COLOCD_METRICS_HOSTS_MAP": "node1"}, key: "metrics.hosts.map",
			envName: "COLOCD_METRICS_HOSTS_MAP", mention: []string{"name=name"}},

		// Journal sizes that would not fit in memory.
		{name: "env journal decisions", env: map[string]string{"COLOCD_JOURNAL_MAX_DECISIONS": "200000000"}, key: "journal.max_decisions",
			envName: "COLOCD_JOURNAL_MAX_DECISIONS", mention: []string{"200000000"}},
		{name: "file journal goodness", file: "journal:\n  max_goodness: 100000000\n", key: "journal.max_goodness", mention: []string{"100000000"}},

		// Sections decoded into their owners' types (queue, engine, profile,
		// yarncluster) and validated there: the error names the whole key.
		{name: "scorer objective", env: map[string]string{"COLOCD_PIPELINE_PREFERENCE_OBJECTIVE": "speed"},
			key: "pipeline.preference.objective", envName: "COLOCD_PIPELINE_PREFERENCE_OBJECTIVE", mention: []string{`"speed"`, "rate or goodness"}},
		{name: "bandit baseline", env: map[string]string{"COLOCD_LEARNING_BASELINE": "median"},
			key: "learning.baseline", envName: "COLOCD_LEARNING_BASELINE", mention: []string{`"median"`, "global, row or recency"}},
		{name: "scorer risk", file: "pipeline:\n  preference:\n    risk: 11\n", key: "pipeline.preference.risk", mention: []string{"[-10, 10]"}},
		{name: "scorer size weight", file: "pipeline:\n  preference:\n    size_weight: 1.5\n", key: "pipeline.preference.size_weight", mention: []string{"[0, 1]"}},
		{name: "lookahead max uncertainty", file: "pipeline:\n  lookahead:\n    enabled: true\n    max_uncertainty: -0.5\n", key: "pipeline.lookahead", mention: []string{"max_uncertainty", "[0, 100]"}},
		{name: "drain ratio", file: "pipeline:\n  preference:\n    drain_ratio: -1\n", key: "pipeline.preference.drain_ratio", mention: []string{"[0, 1000]"}},
		{name: "within kind", file: "pipeline:\n  preference:\n    within_kind: biggest\n", key: "pipeline.preference.within_kind", mention: []string{`"biggest"`, "oldest or largest"}},
		{name: "queue kappa", file: "pipeline:\n  fairness:\n    enabled: true\n    kappa: 2\n", key: "pipeline.fairness.kappa"},
		{name: "profile saturation", file: "learning:\n  profile:\n    saturation: 1\n", key: "learning.profile.saturation", mention: []string{"[0, 1)"}},
		{name: "yarn submit", file: "backend: yarn\nyarn:\n  rm_urls: [http://127.0.0.1:8088]\n  submit: ftp\ninflux:\n  url: http://127.0.0.1:8086\n  org: o\n  bucket: b\n  token: t\n",
			key: "yarn.submit", mention: []string{`"ftp"`}},
		{name: "metrics source", file: "backend: yarn\nyarn:\n  rm_urls: [http://127.0.0.1:8088]\nmetrics:\n  source: graphite\n",
			key: "metrics.source", mention: []string{`"graphite"`, "influxdb or prometheus"}},
		{name: "influx language", env: map[string]string{"COLOCD_BACKEND": "yarn", "COLOCD_YARN_RM_URLS": "http://127.0.0.1:8088",
			"COLOCD_INFLUX_URL": "http://127.0.0.1:8086", "COLOCD_INFLUX_BUCKET": "b", "COLOCD_INFLUX_LANGUAGE": "sql"},
			key: "influx.language", envName: "COLOCD_INFLUX_LANGUAGE", mention: []string{`"sql"`, "flux or influxql"}},
		{name: "prometheus host label", file: "backend: yarn\nyarn:\n  rm_urls: [http://127.0.0.1:8088]\nmetrics:\n  source: prometheus\n" +
			"prometheus:\n  url: http://127.0.0.1:9090\n  host_label: 'not a label'\n",
			key: "prometheus.host_label", mention: []string{"not a label"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := LoadOptions{Environ: environ(tc.env)}
			if tc.file != "" {
				opts.File = writeFile(t, "colocd.yaml", tc.file)
			}
			_, err := Load(opts)
			var ce *configError
			if !errors.As(err, &ce) || !errors.Is(err, ErrConfig) {
				t.Fatalf("err = %v (%T), want a *configError wrapping ErrConfig", err, err)
			}
			if ce.Key != tc.key || ce.Env != tc.envName {
				t.Errorf("key %q, variable %q; want %q, %q (err %v)", ce.Key, ce.Env, tc.key, tc.envName, err)
			}
			for _, s := range append([]string{tc.key, tc.envName}, tc.mention...) {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("err %q does not mention %q", err, s)
				}
			}
		})
	}
}

// TestConfigAccepted: values typed in the ways a user plausibly would
// load as meant, and the variables that are not config keys are left to
// their readers.
func TestConfigAccepted(t *testing.T) {
	file := writeFile(t, "c.yaml", `
admission:
  max_running: 010            # decimal, not octal
api:
  max_body_bytes: 1e6          # an integral number in exponent form
retention:
  finished_after: 0            # a bare zero needs no unit
pipeline:
  fairness:
    weights: {Alice: 2, bob: 0.5}  # group names keep their case
metrics:
  hosts:
    mode: short
    map: {Spare7.DC.example.com: spare-7}  # names keep their case
influx:
  token: 12345678              # a string key given digits keeps them as typed
yarn:
  user: 0123
  rm_urls: [http://rm1:8088, 8088]
`)
	e := map[string]string{
		"COLOCD_PIPELINE_WINDOW_ENABLED":   "1",
		"COLOCD_PIPELINE_WINDOW_SIZE":      " 64 ",
		"COLOCD_LEARNING_CLIP":             "2.5",
		"COLOCD_LEARNING_BASELINE":         "Recency",
		"COLOCD_SIM_SEED":                  "18446744073709551615",
		"COLOCD_PIPELINE_FAIRNESS_WEIGHTS": "Carol=3",
	}
	for name := range envNotKeys {
		e[name] = "anything"
	}
	got, err := Load(LoadOptions{File: file, Environ: environ(e)})
	if err != nil {
		t.Fatal(err)
	}
	want := DefaultConfig()
	want.Admission.MaxRunning = 10
	want.API.MaxBodyBytes = 1_000_000
	want.Retention.FinishedAfter = 0
	want.Pipeline.Fairness.Weights = map[string]float64{"Carol": 3}
	want.Influx.Token = "12345678"
	want.Yarn.User = "0123"
	want.Yarn.RMURLs = []string{"http://rm1:8088", "8088"}
	want.Pipeline.Window.Enabled = true
	want.Pipeline.Window.Size = 64
	want.Learning.Clip = 2.5
	want.Learning.Baseline = bandit.Recency
	want.Sim.Seed = 18446744073709551615
	want.Metrics.Hosts.Mode = metricsource.HostsShort
	want.Metrics.Hosts.Map = map[string]string{"Spare7.DC.example.com": "spare-7"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("config (-want +got):\n%s", diff)
	}
	delete(e, "COLOCD_PIPELINE_FAIRNESS_WEIGHTS")
	if got, err = Load(LoadOptions{File: file, Environ: environ(e)}); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(map[string]float64{"Alice": 2, "bob": 0.5}, got.Pipeline.Fairness.Weights); diff != "" {
		t.Errorf("weights from the file (-want +got):\n%s", diff)
	}
}

// TestEnvNotKeysComplete finds every COLOCD_* name in the repository and
// checks that it is a key's variable or listed in envNotKeys, so that a
// variable read elsewhere is not refused at start-up, and that every
// listed one is still read somewhere.
func TestEnvNotKeysComplete(t *testing.T) {
	keyVars := map[string]bool{}
	for _, k := range configKeys() {
		keyVars[envName(k)] = true
	}
	for name := range envNotKeys {
		if keyVars[name] {
			t.Errorf("%s is listed as not a key but is the variable of a key", name)
		}
	}
	// These tests name wrong variables on purpose.
	deliberate := map[string]bool{"daemon/config_test.go": true, "cmd/colocd/config_refusal_test.go": true}
	re := regexp.MustCompile(`COLOCD_[A-Z0-9_]*`)
	found := map[string]string{} // name → a file naming it
	err := filepath.WalkDir("..", func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel("..", path)
		if d.IsDir() {
			if rel != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
				return filepath.SkipDir
			}
			return nil
		}
		switch filepath.Ext(path) {
		case ".go", ".sh", ".md", ".yaml", ".yml", ".service", ".conf":
		default:
			if d.Name() != "Makefile" {
				return nil
			}
		}
		if deliberate[filepath.ToSlash(rel)] {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		for _, name := range re.FindAllString(string(b), -1) {
			if !strings.HasSuffix(name, "_") { // "COLOCD_" + key: a prefix
				found[name] = rel
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	for name, file := range found {
		if !keyVars[name] && envNotKeys[name] == "" {
			t.Errorf("%s (in %s) is neither a config key's variable nor in envNotKeys: colocd serve would refuse it", name, file)
		}
	}
	for name := range envNotKeys {
		if found[name] == "" {
			t.Errorf("envNotKeys lists %s, which nothing in the repository reads", name)
		}
	}
}

// TestYarnCommandConfig: yarn.command's parameters are a list of sections
// in the file, its env and inherit_env lists (also from the environment).
func TestYarnCommandConfig(t *testing.T) {
	f := writeFile(t, "colocd.yaml", `
backend: yarn
influx: {url: "http://127.0.0.1:8086", bucket: telegraf/autogen}
goodness: {disk_read_mbps: 500, disk_write_mbps: 500, net_recv_mbps: 125, net_sent_mbps: 125}
yarn:
  rm_urls: ["http://rm1:8088"]
  submit: command
  command:
    argv: [spark-submit, --queue, "{{queue}}", --conf, "spark.yarn.tags={{tags}}", --class, "{{param.main_class}}", "{{param.jar}}"]
    env: [SPARK_HOME=/opt/spark]
    dir: /var/lib/colocd/submit
    params:
      - {name: main_class, pattern: '[A-Za-z_][A-Za-z0-9_.$]*', required: true}
      - name: jar
        pattern: 'hdfs:///apps/[A-Za-z0-9_./-]+\.jar'
        max_length: 1024
`)
	cfg, err := Load(LoadOptions{File: f, LookupEnv: env(map[string]string{"COLOCD_YARN_COMMAND_INHERIT_ENV": "PATH,JAVA_HOME"})})
	if err != nil {
		t.Fatal(err)
	}
	want := yarncluster.CommandConfig{
		Argv:    []string{"spark-submit", "--queue", "{{queue}}", "--conf", "spark.yarn.tags={{tags}}", "--class", "{{param.main_class}}", "{{param.jar}}"},
		Timeout: 5 * time.Minute, Env: []string{"SPARK_HOME=/opt/spark"}, InheritEnv: []string{"PATH", "JAVA_HOME"},
		Dir: "/var/lib/colocd/submit",
		Params: []yarncluster.CommandParam{
			{Name: "main_class", Pattern: `[A-Za-z_][A-Za-z0-9_.$]*`, Required: true},
			{Name: "jar", Pattern: `hdfs:///apps/[A-Za-z0-9_./-]+\.jar`, MaxLength: 1024},
		},
	}
	if diff := cmp.Diff(want, cfg.Yarn.Command); diff != "" {
		t.Errorf("yarn.command (-want +got):\n%s", diff)
	}
	_, err = Load(LoadOptions{File: f, LookupEnv: env(map[string]string{"COLOCD_YARN_COMMAND_PARAMS": "jar"})})
	var ce *configError
	if !errors.As(err, &ce) || ce.Key != "yarn.command.params" {
		t.Errorf("params from the environment: %v, want an error naming yarn.command.params", err)
	}
}

// goodness.reference_vcores reaches the engine's reference node: the
// configured value, else the backend's (the simulator's workload node).
func TestReferenceVCores(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "c.yaml")
	if err := os.WriteFile(file, []byte("goodness: {reference_vcores: 24}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(LoadOptions{File: file})
	if err != nil {
		t.Fatal(err)
	}
	if got := cfg.Goodness.referenceVCores(12); got != 24 {
		t.Errorf("configured 24, backend 12: %d, want 24", got)
	}
	if got := DefaultConfig().Goodness.referenceVCores(12); got != 12 {
		t.Errorf("not configured, backend 12: %d, want the backend's 12", got)
	}
}
