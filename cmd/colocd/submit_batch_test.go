package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colocd/colocd/apiclient/apiclienttest"
	"github.com/colocd/colocd/queue"
	"github.com/google/go-cmp/cmp"
)

// TestSubmitBatch: a file holding a JSON array submits each job with the
// keys <key>-1…; repeating it adds nothing; a refused element stops the
// batch, naming it and how many went before.
func TestSubmitBatch(t *testing.T) {
	srv := startAPI(t)
	job := func(kind string) string {
		return `{"kind":"` + kind + `","resources":{"containers":2,"memory_mb":1024,"vcores":1}}`
	}
	file := filepath.Join(t.TempDir(), "batch.json")
	if err := os.WriteFile(file, []byte("[\n"+job("kmeans")+",\n"+job("terasort")+",\n"+job("kmeans")+"\n]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := srv.runCLI(t, apiclienttest.SubmitterToken, "", "submit", "-f", file, "--idempotency-key", "nightly")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out, "3 jobs from "+file+": 3 submitted, 0 already submitted") {
		t.Errorf("first batch:\n%s", out)
	}
	out, err = srv.runCLI(t, apiclienttest.SubmitterToken, "", "submit", "-f", file, "--idempotency-key", "nightly")
	if err != nil || !strings.Contains(out, "0 submitted, 3 already submitted") {
		t.Errorf("repeated batch: %v\n%s", err, out)
	}
	jobs, err := srv.store.List(queue.StatePending, 100)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for _, j := range jobs {
		keys = append(keys, j.IdempotencyKey+"="+j.Kind)
	}
	if diff := cmp.Diff([]string{"nightly-1=kmeans", "nightly-2=terasort", "nightly-3=kmeans"}, keys); diff != "" {
		t.Errorf("stored jobs (-want +got):\n%s", diff)
	}

	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte("["+job("wordcount")+`,{"kind":"Bad Kind"}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = srv.runCLI(t, apiclienttest.SubmitterToken, "", "submit", "-f", bad)
	if err == nil || !strings.Contains(err.Error(), "job 2 of 2") || !strings.Contains(err.Error(), "the 1 before it were submitted") {
		t.Errorf("batch with a bad second job: %v", err)
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte("[]"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.runCLI(t, apiclienttest.SubmitterToken, "", "submit", "-f", empty); err == nil || !strings.Contains(err.Error(), "empty array") {
		t.Errorf("empty batch: %v", err)
	}
}
