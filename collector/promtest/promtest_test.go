package promtest_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/collector/promtest"
	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2024, 3, 1, 12, 0, 0, 0, time.UTC)

func TestSamplesText(t *testing.T) {
	var s promtest.Samples
	lbl := map[string]string{"instance": "we\"i\\rd\nx:9100", "job": "node"}
	s.Add("b_total", lbl, t0.Add(2*time.Second), 3)
	s.Add("a_total", map[string]string{"z": "1", "a": "ü"}, t0, 1.5)
	s.Add("b_total", lbl, t0.Add(1500*time.Millisecond), 2)
	s.Add("b_total", lbl, t0.Add(2*time.Second), 4) // replaces 3
	want := `b_total{instance="we\"i\\rd\nx:9100",job="node"} 2 1709294401.5
b_total{instance="we\"i\\rd\nx:9100",job="node"} 4 1709294402
a_total{a="ü",z="1"} 1.5 1709294400
# EOF
`
	if diff := cmp.Diff(want, s.String()); diff != "" {
		t.Errorf("OpenMetrics (-want +got):\n%s", diff)
	}
	if s.Len() != 3 {
		t.Errorf("Len() = %d, want 3", s.Len())
	}
}

// TestBackfillQueryStop backfills 2024 samples, reads them back through
// the query API at their own time, and stops the server.
func TestBackfillQueryStop(t *testing.T) {
	var s promtest.Samples
	odd := "we\"i\\rd\nx ü:9100"
	for i, at := range []int{0, 10, 20} {
		s.Add("c_total", map[string]string{"instance": odd}, t0.Add(time.Duration(at)*time.Second), float64(100*i))
	}
	srv := promtest.Start(t, promtest.WithSamples(&s))
	got := srv.Query(t, "c_total", t0.Add(25*time.Second))
	want := []promtest.Sample{{Metric: map[string]string{"__name__": "c_total", "instance": odd}, Value: 200}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("c_total (-want +got):\n%s", diff)
	}
	if err := srv.Stop(); err != nil {
		t.Fatalf("Stop: %v", err)
	}
	select {
	case <-srv.Exited():
	case <-time.After(time.Second):
		t.Fatal("Exited not closed after Stop")
	}
	if err := srv.Stop(); err != nil {
		t.Errorf("second Stop: %v", err)
	}
	if _, err := http.Get(srv.URL() + "/-/ready"); err == nil {
		t.Error("server still answers /-/ready after Stop")
	}
}

// TestScrapeNodeExporter has Prometheus scrape a node_exporter every
// second and waits for a few scrapes.
func TestScrapeNodeExporter(t *testing.T) {
	ne := promtest.StartNodeExporter(t)
	resp, err := http.Get("http://" + ne.Addr() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []string{"node_cpu_seconds_total", "node_network_receive_bytes_total"} {
		if !strings.Contains(string(body), m) {
			t.Errorf("node_exporter does not export %s", m)
		}
	}
	srv := promtest.Start(t, promtest.WithScrape("node", time.Second, ne.Addr()))
	srv.WaitScrapes(t, 2)
	got := srv.Query(t, `count(node_cpu_seconds_total{job="node", mode="idle"})`, time.Time{})
	if len(got) != 1 || got[0].Value < 1 {
		t.Errorf("idle cpu series = %v, want at least one", got)
	}
}
