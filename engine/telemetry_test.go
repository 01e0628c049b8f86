package engine

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/colocd/colocd/internal/simcluster"
	"github.com/colocd/colocd/pipeline"
)

// recorder is a telemetrySink that keeps what it was told, as text.
type recorder struct{ calls []string }

func (r *recorder) add(format string, a ...any)   { r.calls = append(r.calls, fmt.Sprintf(format, a...)) }
func (r *recorder) ObserveDecision(time.Duration) {}
func (r *recorder) AdmissionFailed()              { r.add("failed") }
func (r *recorder) LearningUpdates(int)           {}
func (r *recorder) StaleHosts(int)                {}
func (r *recorder) ContainerUsageHosts(apart, whole int) {
	r.add("container usage %d apart %d whole", apart, whole)
}
func (r *recorder) DominantShare(string, float64)     {}
func (r *recorder) ForgetDominantShare(string)        {}
func (r *recorder) BackendErrors(op string)           { r.add("error %s", op) }
func (r *recorder) LearningTick(at time.Time)         { r.add("tick %s", at.Format(time.RFC3339)) }
func (r *recorder) BackendUp(backend string, up bool) { r.add("up %s %t", backend, up) }
func (r *recorder) ClusterBackoff(calls string, wait time.Duration) {
	r.add("backoff %s %v", calls, wait)
}
func (r *recorder) CallsBackedOff(calls string) { r.add("held %s", calls) }
func (r *recorder) JobsBackingOff(n int)        { r.add("jobs backing off %d", n) }
func (r *recorder) Retention(deleted int, err error, at time.Time) {
	r.add("retention %d %v %s", deleted, err, at.Format(time.RFC3339))
}
func (r *recorder) Admitted(wait time.Duration, forced, _, _ string) {
	r.add("admitted after %v forced %q", wait, forced)
}

func (r *recorder) has(call string) bool { return slices.Contains(r.calls, call) }

// TestTelemetryAdmissionAndLearning: an admission reports the job's wait
// on the engine clock and the cluster up; a learning tick reports its time
// and the metrics source up; a failing source reports it down and no tick.
func TestTelemetryAdmissionAndLearning(t *testing.T) {
	sm := &staleMetrics{}
	h := newHarness(t, harnessOpts{nodes: 1, metrics: func(c *simcluster.Cluster) UsageSource { sm.m = c; return sm }})
	rec := &recorder{}
	h.e.mx = rec
	h.submit("cpu")
	h.advance(30 * time.Second)
	if rep := h.admit(); len(rep.Admitted) != 1 {
		t.Fatalf("admitted %v, want the job", rep.Admitted)
	}
	if !rec.has(`admitted after 30s forced ""`) || !rec.has("up cluster true") {
		t.Fatalf("after an admission: %q, want its 30s wait and the cluster up", rec.calls)
	}

	from := h.sync().At
	to := h.advance(60 * time.Second)
	if _, err := h.e.Learn(h.ctx, from, to); err != nil {
		t.Fatal(err)
	}
	if !rec.has("tick "+to.Format(time.RFC3339)) || !rec.has("up metrics true") {
		t.Fatalf("after a learning tick: %q, want the tick at %s and metrics up", rec.calls, to.Format(time.RFC3339))
	}

	rec.calls = nil
	sm.err = errors.New("influxdb: connection refused")
	if _, err := h.e.Learn(h.ctx, to, h.advance(60*time.Second)); !errors.Is(err, errMetrics) {
		t.Fatalf("Learn with a failing source: %v, want errMetrics", err)
	}
	if !rec.has("up metrics false") || slices.ContainsFunc(rec.calls, func(c string) bool { return strings.HasPrefix(c, "tick ") }) {
		t.Errorf("after a failed tick: %q, want metrics down and no tick", rec.calls)
	}
}

// TestForcedBy names the rule that chose an admitted job.
func TestForcedBy(t *testing.T) {
	for _, c := range []struct {
		d    pipeline.Decision
		want string
	}{
		{pipeline.Decision{Chosen: "a"}, ""},
		{pipeline.Decision{Chosen: "a", Forced: "a waited past max_skips"}, "max_skips"},
		{pipeline.Decision{Chosen: "a", Reserved: "a"}, "reservation"},
		{pipeline.Decision{Chosen: "a", Reserved: "b"}, ""},
	} {
		if got := forcedBy(c.d); got != c.want {
			t.Errorf("forcedBy(%+v) = %q, want %q", c.d, got, c.want)
		}
	}
}
