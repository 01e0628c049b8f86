package api

import (
	"bytes"
	"context"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestStatusPageServed(t *testing.T) {
	h := newHarness(t)
	for _, tc := range []struct{ path, ctype, contains string }{
		{"/", "text/html", `id="heatmap-container"`},
		{"/static/app.js", "text/javascript", "sessionStorage"},
		{"/static/style.css", "text/css", ".heatmap"},
	} {
		r := h.do("GET", tc.path, "", "")
		if r.Code != 200 || !strings.HasPrefix(r.Header.Get("Content-Type"), tc.ctype) {
			t.Errorf("%s: %d %q", tc.path, r.Code, r.Header.Get("Content-Type"))
		}
		if !bytes.Contains(r.Body, []byte(tc.contains)) {
			t.Errorf("%s lacks %q", tc.path, tc.contains)
		}
		if csp := r.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "default-src 'none'") {
			t.Errorf("%s: CSP %q", tc.path, csp)
		}
	}
	// No external assets: nothing in the page loads from another origin.
	for _, name := range []string{"index.html", "app.js", "style.css"} {
		b, err := web.ReadFile("web/" + name)
		if err != nil {
			t.Fatal(err)
		}
		for _, bad := range []string{"http://", "https://", "//cdn", "innerHTML"} {
			if bytes.Contains(b, []byte(bad)) {
				t.Errorf("web/%s contains %q", name, bad)
			}
		}
	}
	if r := h.do("GET", "/static/secret.txt", "", ""); r.Code != 404 {
		t.Errorf("unknown static file: %d", r.Code)
	}
	if r := h.do("GET", "/static/..%2fapi.go", "", ""); r.Code != 404 {
		t.Errorf("path traversal: %d", r.Code)
	}
}

// chromium returns the browser's path, or skips (fails under
// COLOCD_REQUIRE_TOOLS=1) when it is missing.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("COLOCD_REQUIRE_TOOLS") == "1" {
		t.Fatal("chromium not found on PATH (COLOCD_REQUIRE_TOOLS=1); install Debian's chromium package")
	}
	t.Skip("chromium not found on PATH")
	return ""
}

func runChromium(t *testing.T, bin string, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, stderr.Bytes())
	}
	return stdout.Bytes()
}

func TestStatusPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	h := newHarness(t, func(c *harnessCfg) { c.Queues = curvesSource(t) })
	learn(h.learner, testKinds)
	var pending []string
	for _, k := range []string{"kmeans", "terasort", "wordcount"} {
		pending = append(pending, h.submit(submitterTok, jobBody(k), http.StatusCreated).ID)
	}
	running := h.submit(submitterTok, jobBody("pagerank"), http.StatusCreated).ID
	h.runJobStart(running)
	for i := range 3 {
		_ = h.journal.AddDecision(decision(i))
	}
	url := h.srv.URL + "/?token=" + readerTok

	dom := string(runChromium(t, bin, "--dump-dom", url))
	for _, want := range append([]string{`<svg`, `id="heatmap"`, `class="colocd-heatmap"`, "job-002", running,
		"(mode curves, groups by queue", ">interactive<", ">hard<", ">etl<", ">soft<", ">adhoc<", ">elastic<"}, pending...) {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	for _, k := range testKinds {
		if !strings.Contains(dom, ">"+k+"<") {
			t.Errorf("rendered heatmap lacks kind %q", k)
		}
	}
	if strings.Contains(dom, `id="error" class="error">`) && !strings.Contains(dom, `id="error" class="error" hidden`) {
		t.Errorf("the page shows an error: %s", between(dom, `id="error"`, "</p>"))
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}

	shot := filepath.Join(t.TempDir(), "status.png")
	runChromium(t, bin, "--screenshot="+shot, "--window-size=1280,1400", "--hide-scrollbars", url)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if b := img.Bounds(); b.Dx() < 100 || b.Dy() < 100 {
		t.Errorf("screenshot is %v", b)
	}
	// Light check that something was drawn: not a single flat colour.
	colours := map[[4]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && len(colours) < 50; y += 7 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 7 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	if len(colours) < 10 {
		t.Errorf("screenshot has only %d distinct colours: blank page?", len(colours))
	}
	if dir := os.Getenv("COLOCD_SCREENSHOT_DIR"); dir != "" {
		b, _ := os.ReadFile(shot)
		_ = os.WriteFile(filepath.Join(dir, "status.png"), b, 0o644)
	}
}

func between(s, from, to string) string {
	i := strings.Index(s, from)
	if i < 0 {
		return ""
	}
	s = s[i:]
	if j := strings.Index(s, to); j >= 0 {
		return s[:j]
	}
	return s
}
