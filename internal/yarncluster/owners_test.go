package yarncluster_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/colocd/colocd/cluster"
	"github.com/colocd/colocd/internal/testing/deadaddr"
	"github.com/colocd/colocd/internal/yarncluster"
	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/yarnclient"
	"github.com/colocd/colocd/yarnclient/yarntest"
)

// restJob is a REST job of alice's whose context sets the given fields.
func restJob(queueName, extra string) queue.Job {
	sub := `{"am-container-spec":{"commands":{"command":"true"}}` + extra + `}`
	return queue.Job{ID: "01JOBALICE", Kind: "etl", User: "alice", Queue: queueName,
		Resources: queue.Resources{Containers: 1, MemoryMB: 1024, VCores: 1}, Submit: json.RawMessage(sub)}
}

// TestRESTPrepareOneQueueNoColocdTags: a job runs in one queue: the
// context's is filled from the job's, the job's from the context's, and
// two different ones are refused naming both fields; the context may
// carry no colocd- tag (any case, any form, inside a comma-joined tag).
func TestRESTPrepareOneQueueNoColocdTags(t *testing.T) {
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User = []string{deadaddr.URL(t)}, "colocd"
	y := newCluster(t, cfg)
	for name, tc := range map[string]struct {
		job       queue.Job
		wantQueue string
		field     string // "": accepted
		why       string
	}{
		"queue only":                 {restJob("batch", ""), "batch", "", ""},
		"submit.queue only":          {restJob("", `,"queue":"prod"`), "prod", "", ""},
		"both the same":              {restJob("prod", `,"queue":"prod"`), "prod", "", ""},
		"neither":                    {restJob("", ""), "", "", ""},
		"both, different":            {restJob("batch", `,"queue":"prod"`), "", "submit.queue", `differs from the job's queue "batch"`},
		"one by its path from root":  {restJob("prod", `,"queue":"root.prod"`), "prod", "", ""},
		"a different path":           {restJob("prod", `,"queue":"root.batch.prod"`), "", "submit.queue", `differs from the job's queue "prod"`},
		"a tag of ours":              {restJob("", `,"application-tags":{"tag":["team-a","colocd-job-01JOBBOB"]}`), "", "submit.application-tags[1]", "colocd's own"},
		"in capitals":                {restJob("", `,"application-tags":{"tag":["COLOCD-APP-cmd-1-x"]}`), "", "submit.application-tags[0]", "colocd's own"},
		"hidden behind a comma":      {restJob("", `,"application-tags":["team-a, colocd-kind-etl"]`), "", "submit.application-tags[0]", "colocd's own"},
		"a comma-separated string":   {restJob("", `,"application-tags":"team-a,Colocd-Job-1"`), "", "submit.application-tags[1]", "colocd's own"},
		"a tag that merely mentions": {restJob("", `,"application-tags":{"tag":["my-colocd-job"]}`), "", "", ""},
	} {
		t.Run(name, func(t *testing.T) {
			j := tc.job
			err := y.Prepare(&j)
			if tc.field == "" {
				if err != nil || j.Queue != tc.wantQueue {
					t.Errorf("Prepare = %v, queue %q; want nil, queue %q", err, j.Queue, tc.wantQueue)
				}
				return
			}
			var fe *queue.FieldError
			if !errors.As(err, &fe) || !errors.Is(err, queue.ErrRefused) || fe.Field != tc.field || !strings.Contains(fe.Reason, tc.why) {
				t.Errorf("Prepare = %v, want a refusal of %s saying %q", err, tc.field, tc.why)
			}
		})
	}
}

// TestRESTSubmitOneQueue: the RM runs the job in the job's queue, and a
// job queued before the checks with two queues, or a tag of colocd's, is
// rejected at admission without reaching the RM.
func TestRESTSubmitOneQueue(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User = []string{rm.URL()}, "colocd"
	y := newCluster(t, cfg)
	ctx := context.Background()
	submit := func(j queue.Job) (string, error) {
		app, err := y.Reserve(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return app, y.Submit(ctx, app, j)
	}
	app, err := submit(restJob("batch", ""))
	if err != nil {
		t.Fatal(err)
	}
	if a, ok := rm.App(app); !ok || a.Queue != "batch" {
		t.Errorf("application %+v, want it in the job's queue batch", a)
	}
	for _, j := range []queue.Job{restJob("batch", `,"queue":"prod"`), restJob("", `,"application-tags":["colocd-job-x"]`)} {
		if _, err := submit(j); !errors.Is(err, cluster.ErrRejected) || !errors.Is(err, queue.ErrRefused) {
			t.Errorf("Submit(%s) = %v, want a rejection", j.Submit, err)
		}
	}
	if n := len(rm.Submissions()); n != 1 {
		t.Errorf("the RM took %d submissions, want 1", n)
	}
}

// TestAppOwners: whose application a job's must be: with REST, the user
// Submit submits as; with commands, nobody in particular (the
// authenticated tag decides).
func TestAppOwners(t *testing.T) {
	alice := queue.Job{ID: "J", User: "alice"}
	kerb := kerberized(t)
	kerb.Kerberos.Principal = "colocd/admit1.example.com@EXAMPLE.COM"
	for name, tc := range map[string]struct {
		mod  func(*yarncluster.Config)
		job  queue.Job
		want []string
	}{
		"daemon, simple":             {func(y *yarncluster.Config) { y.User = "colocd" }, alice, []string{"colocd"}},
		"daemon, kerberos":           {func(y *yarncluster.Config) { *y = kerb }, alice, []string{"colocd"}},
		"daemon, kerberos, app_user": {func(y *yarncluster.Config) { *y = kerb; y.AppUser = "svc-colocd" }, alice, []string{"svc-colocd"}},
		"job user":                   {func(y *yarncluster.Config) { y.User, y.SubmitAs = "colocd", yarncluster.SubmitAsJobUser }, alice, []string{"alice"}},
		"job user is colocd":         {func(y *yarncluster.Config) { y.User, y.SubmitAs = "colocd", yarncluster.SubmitAsJobUser }, queue.Job{User: "colocd"}, []string{"colocd"}},
		"anonymous":                  {func(*yarncluster.Config) {}, alice, nil},
		"command": {func(y *yarncluster.Config) {
			y.User, y.Submit, y.Command.Argv = "colocd", yarncluster.SubmitCommand, []string{"spark-submit"}
		}, alice, nil},
	} {
		t.Run(name, func(t *testing.T) {
			cfg := yarncluster.DefaultConfig()
			cfg.RMURLs, cfg.Timeout = []string{"http://127.0.0.1:1"}, time.Second
			tc.mod(&cfg)
			c, err := yarnclient.New(cfg.ClientConfig(nil))
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, yarncluster.New(c, cfg, nil).AppOwners(tc.job)); diff != "" {
				t.Errorf("AppOwners (-want +got)\n%s", diff)
			}
		})
	}
}

// TestStateReadsNoJobFromTags: State leaves JobID and Kind to the engine,
// whatever an application's tags claim, and reports its user.
func TestStateReadsNoJobFromTags(t *testing.T) {
	rm := yarntest.NewFakeRM(t)
	rm.AddNode(yarnclient.Node{ID: "w1:8041"})
	cfg := yarncluster.DefaultConfig()
	cfg.RMURLs, cfg.User = []string{rm.URL()}, "colocd"
	y := newCluster(t, cfg)
	id := rm.AddApp(yarnclient.App{User: "bob", ApplicationTags: strings.Join(yarnclient.JobTags("01JOBALICE", "etl"), ",")})
	st, err := y.State(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Apps) != 1 || st.Apps[0].ID != id || st.Apps[0].JobID != "" || st.Apps[0].Kind != "" || st.Apps[0].User != "bob" {
		t.Errorf("State apps %+v, want %s of bob with no job", st.Apps, id)
	}
}
