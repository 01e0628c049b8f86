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

	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// exercise records every series once, as the daemon's engine and API do,
// so that every vector has a child to gather.
func exercise(m *Metrics) {
	m.Build(BuildInfo{Version: "v0", Revision: "r0"})
	m.Admitted(time.Minute, forcedMaxSkips, "etl", "wordcount")
	m.AdmissionFailed()
	m.ObserveDecision(time.Millisecond)
	m.LearningUpdates(1)
	m.LearningTick(time.Unix(1, 0))
	m.StaleHosts(1)
	m.ContainerUsageHosts(3, 1)
	m.DominantShare("g", 0.5)
	m.BackendErrors("state")
	m.BackendUp(backendCluster, true)
	m.ClusterBackoff(backoffRead, 2*time.Second)
	m.CallsBackedOff(backoffJob)
	m.JobsBackingOff(1)
	m.APIRequest("/v1/jobs", 200, time.Millisecond)
	m.WatchQueues(fixedQueues{pipeline.QueuesReport{Enabled: true, Queues: []pipeline.QueueStatus{{Name: "q", Class: "batch", Guarantee: pipeline.GuaranteeElastic}}}})
	m.WatchDegraded(func() map[string]time.Time { return map[string]time.Time{"metrics": time.Unix(1, 0)} })
	m.WatchPending(fixedPending{{ID: "j1", Kind: "wordcount", Queue: "etl", CreatedAt: time.Unix(1, 0)}})
	m.WatchDataDir(func() (uint64, uint64, bool) { return 1 << 30, 64 << 20, true })
	m.WatchTicket(func() (time.Time, bool) { return time.Unix(7200, 0), true })
	m.ClientCertExpiry(time.Unix(14*86400, 0))
	m.WatchHA(func() HAState { return HAState{Role: "leader"} })
	m.HAFailover()
	m.ObserveOutbound(ServiceYARN, "/ws/v1/cluster/apps/application_1_0001", 200, time.Millisecond)
}

// fixedPending is a pendingSource of fixed jobs.
type fixedPending []queue.Job

func (f fixedPending) Pending(int) ([]queue.Job, error) { return f, nil }

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

// datasources collects the uid of every datasource reference.
func datasources(v any, out *[]string) {
	switch v := v.(type) {
	case map[string]any:
		if ds, ok := v["datasource"].(map[string]any); ok {
			if u, ok := ds["uid"].(string); ok {
				*out = append(*out, u)
			}
		}
		for _, x := range v {
			datasources(x, out)
		}
	case []any:
		for _, x := range v {
			datasources(x, out)
		}
	}
}

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
	// File provisioning resolves no __inputs: every datasource is the
	// datasource variable's uid.
	if strings.Contains(string(raw), "DS_PROMETHEUS") || dash["__inputs"] != nil {
		t.Error("the dashboard uses an __inputs datasource, which only the UI import resolves (file provisioning fails)")
	}
	var dsVar bool
	for _, v := range dash["templating"].(map[string]any)["list"].([]any) {
		v := v.(map[string]any)
		dsVar = dsVar || v["name"] == "datasource" && v["type"] == "datasource" && v["query"] == "prometheus"
	}
	if !dsVar {
		t.Error("the dashboard has no datasource variable of type prometheus")
	}
	var uids []string
	datasources(dash, &uids)
	for _, u := range uids {
		if u != "${datasource}" {
			t.Errorf("a datasource uid %q, want ${datasource}", u)
		}
	}
	if len(uids) < 10 {
		t.Errorf("%d datasource references, want every panel and target's", len(uids))
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
		"colocd_backend_up", "colocd_dependency_degraded", "colocd_pending_jobs", "colocd_outbound_request_duration_seconds",
		"colocd_data_dir_free_bytes", "colocd_kerberos_ticket_expiry_timestamp_seconds"} {
		if !used[n] {
			t.Errorf("the dashboard does not show %s", n)
		}
	}
}

// TestAlertRulesMetricsExist reads configs/prometheus-rules.yml and checks
// that every colocd_* series its rules use is one the daemon exports
// (promtool tests the rules themselves: make test's check-prometheus).
func TestAlertRulesMetricsExist(t *testing.T) {
	raw, err := os.ReadFile("../configs/prometheus-rules.yml")
	if err != nil {
		t.Fatal(err)
	}
	var rules struct {
		Groups []struct {
			Rules []struct {
				Alert string `yaml:"alert"`
				Expr  string `yaml:"expr"`
			} `yaml:"rules"`
		} `yaml:"groups"`
	}
	if err := yaml.Unmarshal(raw, &rules); err != nil {
		t.Fatal(err)
	}
	have := exported(t)
	var alerts []string
	for _, g := range rules.Groups {
		for _, r := range g.Rules {
			alerts = append(alerts, r.Alert)
			for _, n := range colocdName.FindAllString(r.Expr, -1) {
				if !have[n] {
					t.Errorf("alert %s uses %s, which the daemon does not export", r.Alert, n)
				}
			}
		}
	}
	for _, want := range []string{"ColocdAdmissionStalled", "ColocdQueueOldJob", "ColocdClusterUnreachable", "ColocdBackendDegraded",
		"ColocdKerberosTicketExpiring", "ColocdDataDirLow", "ColocdNoLeader", "ColocdFollowerBehind", "ColocdFailoversFlapping"} {
		if !slices.Contains(alerts, want) {
			t.Errorf("no alert %s", want)
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
