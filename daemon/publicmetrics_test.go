package daemon

import (
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
)

// TestConfigPublicMetrics serves the demo config with api.public_metrics
// set from the environment (COLOCD_API_PUBLIC_METRICS) and from the file,
// and unset: /metrics answers without a token only when it is on, and
// everything else still needs one.
func TestConfigPublicMetrics(t *testing.T) {
	for _, tc := range []struct {
		name   string
		env    map[string]string
		file   string // YAML appended to the demo config, "" for none
		public bool
	}{
		{name: "off by default"},
		{name: "on from the environment", env: map[string]string{"COLOCD_API_PUBLIC_METRICS": "true"}, public: true},
		{name: "on from the file", file: "api:\n  public_metrics: true\n", public: true},
		{name: "off from the environment", env: map[string]string{"COLOCD_API_PUBLIC_METRICS": "false"}, file: "api:\n  public_metrics: true\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			file := "../configs/demo.yaml"
			if tc.file != "" {
				demo, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				file = writeFile(t, "c.yaml", string(demo)+"\n"+tc.file)
			}
			cfg, err := Load(LoadOptions{File: file, Environ: environ(tc.env)})
			if err != nil {
				t.Fatal(err)
			}
			if cfg.API.PublicMetrics != tc.public {
				t.Fatalf("api.public_metrics = %v, want %v", cfg.API.PublicMetrics, tc.public)
			}
			base := "http://" + serveLoaded(t, cfg)
			get := func(path, token string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(http.MethodGet, base+path, nil)
				if token != "" {
					req.Header.Set("Authorization", "Bearer "+token)
				}
				resp, err := http.DefaultClient.Do(req)
				if err != nil {
					t.Fatalf("GET %s: %v", path, err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			want := http.StatusUnauthorized
			if tc.public {
				want = http.StatusOK
			}
			if code, _ := get("/metrics", ""); code != want {
				t.Errorf("GET /metrics without a token: %d, want %d", code, want)
			}
			code, body := get("/metrics", "demo-submitter")
			if code != http.StatusOK || !strings.Contains(body, "colocd_build_info{") {
				t.Errorf("GET /metrics with a token: %d, colocd_build_info present: %v", code, strings.Contains(body, "colocd_build_info{"))
			}
			if code, _ := get("/v1/jobs", ""); code != http.StatusUnauthorized {
				t.Errorf("GET /v1/jobs without a token: %d, want 401", code)
			}
		})
	}
}
