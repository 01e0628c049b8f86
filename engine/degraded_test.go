package engine

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestDegraded: a failing sync makes the cluster degraded since its first
// failure (later failures keep that time), a KDC error is the KDC's, and
// the next good sync clears both.
func TestDegraded(t *testing.T) {
	h, pc, l, wall := readyHarness(t)
	h.e.dependencyOf = func(err error) string {
		if strings.Contains(err.Error(), "KDC") {
			return DepKDC
		}
		return ""
	}
	type row struct {
		Dep, Op string
		Since   time.Time
	}
	rows := func() []row {
		var out []row
		for _, d := range h.e.Degraded() {
			out = append(out, row{d.Dependency, d.Op, d.Since})
		}
		return out
	}
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := rows(); len(got) != 0 {
		t.Fatalf("Degraded after a clean iteration: %v", got)
	}
	pc.failing.Store(true)
	first := wall.Now()
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	wall.Advance(30 * time.Second)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff([]row{{DepCluster, "state", first}}, rows()); d != "" {
		t.Errorf("after two failed syncs (-want,+got):\n%s", d)
	}
	h.e.backendError("state", errors.New("kerberos: KDC unreachable"))
	got := rows()
	if len(got) != 2 || got[1].Dep != DepKDC || !got[1].Since.Equal(wall.Now()) {
		t.Errorf("after a KDC failure: %v, want cluster and kdc", got)
	}
	pc.failing.Store(false)
	if _, err := l.Step(h.ctx); err != nil {
		t.Fatal(err)
	}
	if got := rows(); len(got) != 0 {
		t.Errorf("after a good sync: %v, want none", got)
	}
}
