package daemon

import (
	"encoding/json"
	"math"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/queue"
)

// TestPoisonedPreferencesNeverBrickTheDaemon runs the real binary: a
// poisoned import (counters at the int64 maximum, a formula for a kind) is
// refused and the daemon restarts; a learned state that does not restore
// (the counters an overflow left, written into the store while colocd was
// stopped) is quarantined at the next start, with an ERROR line and
// colocd_learned_state_quarantined_total, and colocd serves with fresh
// preferences; `colocd store check` lists the quarantined keys; the start
// after that quarantines nothing more.
func TestPoisonedPreferencesNeverBrickTheDaemon(t *testing.T) {
	dataDir := t.TempDir()
	p := startDemo(t, dataDir, freeAddr(t))
	for name, snap := range map[string]bandit.Snapshot{
		"counters at the int64 maximum": {Version: 1, Kinds: []string{"tpch-q10", "tpch-q1"},
			H: [][]float64{{0, 0}, {0, 0}}, RowBaseline: []float64{0, 0}, Observations: math.MaxInt64,
			RowObservations: []int64{math.MaxInt64, 0}, PairObservations: [][]int64{{0, math.MaxInt64}, {0, 0}}},
		"a formula for a kind": {Version: 1, Kinds: []string{`=HYPERLINK("http://evil.example/","x")`},
			H: [][]float64{{0}}, RowBaseline: []float64{0}, RowObservations: []int64{0}, PairObservations: [][]int64{{0}}},
	} {
		if code, body := p.do(http.MethodPut, "/v1/preferences", snap); code != http.StatusBadRequest {
			t.Errorf("importing %s: %d %.300s, want 400", name, code, body)
		}
	}
	if _, err := p.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}

	// What an overflow left in the store before counters were bounded.
	path := filepath.Join(dataDir, "colocd.db")
	s, err := queue.Open(path, queue.Options{NoSync: true, Timeout: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	err = s.SaveLearned(queue.LearnedSave{Section: queue.SectionPreferences, Full: true, State: queue.Learned{
		Names: []string{"tpch-q10", "tpch-q1"},
		Meta:  json.RawMessage(`{"version":1,"config":{},"baseline":0.4,"observations":-9223372036854775808,"rejected":0}`),
		Rows:  []queue.LearnedRow{{Index: 0, Floats: []float64{0.4, 0, 0.5}, Ints: []int64{math.MinInt64, 0, math.MinInt64}}},
	}})
	if cerr := s.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	p = startDemo(t, dataDir, freeAddr(t))
	if out := string(p.out.Bytes()); !strings.Contains(out, `"level":"ERROR","msg":"queue: learned state quarantined`) || !strings.Contains(out, `"section":"preferences"`) {
		t.Errorf("no ERROR line for the quarantine in the log")
	}
	if got := quarantineCounts(t, p); got != `preferences=1 profiles=0` {
		t.Errorf("colocd_learned_state_quarantined_total: %s, want preferences=1 profiles=0", got)
	}
	var snap bandit.Snapshot
	p.getJSON("/v1/preferences?format=snapshot", &snap)
	if snap.Observations != 0 {
		t.Errorf("preferences after the quarantine: %d observations, want a fresh learner", snap.Observations)
	}
	if _, err := p.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}

	out, err := exec.Command(colocdBinary(t), "store", "check", path).CombinedOutput()
	if err != nil || !regexp.MustCompile(`quarantined\s+prefs/learned_preferences/header@`).Match(out) {
		t.Errorf("colocd store check: %v\n%s\nwant it clean, listing the quarantined header", err, out)
	}

	p = startDemo(t, dataDir, freeAddr(t))
	if got := quarantineCounts(t, p); got != `preferences=0 profiles=0` {
		t.Errorf("the start after: colocd_learned_state_quarantined_total %s, want nothing more quarantined", got)
	}
	if _, err := p.stop(15 * time.Second); err != nil {
		t.Fatalf("SIGTERM: %v", err)
	}
}

// quarantineCounts reads colocd_learned_state_quarantined_total from
// /metrics as "preferences=N profiles=M".
func quarantineCounts(t *testing.T, p *proc) string {
	t.Helper()
	code, body := p.do(http.MethodGet, "/metrics", nil)
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d", code)
	}
	got := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^colocd_learned_state_quarantined_total\{section="(\w+)"\} (\d+)$`).FindAllStringSubmatch(string(body), -1) {
		got[m[1]] = m[2]
	}
	return "preferences=" + got["preferences"] + " profiles=" + got["profiles"]
}
