package collector

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"
)

// AppUsage is one application's containers' own use of one host over a
// window, from the plugin's cgroup counters.
type AppUsage struct {
	Host, AppID string
	// CPU is the share of the host's CPU time its containers used: CPU
	// seconds per second over host_cpus (goodness.Usage.CPU's unit).
	CPU float64
	// DiskRead and DiskWrite are bytes per second (goodness.Usage's unit).
	DiskRead, DiskWrite float64
}

// The cgroup fields of the plugin's yarn_containers points, fixed by the
// plugin (collector/telegrafplugin): three counters, monotone per host and
// application while the plugin runs, and a gauge.
const (
	containerCPUField   = "cpu_usage_us"   // CPU time, µs
	containerReadField  = "io_read_bytes"  // block I/O read, bytes
	containerWriteField = "io_write_bytes" // block I/O written, bytes
	containerCPUsField  = "host_cpus"      // the host's online CPUs
)

// Indexes of the cgroup fields in containerFields.
const (
	cuCPU = iota
	cuRead
	cuWrite
	cuCPUs
	numContainerFields
)

var containerFields = [numContainerFields]string{containerCPUField, containerReadField, containerWriteField, containerCPUsField}

// resultCounters names the container usage query's one result.
const resultCounters = "counters"

// ContainerUsage returns, for every host and application whose samples in
// [from, to) carry the cgroup counters (the yarn_containers fields
// cpu_usage_us, io_read_bytes, io_write_bytes and host_cpus that the
// colocd-telegraf-yarn plugin writes with its cgroup reading on), its mean
// use over the window, sorted by host, then application id.
//
// Per host and application, whatever the samples' other tags (a sample
// written while the ResourceManager was unreachable has no kind, type or
// queue; such samples are merged in time order with the others):
//   - each counter's increase is the sum, over its consecutive samples in
//     the window, of their differences; a decrease is a reset (the plugin
//     restarted and counts from 0), whose step adds the post-reset value
//     itself. A sample with a negative or non-finite value is ignored, and
//     of samples with the same time only the largest counts;
//   - that increase covers the span of the samples; the first sample
//     comes up to one sampling interval after the window (or the
//     application) starts, so the increase is scaled to the span plus one
//     interval (the samples' mean spacing), at most the window;
//   - the rate is that use over (to − from): spread over the whole window,
//     so an application present for part of the window counts its use
//     over the whole window;
//   - CPU = cpu_usage_us's increase / 1e6 / (to − from) in seconds /
//     host_cpus, where host_cpus is its newest value in the window;
//     DiskRead and DiskWrite are io_read_bytes' and io_write_bytes' rates
//     in bytes per second. Nothing is clamped.
//
// An application has no reading, and is absent from the result, unless
// each of the three counters has at least two samples (two distinct times)
// in the window and its newest host_cpus there is positive (and its
// rates are finite). Samples without a host or application_id tag are
// ignored.
//
// Bias: an application that starts inside the window is counted from one
// interval before its first sample, at most an interval's use too much;
// one present throughout is read as its samples' rate.
//
// One read for all hosts, in the configured language, capped like the
// other reads. A window without such samples gives an empty slice and no
// error; an invalid window (from not before to) fails with errInvalid
// before anything is sent, and a failed read wraps the sentinel that
// describes it, as Placements does.
func (c *Collector) ContainerUsage(ctx context.Context, from, to time.Time) ([]AppUsage, error) {
	if err := checkWindow(from, to); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("container usage in [%s, %s)", fluxTime(from), fluxTime(to))
	acc := newContainerUsageAcc(from, to)
	var err error
	if c.cfg.Language == LanguageInfluxQL {
		err = c.runInfluxQL(ctx, op, c.containerUsageInfluxQL(from, to), func(st influxQLSeries) error {
			return decodeInfluxQLContainerUsage(st, c.cfg.Schema, acc)
		})
	} else {
		err = c.run(ctx, op, c.containerUsageQuery(from, to), func(body io.Reader) error {
			return decodeContainerUsage(body, c.cfg.Schema, acc)
		})
	}
	if err != nil {
		return nil, err
	}
	return acc.result(), nil
}

// containerUsageQuery reads the window's cgroup fields as one pushed-down
// read, group()ed to one table (all four are integers). Rows arrive series
// by series, and an application's samples may span several series (their
// tags differ): the decoder orders them.
func (c *Collector) containerUsageQuery(from, to time.Time) string {
	s := c.cfg.Schema
	fields := make([]string, len(containerFields))
	for i, f := range containerFields {
		fields[i] = "r._field == " + fluxString(f)
	}
	var b strings.Builder
	fmt.Fprintf(&b, "// colocd collector: container usage in [%s, %s)\n", fluxTime(from), fluxTime(to))
	fmt.Fprintf(&b, "from(bucket: %s)\n", fluxString(c.cfg.Bucket))
	fmt.Fprintf(&b, "\t|> range(start: %s, stop: %s)\n", fluxTime(from), fluxTime(readStop(from, to)))
	fmt.Fprintf(&b, "\t|> filter(fn: (r) => r._measurement == %s and (%s))\n",
		fluxString(s.ContainersMeasurement), strings.Join(fields, " or "))
	fmt.Fprintf(&b, "\t|> group()\n")
	fmt.Fprintf(&b, "\t|> yield(name: %s)\n", fluxString(resultCounters))
	return b.String()
}

// containerUsageInfluxQL is the InfluxQL read: the four fields, grouped by
// host and application, so each application's rows come in time order
// whatever its other tags.
func (c *Collector) containerUsageInfluxQL(from, to time.Time) string {
	s := c.cfg.Schema
	sel := make([]string, len(containerFields))
	for i, f := range containerFields {
		sel[i] = influxQLIdent(f) + "::field"
	}
	return fmt.Sprintf("SELECT %s FROM %s WHERE %s GROUP BY %s, %s", strings.Join(sel, ", "),
		influxQLIdent(s.ContainersMeasurement), influxQLWindow(from, to),
		influxQLIdent(s.HostTag), influxQLIdent(placementAppTag))
}

// containerFieldIndex is the index of a cgroup field, -1 for another.
func containerFieldIndex(name string) int {
	for i, f := range containerFields {
		if f == name {
			return i
		}
	}
	return -1
}

// decodeContainerUsage reads the Flux answer's CSV into acc.
func decodeContainerUsage(body io.Reader, s Schema, acc *containerUsageAcc) error {
	f := newFluxCSV(body)
	var iField, iHost, iApp int
	return f.rows(func() {
		iField, iHost, iApp = f.col("_field"), f.col(s.HostTag), f.col(placementAppTag)
	}, func(row []string, iTime, iValue int) error {
		field := containerFieldIndex(cell(row, iField))
		if field < 0 {
			return nil
		}
		t, err := rowTime(row, iTime)
		if err != nil {
			return err
		}
		return acc.add(cell(row, iHost), cell(row, iApp), field, t, cell(row, iValue))
	})
}

// decodeInfluxQLContainerUsage feeds one series of the InfluxQL answer to
// acc.
func decodeInfluxQLContainerUsage(st influxQLSeries, s Schema, acc *containerUsageAcc) error {
	if err := st.timeFirst(); err != nil {
		return err
	}
	fields := make([]int, len(st.Columns))
	use := make([]bool, len(st.Columns))
	for i := 1; i < len(st.Columns); i++ {
		fields[i] = containerFieldIndex(st.Columns[i])
		use[i] = fields[i] >= 0
	}
	host, app := st.Tags[s.HostTag], st.Tags[placementAppTag]
	return influxQLNumbers(st, use, func(i int, t time.Time, raw string) error { return acc.add(host, app, fields[i], t, raw) })
}

// counterSample is one value of a cgroup field and its time.
type counterSample struct {
	t int64 // ns since 1970
	counterValue
}

// containerUsageAcc collects, in any order, each host's and application's
// samples of the cgroup fields in [from, to).
type containerUsageAcc struct {
	from, to time.Time
	byKey    map[[2]string]*[numContainerFields][]counterSample
}

func newContainerUsageAcc(from, to time.Time) *containerUsageAcc {
	return &containerUsageAcc{from: from, to: to, byKey: map[[2]string]*[numContainerFields][]counterSample{}}
}

// add takes one sample of field at t, raw as the store wrote it. Samples
// without a host or application, outside the window, negative or not
// finite are dropped; one that is not a number fails.
func (a *containerUsageAcc) add(host, app string, field int, t time.Time, raw string) error {
	if host == "" || app == "" || t.Before(a.from) || !t.Before(a.to) {
		return nil
	}
	c, err := parseCounter(raw)
	if err != nil {
		return err
	}
	if !c.isInt && (!(c.f >= 0) || math.IsInf(c.f, 0)) {
		return nil
	}
	k := [2]string{host, app}
	ss := a.byKey[k]
	if ss == nil {
		ss = new([numContainerFields][]counterSample)
		a.byKey[k] = ss
	}
	ss[field] = append(ss[field], counterSample{t: t.UnixNano(), counterValue: c})
	return nil
}

// sortSamples orders samples by time and keeps, of samples with the same
// time, the largest.
func sortSamples(ss []counterSample) []counterSample {
	slices.SortFunc(ss, func(x, y counterSample) int {
		if c := cmp.Compare(x.t, y.t); c != 0 {
			return c
		}
		return cmp.Compare(y.f, x.f)
	})
	return slices.CompactFunc(ss, func(x, y counterSample) bool { return x.t == y.t })
}

// increase is the counter's increase over ss (sorted, distinct times): the
// sum of its consecutive differences, a decrease (a reset) adding the
// post-reset value, scaled from the span of its samples to the time they
// stand for — that span plus one sampling step (the mean spacing of the
// samples), at most window: the first sample comes up to one step after
// the window or the application starts, and the use before it is not in
// the differences. ok is false with fewer than two samples.
func increase(ss []counterSample, window int64) (inc float64, ok bool) {
	if len(ss) < 2 {
		return 0, false
	}
	for i := 1; i < len(ss); i++ {
		if d, ok := ss[i].since(ss[i-1].counterValue); ok {
			inc += d
		} else {
			inc += ss[i].f // reset: counted from 0
		}
	}
	span := ss[len(ss)-1].t - ss[0].t
	step := span / int64(len(ss)-1)
	return inc * (float64(min(span+step, max(window, span))) / float64(span)), true
}

// result lists the applications with a reading, sorted.
func (a *containerUsageAcc) result() []AppUsage {
	secs := a.to.Sub(a.from).Seconds()
	out := make([]AppUsage, 0, len(a.byKey))
	for k, ss := range a.byKey {
		var inc [cuCPUs]float64
		ok := true
		for i := range inc {
			inc[i], ok = increase(sortSamples(ss[i]), a.to.Sub(a.from).Nanoseconds())
			if !ok {
				break
			}
		}
		cpus := sortSamples(ss[cuCPUs])
		if !ok || len(cpus) == 0 {
			continue
		}
		n := cpus[len(cpus)-1].f // the newest
		if !(n > 0) {
			continue
		}
		u := AppUsage{Host: k[0], AppID: k[1],
			CPU: inc[cuCPU] / 1e6 / secs / n, DiskRead: inc[cuRead] / secs, DiskWrite: inc[cuWrite] / secs}
		if math.IsInf(u.CPU, 0) || math.IsInf(u.DiskRead, 0) || math.IsInf(u.DiskWrite, 0) {
			continue // counters past float64's range: no reading
		}
		out = append(out, u)
	}
	slices.SortFunc(out, func(x, y AppUsage) int {
		if c := strings.Compare(x.Host, y.Host); c != 0 {
			return c
		}
		return strings.Compare(x.AppID, y.AppID)
	})
	return out
}
