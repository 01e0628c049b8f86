package main

import (
	"encoding/json"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/sim/simtest"
)

func writeSimWorkload(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "two-kinds.yaml")
	if err := os.WriteFile(p, []byte(simtest.ComplementaryYAML(1)), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestSimJSONLines(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	code, out, errOut := runCmd(t, "sim", "--workload", wl, "--policy", "ra", "--seed", "3", "--runs", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 2 {
		t.Fatalf("%d lines, want 2:\n%s", len(lines), out)
	}
	want := []string{"decisions", "jobs", "makespan_s", "max_wait_s", "mean_cpu_util", "mean_disk_util", "mean_iowait", "mean_jct_s", "mean_net_util", "p95_wait_s", "policy", "seed", "workload"}
	for i, l := range lines {
		var m map[string]any
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatalf("line %d: %v: %s", i, err, l)
		}
		var keys []string
		for k := range m {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		if diff := cmp.Diff(want, keys); diff != "" {
			t.Errorf("line %d keys (-want +got):\n%s", i, diff)
		}
		if m["workload"] != "two-kinds" || m["policy"] != "ra" || m["seed"] != float64(3+i) || m["jobs"] != float64(8) {
			t.Errorf("line %d: %s", i, l)
		}
	}
	if errOut != "" {
		t.Errorf("stderr (not a terminal, so no progress bar): %q", errOut)
	}
}

func TestSimCompareAndPlots(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	dir := filepath.Join(t.TempDir(), "plots")
	code, out, errOut := runCmd(t, "sim", "--workload", wl, "--runs", "2", "--compare", "ra,ra-warm,random,pairwise,oracle,rollout,bound", "--rollout-samples", "2", "--plot-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	rows := map[string]bool{}
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 2 && f[0] == "two-kinds" {
			rows[f[1]] = f[2] == "2"
		}
	}
	for _, p := range []string{"fifo", "ra", "ra-warm", "random", "pairwise", "oracle", "rollout", "bound"} {
		if !rows[p] {
			t.Errorf("no row with 2 runs for %s:\n%s", p, out)
		}
	}
	for _, s := range []string{"vs fifo", "of rollout gain", "100% (makespan)", "CPUs"} {
		if !strings.Contains(out, s) {
			t.Errorf("output lacks %q:\n%s", s, out)
		}
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.png"))
	if err != nil {
		t.Fatal(err)
	}
	// usage for every policy but bound; profiles and preferences for ra and
	// ra-warm; the comparison.
	if len(files) != 12 || !slices.Contains(files, filepath.Join(dir, "compare.png")) {
		t.Errorf("%d PNGs, want 12 with compare.png: %v", len(files), files)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := png.Decode(fh); err != nil {
			t.Errorf("%s: %v", f, err)
		}
		fh.Close()
	}
}

// TestSimJSONRolloutShare: with fifo and rollout in the same run, every
// --json line but bound's carries its seed's share of the rollout's gain;
// rollout's own is 1.
func TestSimJSONRolloutShare(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	code, out, errOut := runCmd(t, "sim", "--workload", wl, "--runs", "2", "--compare", "random,rollout,bound", "--rollout-samples", "2", "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 8 {
		t.Fatalf("%d lines, want 8 (4 policies × 2 seeds):\n%s", len(lines), out)
	}
	for _, l := range lines {
		var m struct {
			Policy string   `json:"policy"`
			Share  *float64 `json:"rollout_share"`
		}
		if err := json.Unmarshal([]byte(l), &m); err != nil {
			t.Fatal(err)
		}
		switch {
		case m.Policy == "bound":
			if m.Share != nil {
				t.Errorf("bound has a share: %s", l)
			}
		case m.Share == nil:
			t.Errorf("no rollout_share: %s", l)
		case m.Policy == "rollout" && *m.Share != 1, m.Policy == "fifo" && *m.Share != 0:
			t.Errorf("share %v: %s", *m.Share, l)
		}
	}
}

// TestSimCompareSeveralWorkloads: --workload repeated with --compare runs
// every policy on every workload, prints a table per workload (as a single
// workload prints its one) and draws them side by side in compare.png.
func TestSimCompareSeveralWorkloads(t *testing.T) {
	isolate(t)
	one := writeSimWorkload(t)
	two := filepath.Join(t.TempDir(), "two-kinds-twice.yaml")
	if err := os.WriteFile(two, []byte(simtest.ComplementaryYAML(2)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "plots")
	code, out, errOut := runCmd(t, "sim", "--workload", one, "--workload", two, "--runs", "2", "--compare", "packfit,random", "--plot-dir", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var headers []string
	rows := map[string]int{}
	for _, l := range strings.Split(out, "\n") {
		f := strings.Fields(l)
		switch {
		case strings.Contains(l, " seeds from "):
			headers = append(headers, strings.TrimSuffix(f[0], ","))
		case len(f) > 2 && f[0] != "workload":
			rows[f[0]+" "+f[1]]++
		}
	}
	if diff := cmp.Diff([]string{"two-kinds", "two-kinds-twice"}, headers); diff != "" {
		t.Errorf("table headers (-want +got):\n%s\n%s", diff, out)
	}
	for _, w := range []string{"two-kinds", "two-kinds-twice"} {
		for _, p := range []string{"fifo", "packfit", "random"} {
			if rows[w+" "+p] != 1 {
				t.Errorf("%d rows for %s %s, want 1:\n%s", rows[w+" "+p], w, p, out)
			}
		}
	}
	fh, err := os.Open(filepath.Join(dir, "compare.png"))
	if err != nil {
		t.Fatal(err)
	}
	defer fh.Close()
	if _, err := png.Decode(fh); err != nil {
		t.Errorf("compare.png: %v", err)
	}
	if !strings.Contains(errOut, "compare.png") {
		t.Errorf("stderr does not name compare.png: %q", errOut)
	}
}

func TestSimStudies(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	code, out, errOut := runCmd(t, "sim", "--workload", wl, "--study", "warm-start", "--runs", "1")
	if code != 0 {
		t.Fatalf("warm-start: exit %d: %s", code, errOut)
	}
	for _, s := range []string{"new kind", "cpu", "disk"} {
		if !strings.Contains(out, s) {
			t.Errorf("warm-start output lacks %q:\n%s", s, out)
		}
	}
	code, out, errOut = runCmd(t, "sim", "--workload", wl, "--study", "speed", "--runs", "1")
	if code != 0 {
		t.Fatalf("speed: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "best partners") || !strings.Contains(out, "set [disk]") {
		t.Errorf("speed output:\n%s", out)
	}
	code, out, errOut = runCmd(t, "sim", "--workload", wl, "--study", "reward", "--runs", "1")
	if code != 0 {
		t.Fatalf("reward: exit %d: %s", code, errOut)
	}
	for _, s := range []string{"cpu + disk", "Spearman ρ(goodness, speed-up) over 3 pairs", "objective rate", "objective goodness"} {
		if !strings.Contains(out, s) {
			t.Errorf("reward output lacks %q:\n%s", s, out)
		}
	}
	code, out, errOut = runCmd(t, "sim", "--workload", wl, "--study", "profiles", "--runs", "1")
	if code != 0 {
		t.Fatalf("profiles: exit %d: %s", code, errOut)
	}
	for _, s := range []string{"err after 3", "cpu ", "disk "} {
		if !strings.Contains(out, s) {
			t.Errorf("profiles output lacks %q:\n%s", s, out)
		}
	}
}

func TestSimUsageErrors(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	bad := filepath.Join(t.TempDir(), "bad.yaml")
	if err := os.WriteFile(bad, []byte("cluster: {nodes: 0}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	missing := filepath.Join(t.TempDir(), "not-there.yaml")
	twin := filepath.Join(t.TempDir(), filepath.Base(wl))
	if err := os.WriteFile(twin, []byte(simtest.ComplementaryYAML(1)), 0o600); err != nil {
		t.Fatal(err)
	}
	tests := map[string]struct {
		args []string
		want string
	}{
		"no workload":             {[]string{"sim"}, "--workload"},
		"bad workload":            {[]string{"sim", "--workload", bad}, "cluster"},
		"missing file":            {[]string{"sim", "--workload", bad + ".nope"}, "no such file"},
		"unknown policy":          {[]string{"sim", "--workload", wl, "--policy", "lifo"}, "lifo"},
		"bad compare":             {[]string{"sim", "--workload", wl, "--compare", "ra,ra"}, "twice"},
		"zero runs":               {[]string{"sim", "--workload", wl, "--runs", "0"}, "--runs"},
		"bad study":               {[]string{"sim", "--workload", wl, "--study", "everything"}, "--study"},
		"stray argument":          {[]string{"sim", "--workload", wl, "extra"}, "unknown command"},
		"several without compare": {[]string{"sim", "--workload", wl, "--workload", wl}, "--compare"},
		"several with a study":    {[]string{"sim", "--workload", wl, "--workload", wl, "--compare", "ra", "--study", "speed"}, "--study"},
		"second file missing":     {[]string{"sim", "--workload", wl, "--workload", missing, "--compare", "ra"}, missing},
		"same name twice":         {[]string{"sim", "--workload", wl, "--workload", twin, "--compare", "ra"}, "both named"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			code, _, errOut := runCmd(t, tc.args...)
			if code != exitUsage {
				t.Errorf("exit %d, want %d (stderr %q)", code, exitUsage, errOut)
			}
			if !strings.Contains(errOut, tc.want) {
				t.Errorf("stderr %q lacks %q", errOut, tc.want)
			}
		})
	}
}

// TestSimReadsConfigEnv: ra runs with the daemon configuration serve would
// load, so a COLOCD_* variable reaches it without a --config file; a bad
// value is an error naming its key, not silently ignored.
func TestSimReadsConfigEnv(t *testing.T) {
	isolate(t)
	wl := writeSimWorkload(t)
	t.Setenv("COLOCD_PIPELINE_PREFERENCE_CORRECTION", "lots")
	code, _, errOut := runCmd(t, "sim", "--workload", wl, "--policy", "ra")
	if code == 0 {
		t.Fatalf("exit 0 with a bad COLOCD_PIPELINE_PREFERENCE_CORRECTION; stderr %q", errOut)
	}
	if !strings.Contains(errOut, "pipeline.preference.correction") {
		t.Errorf("stderr %q does not name the key", errOut)
	}
	t.Setenv("COLOCD_PIPELINE_PREFERENCE_CORRECTION", "0.5")
	if code, _, errOut := runCmd(t, "sim", "--workload", wl, "--policy", "ra"); code != 0 {
		t.Errorf("exit %d with a valid value: %s", code, errOut)
	}
}
