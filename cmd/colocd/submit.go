package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"

	v1 "github.com/colocd/colocd/api/v1"
	"github.com/colocd/colocd/apiclient"
)

// submitFlags are the flags of submit.
type submitFlags struct {
	file, kind, queue, deadline, idem string
	containers, vcores, priority      int
	memoryMB                          int64
	labels                            []string
	asJSON                            bool
	array                             bool // -f held a JSON array
	out                               *clientFlags
}

// jobFlags are submit's flags that describe the job: -f excludes them.
var jobFlags = []string{"kind", "queue", "priority", "containers", "memory-mb", "vcores", "deadline", "label"}

func newSubmitCmd() *cobra.Command {
	var s submitFlags
	cmd := &cobra.Command{
		Use:        "submit (-f job.json | --kind K [flags])",
		Short:      "Submit a job to the colocd queue",
		SuggestFor: []string{"add", "enqueue"},
		Long: `Submit a job: either a JSON file (-f job.json, "-" for stdin) in the API's shape

  {"kind": "kmeans", "queue": "default", "priority": 0,
   "resources": {"containers": 12, "memory_mb": 1536, "vcores": 1},
   "submit": {...backend-specific...}, "deadline": "2026-12-01T10:00:00Z",
   "labels": {"team": "search"}}

or flags (memory and vcores are per container). The job runs as you: the user
colocd authenticated (your Kerberos principal's, or the token's); a "user" in
the file is ignored. Every submission carries an idempotency key (one is made
up when --idempotency-key is not given), so that a 503 is retried as the
server's Retry-After says without ever making a second job; with
--idempotency-key, repeating the command never makes a second job either.

A file holding a JSON array submits each element in order, in one process
over one connection; the i-th job (from 1) gets the key K-i, so with
--idempotency-key K the whole batch can be repeated safely. It stops at the
first refusal, naming the element.

  colocd submit -f job.json --idempotency-key nightly-2026-12-01
  colocd submit -f configs/jobs/paper-queue-a.json --idempotency-key demo-queue-a
  colocd submit --kind kmeans --containers 12 --memory-mb 1536 --vcores 1 --label team=search`,
		Args: noArgs,
	}
	c := addClientFlags(cmd)
	s.out = c
	f := cmd.Flags()
	f.StringVarP(&s.file, "file", "f", "", `job JSON file, or a JSON array of jobs ("-" for stdin)`)
	f.StringVar(&s.kind, "kind", "", "job kind (recurring job identity)")
	f.StringVar(&s.queue, "queue", "", "YARN queue")
	f.IntVar(&s.priority, "priority", 0, "priority passed to the cluster")
	f.IntVar(&s.containers, "containers", 0, "number of containers")
	f.Int64Var(&s.memoryMB, "memory-mb", 0, "memory per container, MB")
	f.IntVar(&s.vcores, "vcores", 0, "vcores per container")
	f.StringVar(&s.deadline, "deadline", "", "deadline: RFC 3339 time, or a duration from now on the daemon's clock (simulated time on the simulator) such as 2h")
	f.StringArrayVar(&s.labels, "label", nil, "label key=value (repeatable)")
	f.StringVar(&s.idem, "idempotency-key", "", "Idempotency-Key: a retry with the same key returns the same job")
	f.BoolVar(&s.asJSON, "json", false, "print the server's JSON")
	_ = cmd.RegisterFlagCompletionFunc("kind", completeKinds(c))
	cmd.RunE = func(cmd *cobra.Command, _ []string) error {
		api, err := c.client(cmd)
		if err != nil {
			return err
		}
		bodies, err := s.bodies(cmd)
		if err != nil {
			return err
		}
		if s.idem == "" {
			s.idem = newIdempotencyKey()
		}
		if bodies == nil {
			r, err := s.submitFlags(cmd, api)
			if err != nil {
				return err
			}
			return printSubmitted(cmd.OutOrStdout(), r, s.out.format(s.asJSON))
		}
		return s.submitBatch(cmd, api, bodies)
	}
	return cmd
}

// printSubmitted prints one submission's reply.
func printSubmitted(w io.Writer, r apiclient.Reply[v1.Job], format string) error {
	return printReply(w, r, format, func(w io.Writer, j v1.Job) error {
		verb := "submitted"
		if r.Status == http.StatusOK {
			verb = "already submitted (same idempotency key)"
		}
		_, err := fmt.Fprintf(w, "%s job %s (kind %s, user %s, state %s)\n", verb, j.ID, j.Kind, j.User, j.State)
		return err
	})
}

// submitBatch submits the jobs of a file: one, or each element of an array
// with the keys <key>-1, <key>-2, … It stops at the first error, naming
// the element.
func (s *submitFlags) submitBatch(cmd *cobra.Command, api *apiclient.Client, bodies []json.RawMessage) error {
	w := cmd.OutOrStdout()
	if len(bodies) == 1 && !s.array {
		r, err := api.SubmitJSON(cmd.Context(), bodies[0], s.idem)
		if err != nil {
			return err
		}
		return printSubmitted(w, r, s.out.format(s.asJSON))
	}
	created, again := 0, 0
	for i, b := range bodies {
		key := ""
		if s.idem != "" {
			key = fmt.Sprintf("%s-%d", s.idem, i+1)
		}
		r, err := api.SubmitJSON(cmd.Context(), b, key)
		if err != nil {
			return fmt.Errorf("%s, job %d of %d: %w (the %d before it were submitted)", s.file, i+1, len(bodies), err, i)
		}
		if r.Status == http.StatusOK {
			again++
		} else {
			created++
		}
		if err := printSubmitted(w, r, s.out.format(s.asJSON)); err != nil {
			return err
		}
	}
	if s.asJSON {
		return nil
	}
	_, err := fmt.Fprintf(w, "%d jobs from %s: %d submitted, %d already submitted (same idempotency key)\n", len(bodies), s.file, created, again)
	return err
}

// submitFlags sends the job the flags describe.
func (s *submitFlags) submitFlags(cmd *cobra.Command, api *apiclient.Client) (apiclient.Reply[v1.Job], error) {
	req, err := s.request(cmd, func() time.Time { return daemonNow(cmd.Context(), api) })
	if err != nil {
		return apiclient.Reply[v1.Job]{}, err
	}
	return api.Submit(cmd.Context(), req, s.idem)
}

// maxBatch bounds the jobs of one -f file.
const maxBatch = 10000

// bodies reads the file of -f: one job, or the elements of a JSON array
// (then s.array is set); nil without -f.
func (s *submitFlags) bodies(cmd *cobra.Command) ([]json.RawMessage, error) {
	if s.file == "" {
		return nil, nil
	}
	for _, name := range jobFlags {
		if cmd.Flags().Changed(name) {
			return nil, usagef("--%s cannot be combined with -f (put it in the file)", name)
		}
	}
	var (
		body []byte
		err  error
	)
	if s.file == "-" {
		body, err = io.ReadAll(cmd.InOrStdin())
	} else {
		body, err = os.ReadFile(s.file)
	}
	if err != nil {
		return nil, fmt.Errorf("reading job file: %w", err)
	}
	if !json.Valid(body) {
		return nil, usagef("%s is not valid JSON", s.file)
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '[' {
		return []json.RawMessage{body}, nil
	}
	var list []json.RawMessage
	if err := json.Unmarshal(trimmed, &list); err != nil {
		return nil, usagef("%s: %v", s.file, err)
	}
	switch {
	case len(list) == 0:
		return nil, usagef("%s is an empty array: no job to submit", s.file)
	case len(list) > maxBatch:
		return nil, usagef("%s holds %d jobs, more than %d", s.file, len(list), maxBatch)
	}
	s.array = true
	return list, nil
}

// request is the job the flags describe.
// now is the daemon's clock, read only for a relative --deadline.
func (s *submitFlags) request(cmd *cobra.Command, now func() time.Time) (v1.JobRequest, error) {
	if s.kind == "" {
		return v1.JobRequest{}, usagef("need -f job.json or --kind")
	}
	req := v1.JobRequest{Kind: s.kind, Queue: s.queue, Priority: s.priority}
	if f := cmd.Flags(); f.Changed("containers") || f.Changed("memory-mb") || f.Changed("vcores") {
		req.Resources = &v1.ResourcesRequest{Containers: s.containers, MemoryMB: s.memoryMB, VCores: s.vcores}
	}
	if s.deadline != "" {
		var at time.Time
		if _, err := time.Parse(time.RFC3339, s.deadline); err != nil {
			at = now()
		}
		d, err := parseDeadline(s.deadline, at)
		if err != nil {
			return v1.JobRequest{}, err
		}
		req.Deadline = &d
	}
	for _, l := range s.labels {
		k, v, ok := strings.Cut(l, "=")
		if !ok || k == "" {
			return v1.JobRequest{}, usagef("--label %q: want key=value", l)
		}
		if req.Labels == nil {
			req.Labels = map[string]string{}
		}
		req.Labels[k] = v
	}
	return req, nil
}

// parseDeadline accepts RFC 3339 or a positive duration from now.
func parseDeadline(s string, now time.Time) (string, error) {
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t.Format(time.RFC3339), nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d <= 0 {
		return "", usagef("--deadline %q: want an RFC 3339 time (2026-12-01T10:00:00Z) or a positive duration (90m)", s)
	}
	return now.Add(d).UTC().Format(time.RFC3339), nil
}
