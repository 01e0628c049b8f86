package main

import (
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/spf13/cobra"

	"github.com/colocd/colocd/apiclient"
	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/bandit"
	"github.com/colocd/colocd/profile"
	"github.com/colocd/colocd/queue"
)

// The test server's tokens (apiclienttest): users rita, sam and ada.
const (
	cliReader    = apiclienttest.ReaderToken
	cliSubmitter = apiclienttest.SubmitterToken
	cliAdmin     = apiclienttest.AdminToken
)

// cliServer is a real API server and what it serves from.
type cliServer struct {
	url      string
	store    *queue.Store
	learner  *bandit.Learner
	profiles *profile.Model
}

// cliLimits are the nodes' maxima the test API converts profiles with.
var cliLimits = apiclienttest.DefaultLimits

func startAPI(t *testing.T) *cliServer {
	t.Helper()
	s := apiclienttest.Start(t, apiclienttest.Options{})
	return &cliServer{url: s.URL, store: s.Store, learner: s.Learner, profiles: s.Profiles}
}

// runCLI runs one client command (found by name in clientCommands) with
// args, the server's URL and token; it returns stdout and the error.
func (s *cliServer) runCLI(t *testing.T, token, stdin string, args ...string) (string, error) {
	t.Helper()
	var cmd *cobra.Command
	for _, c := range clientCommands() {
		if c.Name() == args[0] {
			cmd = c
		}
	}
	if cmd == nil {
		t.Fatalf("no client command %q", args[0])
	}
	full := append([]string{"--server", s.url}, args[1:]...)
	if token != "" {
		full = append(full, "--token", token)
	}
	cmd.SetArgs(full)
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetIn(strings.NewReader(stdin))
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	err := cmd.ExecuteContext(ctx)
	return out.String(), err
}

func TestClientCommandNames(t *testing.T) {
	var names []string
	for _, c := range clientCommands() {
		names = append(names, c.Name())
		for _, f := range []string{"server", "token"} {
			if c.Flags().Lookup(f) == nil {
				t.Errorf("%s lacks --%s", c.Name(), f)
			}
		}
	}
	if diff := cmp.Diff([]string{"submit", "queue", "job", "cancel", "resolve", "prefs", "profiles", "queues", "summary", "nodes", "whoami"}, names); diff != "" {
		t.Errorf("commands (-want +got):\n%s", diff)
	}
}

func TestClientSubmitFlags(t *testing.T) {
	s := startAPI(t)
	out, err := s.runCLI(t, cliSubmitter, "", "submit", "--kind", "kmeans", "--queue", "default",
		"--containers", "12", "--memory-mb", "1536", "--vcores", "1", "--label", "team=search",
		"--deadline", "2099-12-01T10:00:00Z")
	if err != nil {
		t.Fatalf("submit: %v", err)
	}
	if !strings.HasPrefix(out, "submitted job ") {
		t.Errorf("output %q", out)
	}
	jobs, _ := s.store.Pending(0)
	if len(jobs) != 1 {
		t.Fatalf("%d jobs stored", len(jobs))
	}
	j := jobs[0]
	deadline := time.Date(2099, 12, 1, 10, 0, 0, 0, time.UTC)
	want := queue.Job{Kind: "kmeans", User: "sam", Queue: "default",
		Resources: queue.Resources{Containers: 12, MemoryMB: 1536, VCores: 1},
		Labels:    map[string]string{"team": "search"}, Deadline: &deadline}
	got := queue.Job{Kind: j.Kind, User: j.User, Queue: j.Queue, Resources: j.Resources, Labels: j.Labels, Deadline: j.Deadline}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("stored job (-want +got):\n%s", diff)
	}
	if !strings.Contains(out, j.ID) {
		t.Errorf("output %q lacks the id %s", out, j.ID)
	}
}

func TestClientSubmitFileIdempotent(t *testing.T) {
	s := startAPI(t)
	path := filepath.Join(t.TempDir(), "job.json")
	body := `{"kind":"terasort","resources":{"containers":2,"memory_mb":1024,"vcores":1},"labels":{"team":"infra"}}`
	if err := os.WriteFile(path, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	first, err := s.runCLI(t, cliSubmitter, "", "submit", "-f", path, "--idempotency-key", "nightly-1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var j1 queue.Job
	if err := json.Unmarshal([]byte(first), &j1); err != nil {
		t.Fatalf("--json output is not JSON: %v\n%s", err, first)
	}
	again, err := s.runCLI(t, cliSubmitter, body, "submit", "-f", "-", "--idempotency-key", "nightly-1")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(again, "already submitted") || !strings.Contains(again, j1.ID) {
		t.Errorf("repeat output %q, want 'already submitted' and %s", again, j1.ID)
	}
	if jobs, _ := s.store.List("", 0); len(jobs) != 1 {
		t.Errorf("%d jobs stored, want 1", len(jobs))
	}
	// -f with job flags is a usage error, caught before any request.
	_, err = s.runCLI(t, cliSubmitter, "", "submit", "-f", path, "--kind", "x")
	var ue usageError
	if !errors.As(err, &ue) {
		t.Errorf("-f with --kind: %v, want a usage error", err)
	}
}

func TestClientServerErrors(t *testing.T) {
	s := startAPI(t)
	for _, tc := range []struct {
		name  string
		token string
		args  []string
		want  []string // substrings of the error
	}{
		{"bad field", cliSubmitter, []string{"submit", "--kind", "kmeans", "--containers", "0", "--memory-mb", "1", "--vcores", "1"},
			[]string{"resources.containers", "HTTP 400"}},
		{"reader submits", cliReader, []string{"submit", "--kind", "kmeans"}, []string{"role reader may not", "HTTP 403"}},
		{"bad token", "wrong", []string{"queue"}, []string{"HTTP 401"}},
		{"unknown job", cliReader, []string{"job", "NOSUCHJOB"}, []string{`no job "NOSUCHJOB"`, "HTTP 404"}},
		{"bad state", cliReader, []string{"queue", "--state", "sleeping"}, []string{"sleeping", "HTTP 400"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := s.runCLI(t, tc.token, "", tc.args...)
			var ae *apiclient.Error
			if !errors.As(err, &ae) {
				t.Fatalf("got %v, want the server's error", err)
			}
			var ue usageError
			if errors.As(err, &ue) {
				t.Errorf("a server error must not be a usage error (exit 1, not 2)")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
	t.Run("no token", func(t *testing.T) {
		t.Setenv(envToken, "")
		_, err := s.runCLI(t, "", "", "queue")
		var ue usageError
		if !errors.As(err, &ue) || !strings.Contains(err.Error(), envToken) {
			t.Errorf("got %v, want a usage error naming %s", err, envToken)
		}
	})
}

func TestClientQueueJobCancel(t *testing.T) {
	s := startAPI(t)
	var ids []string
	for _, k := range []string{"kmeans", "terasort", "wordcount"} {
		out, err := s.runCLI(t, cliSubmitter, "", "submit", "--kind", k, "--containers", "1", "--memory-mb", "512", "--vcores", "1", "--json")
		if err != nil {
			t.Fatal(err)
		}
		var j queue.Job
		_ = json.Unmarshal([]byte(out), &j)
		ids = append(ids, j.ID)
	}
	out, err := s.runCLI(t, cliReader, "", "queue")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if !strings.HasPrefix(lines[0], "POS") {
		t.Errorf("no header: %q", lines[0])
	}
	for i, id := range ids {
		f := strings.Fields(lines[i+1])
		if f[0] != []string{"0", "1", "2"}[i] || f[1] != id {
			t.Errorf("row %d = %q, want position %d and %s", i, lines[i+1], i, id)
		}
	}
	if !strings.Contains(out, "pending 3") {
		t.Errorf("summary lacks the counts: %q", out)
	}

	out, err = s.runCLI(t, cliReader, "", "job", ids[2])
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"id:", ids[2], "state:", "pending", "position:", "2 (pending jobs ahead", "estimated wait:", "wordcount"} {
		if !strings.Contains(out, want) {
			t.Errorf("job output lacks %q:\n%s", want, out)
		}
	}
	out, err = s.runCLI(t, cliSubmitter, "", "cancel", ids[0])
	if err != nil || !strings.Contains(out, "cancelled") {
		t.Errorf("cancel: %q, %v", out, err)
	}
	// Admit the next one behind the API's back; cancel then kills it.
	if _, err := s.store.Admit(ids[1], "application_1_0001", json.RawMessage(`{"candidates":[{"kind":"terasort","prob":0.75}]}`), nil, nil); err != nil {
		t.Fatal(err)
	}
	out, _ = s.runCLI(t, cliReader, "", "job", ids[1])
	if !strings.Contains(out, "application_1_0001") || !strings.Contains(out, "terasort 75.0%") {
		t.Errorf("admitted job output lacks the app or decision:\n%s", out)
	}
	out, err = s.runCLI(t, cliSubmitter, "", "cancel", ids[1])
	if err != nil || !strings.Contains(out, "killed") {
		t.Errorf("cancel admitted: %q, %v", out, err)
	}
	out, err = s.runCLI(t, cliReader, "", "queue", "--state", "cancelled,killed", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var l struct {
		Jobs []queue.Job `json:"jobs"`
	}
	if err := json.Unmarshal([]byte(out), &l); err != nil || len(l.Jobs) != 2 {
		t.Errorf("queue --json: %v, %d jobs:\n%s", err, len(l.Jobs), out)
	}
}

func TestClientPrefs(t *testing.T) {
	s := startAPI(t)
	out, err := s.runCLI(t, cliReader, "", "prefs")
	if err != nil || !strings.Contains(out, "no kinds learned yet") {
		t.Errorf("empty prefs: %q, %v", out, err)
	}
	kinds := []string{"kmeans", "terasort", "wordcount"}
	for range 30 {
		s.learner.Update("terasort", "kmeans", 40)
		s.learner.Update("wordcount", "kmeans", 5)
		s.learner.Update("kmeans", "terasort", 20)
		s.learner.Update("wordcount", "wordcount", 10)
	}
	out, err = s.runCLI(t, cliReader, "", "prefs")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(out, "\n")
	if lines[0] != "π(queued kind | running kind) (observations of the pair)" {
		t.Errorf("legend %q", lines[0])
	}
	if h := strings.Fields(lines[1]); len(h) < 4 || h[0] != "RUNNING" || h[len(h)-1] != "OBS" {
		t.Errorf("header %q", lines[1])
	}
	// Row kmeans (running), column terasort (queued): π and the 30 pairs.
	snap := s.learner.Snapshot()
	ki, ti := slices.Index(snap.Kinds, "kmeans"), slices.Index(snap.Kinds, "terasort")
	want := fixed(s.learner.Prob("terasort", "kmeans"), 3) + " (" + strconv.FormatInt(snap.PairObservations[ki][ti], 10) + ")"
	if snap.PairObservations[ki][ti] != 30 || !strings.Contains(out, want) {
		t.Errorf("prefs table lacks the kmeans→terasort cell %q (pair count %d):\n%s", want, snap.PairObservations[ki][ti], out)
	}
	for _, k := range kinds {
		if !strings.Contains(out, k) {
			t.Errorf("prefs table lacks %s:\n%s", k, out)
		}
	}
	if !strings.Contains(out, "120 observations; baseline goodness") {
		t.Errorf("prefs summary:\n%s", out)
	}

	out, err = s.runCLI(t, cliReader, "", "prefs", "--csv")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := csv.NewReader(strings.NewReader(out)).ReadAll()
	if err != nil || len(recs) != 4 {
		t.Fatalf("--csv: %v, %d records:\n%s", err, len(recs), out)
	}
	if diff := cmp.Diff(append([]string{`running kind \ queued kind`}, s.learner.Kinds()...), recs[0]); diff != "" {
		t.Errorf("csv header (-want +got):\n%s", diff)
	}
	out, err = s.runCLI(t, cliReader, "", "prefs", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var p struct {
		Kinds []string    `json:"kinds"`
		Pi    [][]float64 `json:"pi"`
	}
	if err := json.Unmarshal([]byte(out), &p); err != nil || len(p.Pi) != 3 {
		t.Errorf("--json: %v\n%s", err, out)
	}
	if _, err := s.runCLI(t, cliReader, "", "prefs", "--csv", "--json"); err == nil {
		t.Error("--csv with --json accepted")
	}

	out, err = s.runCLI(t, cliReader, "", "prefs", "--kinds", "wordcount,kmeans", "--matrix", "h")
	if err != nil {
		t.Fatal(err)
	}
	cells := tableCells(out)[1:] // after the legend
	if diff := cmp.Diff([]string{"RUNNING \\ QUEUED", "wordcount", "kmeans", "OBS"}, cells[0]); diff != "" || len(cells) < 3 ||
		cells[1][0] != "wordcount" || cells[2][0] != "kmeans" || cells[2][1] != fixed(s.learner.Pref("wordcount", "kmeans"), 3) {
		t.Errorf("--kinds wordcount,kmeans --matrix h (-want +got header):\n%s\n%s", diff, out)
	}
	out, err = s.runCLI(t, cliReader, "", "prefs", "--limit", "1", "--offset", "1")
	if err != nil {
		t.Fatal(err)
	}
	if cells := tableCells(out)[1:]; len(cells) < 2 || cells[1][0] != s.learner.Kinds()[1] || !strings.Contains(out, "rows 2 to 2 of 3 (--offset, --limit for others)") {
		t.Errorf("--limit 1 --offset 1:\n%s", out)
	}
	out, err = s.runCLI(t, cliReader, "", "prefs", "--csv", "--kinds", "terasort", "--limit", "0")
	if recs, cerr := csv.NewReader(strings.NewReader(out)).ReadAll(); err != nil || cerr != nil || len(recs) != 1 || recs[0][1] != "terasort" {
		t.Errorf("--csv --kinds terasort --limit 0: %v %v\n%s", err, cerr, out)
	}
	if _, err := s.runCLI(t, cliReader, "", "prefs", "--kinds", "nosuch"); err == nil || !strings.Contains(err.Error(), "unknown kinds: nosuch") {
		t.Errorf("--kinds nosuch: %v", err)
	}
}

func TestClientEnv(t *testing.T) {
	s := startAPI(t)
	t.Setenv(envServer, s.url)
	t.Setenv(envToken, cliReader)
	cmd := newQueueCmd()
	var out bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetArgs(nil)
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(context.Background()); err != nil {
		t.Fatalf("queue from env: %v", err)
	}
	if !strings.Contains(out.String(), "no jobs") {
		t.Errorf("output %q", out.String())
	}
	// A flag beats the environment.
	cmd = newQueueCmd()
	cmd.SetArgs([]string{"--server", "http://127.0.0.1:1"})
	cmd.SilenceUsage, cmd.SilenceErrors = true, true
	if err := cmd.ExecuteContext(context.Background()); err == nil {
		t.Error("--server did not override COLOCD_SERVER")
	}
}

func TestParseDeadline(t *testing.T) {
	now := time.Date(2026, 11, 23, 9, 0, 0, 0, time.UTC)
	for _, tc := range []struct{ in, want string }{
		{"2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"},
		{"2026-12-01T11:00:00+01:00", "2026-12-01T11:00:00+01:00"},
		{"90m", "2026-11-23T10:30:00Z"},
	} {
		got, err := parseDeadline(tc.in, now)
		if err != nil || got != tc.want {
			t.Errorf("parseDeadline(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, bad := range []string{"tomorrow", "-1h", "0s"} {
		if _, err := parseDeadline(bad, now); err == nil {
			t.Errorf("parseDeadline(%q) accepted", bad)
		}
	}
}

// TestClientExitStatus runs the client through the real root command: a
// server error goes to stderr with exit status 1, a usage error exits 2.
func TestClientExitStatus(t *testing.T) {
	s := startAPI(t)
	t.Setenv(envToken, "")
	for _, tc := range []struct {
		name   string
		args   []string
		status int
		stderr string
	}{
		{"ok", []string{"queue", "--server", s.url, "--token", cliReader}, 0, ""},
		{"server refuses", []string{"submit", "--server", s.url, "--token", cliReader, "--kind", "kmeans"}, 1, "role reader may not POST /v1/jobs"},
		{"bad field", []string{"submit", "--server", s.url, "--token", cliSubmitter, "--kind", "Bad Kind"}, 1, "invalid kind"},
		{"no token", []string{"queue", "--server", s.url}, 2, envToken},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			got := run(context.Background(), tc.args, &out, &errOut)
			if got != tc.status {
				t.Fatalf("exit status %d, want %d; stderr %q", got, tc.status, errOut.String())
			}
			if !strings.Contains(errOut.String(), tc.stderr) {
				t.Errorf("stderr %q lacks %q", errOut.String(), tc.stderr)
			}
		})
	}
}

// TestClientResolve: an admin resolves a parked job from the command line;
// the flags are required, and a job that is not parked is an error.
func TestClientResolve(t *testing.T) {
	s := startAPI(t)
	out, err := s.runCLI(t, cliSubmitter, "", "submit", "--kind", "kmeans", "--containers", "1", "--memory-mb", "512", "--vcores", "1", "--json")
	if err != nil {
		t.Fatal(err)
	}
	var j queue.Job
	_ = json.Unmarshal([]byte(out), &j)
	if _, err := s.store.Admit(j.ID, "application_1_0001", nil, nil, nil); err != nil {
		t.Fatal(err)
	}
	if _, err := s.store.Park(j.ID, "the RM restarted without recovery"); err != nil {
		t.Fatal(err)
	}
	if out, err := s.runCLI(t, cliReader, "", "queue", "--state", "parked"); err != nil || !strings.Contains(out, j.ID) {
		t.Errorf("queue --state parked: %q, %v", out, err)
	}
	if _, err := s.runCLI(t, cliAdmin, "", "resolve", j.ID, "--outcome", "requeue"); err == nil || !strings.Contains(err.Error(), "reason") {
		t.Errorf("resolve without a reason: %v, want an error naming reason", err)
	}
	if _, err := s.runCLI(t, cliSubmitter, "", "resolve", j.ID, "--outcome", "requeue", "--reason", "x"); err == nil {
		t.Error("resolve as a submitter: no error")
	}
	out, err = s.runCLI(t, cliAdmin, "", "resolve", j.ID, "--outcome", "requeue", "--reason", "no output: it never started")
	if err != nil || !strings.Contains(out, "pending") {
		t.Errorf("resolve: %q, %v", out, err)
	}
	if _, err := s.runCLI(t, cliAdmin, "", "resolve", j.ID, "--outcome", "failed", "--reason", "again"); err == nil || !strings.Contains(err.Error(), "not parked") {
		t.Errorf("resolve a pending job: %v, want an error saying it is not parked", err)
	}
}
