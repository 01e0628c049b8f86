package queue_test

import (
	"errors"
	"testing"
	"time"

	"github.com/colocd/colocd/queue"
	"github.com/colocd/colocd/queue/queuetest"
)

// TestParkAndResolve: an admitted or running job can be parked (kept out
// of the queue and of the active jobs, with its application id and the
// reason); only an operator's Resolve ends it: back to its FIFO place under
// no application id, or to a final state without a history entry.
func TestParkAndResolve(t *testing.T) {
	s, _ := openStore(t, queue.Options{})
	var js []queue.Job
	for range 4 {
		js = append(js, submit(t, s, queuetest.Job("k")))
	}
	for i, app := range []string{"application_1_0001", "application_1_0002"} {
		if _, err := s.Admit(js[i].ID, app, nil, nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Start(js[1].ID); err != nil {
		t.Fatal(err)
	}
	for _, j := range js[:2] {
		p, err := s.Park(j.ID, "the RM forgot it")
		if err != nil || p.State != queue.StateParked || p.AppID == "" || p.Diagnostics != "the RM forgot it" {
			t.Fatalf("Park(%s) = %+v, %v", j.ID, p, err)
		}
	}
	if _, err := s.Park(js[2].ID, "x"); !errors.As(err, new(*queue.TransitionError)) {
		t.Errorf("park a pending job: %v, want a TransitionError", err)
	}
	c, _ := s.Counts()
	if c[queue.StateParked] != 2 || c[queue.StatePending] != 2 || c[queue.StateAdmitted]+c[queue.StateRunning] != 0 {
		t.Errorf("counts after parking: %v", c)
	}
	if parked, _ := s.List(queue.StateParked, 0); len(parked) != 2 {
		t.Errorf("List(parked) = %d jobs, want 2", len(parked))
	}

	back, err := s.Resolve(js[0].ID, queue.StatePending, "ops: never ran")
	if err != nil || back.State != queue.StatePending || back.AppID != "" || back.AdmittedAt != nil || back.Requeues != 1 {
		t.Fatalf("Resolve to pending = %+v, %v", back, err)
	}
	pend, _ := s.List(queue.StatePending, 0)
	if len(pend) != 3 || pend[0].ID != js[0].ID {
		t.Errorf("the resolved job is not back at the head of the FIFO: %v", ids(pend))
	}
	done, err := s.Resolve(js[1].ID, queue.StateSucceeded, "ops: it ran")
	if err != nil || done.State != queue.StateSucceeded || done.FinishedAt == nil {
		t.Fatalf("Resolve to succeeded = %+v, %v", done, err)
	}
	if h, err := s.History("k"); err != nil || h.Runs != 0 {
		t.Errorf("history after resolving: %+v, %v; want no run recorded", h, err)
	}
	if _, err := s.Resolve(js[1].ID, queue.StateFailed, "again"); !errors.As(err, new(*queue.TransitionError)) {
		t.Errorf("resolve a job that is not parked: %v", err)
	}
	if _, err := s.Resolve(js[2].ID, queue.StatePending, "x"); !errors.As(err, new(*queue.TransitionError)) {
		t.Errorf("resolve a pending job: %v", err)
	}
	if _, err := s.Resolve(js[0].ID, queue.StateCancelled, "x"); !errors.Is(err, queue.ErrInvalid) {
		t.Errorf("resolve to cancelled: %v, want ErrInvalid", err)
	}
}

// TestSubmitted: the count of jobs ever stored survives compaction, so an
// empty but used store is told apart from a new one.
func TestSubmitted(t *testing.T) {
	s, clock := openStore(t, queue.Options{})
	if n, err := s.Submitted(); err != nil || n != 0 {
		t.Fatalf("new store: Submitted = %d, %v", n, err)
	}
	j := submit(t, s, queuetest.Job("k"))
	submit(t, s, queuetest.Job("k"))
	if _, err := s.Cancel(j.ID); err != nil {
		t.Fatal(err)
	}
	clock.Advance(time.Hour)
	if n, err := s.Compact(clock.Now()); err != nil || n != 1 {
		t.Fatalf("Compact = %d, %v", n, err)
	}
	if n, err := s.Submitted(); err != nil || n != 2 {
		t.Errorf("after compaction: Submitted = %d, %v; want 2", n, err)
	}
}
