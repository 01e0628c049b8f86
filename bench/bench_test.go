package bench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/daemon"
	"github.com/colocd/colocd/sim"
	"github.com/colocd/colocd/sim/simtest"
)

// small parses simtest.ComplementaryYAML: a cpu and a disk kind that gain
// from sharing nodes, queued in blocks FIFO co-locates with themselves.
func small(tb testing.TB, repeat int) *sim.Workload {
	tb.Helper()
	w, err := sim.ParseWorkload([]byte(simtest.ComplementaryYAML(repeat)))
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func queueA(tb testing.TB) *sim.Workload {
	tb.Helper()
	w, err := sim.LoadWorkload("../configs/workloads/paper-queue-a.yaml")
	if err != nil {
		tb.Fatal(err)
	}
	return w
}

func run(tb testing.TB, rc RunConfig) Result {
	tb.Helper()
	if rc.Dir == "" && rc.Policy != policyBound {
		rc.Dir = tb.TempDir()
	}
	r, err := runOne(context.Background(), rc)
	if err != nil {
		tb.Fatalf("%s seed %d: %v", rc.Policy, rc.Seed, err)
	}
	return r
}

func kinds(r Result) []string {
	var out []string
	for _, a := range r.Admissions {
		out = append(out, a.Kind)
	}
	return out
}

func TestFIFOKeepsOrder(t *testing.T) {
	w := small(t, 2)
	r := run(t, RunConfig{Workload: w, Policy: FIFO, Seed: 3})
	var seqs []int
	for _, a := range r.Admissions {
		seqs = append(seqs, a.Seq)
	}
	want := make([]int, 16)
	for i := range want {
		want[i] = i
	}
	if diff := cmp.Diff(want, seqs); diff != "" {
		t.Errorf("admission order (-want +got):\n%s", diff)
	}
	if r.Jobs != 16 || r.Decisions != 16 {
		t.Errorf("jobs %d, decisions %d; want 16 and 16", r.Jobs, r.Decisions)
	}
}

// Every policy finishes every job, the oracle and pairwise beat FIFO on a
// workload with an obvious complementary pairing, and no policy beats
// the bound.
func TestPoliciesAgainstBound(t *testing.T) {
	w := small(t, 2)
	got := map[Policy]Result{}
	for _, p := range policies() {
		got[p] = run(t, RunConfig{Workload: w, Policy: p, Seed: 1})
	}
	b := got[policyBound]
	for p, r := range got {
		if r.Jobs != 16 {
			t.Errorf("%s: %d jobs, want 16", p, r.Jobs)
		}
		if p == policyBound {
			continue
		}
		if r.Decisions != 16 {
			t.Errorf("%s: %d decisions, want 16", p, r.Decisions)
		}
		if r.MakespanS < b.MakespanS-1e-9 {
			t.Errorf("%s: makespan %.1f s beats the lower bound %.1f s", p, r.MakespanS, b.MakespanS)
		}
		if r.MeanJCTS < b.MeanJCTS-1e-9 {
			t.Errorf("%s: mean JCT %.1f s beats the bound %.1f s", p, r.MeanJCTS, b.MeanJCTS)
		}
		if len(r.Usage) == 0 {
			t.Errorf("%s: no usage series", p)
		}
	}
	// FIFO pairs each kind with itself: 2 contended waves of 4 jobs each per
	// block; pairing cpu with disk runs everything at full speed.
	for _, p := range []Policy{policyOracle, policyPairwise} {
		if got[p].MakespanS >= got[FIFO].MakespanS {
			t.Errorf("%s makespan %.0f s, want below fifo's %.0f s", p, got[p].MakespanS, got[FIFO].MakespanS)
		}
	}
	if got[policyOracle].MeanIOWait >= got[FIFO].MeanIOWait {
		t.Errorf("oracle iowait %.3f, want below fifo's %.3f", got[policyOracle].MeanIOWait, got[FIFO].MeanIOWait)
	}
}

// The bound by hand: 16 jobs of 6 containers × 240 s on 24 vcores take at
// least 16·6·240/24 = 960 s of reservations; the CPU work is 8·6·240·1 +
// 8·6·240·0.2 = 13824 core-s on 16 cores = 864 s; disk 8·6·240·60 MB on
// 800 MB/s = 864 s; memory 16·6·1024 MB·240 s on 4·6144 MB = 960 s.
func TestLowerBound(t *testing.T) {
	w := small(t, 2)
	b := lowerBound(w, w.Jobs(nil))
	want := boundDetail{Makespan: 960 * time.Second, CPU: 864 * time.Second, Disk: 864 * time.Second,
		VCores: 960 * time.Second, Memory: 960 * time.Second, Longest: 240 * time.Second}
	if diff := cmp.Diff(want, b); diff != "" {
		t.Errorf("bound (-want +got):\n%s", diff)
	}
}

func TestDeterministicAndParallel(t *testing.T) {
	w := small(t, 1)
	var cfgs []RunConfig
	for _, p := range []Policy{FIFO, policyRandom, policyRA, policyOracle} {
		for s := uint64(1); s <= 3; s++ {
			cfgs = append(cfgs, RunConfig{Workload: w, Policy: p, Seed: s})
		}
	}
	seq, err := RunAll(context.Background(), cfgs, 1, nil)
	if err != nil {
		t.Fatal(err)
	}
	var calls []int
	par, err := RunAll(context.Background(), cfgs, 4, func(done, total int) { calls = append(calls, done) })
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(seq, par); diff != "" {
		t.Errorf("parallel results differ from sequential (-seq +par):\n%s", diff)
	}
	if len(calls) != len(cfgs) || calls[len(calls)-1] != len(cfgs) {
		t.Errorf("progress calls %v, want 1..%d", calls, len(cfgs))
	}
	again := run(t, cfgs[7]) // ra, seed 2
	if diff := cmp.Diff(seq[7], again); diff != "" {
		t.Errorf("same seed, different run (-first +second):\n%s", diff)
	}
	// Different seeds do differ somewhere for the random policies.
	if cmp.Equal(kinds(seq[3]), kinds(seq[4])) && cmp.Equal(kinds(seq[4]), kinds(seq[5])) {
		t.Errorf("random: seeds 1-3 gave the same order %v", kinds(seq[3]))
	}
}

// The admission tick only adds passes at which nothing an admission reads
// has changed, so it must not change the run.
func TestAdmissionTickChangesNothing(t *testing.T) {
	w := small(t, 1)
	a := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 5})
	b := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 5, AdmissionTick: 10 * time.Second})
	if diff := cmp.Diff(a, b); diff != "" {
		t.Errorf("admission tick changed the run (-without +with):\n%s", diff)
	}
}

func TestRAWarmStartsFromSnapshot(t *testing.T) {
	w := small(t, 1)
	l := bandit.New(bandit.Config{})
	l.Add("cpu")
	l.Add("disk")
	for range 40 { // disk beside cpu is good, cpu beside cpu bad
		l.Update("disk", "cpu", 40)
		l.Update("cpu", "cpu", 5)
		l.Update("cpu", "disk", 40)
		l.Update("disk", "disk", 5)
	}
	warm := l.Snapshot()
	r := run(t, RunConfig{Workload: w, Policy: policyRAWarm, Seed: 2, Warm: &warm})
	if r.Warm == nil {
		t.Fatal("ra-warm: no starting snapshot recorded")
	}
	if diff := cmp.Diff(warm.H, r.Warm.H); diff != "" {
		t.Errorf("ra-warm started from other preferences (-given +started):\n%s", diff)
	}
	if got, want := r.Preferences.Observations, warm.Observations+r.Updates; got != want {
		t.Errorf("final observations %d, want the snapshot's %d + this run's %d", got, warm.Observations, r.Updates)
	}
	if r.Updates == 0 {
		t.Error("ra-warm learned nothing during the run")
	}
	// Without a snapshot, ra-warm learns one first: its start is not empty.
	r2 := run(t, RunConfig{Workload: w, Policy: policyRAWarm, Seed: 2})
	if r2.Warm == nil || r2.Warm.Observations == 0 {
		t.Errorf("ra-warm without Warm started from %+v, want a learned snapshot", r2.Warm)
	}
	// ra ignores Warm.
	r3 := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 2, Warm: &warm})
	if r3.Warm != nil || r3.Preferences.Observations != r3.Updates {
		t.Errorf("ra used the warm snapshot: start %v, observations %d, updates %d", r3.Warm, r3.Preferences.Observations, r3.Updates)
	}
}

func TestRAUsesDaemonConfig(t *testing.T) {
	w := small(t, 1)
	cfg := daemon.DefaultConfig()
	cfg.Pipeline.Preference.Enabled = false // the pipeline's FIFO stage
	cfg.Pipeline.Select.Enabled = false
	cfg.Pipeline.Altruism.Enabled = false
	cfg.Pipeline.Starvation.Enabled = false
	ra := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 4, Daemon: &cfg})
	fifo := run(t, RunConfig{Workload: w, Policy: FIFO, Seed: 4})
	// Same admissions at the same instants, same placements: same run.
	if diff := cmp.Diff(fifo.Admissions, ra.Admissions); diff != "" {
		t.Errorf("engine with preferences off vs fifo (-fifo +ra):\n%s", diff)
	}
	if fifo.MakespanS != ra.MakespanS {
		t.Errorf("makespan: engine FIFO %.3f, direct FIFO %.3f", ra.MakespanS, fifo.MakespanS)
	}
}

func TestRunConfigErrors(t *testing.T) {
	w := small(t, 1)
	bad := daemon.DefaultConfig()
	bad.Learning.StepSize = -1
	badWin := daemon.DefaultConfig()
	badWin.Pipeline.Window.Size = 0
	tests := map[string]struct {
		rc   RunConfig
		want error
	}{
		"no workload":     {RunConfig{Policy: FIFO}, errInvalid},
		"unknown policy":  {RunConfig{Workload: w, Policy: "lifo"}, errUnknownPolicy},
		"negative learn":  {RunConfig{Workload: w, Policy: policyRA, LearnInterval: -time.Second}, errInvalid},
		"negative tick":   {RunConfig{Workload: w, Policy: policyRA, AdmissionTick: -time.Second}, errInvalid},
		"jitter":          {RunConfig{Workload: w, Policy: policyRA, Jitter: 1}, errInvalid},
		"horizon":         {RunConfig{Workload: w, Policy: policyOracle, OracleHorizon: -1}, errInvalid},
		"bad step size":   {RunConfig{Workload: w, Policy: policyRA, Daemon: &bad}, errInvalid},
		"bad window":      {RunConfig{Workload: w, Policy: policyRA, Daemon: &badWin}, errInvalid},
		"bad warm config": {RunConfig{Workload: w, Policy: policyRAWarm, WarmDaemon: &bad}, errInvalid},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			_, err := runOne(context.Background(), tc.rc)
			if !errors.Is(err, tc.want) {
				t.Errorf("err = %v, want %v", err, tc.want)
			}
		})
	}
}

func TestParsePolicies(t *testing.T) {
	got, err := ParsePolicies(" fifo, RA,ra-warm,,oracle")
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]Policy{FIFO, policyRA, policyRAWarm, policyOracle}, got); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
	for _, in := range []string{"", "fifo,fifo", "fifo,best"} {
		if _, err := ParsePolicies(in); err == nil {
			t.Errorf("ParsePolicies(%q): no error", in)
		}
	}
}

func TestResultJSONKeys(t *testing.T) {
	r := run(t, RunConfig{Workload: small(t, 1), Policy: policyRA, Seed: 1})
	b, err := json.Marshal(r)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	var keys []string
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	want := []string{"decisions", "jobs", "makespan_s", "max_wait_s", "mean_cpu_util", "mean_disk_util", "mean_iowait", "mean_jct_s", "mean_net_util", "p95_wait_s", "policy", "seed", "workload"}
	if diff := cmp.Diff(want, keys); diff != "" {
		t.Errorf("JSON keys (-want +got):\n%s", diff)
	}
	if m["policy"] != "ra" || m["jobs"] != float64(8) {
		t.Errorf("JSON %s", b)
	}
}

func TestSummarize(t *testing.T) {
	rs := []Result{
		{Workload: "w", Policy: FIFO, Seed: 1, MakespanS: 100, MeanJCTS: 50},
		{Workload: "w", Policy: FIFO, Seed: 2, MakespanS: 100, MeanJCTS: 50},
		{Workload: "w", Policy: policyRA, Seed: 1, MakespanS: 95, MeanJCTS: 40, MaxWaitS: 30},
		{Workload: "w", Policy: policyRA, Seed: 2, MakespanS: 85, MeanJCTS: 50, MaxWaitS: 50},
		{Workload: "w", Policy: policyRollout, Seed: 1, MakespanS: 80, MeanJCTS: 40},
		{Workload: "w", Policy: policyRollout, Seed: 2, MakespanS: 80, MeanJCTS: 40},
		// Judged by mean JCT: ra gains 5 of the rollout's 10 s on seed 1.
		{Workload: "open", Policy: FIFO, Seed: 1, MakespanS: 100, MeanJCTS: 50, Metric: metricJCT},
		{Workload: "open", Policy: policyRA, Seed: 1, MakespanS: 90, MeanJCTS: 45, Metric: metricJCT},
		{Workload: "open", Policy: policyRollout, Seed: 1, MakespanS: 99, MeanJCTS: 40, Metric: metricJCT},
	}
	sums, err := Summarize(rs)
	if err != nil {
		t.Fatal(err)
	}
	if len(sums) != 6 || sums[1].Policy != policyRA || sums[4].Workload != "open" || sums[4].Policy != policyRA {
		t.Fatalf("summaries %+v", sums)
	}
	ra := sums[1]
	if math.Abs(ra.MakespanChange.Mean+0.10) > 1e-12 || ra.MakespanChange.Min != -0.15 || ra.MakespanChange.Max != -0.05 {
		t.Errorf("makespan change %+v, want mean -10%%, [-15%%, -5%%]", ra.MakespanChange)
	}
	if math.Abs(ra.RolloutShare-0.5) > 1e-12 || ra.MaxWait.Mean != 40 {
		t.Errorf("rollout share %v, max wait %v; want 0.5 and 40", ra.RolloutShare, ra.MaxWait.Mean)
	}
	if got := sums[4].RolloutShare; math.Abs(got-0.5) > 1e-12 {
		t.Errorf("open workload: rollout share %v, want 0.5 (of the mean JCT gain, not the makespan's 10/1)", got)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, sums); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"fifo", "ra", "rollout", "-10.0%", "50% (makespan)", "50% (mean JCT)", "of rollout gain"} {
		if !strings.Contains(buf.String(), s) {
			t.Errorf("table lacks %q:\n%s", s, buf.String())
		}
	}
	if _, err := Summarize(rs[2:]); !errors.Is(err, errInvalid) {
		t.Errorf("without fifo: err = %v, want errInvalid", err)
	}
}

func TestSetRolloutShares(t *testing.T) {
	rs := []Result{
		{Workload: "w", Policy: FIFO, Seed: 1, MakespanS: 100},
		{Workload: "w", Policy: policyRA, Seed: 1, MakespanS: 95},
		{Workload: "w", Policy: policyRollout, Seed: 1, MakespanS: 90},
		{Workload: "w", Policy: policyRA, Seed: 2, MakespanS: 95}, // no fifo on seed 2
		{Workload: "w", Policy: policyBound, Seed: 1, MakespanS: 50},
		{Workload: "flat", Policy: FIFO, Seed: 1, MakespanS: 100},
		{Workload: "flat", Policy: policyPackFit, Seed: 1, MakespanS: 99},
		{Workload: "flat", Policy: policyRollout, Seed: 1, MakespanS: 100}, // no gain
	}
	SetRolloutShares(rs)
	got := make([]string, len(rs))
	for i, r := range rs {
		got[i] = "absent"
		if r.RolloutShare != nil {
			got[i] = strconv.FormatFloat(*r.RolloutShare, 'f', 2, 64)
		}
	}
	want := []string{"0.00", "0.50", "1.00", "absent", "absent", "absent", "absent", "absent"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("shares (-want +got):\n%s", diff)
	}
	b, err := json.Marshal(rs[1])
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"rollout_share":0.5`) {
		t.Errorf("JSON %s lacks rollout_share", b)
	}
}

func TestPlotsArePNG(t *testing.T) {
	w := small(t, 1)
	rs := []Result{
		run(t, RunConfig{Workload: w, Policy: FIFO, Seed: 1}),
		run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 1}),
		run(t, RunConfig{Workload: w, Policy: policyBound, Seed: 1}),
	}
	dir := t.TempDir()
	files, err := WritePlots(dir, rs)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, f := range files {
		names = append(names, filepath.Base(f))
	}
	want := []string{"workload-fifo-usage.png", "workload-ra-usage.png", "workload-ra-profiles.png", "workload-ra-preferences.png"}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("files (-want +got):\n%s", diff)
	}
	for _, f := range files {
		fh, err := os.Open(f)
		if err != nil {
			t.Fatal(err)
		}
		img, err := png.Decode(fh)
		fh.Close()
		if err != nil {
			t.Errorf("%s: %v", f, err)
			continue
		}
		if b := img.Bounds(); b.Dx() < 300 || b.Dy() < 200 {
			t.Errorf("%s: %v is too small", f, b)
		}
	}
	if err := writeUsagePNG(&bytes.Buffer{}, rs[2]); !errors.Is(err, errInvalid) {
		t.Errorf("usage plot of the bound: err = %v, want errInvalid", err)
	}
	if rs[1].Profiles == nil || len(rs[1].TrueProfiles) != 2 {
		t.Errorf("ra's result: profiles %v, true profiles %v; want both", rs[1].Profiles, rs[1].TrueProfiles)
	}
}

func TestBestPartners(t *testing.T) {
	truth, err := bestPartners(small(t, 1), 0)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string][]string{}
	for _, tr := range truth {
		got[tr.Kind] = tr.Set
		if tr.Best != tr.BestGoodness {
			t.Errorf("%s: best by speed %s, by goodness %s; want the same here", tr.Kind, tr.Best, tr.BestGoodness)
		}
	}
	want := map[string][]string{"cpu": {"disk"}, "disk": {"cpu"}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("best partner sets (-want +got):\n%s", diff)
	}
	if _, err := bestPartners(small(t, 1), 1.5); !errors.Is(err, errInvalid) {
		t.Errorf("tolerance 1.5: err = %v, want errInvalid", err)
	}
}

func TestLearningSpeed(t *testing.T) {
	// The small workload alternates kinds from the start, so the learner
	// only ever sees one pair and learns nothing (G − Ḡ = 0): queue A.
	w := queueA(t)
	rs, truth, err := LearningSpeed(context.Background(), SpeedConfig{Run: RunConfig{Workload: w}, Seeds: Seeds(1, 2), MaxRuns: 3})
	if err != nil {
		t.Fatal(err)
	}
	if len(truth) != 4 || len(rs) != 2 {
		t.Fatalf("truth %d, results %d", len(truth), len(rs))
	}
	for _, r := range rs {
		if !r.Reached || r.Observations <= 0 {
			t.Errorf("seed %d: %+v, want the pairing learned within 3 runs", r.Seed, r)
			continue
		}
		for k, s := range r.PerKind {
			if s.Total < 0 || s.Total > r.Observations || s.Row > s.Total {
				t.Errorf("seed %d %s: %+v inconsistent with %d observations", r.Seed, k, s, r.Observations)
			}
		}
	}
}

func TestProfilesAndSimilarity(t *testing.T) {
	ps, err := soloProfiles(queueA(t))
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]soloProfile{}
	for _, p := range ps {
		by[p.Kind] = p
	}
	if by["kmeans"].CPU <= by["tpch-q3"].CPU || by["tpch-q3"].Disk <= by["kmeans"].Disk {
		t.Errorf("profiles %+v: kmeans should be the CPU-heavier, tpch-q3 the disk-heavier", ps)
	}
	if c := cosine(by["tpch-q10"], by["tpch-q3"]); c < 0.95 {
		t.Errorf("cos(tpch-q10, tpch-q3) = %.3f, want ≥ 0.95 (both I/O-bound)", c)
	}
	ws := similarityWeights("tpch-q10", []string{"kmeans", "tpch-q3", "cc"}, ps, 0)
	if ws["tpch-q3"] <= ws["cc"] || ws["cc"] <= ws["kmeans"] {
		t.Errorf("weights %v: want tpch-q3 > cc > kmeans", ws)
	}
	if got := similarityWeights("nope", []string{"kmeans"}, ps, 0); got != nil {
		t.Errorf("unknown kind: weights %v", got)
	}
}

func TestWarmStartTiny(t *testing.T) {
	w := small(t, 1)
	rs, err := WarmStart(context.Background(), WarmStartConfig{
		Run: RunConfig{Workload: w}, Seeds: Seeds(1, 2), NewKinds: []string{"disk"}, PreRuns: 1, MaxRuns: 2,
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 2 {
		t.Fatalf("%d results, want 2", len(rs))
	}
	for _, r := range rs {
		if r.NewKind != "disk" || len(r.Weights) != 1 || r.Weights["cpu"] <= 0 {
			t.Errorf("seed %d: new kind %s, weights %v", r.Seed, r.NewKind, r.Weights)
		}
		if r.InitialPlain <= 0 || r.InitialPlain >= 1 || r.InitialSimilar <= 0 || r.InitialSimilar >= 1 {
			t.Errorf("seed %d: initial probabilities %v, %v", r.Seed, r.InitialPlain, r.InitialSimilar)
		}
	}
	var buf bytes.Buffer
	if err := WriteWarmStartTable(&buf, rs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "disk") || !strings.Contains(buf.String(), "/2") {
		t.Errorf("table:\n%s", buf.String())
	}
	if _, err := WarmStart(context.Background(), WarmStartConfig{Run: RunConfig{Workload: w}, NewKinds: []string{"gpu"}}); !errors.Is(err, errInvalid) {
		t.Errorf("unknown new kind: err = %v, want errInvalid", err)
	}
}

func TestRunAllStopsOnError(t *testing.T) {
	w := small(t, 1)
	cfgs := []RunConfig{{Workload: w, Policy: FIFO, Seed: 1}, {Workload: w, Policy: "nope", Seed: 2}}
	if _, err := RunAll(context.Background(), cfgs, 2, nil); !errors.Is(err, errUnknownPolicy) {
		t.Errorf("err = %v, want errUnknownPolicy", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := RunAll(ctx, cfgs[:1], 1, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled: err = %v, want context.Canceled", err)
	}
}

// BenchmarkQueueA plays the paper's queue A (48 jobs, 16 nodes) once per
// iteration under each policy.
func BenchmarkQueueA(b *testing.B) {
	w := queueA(b)
	for _, p := range policies() {
		b.Run(string(p), func(b *testing.B) {
			rc := RunConfig{Workload: w, Policy: p, Seed: 1}
			r := run(b, rc)
			if r.Jobs != 48 || r.MakespanS < 5000 || r.MakespanS > 9000 {
				b.Fatalf("%s: %d jobs, makespan %.0f s", p, r.Jobs, r.MakespanS)
			}
			b.ReportAllocs()
			for b.Loop() {
				if _, err := runOne(context.Background(), rc); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(r.MakespanS/60, "sim-min")
		})
	}
}

func TestWaitsFromAdmissions(t *testing.T) {
	if m, p := waitStats(nil); m != 0 || p != 0 {
		t.Errorf("no waits: %v %v", m, p)
	}
	w := make([]float64, 100)
	for i := range w {
		w[i] = float64(100 - i) // 100 … 1, unsorted
	}
	if m, p := waitStats(w); m != 100 || p != 95 {
		t.Errorf("waits 1..100: max %v p95 %v, want 100 and 95", m, p)
	}
	// A batch run: every job arrives at 0, so its wait is its admission time.
	r := run(t, RunConfig{Workload: small(t, 1), Policy: FIFO, Seed: 1})
	var last float64
	for _, a := range r.Admissions {
		last = max(last, a.At.Seconds())
	}
	if r.MaxWaitS != last || r.P95WaitS > r.MaxWaitS || last == 0 {
		t.Errorf("max wait %v, p95 %v; want the last admission %v and p95 ≤ max", r.MaxWaitS, r.P95WaitS, last)
	}
}

// TestShippedWorkloadReproducible: a seed reproduces a run bit for bit,
// learned preferences and profiles included, on a shipped workload where
// several jobs of one kind share nodes (summing their containers in map
// order made the profiles, then the preferences, differ in the last
// digits on most of these seeds).
func TestShippedWorkloadReproducible(t *testing.T) {
	w, err := sim.LoadWorkload("../configs/workloads/noisy.yaml")
	if err != nil {
		t.Fatal(err)
	}
	for seed := uint64(3); seed <= 6; seed++ {
		rc := RunConfig{Workload: w, Policy: policyRA, Seed: seed}
		first := run(t, rc)
		for range 2 {
			if diff := cmp.Diff(first, run(t, rc)); diff != "" {
				t.Fatalf("seed %d, different runs (-first +again):\n%s", seed, diff)
			}
		}
	}
}

// ra-plan is ra with the lookahead on: on queue A (the same seed, the
// same learning) the lookahead replaces some of ra's one-step choices.
func TestRAPlanLooksAhead(t *testing.T) {
	w := queueA(t)
	ra := run(t, RunConfig{Workload: w, Policy: policyRA, Seed: 1})
	pl := run(t, RunConfig{Workload: w, Policy: policyRAPlan, Seed: 1})
	if pl.Jobs != ra.Jobs || pl.Decisions != ra.Decisions {
		t.Fatalf("ra-plan: %d jobs in %d decisions, ra %d in %d", pl.Jobs, pl.Decisions, ra.Jobs, ra.Decisions)
	}
	if slices.Equal(kinds(ra), kinds(pl)) {
		t.Error("ra-plan admitted the kinds in ra's order: the lookahead changed no choice")
	}
}
