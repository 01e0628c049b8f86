package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/colocd/colocd/goodness"
	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/queue"
)

// hangingMetrics is a metrics store that does not answer: Usage signals
// entered and blocks until release is closed (then answers as m does).
type hangingMetrics struct {
	m       *simcluster.Cluster
	entered chan struct{}
	release chan struct{}
	once    sync.Once
}

func (s *hangingMetrics) Usage(ctx context.Context, hosts []string, from, to time.Time) (map[string]goodness.Usage, []string, error) {
	s.once.Do(func() { close(s.entered) })
	select {
	case <-s.release:
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	return s.m.Usage(ctx, hosts, from, to)
}

// TestLearnReadsWithoutTheLock: a learning tick whose usage read hangs
// holds up nobody else (issue 26, item 3: gather outside the lock). While
// the metrics store does not answer, a preference reset and import, a
// sync, an admission pass and a kill all complete; released, the tick
// learns from what it read.
func TestLearnReadsWithoutTheLock(t *testing.T) {
	hm := &hangingMetrics{entered: make(chan struct{}), release: make(chan struct{})}
	h := newHarness(t, harnessOpts{nodes: 1, metrics: func(c *simcluster.Cluster) UsageSource { hm.m = c; return hm }})
	var released sync.Once
	release := func() { released.Do(func() { close(hm.release) }) }
	t.Cleanup(release)
	from, to := colocate(h, "disk")
	running, err := h.store.List(queue.StateRunning, 10)
	if err != nil || len(running) == 0 {
		t.Fatalf("running jobs: %v, %v", running, err)
	}
	victim := running[0].ID
	h.submit("net")
	snap := h.learner.Snapshot()

	type result struct {
		rep LearnReport
		err error
	}
	done := make(chan result, 1)
	go func() {
		rep, err := h.e.Learn(h.ctx, from, to)
		done <- result{rep, err}
	}()
	select {
	case <-hm.entered:
	case <-time.After(60 * time.Second):
		t.Fatal("the learning tick never read the metrics")
	}
	calls := []struct {
		name string
		f    func() error
	}{
		{"reset preferences", h.e.ResetPreferences},
		{"import preferences", func() error { return h.e.ImportPreferences(snap) }},
		{"sync", func() error { _, err := h.e.Reconcile(h.ctx); return err }},
		{"admission pass", func() error { _, err := h.e.AdmitPass(h.ctx); return err }},
		{"kill", func() error { _, err := h.e.Kill(h.ctx, victim); return err }},
	}
	for _, c := range calls {
		ch := make(chan error, 1)
		go func() { ch <- c.f() }()
		select {
		case err := <-ch:
			if err != nil {
				t.Errorf("%s while the metrics read hangs: %v", c.name, err)
			}
		case <-time.After(60 * time.Second):
			t.Fatalf("%s waited on the learning tick's hung metrics read", c.name)
		}
	}
	select {
	case r := <-done:
		t.Fatalf("the tick ended before its read was released: %+v, %v", r.rep, r.err)
	default:
	}
	release()
	r := <-done
	if r.err != nil {
		t.Fatal(r.err)
	}
	if r.rep.Colocations != 1 || r.rep.Updates == 0 {
		t.Errorf("released, the tick reported %+v; want the cpu+disk co-location learned", r.rep)
	}
	if st := h.state(victim); st != "killed" {
		t.Errorf("the killed job is %s", st)
	}
}
