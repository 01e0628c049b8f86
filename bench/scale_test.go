package bench

import (
	"bytes"
	"context"
	"image/png"
	"strings"
	"testing"
	"time"
)

// TestScaleStudy runs the study at two small sizes on a fake clock: every
// policy once per size, on the scaled workload, each run timed by the
// injected clock (1 s per reading here), and the plot decodes.
func TestScaleStudy(t *testing.T) {
	w := loadShipped(t, "eight-kinds")
	var tick time.Time
	now := func() time.Time { tick = tick.Add(time.Second); return tick }
	var seen []ScalePoint
	pts, err := ScaleStudy(context.Background(), ScaleConfig{
		Run: RunConfig{Workload: w, Seed: 3}, Sizes: []int{40, 80}, JobsPerNode: 1,
		Policies: []Policy{FIFO, policyPackFit}, Now: now,
		Progress: func(p ScalePoint) { seen = append(seen, p) },
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(pts) != 4 || len(seen) != 4 {
		t.Fatalf("got %d points (%d reported), want 2 sizes × 2 policies", len(pts), len(seen))
	}
	for i, p := range pts {
		wantNodes := []int{40, 40, 80, 80}[i]
		if p.Nodes != wantNodes || p.Policy != []Policy{FIFO, policyPackFit}[i%2] {
			t.Errorf("point %d: %d nodes %s, want %d nodes in policy order", i, p.Nodes, p.Policy, wantNodes)
		}
		// JobsPerNode 1: as many jobs as nodes (above eight-kinds' 27 entries).
		if p.Jobs != p.Nodes {
			t.Errorf("point %d: %d jobs on %d nodes, want one per node", i, p.Jobs, p.Nodes)
		}
		if p.Wall != time.Second {
			t.Errorf("point %d: wall %v, want the fake clock's 1s", i, p.Wall)
		}
		if p.MakespanS <= 0 || p.Decisions != p.Jobs || p.AllocBytes == 0 {
			t.Errorf("point %d: makespan %v, %d decisions, %d bytes: want a finished run", i, p.MakespanS, p.Decisions, p.AllocBytes)
		}
	}
	var table bytes.Buffer
	if err := WriteScaleTable(&table, pts); err != nil {
		t.Fatal(err)
	}
	if got := strings.Count(table.String(), "\n"); got != 5 {
		t.Errorf("table has %d lines, want a header and 4 rows:\n%s", got, table.String())
	}
	var img bytes.Buffer
	if err := WriteScalePNG(&img, pts, "scale"); err != nil {
		t.Fatal(err)
	}
	if _, err := png.Decode(&img); err != nil {
		t.Fatalf("plot is not a PNG: %v", err)
	}
}

func TestScaleStudyRefuses(t *testing.T) {
	w := loadShipped(t, "eight-kinds")
	for name, cfg := range map[string]ScaleConfig{
		"no clock":        {Run: RunConfig{Workload: w}},
		"no workload":     {Now: time.Now},
		"negative per":    {Run: RunConfig{Workload: w}, Now: time.Now, JobsPerNode: -1},
		"unscalable size": {Run: RunConfig{Workload: w}, Now: time.Now, Sizes: []int{0}},
	} {
		if _, err := ScaleStudy(context.Background(), cfg); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
	if err := WriteScalePNG(&bytes.Buffer{}, nil, "empty"); err == nil {
		t.Error("plot of no points: no error")
	}
}
