package api

import (
	"bytes"
	"context"
	"fmt"
	"image/png"
	"math"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/journal"
	"github.com/colocd/colocd/pipeline"
	"github.com/colocd/colocd/profile"
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
		// The SVG namespace is a name, not a load.
		b = bytes.ReplaceAll(b, []byte("'http://www.w3.org/2000/svg'"), nil)
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

// runChromium runs headless Chromium with args (and env added to the
// test's) and returns what it wrote: the page's console messages are on
// stderr (--enable-logging=stderr).
func runChromium(t *testing.T, bin string, env []string, args ...string) (stdout, stderr []byte) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	base := []string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
		"--disable-background-networking", "--disable-component-update", "--disable-sync",
		"--disable-dev-shm-usage", "--user-data-dir=" + t.TempDir(), "--virtual-time-budget=5000",
		"--enable-logging=stderr", "--v=0"}
	cmd := exec.CommandContext(ctx, bin, append(base, args...)...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %v: %v\nstderr:\n%s", args, err, errb.Bytes())
	}
	return out.Bytes(), errb.Bytes()
}

// consoleLines are the page's console messages in Chromium's log: the
// page writes none, so each one is an error (an uncaught exception, a
// rejected promise, a CSP violation, a failed load).
func consoleLines(stderr []byte) []string {
	var out []string
	for l := range strings.Lines(string(stderr)) {
		if strings.Contains(l, ":CONSOLE") || strings.Contains(l, "Uncaught") {
			out = append(out, strings.TrimSpace(l))
		}
	}
	return out
}

// consoleWorld is the status page's test data: a simulated daemon (600×)
// with learned preferences and a kind still at the prior, kind
// histories, two running jobs on a 12-node cluster, 45 queued jobs, a
// decision that dropped, reserved and passed some of them, goodness
// records and a profile model.
type consoleWorld struct {
	h        *harness
	clock    func() v1.Clock
	pending  []string // ids, queue order
	running  []string
	nodes    map[string]string // running job → a node it occupies, as "node×containers"
	decision journal.DecisionRecord
}

const consoleSpeed = 600

func newConsoleWorld(t *testing.T) *consoleWorld { return newConsoleWorldWith(t) }

// newConsoleWorldWith is newConsoleWorld with more harness options.
func newConsoleWorldWith(t *testing.T, more ...harnessOpt) *consoleWorld {
	w := &consoleWorld{nodes: map[string]string{}}
	var started time.Time
	wallStarted := time.Date(2026, 11, 24, 15, 0, 0, 0, time.UTC)
	view := &fakeView{}
	w.clock = func() v1.Clock {
		now := w.h.clock.Now()
		return v1.Clock{Simulated: true, Now: now, WallNow: wallStarted.Add(now.Sub(started) / consoleSpeed), Speed: consoleSpeed,
			Started: started, WallStarted: wallStarted, Runs: []v1.ClockRun{{From: started, WallFrom: wallStarted, Speed: consoleSpeed}}}
	}
	w.h = newHarness(t, append([]harnessOpt{withClock(w.clock), withCluster(view), withProfiles(trainedModel(t), testLimits),
		func(c *harnessCfg) { c.Queues = curvesSource(t) }}, more...)...)
	h := w.h
	started = h.clock.Now()
	learn(h.learner, testKinds)
	h.learner.Add("fresh") // never observed: its row is the prior
	h.runJob(h.submit(submitterTok, jobBody("kmeans"), http.StatusCreated).ID, 10*time.Minute)
	h.runJob(h.submit(submitterTok, jobBody("terasort"), http.StatusCreated).ID, 20*time.Minute)
	for _, k := range []string{"pagerank", "kmeans"} {
		id := h.submit(submitterTok, jobBody(k), http.StatusCreated).ID
		h.runJobStart(id)
		w.running = append(w.running, id)
	}
	for i := range 45 {
		w.pending = append(w.pending, h.submit(submitterTok, jobBody(testKinds[i%len(testKinds)]), http.StatusCreated).ID)
	}
	h.clock.Advance(4 * time.Minute) // the running jobs are 4 min in
	st := testCluster(12, map[int]int{1: 3, 4: 1}, map[int]int{4: 2})
	for i, id := range w.running {
		st.Apps[i].JobID = id
		w.nodes[id] = fmt.Sprintf("%s×%d", st.Apps[i].Nodes[0], st.Apps[i].Placement[st.Apps[i].Nodes[0]])
	}
	w.nodes[w.running[0]] = "node-02×3"
	view.set(st, h.clock.Now())
	now := h.clock.Now()
	for i := range 40 { // goodness on nodes 1–8 over the last 40 minutes
		rec := journal.GoodnessRecord{At: now.Add(-time.Duration(40-i) * time.Minute), Node: fmt.Sprintf("node-%02d", 1+i%8),
			Chosen: "kmeans", Given: "pagerank", G: 4 + float64(i%9)*3,
			Usage: goodness.Usage{CPU: 0.3 + 0.01*float64(i%9), IOWait: 0.02, DiskRead: 2e6, NetSent: 1e6}}
		if err := h.journal.AddGoodness(rec); err != nil {
			t.Fatal(err)
		}
	}
	w.decision = journal.DecisionRecord{Decision: pipeline.Decision{
		At: now.Add(-time.Second), Chosen: w.running[1], ChosenKind: "kmeans",
		Context: []pipeline.ContextKind{{Kind: "pagerank", Weight: 0.75}},
		Stages: []pipeline.StageRecord{
			{Name: "window", In: 45, Out: 16, Note: "first 16 of 45 pending jobs"},
			{Name: "fit", In: 16, Out: 15, Dropped: []pipeline.Drop{{JobID: w.pending[3], Reason: "needs 8 vcores, 2 free"}}},
			{Name: "preference", In: 15, Out: 15},
		},
		Candidates: []pipeline.Candidate{{JobID: w.running[1], Kind: "kmeans", Prob: 0.6}, {JobID: w.pending[1], Kind: "terasort", Prob: 0.4}},
		Passed:     []string{w.pending[0]},
		Reserved:   w.pending[5],
	}, AppID: "application_1_0001"}
	if err := h.journal.AddDecision(w.decision); err != nil {
		t.Fatal(err)
	}
	return w
}

// wall formats a daemon-clock time as the page does, in loc (zone name
// as the page writes it).
func (w *consoleWorld) wall(t time.Time, loc *time.Location, zone string) string {
	c := w.clock()
	wt, _ := c.Wall(t)
	return wt.In(loc).Format("Mon 2 Jan 2006 15:04:05") + " " + zone
}

// TestStatusPageInChromium loads the page in headless Chromium at 1280 and
// 1920 pixels wide, with the browser in UTC+5:30: every section shows the
// test's data, times are wall-clock with their zone, the simulated clock
// is shown apart, nothing failed (no error shown, no console message),
// and the screenshots are real. At 1920 the columns sit side by side and
// the nodes and the matrix start above the fold despite 45 queued jobs.
func TestStatusPageInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	w := newConsoleWorld(t)
	url := w.h.srv.URL + "/?token=" + readerTok
	ist := time.FixedZone("IST", 5*3600+1800)
	for _, size := range []struct{ w, h int }{{1280, 1600}, {1920, 1080}} {
		t.Run(strconv.Itoa(size.w), func(t *testing.T) {
			shot := filepath.Join(t.TempDir(), "status.png")
			out, stderr := runChromium(t, bin, []string{"TZ=Asia/Kolkata"}, "--dump-dom", "--screenshot="+shot,
				fmt.Sprintf("--window-size=%d,%d", size.w, size.h), "--hide-scrollbars", url)
			dom := string(out)
			if lines := consoleLines(stderr); len(lines) > 0 {
				t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
			}
			if strings.Contains(dom, `id="error" class="error" role="alert">`) {
				t.Errorf("the page shows an error: %s", between(dom, `id="error"`, "</p>"))
			}
			if m := regexp.MustCompile(`<pre id="js-errors"[^>]*>([^<]*)</pre>`).FindStringSubmatch(dom); m == nil || m[1] != "" {
				t.Errorf("script errors recorded: %q", m)
			}
			w.checkDOM(t, dom, ist)
			layout := map[int]string{1280: "stacked", 1920: "columns"}[size.w]
			if !strings.Contains(dom, `data-layout="`+layout+`"`) {
				t.Errorf("layout at %d px is not %s: %s", size.w, layout, between(dom, `<main`, ">"))
			}
			if size.w == 1920 {
				for _, attr := range []string{"data-nodes-section-top", "data-heatmap-container-top"} {
					m := regexp.MustCompile(attr + `="(\d+)"`).FindStringSubmatch(dom)
					if m == nil {
						t.Errorf("the page exports no %s", attr)
					} else if top, _ := strconv.Atoi(m[1]); top >= size.h {
						t.Errorf("%s = %d: below the fold of a %d px screen", attr, top, size.h)
					}
				}
			}
			checkScreenshot(t, shot, size.w, size.h)
			if t.Failed() {
				t.Logf("DOM:\n%s", dom)
			}
		})
	}
}

// TestStatusPageEmptyInChromium: a daemon on the wall clock that has
// nothing yet (no job, no cluster view, no observation, no decision)
// says so in every section, without an error.
func TestStatusPageEmptyInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	h := newHarness(t, withCluster(&fakeView{}), withProfiles(profile.New(profile.Config{}), testLimits))
	out, stderr := runChromium(t, bin, []string{"TZ=UTC"}, "--dump-dom", "--window-size=1280,900", h.srv.URL+"/?token="+readerTok)
	dom := string(out)
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	if !strings.Contains(dom, `id="error" class="error" role="alert" hidden`) {
		t.Errorf("the page shows an error: %s", between(dom, `id="error"`, "</p>"))
	}
	for _, want := range []string{
		"updated " + h.clock.Now().UTC().Format("Mon 2 Jan 2006 15:04:05") + " UTC", `id="sim-clock" class="sim-clock" hidden`,
		">waiting<", "Nothing is waiting.", "the queue is empty", "nothing admitted or running",
		"No view of the cluster yet", "no kinds learned yet", "No observation yet: every row is still the prior (grey), uniform over the kinds.",
		"No goodness observation in the window yet.", "no kind profiled yet", "no decisions yet", "(fairness is off)",
		"no observation yet", // the summary's goodness
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}

// checkDOM checks the rendered page holds the world's data.
func (w *consoleWorld) checkDOM(t *testing.T, dom string, loc *time.Location) {
	t.Helper()
	h := w.h
	c := w.clock()
	for _, want := range []string{
		// The clocks: wall time with its zone; the simulated clock apart.
		"updated " + w.wall(c.Now, loc, "UTC+5:30"),
		"simulated cluster clock: " + c.Now.UTC().Format("2006-01-02 15:04:05") + " UTC, 600× real time",
		"waiting (simulated)",
		// Queue: the first 20, the rest counted, an ETA.
		"and 25 more pending jobs", "Whole queue: about", "simulated to admit all 45 jobs (≈ ",
		// Running: progress as an estimate, nodes.
		"<progress", "~40 %",
		// Nodes: 12 tiles (4 without a record), the legend.
		"Colour: latest goodness G", "no record",
		// Matrix: counts, a prior row, no misleading baseline.
		`class="colocd-heatmap"`, "n=20", `class="cell prior"`, "grey: prior, no observation", "queued kind", "running kind",
		// Decisions: time with the sim clock, stages, passed over.
		w.wall(w.decision.At, loc, "UTC+5:30") + " (sim " + w.decision.At.UTC().Format("2006-01-02 15:04:05") + " UTC)",
		"<details", "in → out", "needs 8 vcores, 2 free", "Passed over (fit, ahead in the queue, not chosen): " + w.pending[0],
		"pagerank (weight 0.75)",
		// Trend, summary, profiles, fairness.
		`id="trend-svg"`, `class="mean"`, "mean goodness", "admissions", ">interactive<", ">hard<", ">etl<",
	} {
		if !strings.Contains(dom, want) {
			t.Errorf("rendered DOM lacks %q", want)
		}
	}
	snap := h.learner.Snapshot()
	if want := fmt.Sprintf("%d observations; baseline Ḡ = %s (global mode", snap.Observations, strconv.FormatFloat(snap.Baseline, 'f', 2, 64)); !strings.Contains(dom, want) {
		t.Errorf("the preferences' summary lacks %q: %s", want, between(dom, `id="prefs-summary"`, "</span>"))
	}
	if n := strings.Count(dom, `data-node="`); n != 12 {
		t.Errorf("%d node tiles, want 12", n)
	}
	if n := strings.Count(dom, `class="node no-record"`); n != 4 {
		t.Errorf("%d tiles without a goodness record, want 4", n)
	}
	w.checkQueue(t, dom)
	// pagerank never finished: no expected runtime; kmeans's is 10 min.
	for id, progress := range map[string]string{w.running[0]: "no runtime history for pagerank", w.running[1]: "<progress"} {
		row := between(between(dom, `id="running"`, "</table>"), `data-job="`+id+`"`, "</tr>")
		if !strings.Contains(row, w.nodes[id]) || !strings.Contains(row, progress) {
			t.Errorf("running job %s's row lacks its node %s or %q: %s", id, w.nodes[id], progress, row)
		}
	}
	for _, k := range trainedModel(t).Kinds() {
		if !strings.Contains(between(dom, `id="profiles"`, "</table>"), ">"+k+"<") {
			t.Errorf("profiles table lacks kind %s", k)
		}
	}
	var s v1.Summary
	h.get("/v1/summary", &s)
	if got := between(dom, `data-term="submitted"`, "</dd>"); !strings.Contains(got, ">"+strconv.Itoa(s.Run.Scanned)) || s.Run.Scanned != 49 {
		t.Errorf("summary's submitted: %q, want %d (49)", got, s.Run.Scanned)
	}
}

// checkQueue: the first 20 queued jobs with their wait estimates (as GET
// /v1/jobs/{id} has them) and why each is not admitted; the 21st is not
// listed.
func (w *consoleWorld) checkQueue(t *testing.T, dom string) {
	t.Helper()
	queue := between(dom, `id="queue"`, "</table>")
	for i, id := range w.pending[:20] {
		row := between(queue, `data-job="`+id+`"`, "</tr>")
		if row == "" {
			t.Errorf("queued job %d (%s) is not listed", i, id)
			continue
		}
		var j v1.Job
		w.h.get("/v1/jobs/"+id, &j)
		want := fmt.Sprintf(`data-seconds="%d"`, int(math.Round(*j.EstimatedWait.Seconds)))
		if !strings.Contains(row, want) {
			t.Errorf("queued job %d's row lacks its estimate %s: %s", i, want, row)
		}
	}
	if strings.Contains(queue, w.pending[20]) {
		t.Errorf("the 21st queued job is listed")
	}
	for i, why := range map[int]string{0: "passed over: kmeans was chosen", 1: "candidate, not drawn (40.0 %)",
		3: "fit: needs 8 vcores, 2 free", 5: "holds the reservation", 17: "outside the window: the last decision considered the first 16"} {
		if row := between(queue, `data-job="`+w.pending[i]+`"`, "</tr>"); !strings.Contains(row, why) {
			t.Errorf("queued job %d's row does not say %q: %s", i, why, row)
		}
	}
}

// checkScreenshot: the screenshot decodes as a PNG of the window's size
// and is not blank; COLOCD_SCREENSHOT_DIR keeps a copy.
func checkScreenshot(t *testing.T, shot string, width, height int) {
	t.Helper()
	b, err := os.ReadFile(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatalf("screenshot is not a PNG: %v", err)
	}
	if bd := img.Bounds(); bd.Dx() != width || bd.Dy() != height {
		t.Errorf("screenshot is %v, want %d×%d", bd, width, height)
	}
	colours := map[[4]uint32]bool{}
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y && len(colours) < 50; y += 7 {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x += 7 {
			r, g, b, a := img.At(x, y).RGBA()
			colours[[4]uint32{r, g, b, a}] = true
		}
	}
	if len(colours) < 20 {
		t.Errorf("screenshot has only %d distinct colours: blank page?", len(colours))
	}
	if dir := os.Getenv("COLOCD_SCREENSHOT_DIR"); dir != "" {
		_ = os.WriteFile(filepath.Join(dir, fmt.Sprintf("status-%d.png", width)), b, 0o644)
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

// TestStatusPageDegradedInChromium: with the metrics store failing, the
// page shows a banner naming it and since when (its error as a tooltip),
// and a node whose last goodness record is 30 minutes old has a grey
// tile saying how old it is; one with a fresh record keeps its colour.
func TestStatusPageDegradedInChromium(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a browser")
	}
	bin := chromium(t)
	var since time.Time
	w := newConsoleWorldWith(t, func(c *harnessCfg) {
		c.Degraded = func() []v1.Degraded {
			return []v1.Degraded{{Dependency: "metrics", Since: since, Op: "metrics", Error: "Get http://influx:8086/ping: connection refused"}}
		}
	})
	since = time.Date(2026, 11, 24, 14, 0, 0, 0, time.UTC)
	// node-11 busy, then 30 minutes without a record (a drain); node-01
	// has a fresh one.
	if err := w.h.journal.AddGoodness(journal.GoodnessRecord{At: w.h.clock.Now(), Node: "node-11", Chosen: "kmeans", Given: "pagerank",
		G: 30, Usage: goodness.Usage{CPU: 0.98, IOWait: 0.02}}); err != nil {
		t.Fatal(err)
	}
	w.h.clock.Advance(30 * time.Minute)
	if err := w.h.journal.AddGoodness(journal.GoodnessRecord{At: w.h.clock.Now().Add(-time.Minute), Node: "node-01", Chosen: "kmeans", Given: "pagerank",
		G: 20, Usage: goodness.Usage{CPU: 0.5, IOWait: 0.02}}); err != nil {
		t.Fatal(err)
	}
	shot := filepath.Join(t.TempDir(), "degraded.png")
	out, stderr := runChromium(t, bin, []string{"TZ=UTC"}, "--dump-dom", "--screenshot="+shot, "--hide-scrollbars",
		"--window-size=1280,1600", w.h.srv.URL+"/?token="+readerTok)
	dom := string(out)
	if lines := consoleLines(stderr); len(lines) > 0 {
		t.Errorf("console messages:\n%s", strings.Join(lines, "\n"))
	}
	if dir := os.Getenv("COLOCD_SCREENSHOT_DIR"); dir != "" {
		if b, err := os.ReadFile(shot); err == nil {
			_ = os.WriteFile(filepath.Join(dir, "status-degraded.png"), b, 0o644)
		}
	}
	banner := between(dom, `id="degraded"`, "</p>")
	for _, want := range []string{"Degraded: ", `data-dependency="metrics"`, "the metrics store: no learning", "since Tue 24 Nov 2026 14:00:00 UTC",
		"the last metrics call failed", `title="Get http://influx:8086/ping: connection refused"`} {
		if !strings.Contains(banner, want) {
			t.Errorf("the banner lacks %q: %s", want, banner)
		}
	}
	stale := between(dom, `data-node="node-11"`, "</div>")
	if !strings.Contains(dom, `class="node stale" role="listitem" data-node="node-11"`) || !strings.Contains(stale, "cpu 98 % · 30 min old") {
		t.Errorf("node-11's tile is not grey with its age: %s", stale)
	}
	if fresh := between(dom, `data-node="node-01"`, "</div>"); strings.Contains(dom, `class="node stale" role="listitem" data-node="node-01"`) || !strings.Contains(fresh, "cpu 50 % · 60 s old") {
		t.Errorf("node-01's tile: %s, want coloured, with its age", fresh)
	}
	if t.Failed() {
		t.Logf("DOM:\n%s", dom)
	}
}
