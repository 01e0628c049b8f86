package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/daemon"
)

// TestConfigCheck: colocd config check validates and prints each key's
// value and source (file:line, env, default), secrets hidden; the default
// path is read when it exists; a config that cannot be read or does not
// validate exits 2.
func TestConfigCheck(t *testing.T) {
	isolate(t)
	dir := t.TempDir()
	good := filepath.Join(dir, "colocd.yaml")
	if err := os.WriteFile(good, []byte("backend: sim\nsim:\n  workload: ../../configs/workloads/paper-queue-a.yaml\nlog_level: debug\ntokens:\n  - {token: s3cret-token-value, user: ops, role: admin}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("COLOCD_ADMISSION_TICK", "5s")
	for _, tc := range []struct {
		name     string
		args     []string
		defPath  string
		code     int
		want     []string // in stdout (JSON keys) or stderr
		wantKeys map[string]daemon.EffectiveValue
	}{
		{name: "file, env and defaults", args: []string{"config", "check", "--json", "--config", good}, code: exitOK,
			wantKeys: map[string]daemon.EffectiveValue{
				"log_level":       {Key: "log_level", Value: "debug", Source: "file " + good + ":4"},
				"admission.tick":  {Key: "admission.tick", Value: "5s", Source: "env COLOCD_ADMISSION_TICK"},
				"admission.mode":  {Key: "admission.mode", Value: "active", Source: "default"},
				"tokens":          {Key: "tokens", Value: "(set, hidden)", Source: "file " + good + ":6"},
				"yarn.ca_file":    {Key: "yarn.ca_file", Value: "", Source: "default"},
				"sim.workload":    {Key: "sim.workload", Value: "../../configs/workloads/paper-queue-a.yaml", Source: "file " + good + ":3"},
				"influx.language": {Key: "influx.language", Value: "influxql", Source: "default"},
			}},
		{name: "the default path", args: []string{"config", "check"}, defPath: good, code: exitOK,
			want: []string{"config " + good + ": valid", "log_level  "}},
		{name: "default path unreadable", args: []string{"config", "check"}, defPath: dir, code: exitUsage,
			want: []string{"read config", "is a directory"}},
		{name: "invalid", args: []string{"config", "check", "--config", "../../daemon/testdata/config/log-level.bad.yaml"}, code: exitUsage,
			want: []string{"config key log_level"}},
		{name: "missing", args: []string{"config", "check", "--config", filepath.Join(dir, "nope.yaml")}, code: exitUsage,
			want: []string{"does not exist"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.defPath != "" {
				defaultConfigPath = tc.defPath
			}
			code, out, errOut := runCmd(t, tc.args...)
			if code != tc.code {
				t.Fatalf("exit %d, want %d; stderr %s", code, tc.code, errOut)
			}
			for _, w := range tc.want {
				if !strings.Contains(out+errOut, w) {
					t.Errorf("output lacks %q:\n%s%s", w, out, errOut)
				}
			}
			if strings.Contains(out, "s3cret-token-value") {
				t.Errorf("a token's secret is printed:\n%s", out)
			}
			if tc.wantKeys == nil {
				return
			}
			var got struct {
				Keys []daemon.EffectiveValue `json:"keys"`
			}
			if err := json.Unmarshal([]byte(out), &got); err != nil {
				t.Fatalf("%v: %s", err, out)
			}
			byKey := map[string]daemon.EffectiveValue{}
			for _, k := range got.Keys {
				if _, ok := tc.wantKeys[k.Key]; ok {
					byKey[k.Key] = k
				}
			}
			if d := cmp.Diff(tc.wantKeys, byKey); d != "" {
				t.Errorf("keys (-want,+got):\n%s", d)
			}
		})
	}
}

// TestPriorText: before any observation the footer says what the prior
// is — with learning.self_prior 1 and 4 kinds each kind's own cell starts
// at 0.11 against 0.30, which is not learned.
func TestPriorText(t *testing.T) {
	for _, tc := range []struct {
		kinds int
		self  float64
		want  string
	}{
		{4, 1, "uniform but for each kind's own cell, lowered by learning.self_prior 1: π(a|a) = 0.11 against 0.30 with 4 kinds"},
		{4, 0, "uniform"},
		{1, 1, "uniform"},
	} {
		p := apiclient.Preferences{KindsKnown: tc.kinds}
		p.Config.SelfPrior = tc.self
		if got := priorText(p); got != tc.want {
			t.Errorf("priorText(%d kinds, self_prior %v) = %q, want %q", tc.kinds, tc.self, got, tc.want)
		}
	}
}

// TestSimIgnoresDefaultConfig: colocd sim reads no default config file (a
// node's production settings would change what a simulation plays), even
// one that would not load.
func TestSimIgnoresDefaultConfig(t *testing.T) {
	isolate(t)
	bad := filepath.Join(t.TempDir(), "colocd.yaml")
	if err := os.WriteFile(bad, []byte("no_such_key: 1\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	defaultConfigPath = bad
	if code, _, errOut := runCmd(t, "sim", "--workload", "../../configs/workloads/paper-queue-a.yaml", "--policy", "fifo", "--runs", "1"); code != exitOK {
		t.Fatalf("colocd sim with a broken default config present: exit %d: %s", code, errOut)
	}
	if code, _, _ := runCmd(t, "config", "check"); code != exitUsage {
		t.Errorf("config check reads the default path: exit %d, want %d", code, exitUsage)
	}
}
