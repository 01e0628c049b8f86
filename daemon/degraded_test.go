package daemon

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// TestDegradedDependencies: with InfluxDB down at start, colocd is ready
// and says the metrics store is degraded — the start-up log names it,
// /readyz lists it (its error only with a token), GET /v1/summary and
// colocd_dependency_degraded too; an RM that fails later adds the
// cluster (and /readyz fails: no admission without it), and its recovery
// removes it.
func TestDegradedDependencies(t *testing.T) {
	rm := newTestRM(t)
	cfg, err := Load(LoadOptions{File: yarnDaemonConfig(t, t.TempDir(), "127.0.0.1:0", rm.URL()), LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	}()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 5 * time.Second}
	get := func(path string, token bool) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		if token {
			req.Header.Set("Authorization", "Bearer "+yarnTestToken)
		}
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("GET %s: %v", path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	type ready struct {
		Status   string        `json:"status"`
		Degraded []v1.Degraded `json:"degraded"`
	}
	deps := func(ds []v1.Degraded) (names []string) {
		for _, d := range ds {
			names = append(names, d.Dependency)
		}
		return names
	}
	var r ready
	poll(t, "/readyz to list the metrics store", 20*time.Second, func() bool {
		code, body := get("/readyz", false)
		r = ready{}
		json.Unmarshal([]byte(body), &r)
		return code == http.StatusOK && len(r.Degraded) > 0
	})
	if d := cmp.Diff([]string{"metrics"}, deps(r.Degraded)); d != "" || r.Degraded[0].Error != "" || r.Degraded[0].Since.IsZero() {
		t.Errorf("/readyz without a token: %+v (-want,+got dependencies):\n%s", r, d)
	}
	_, body := get("/readyz", true)
	r = ready{}
	json.Unmarshal([]byte(body), &r)
	if len(r.Degraded) != 1 || !strings.Contains(r.Degraded[0].Error, "127.0.0.1:1") {
		t.Errorf("/readyz with a token: %s, want the metrics store's error", body)
	}
	// The engine's own first reading may mark the store degraded before the
	// start-up probe has written its summary: wait for the line.
	startup := `msg="start-up: could not reach some dependencies; serving on and retrying (see /readyz)" component=probe reached="the cluster (ResourceManager)" metrics=`
	poll(t, "the start-up log to name the metrics store", 20*time.Second, func() bool { return strings.Contains(logs.String(), startup) })
	_, metrics := get("/metrics", true)
	for _, want := range []string{`colocd_dependency_degraded{dependency="metrics"} 1`, `colocd_dependency_degraded{dependency="cluster"} 0`,
		`colocd_dependency_degraded_since_timestamp_seconds{dependency="metrics"}`} {
		if !strings.Contains(metrics, want) {
			t.Errorf("/metrics lacks %s", want)
		}
	}

	rm.InjectFault(yarnclient.PathClusterMetrics, yarntest.Fault{Status: http.StatusServiceUnavailable})
	var s v1.Summary
	poll(t, "the summary to list the cluster", 20*time.Second, func() bool {
		_, body := get("/v1/summary", true)
		s = v1.Summary{}
		json.Unmarshal([]byte(body), &s)
		return len(s.Degraded) == 2
	})
	if d := cmp.Diff([]string{"cluster", "metrics"}, deps(s.Degraded)); d != "" {
		t.Errorf("summary's degraded (-want,+got):\n%s", d)
	}
	if code, _ := get("/readyz", false); code != http.StatusServiceUnavailable {
		t.Errorf("/readyz with the RM failing: %d, want 503", code)
	}
	rm.ClearFaults()
	poll(t, "the cluster to recover", 20*time.Second, func() bool {
		code, body := get("/readyz", false)
		r = ready{}
		json.Unmarshal([]byte(body), &r)
		return code == http.StatusOK && cmp.Equal([]string{"metrics"}, deps(r.Degraded))
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
