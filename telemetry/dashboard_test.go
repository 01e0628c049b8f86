package telemetry

import (
	"encoding/json"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"gopkg.in/yaml.v3"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// exercise records every series once, as the daemon's engine and API do,
// so that every vector has a child to gather.
func exercise(m *Metrics) {
	m.Build(BuildInfo{Version: "v0", Revision: "r0"})
	m.Admitted(time.Minute, ForcedMaxSkips, "etl", "wordcount")
	m.AdmissionFailed()
	m.ObserveDecision(time.Millisecond)
	m.LearningUpdates(1)
	m.LearningTick(time.Unix(1, 0))
	m.StaleHosts(1)
	m.DominantShare("g", 0.5)
	m.BackendErrors("state")
	m.BackendUp(BackendCluster, true)
	m.ClusterBackoff(BackoffRead, 2*time.Second)
	m.CallsBackedOff(BackoffJob)
	m.JobsBackingOff(1)
	m.APIRequest("/v1/jobs", 200, time.Millisecond)
	m.WatchQueues(fixedQueues{queue.QueuesReport{Enabled: true, Queues: []queue.QueueStatus{{Name: "q", Class: "batch", Guarantee: queue.GuaranteeElastic}}}})
}

// exported gathers the names the daemon exports: New over a store, as
// daemon.Serve builds it, with every series recorded once.
func exported(t *testing.T) map[string]bool {
	t.Helper()
	store, _ := queuetest.OpenStore(t, queue.Options{})
	reg := prometheus.NewRegistry()
	exercise(New(reg, store))
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]bool{}
	for _, mf := range mfs {
		names[mf.GetName()] = true
	}
	return names
}

// promQL collects the query strings of a Grafana dashboard: the panels'
// targets (expr) and the variables' queries, at any depth (rows nest
// panels).
func promQL(v any, key string, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			promQL(x, k, out)
		}
	case []any:
		for _, x := range v {
			promQL(x, key, out)
		}
	case string:
		if key == "expr" || key == "query" || key == "definition" {
			*out = append(*out, v)
		}
	}
}

var colocdName = regexp.MustCompile(`colocd_[a-z_]+`)

// TestDashboardMetricsExist reads configs/grafana-dashboard.json and checks
// that every colocd_* series its queries use is one the daemon exports, so
// that renaming a series breaks this test rather than the dashboard.
func TestDashboardMetricsExist(t *testing.T) {
	raw, err := os.ReadFile("../configs/grafana-dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	var dash map[string]any
	if err := json.Unmarshal(raw, &dash); err != nil {
		t.Fatalf("grafana-dashboard.json: %v", err)
	}
	if v, _ := dash["schemaVersion"].(float64); v < 36 {
		t.Errorf("schemaVersion %v, want >= 36", dash["schemaVersion"])
	}
	if !strings.Contains(string(raw), "${DS_PROMETHEUS}") {
		t.Error("the dashboard does not take its datasource from the DS_PROMETHEUS input")
	}
	var queries []string
	promQL(dash, "", &queries)
	used := map[string]bool{}
	for _, q := range queries {
		for _, n := range colocdName.FindAllString(q, -1) {
			for _, suffix := range []string{"_bucket", "_sum", "_count"} {
				n = strings.TrimSuffix(n, suffix)
			}
			used[n] = true
		}
	}
	if len(used) < 10 {
		t.Fatalf("the dashboard's queries name %d colocd series, want at least 10: %v", len(used), queries)
	}
	have := exported(t)
	for n := range used {
		if !have[n] {
			t.Errorf("the dashboard uses %s, which the daemon does not export", n)
		}
	}
	for _, n := range []string{"colocd_jobs", "colocd_job_wait_duration_seconds", "colocd_admissions_total",
		"colocd_decision_duration_seconds", "colocd_learning_ticks_total", "colocd_learning_last_tick_timestamp_seconds",
		"colocd_backend_up"} {
		if !used[n] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
}

// scrapeJob is what TestScrapeConfig reads of a Prometheus scrape config.
type scrapeJob struct {
	JobName     string `yaml:"job_name"`
	MetricsPath string `yaml:"metrics_path"`
	Static      []struct {
		Targets []string `yaml:"targets"`
	} `yaml:"static_configs"`
}

// TestScrapeConfig checks that configs/prometheus.yml parses and scrapes
// colocd at /metrics.
func TestScrapeConfig(t *testing.T) {
	raw, err := os.ReadFile("../configs/prometheus.yml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		ScrapeConfigs []scrapeJob `yaml:"scrape_configs"`
	}
	if err := yaml.Unmarshal(raw, &cfg); err != nil {
		t.Fatalf("prometheus.yml: %v", err)
	}
	i := slices.IndexFunc(cfg.ScrapeConfigs, func(s scrapeJob) bool { return s.JobName == "colocd" })
	if i < 0 {
		t.Fatal("prometheus.yml has no colocd job")
	}
	if c := cfg.ScrapeConfigs[i]; c.MetricsPath != "/metrics" || len(c.Static) == 0 || len(c.Static[0].Targets) == 0 {
		t.Errorf("colocd job: %+v, want metrics_path /metrics and a target", c)
	}
}
