package queue_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

func TestValidateBadInput(t *testing.T) {
	manyLabels := map[string]string{}
	for i := 0; i <= queue.MaxLabels; i++ {
		manyLabels[fmt.Sprintf("l%d", i)] = "v"
	}
	zero := time.Time{}
	tests := map[string]struct {
		mut   func(j *queue.Job)
		field string
	}{
		"empty kind":           {func(j *queue.Job) { j.Kind = "" }, "kind"},
		"upper-case kind":      {func(j *queue.Job) { j.Kind = "TPCH" }, "kind"},
		"kind with space":      {func(j *queue.Job) { j.Kind = "tpch q10" }, "kind"},
		"kind leading dash":    {func(j *queue.Job) { j.Kind = "-x" }, "kind"},
		"kind too long":        {func(j *queue.Job) { j.Kind = strings.Repeat("a", 64) }, "kind"},
		"user with slash":      {func(j *queue.Job) { j.User = "a/b" }, "user"},
		"user too long":        {func(j *queue.Job) { j.User = strings.Repeat("u", 256) }, "user"},
		"queue with space":     {func(j *queue.Job) { j.Queue = "root. default" }, "queue"},
		"queue empty segment":  {func(j *queue.Job) { j.Queue = "root..a" }, "queue"},
		"priority huge":        {func(j *queue.Job) { j.Priority = 1 << 30 }, "priority"},
		"zero containers":      {func(j *queue.Job) { j.Resources.Containers = 0 }, "resources.containers"},
		"negative containers":  {func(j *queue.Job) { j.Resources.Containers = -3 }, "resources.containers"},
		"huge containers":      {func(j *queue.Job) { j.Resources.Containers = queue.MaxContainers + 1 }, "resources.containers"},
		"zero memory":          {func(j *queue.Job) { j.Resources.MemoryMB = 0 }, "resources.memory_mb"},
		"negative memory":      {func(j *queue.Job) { j.Resources.MemoryMB = -1 }, "resources.memory_mb"},
		"huge memory":          {func(j *queue.Job) { j.Resources.MemoryMB = 1 << 40 }, "resources.memory_mb"},
		"zero vcores":          {func(j *queue.Job) { j.Resources.VCores = 0 }, "resources.vcores"},
		"huge vcores":          {func(j *queue.Job) { j.Resources.VCores = 4096 }, "resources.vcores"},
		"submit not json":      {func(j *queue.Job) { j.Submit = json.RawMessage(`{"a":`) }, "submit"},
		"submit too big":       {func(j *queue.Job) { j.Submit = json.RawMessage(`"` + strings.Repeat("x", 64<<10) + `"`) }, "submit"},
		"zero deadline":        {func(j *queue.Job) { j.Deadline = &zero }, "deadline"},
		"too many labels":      {func(j *queue.Job) { j.Labels = manyLabels }, "labels"},
		"empty label key":      {func(j *queue.Job) { j.Labels = map[string]string{"": "v"} }, "labels"},
		"label key too long":   {func(j *queue.Job) { j.Labels = map[string]string{strings.Repeat("k", 64): "v"} }, "labels[kkkkkkkkkkkkkkkkkkkk…]"},
		"label key bad char":   {func(j *queue.Job) { j.Labels = map[string]string{"a b": "v"} }, `labels["a b"]`},
		"label value too long": {func(j *queue.Job) { j.Labels = map[string]string{"team": strings.Repeat("v", 257)} }, "labels[team]"},
		"label value control":  {func(j *queue.Job) { j.Labels = map[string]string{"team": "a\nb"} }, "labels[team]"},
		"label value bad utf8": {func(j *queue.Job) { j.Labels = map[string]string{"team": "\xff"} }, "labels[team]"},
		"idempotency too long": {func(j *queue.Job) { j.IdempotencyKey = strings.Repeat("k", 129) }, "idempotency_key"},
		"idempotency space":    {func(j *queue.Job) { j.IdempotencyKey = "a b" }, "idempotency_key"},
		"unknown state":        {func(j *queue.Job) { j.State = "exploded" }, "state"},
	}
	for name, tc := range tests {
		t.Run(name, func(t *testing.T) {
			j := queuetest.Job("tpch-q10")
			tc.mut(&j)
			err := j.Validate()
			var fe *queue.FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Validate() = %v, want *FieldError", err)
			}
			if !errors.Is(err, queue.ErrInvalid) {
				t.Errorf("%v does not wrap ErrInvalid", err)
			}
			if fe.Field != tc.field {
				t.Errorf("field %q, want %q (%v)", fe.Field, tc.field, err)
			}
			if !strings.Contains(err.Error(), tc.field) {
				t.Errorf("message %q does not name the field", err)
			}
		})
	}
}

func TestValidateGoodInput(t *testing.T) {
	dl := queuetest.Start.Add(time.Hour)
	good := map[string]queue.Job{
		"minimal":    {Kind: "a", Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}},
		"full":       {Kind: "tpch-q10.v2_x", User: "alice@EXAMPLE.COM", Queue: "root.prod-a", Priority: -5, Resources: queue.Resources{Containers: queue.MaxContainers, MemoryMB: queue.MaxMemoryMB, VCores: queue.MaxVCores}, Deadline: &dl, Labels: map[string]string{"team": "db", "example.com/tier": "gold ✓"}, IdempotencyKey: "req-123", Submit: json.RawMessage(`{"argv":["flink","run"]}`)},
		"with state": {Kind: "a", State: queue.StatePending, Resources: queue.Resources{Containers: 1, MemoryMB: 1, VCores: 1}},
	}
	for name, j := range good {
		t.Run(name, func(t *testing.T) {
			if err := j.Validate(); err != nil {
				t.Fatalf("Validate() = %v", err)
			}
		})
	}
}

func TestParseState(t *testing.T) {
	for _, st := range queue.States {
		got, err := queue.ParseState(" " + strings.ToUpper(string(st)) + " ")
		if err != nil || got != st {
			t.Errorf("ParseState(%q) = %q, %v", st, got, err)
		}
	}
	_, err := queue.ParseState("done")
	var fe *queue.FieldError
	if !errors.As(err, &fe) || fe.Field != "state" {
		t.Errorf("ParseState(done) = %v, want FieldError on state", err)
	}
}

func TestTransitionTable(t *testing.T) {
	allowed := map[[2]queue.State]bool{
		{"pending", "admitted"}: true, {"pending", "cancelled"}: true,
		{"admitted", "pending"}: true, {"admitted", "running"}: true,
		{"admitted", "succeeded"}: true, {"admitted", "failed"}: true, {"admitted", "killed"}: true,
		{"running", "succeeded"}: true, {"running", "failed"}: true, {"running", "killed"}: true,
		{"admitted", "parked"}: true, {"running", "parked"}: true,
		{"parked", "pending"}: true, {"parked", "succeeded"}: true, {"parked", "failed"}: true, {"parked", "killed"}: true,
	}
	for _, from := range queue.States {
		for _, to := range queue.States {
			if got := queue.CanTransition(from, to); got != allowed[[2]queue.State{from, to}] {
				t.Errorf("CanTransition(%s, %s) = %v", from, to, got)
			}
		}
		if from.Terminal() != (from == "succeeded" || from == "failed" || from == "killed" || from == "cancelled") {
			t.Errorf("%s.Terminal() = %v", from, from.Terminal())
		}
	}
}

func TestJobJSONNames(t *testing.T) {
	now := queuetest.Start
	j := queue.Job{ID: "x", Kind: "k", IdempotencyKey: "i", AppID: "a", CreatedAt: now, AdmittedAt: &now, RunningAt: &now, FinishedAt: &now,
		Resources: queue.Resources{Containers: 1, MemoryMB: 2, VCores: 3}, Deadline: &now, Decision: json.RawMessage(`{}`)}
	b, _ := json.Marshal(j)
	for _, key := range []string{`"id"`, `"seq"`, `"idempotency_key"`, `"app_id"`, `"created_at"`, `"admitted_at"`, `"running_at"`, `"finished_at"`, `"memory_mb"`, `"vcores"`, `"containers"`, `"deadline"`, `"decision"`, `"skips"`} {
		if !strings.Contains(string(b), key) {
			t.Errorf("JSON %s lacks %s", b, key)
		}
	}
}
