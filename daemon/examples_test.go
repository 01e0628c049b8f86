package daemon

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/colocd/colocd/engine"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/sim"
)

// TestExampleJobs checks that configs/jobs/*.json are valid API bodies that
// the backend they are written for accepts: yarn-*.json on YARN (REST
// submission), the others on the demo's simulated workload.
func TestExampleJobs(t *testing.T) {
	files, err := filepath.Glob("../configs/jobs/*.json")
	if err != nil || len(files) < 4 {
		t.Fatalf("example jobs: %v %v", files, err)
	}
	wl, err := sim.LoadWorkload("../configs/workloads/paper-queue-a.yaml")
	if err != nil {
		t.Fatal(err)
	}
	s, err := wl.NewSim(sim.Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	simc := simcluster.New(simcluster.DirectExec(s), nil)
	yarnc := yarncluster.New(nil, yarncluster.Config{Submit: yarncluster.SubmitREST}, nil)
	for _, f := range files {
		t.Run(filepath.Base(f), func(t *testing.T) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			// A batch file (colocd submit -f with a JSON array): every
			// element is a job.
			jobs := []json.RawMessage{b}
			if bytes.HasPrefix(bytes.TrimSpace(b), []byte("[")) {
				if err := json.Unmarshal(b, &jobs); err != nil || len(jobs) == 0 {
					t.Fatalf("batch file: %v (%d jobs)", err, len(jobs))
				}
			}
			for i, b := range jobs {
				checkExampleJob(t, fmt.Sprintf("%s[%d]", filepath.Base(f), i), b, simc, yarnc)
			}
		})
	}
}

// checkExampleJob decodes one example job strictly as the API would and
// prepares and validates it on the simulator (or, for yarn-*, on YARN).
func checkExampleJob(t *testing.T, name string, b []byte, simc *simcluster.Cluster, yarnc *yarncluster.Cluster) {
	t.Helper()
	var req struct { // the API's POST /v1/jobs body
		Kind      string            `json:"kind"`
		User      string            `json:"user"`
		Queue     string            `json:"queue"`
		Priority  int               `json:"priority"`
		Resources *queue.Resources  `json:"resources"`
		Submit    json.RawMessage   `json:"submit"`
		Deadline  *string           `json:"deadline"`
		Labels    map[string]string `json:"labels"`
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&req); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	j := queue.Job{Kind: req.Kind, User: "demo", Queue: req.Queue, Priority: req.Priority, Submit: req.Submit, Labels: req.Labels}
	if req.Resources != nil {
		j.Resources = *req.Resources
	}
	var p engine.JobPreparer = simc
	if strings.HasPrefix(name, "yarn-") {
		p = yarnc
	}
	if err := p.Prepare(&j); err != nil {
		t.Fatalf("%s: Prepare: %v", name, err)
	}
	if err := j.Validate(); err != nil {
		t.Fatalf("%s: Validate: %v", name, err)
	}
}
