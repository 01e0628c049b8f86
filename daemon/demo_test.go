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

	"github.com/colocd/colocd/apiclient"
)

// TestDemoComparesWithFIFO: on the simulator, once the queue drains, the
// jobs of the run are simulated again under FIFO from the same arrivals:
// GET /v1/summary carries both figures and the gain, and an INFO line
// says them.
func TestDemoComparesWithFIFO(t *testing.T) {
	cfg, err := Load(LoadOptions{File: "../configs/demo.yaml", LookupEnv: env(nil)})
	if err != nil {
		t.Fatal(err)
	}
	cfg.DataDir = t.TempDir()
	cfg.Sim.Workload = "../configs/workloads/paper-queue-a.yaml"
	cfg.Sim.Speed = 3600
	cfg.Admission.Tick = 10 * time.Second
	cfg.ShutdownTimeout = 5 * time.Second
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var logs lockedBuffer
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	compared := make(chan struct{}, 16)
	done := make(chan error, 1)
	go func() {
		done <- Serve(ctx, cfg, ServeOptions{Listener: ln, Logger: slog.New(slog.NewTextHandler(&logs, nil)),
			fifoDone: func() { compared <- struct{}{} }})
	}()
	base := "http://" + ln.Addr().String()
	client := &http.Client{Timeout: 5 * time.Second}
	call := func(method, path, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		req.Header.Set("Authorization", "Bearer demo-admin")
		req.Header.Set("Content-Type", "application/json")
		res, err := client.Do(req)
		if err != nil {
			t.Fatalf("%s %s: %v", method, path, err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	poll(t, "the API", 20*time.Second, func() bool {
		res, err := client.Get(base + "/healthz")
		if err == nil {
			res.Body.Close()
		}
		return err == nil
	})
	kinds := []string{"kmeans", "tpch-q10", "kmeans", "tpch-q3", "kmeans", "tpch-q10"}
	for _, k := range kinds {
		if code, body := call(http.MethodPost, "/v1/jobs", `{"kind":"`+k+`"}`); code != http.StatusCreated {
			t.Fatalf("submit %s: %d %s", k, code, body)
		}
	}
	select {
	case <-compared:
	case <-time.After(120 * time.Second):
		t.Fatalf("no comparison within 120 s; log:\n%s", logs.String())
	}
	_, body := call(http.MethodGet, "/v1/summary", "")
	var s apiclient.Summary
	if err := json.Unmarshal([]byte(body), &s); err != nil {
		t.Fatal(err)
	}
	f := s.FIFO
	if f == nil || f.Jobs != len(kinds) || f.MeanJCTSeconds <= 0 || f.FIFOMeanJCTSeconds <= 0 || f.FIFOMakespanSeconds <= 0 {
		t.Fatalf("summary's fifo: %+v", f)
	}
	t.Logf("colocd against FIFO: %+v", *f)
	if want := 100 * (1 - f.MeanJCTSeconds/f.FIFOMeanJCTSeconds); f.JCTGainPercent != want {
		t.Errorf("jct_gain_percent %v, want %v", f.JCTGainPercent, want)
	}
	if !strings.Contains(logs.String(), `msg="demo: the queue drained; the same jobs from the same arrivals under FIFO" component=demo jobs=6 `) {
		t.Errorf("no INFO line for the comparison:\n%s", logs.String())
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Serve: %v", err)
	}
}
