package bench

import (
	"context"
	"fmt"
	"image/color"
	"io"
	"math"
	"runtime"
	"slices"
	"text/tabwriter"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// The scale study: what a run costs as the cluster grows. The workload is
// scaled (sim.Workload.Scaled) to each node count with JobsPerNode jobs
// per node, every policy plays it once on one seed, one run at a time,
// and the study records the wall time and the bytes allocated of each
// run. It is a measurement of colocd's code (the simulator, the engine,
// its store), not of a schedule: the makespans are reported only to show
// that the scaled runs are alike.

// defaultScaleSizes are the node counts of the scale study.
var defaultScaleSizes = []int{100, 1000, 10000}

// defaultJobsPerNode is the scale study's jobs per node: 2,000 jobs on
// 10,000 nodes.
const defaultJobsPerNode = 0.2

// ScaleConfig configures ScaleStudy.
type ScaleConfig struct {
	// Run is the template: its Workload is the one scaled, its Seed and
	// Daemon configuration are used as they are; Policy is ignored.
	Run RunConfig
	// Sizes are the node counts (default defaultScaleSizes).
	Sizes []int
	// JobsPerNode sets each size's job count (default defaultJobsPerNode);
	// at least one job per entry of the workload's queue.
	JobsPerNode float64
	// Policies are run at every size (default fifo and ra).
	Policies []Policy
	// Now is the wall clock the runs are timed with; required.
	Now func() time.Time
	// Progress, when set, is called after each run.
	Progress func(ScalePoint)
}

// ScalePoint is one run of the scale study.
type ScalePoint struct {
	Nodes  int
	Jobs   int
	Policy Policy
	// Wall is the run's wall time; AllocBytes the bytes it allocated
	// (runtime.MemStats.TotalAlloc across the run, whole process).
	Wall       time.Duration
	AllocBytes uint64
	MakespanS  float64
	Decisions  int
}

// ScaleStudy runs every policy on the workload scaled to every size, one
// run at a time so that the wall times do not share the machine.
func ScaleStudy(ctx context.Context, cfg ScaleConfig) ([]ScalePoint, error) {
	if cfg.Run.Workload == nil {
		return nil, fmt.Errorf("%w: scale study: workload: missing", errInvalid)
	}
	if cfg.Now == nil {
		return nil, fmt.Errorf("%w: scale study: Now: missing", errInvalid)
	}
	sizes, pols, per := cfg.Sizes, cfg.Policies, cfg.JobsPerNode
	if len(sizes) == 0 {
		sizes = defaultScaleSizes
	}
	if len(pols) == 0 {
		pols = []Policy{FIFO, policyRA}
	}
	if per == 0 {
		per = defaultJobsPerNode
	}
	if !(per > 0) {
		return nil, fmt.Errorf("%w: scale study: jobs per node %v, want > 0", errInvalid, per)
	}
	var out []ScalePoint
	for _, n := range sizes {
		// Scaled keeps at least one job per queue entry.
		jobs := max(len(cfg.Run.Workload.Queue), int(float64(n)*per+0.5))
		w, err := cfg.Run.Workload.Scaled(n, jobs)
		if err != nil {
			return nil, fmt.Errorf("scale study: %d nodes: %w", n, err)
		}
		for _, p := range pols {
			rc := cfg.Run
			rc.Workload, rc.Policy, rc.Name = w, p, fmt.Sprintf("%s@%dn", cfg.Run.name(), n)
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			t0 := cfg.Now()
			r, err := runOne(ctx, rc)
			wall := cfg.Now().Sub(t0)
			runtime.ReadMemStats(&after)
			if err != nil {
				return nil, fmt.Errorf("scale study: %d nodes, %s: %w", n, p, err)
			}
			pt := ScalePoint{Nodes: n, Jobs: r.Jobs, Policy: p, Wall: wall,
				AllocBytes: after.TotalAlloc - before.TotalAlloc, MakespanS: r.MakespanS, Decisions: r.Decisions}
			out = append(out, pt)
			if cfg.Progress != nil {
				cfg.Progress(pt)
			}
		}
	}
	return out, nil
}

// WriteScaleTable prints the scale study as a table.
func WriteScaleTable(w io.Writer, pts []ScalePoint) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "nodes\tjobs\tpolicy\twall (s)\tallocated (MB)\tmakespan (min)\tdecisions\t")
	for _, p := range pts {
		fmt.Fprintf(tw, "%d\t%d\t%s\t%.2f\t%.0f\t%.0f\t%d\t\n", p.Nodes, p.Jobs, p.Policy,
			p.Wall.Seconds(), float64(p.AllocBytes)/1e6, p.MakespanS/60, p.Decisions)
	}
	return tw.Flush()
}

// WriteScalePNG draws the scale study's cost curves: wall time per run
// against the node count, both axes logarithmic, one line per policy.
func WriteScalePNG(w io.Writer, pts []ScalePoint, title string) error {
	var pols []Policy
	for _, p := range pts {
		if !slices.Contains(pols, p.Policy) {
			pols = append(pols, p.Policy)
		}
	}
	if len(pols) == 0 {
		return fmt.Errorf("%w: scale plot: no points", errInvalid)
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "nodes"
	p.Y.Label.Text = "wall time per run (s)"
	p.X.Scale, p.Y.Scale = plot.LogScale{}, plot.LogScale{}
	p.X.Tick.Marker, p.Y.Tick.Marker = plot.LogTicks{Prec: -1}, plot.LogTicks{Prec: -1}
	p.Add(plotter.NewGrid())
	colors := []color.RGBA{{R: 0x1f, G: 0x77, B: 0xb4, A: 0xff}, {R: 0xd6, G: 0x27, B: 0x28, A: 0xff},
		{R: 0x2c, G: 0xa0, B: 0x2c, A: 0xff}, {R: 0xff, G: 0x7f, B: 0x0e, A: 0xff}}
	for i, pol := range pols {
		var xy plotter.XYs
		for _, pt := range pts {
			if pt.Policy == pol {
				// A log axis takes no zero: a run is never faster than 1 ms here.
				xy = append(xy, plotter.XY{X: float64(pt.Nodes), Y: max(pt.Wall.Seconds(), 1e-3)})
			}
		}
		l, s, err := plotter.NewLinePoints(xy)
		if err != nil {
			return fmt.Errorf("scale plot %s: %w", pol, err)
		}
		l.Color, s.Color = colors[i%len(colors)], colors[i%len(colors)]
		l.Width = vg.Points(1.5)
		p.Add(l, s)
		p.Legend.Add(string(pol), l, s)
	}
	// Explicit ranges: gonum pads a degenerate range down to 0, which a log
	// axis cannot show.
	p.X.Min, p.X.Max, p.Y.Min, p.Y.Max = math.Inf(1), 0, math.Inf(1), 0
	for _, pt := range pts {
		x, y := float64(pt.Nodes), max(pt.Wall.Seconds(), 1e-3)
		p.X.Min, p.X.Max = min(p.X.Min, x/2), max(p.X.Max, 2*x)
		p.Y.Min, p.Y.Max = min(p.Y.Min, y/2), max(p.Y.Max, 2*y)
	}
	return writeFigurePNG(w, usageWidth, usageHeight, newSideLegend(p).draw)
}
