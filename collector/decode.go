package collector

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"strconv"
	"time"

	"github.com/colocd/colocd/goodness"
)

// errQueryTable is wrapped when the result stream carries Flux's error
// table (a failure after the response headers were sent).
var errQueryTable = errors.New("error in query result")

// fluxCSV reads Flux's CSV without annotations: a header row before each
// table ("", "result", "table", "_start", ...), then data rows whose
// "table" column changes from one table to the next.
type fluxCSV struct {
	r     *csv.Reader
	cols  map[string]int
	table int // index of the "table" column
	prev  string
}

func newFluxCSV(r io.Reader) *fluxCSV {
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	cr.ReuseRecord = true
	return &fluxCSV{r: cr, table: -1}
}

// next returns the next data row and whether it starts a new table. The
// row is only valid until the following call.
func (f *fluxCSV) next() (row []string, newTable bool, err error) {
	for {
		row, err := f.r.Read()
		if err != nil {
			return nil, false, err
		}
		if len(row) < 2 {
			continue
		}
		switch row[1] {
		case "result": // a header row
			f.cols = make(map[string]int, len(row))
			for i, name := range row {
				f.cols[name] = i
			}
			t, ok := f.cols["table"]
			if !ok {
				return nil, false, fmt.Errorf("header without a table column: %q", row)
			}
			f.table, f.prev = t, "\x00" // the next row starts a table
			continue
		case "error":
			row, err := f.r.Read()
			switch {
			case err != nil:
				return nil, false, fmt.Errorf("%w: (unreadable: %v)", errQueryTable, err)
			case len(row) > 2 && row[2] != "":
				return nil, false, fmt.Errorf("%w: %s (%s)", errQueryTable, row[1], row[2])
			case len(row) > 1:
				return nil, false, fmt.Errorf("%w: %s", errQueryTable, row[1])
			}
			return nil, false, errQueryTable
		}
		if f.table < 0 || f.table >= len(row) {
			return nil, false, fmt.Errorf("data row before a header or too short: %q", row)
		}
		newTable = row[f.table] != f.prev
		if newTable {
			f.prev = row[f.table]
		}
		return row, newTable, nil
	}
}

// col returns the index of a column in the current table, -1 if absent.
func (f *fluxCSV) col(name string) int {
	if i, ok := f.cols[name]; ok {
		return i
	}
	return -1
}

// rows calls fn on every data row with the current table's _time and
// _value columns; at each table's first row it calls header first, for
// the caller's own columns. A table without _time or _value is an error,
// as is any of fn's. The row is only valid during fn.
func (f *fluxCSV) rows(header func(), fn func(row []string, iTime, iValue int) error) error {
	iTime, iValue := -1, -1
	for {
		row, newTable, err := f.next()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if newTable {
			iTime, iValue = f.col("_time"), f.col("_value")
			if iTime < 0 || iValue < 0 {
				return fmt.Errorf("table without _time or _value: columns %v", f.cols)
			}
			header()
		}
		if err := fn(row, iTime, iValue); err != nil {
			return err
		}
	}
}

// rowTime parses row's _time cell (column i). A row shorter than its
// header reads as an empty cell, and fails.
func rowTime(row []string, i int) (time.Time, error) {
	t, err := time.Parse(time.RFC3339Nano, cell(row, i))
	if err != nil {
		return time.Time{}, fmt.Errorf("_time %q: %w", cell(row, i), err)
	}
	return t, nil
}

// cell is row[i], "" when the column is absent.
func cell(row []string, i int) string {
	if i < 0 || i >= len(row) {
		return ""
	}
	return row[i]
}

type seriesKind int

const (
	kindCPU seriesKind = iota
	kindDisk
	kindNet
	kindPressure // Telegraf's PSI stall counters, µs: field 0 io, 1 cpu
	numKinds
)

// hostAcc accumulates one host's series.
type hostAcc struct {
	last          time.Time            // newest cpu sample in the window
	cpuSum        [2]float64           // idle, iowait: Σ samples
	cpuN          [2]int               // idle, iowait: number of samples
	rate          [numKinds][2]float64 // disk/net/pressure: Σ over series of the mean rate, per field
	series, rated [numKinds]int        // counter series seen / with at least one rate
	pressRated    [2]int               // PSI series with a rate: io, cpu
}

// seriesAcc is the table being read: one series, samples in time order.
type seriesAcc struct {
	host  *hostAcc
	kind  seriesKind
	field int // 0: idle/read/recv, 1: iowait/write/sent

	sum  float64 // cpu: Σ samples
	n    int     // cpu: samples; counters: rates
	last time.Time

	prevT   time.Time
	prev    counterValue
	hasPrev bool
}

// counterValue is one sample of a counter as the store wrote it: exact when
// an unsigned integer (Telegraf's integers, unsigned ones with
// influx_uint_support), else a float.
type counterValue struct {
	u     uint64
	f     float64
	isInt bool
}

// parseCounter reads a counter sample; one that is no number fails.
func parseCounter(raw string) (counterValue, error) {
	u, uerr := strconv.ParseUint(raw, 10, 64)
	if uerr == nil {
		return counterValue{u: u, f: float64(u), isInt: true}, nil
	}
	f, err := strconv.ParseFloat(raw, 64)
	if err != nil {
		return counterValue{}, fmt.Errorf("_value %q: %w", raw, err)
	}
	return counterValue{f: f}, nil
}

// since is the counter's increase from prev to c, differences of integers
// taken exactly; false when it went backwards (a reset) or the difference
// is not a finite number.
func (c counterValue) since(prev counterValue) (float64, bool) {
	var delta float64
	switch {
	case c.isInt && prev.isInt && c.u >= prev.u:
		delta = float64(c.u - prev.u)
	case c.isInt && prev.isInt:
		return 0, false
	default:
		delta = c.f - prev.f
	}
	return delta, delta >= 0 && !math.IsNaN(delta) && !math.IsInf(delta, 0)
}

// add takes one sample at t.
func (s *seriesAcc) add(t time.Time, raw string) error {
	if s.kind == kindCPU {
		v, err := strconv.ParseFloat(raw, 64)
		if err != nil {
			return fmt.Errorf("_value %q: %w", raw, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return nil
		}
		s.sum += v
		s.n++
		if t.After(s.last) {
			s.last = t
		}
		return nil
	}
	c, err := parseCounter(raw)
	if err != nil {
		return err
	}
	if s.hasPrev {
		if !t.After(s.prevT) {
			return nil // not after the previous sample: ignore it
		}
		// A counter that went backwards was reset (a reboot): that step
		// has no rate, and the next one is taken from the new value, so a
		// reset yields neither a negative nor a huge rate.
		if delta, ok := c.since(s.prev); ok {
			s.sum += delta / t.Sub(s.prevT).Seconds()
			s.n++
		}
	}
	s.prevT, s.prev, s.hasPrev = t, c, true
	return nil
}

// finish folds the series into its host.
func (s *seriesAcc) finish() {
	h := s.host
	if h == nil {
		return
	}
	if s.kind == kindCPU {
		h.cpuSum[s.field] += s.sum
		h.cpuN[s.field] += s.n
		if s.last.After(h.last) {
			h.last = s.last
		}
		return
	}
	h.series[s.kind]++
	if s.n > 0 {
		h.rate[s.kind][s.field] += s.sum / float64(s.n)
		h.rated[s.kind]++
		if s.kind == kindPressure {
			h.pressRated[s.field]++
		}
	}
}

// seriesID names one series: the rows of a group()ed table arrive
// series by series, each in time order.
type seriesID struct {
	kind         seriesKind
	field        int
	host, device string
}

// usageDecoder folds the samples of a usage read, whatever the query
// language, into per-host accumulators: both the Flux and the InfluxQL
// path feed it, so they share one arithmetic.
type usageDecoder struct {
	schema   Schema
	acc      map[string]*hostAcc // the requested hosts
	all      bool                // every host seen is requested (UsageAll)
	from, to time.Time
	series   map[seriesID]*seriesAcc

	cur     *seriesAcc // the series of the previous sample
	curID   seriesID
	haveCur bool
}

func newUsageDecoder(s Schema, acc map[string]*hostAcc, all bool, from, to time.Time) *usageDecoder {
	return &usageDecoder{schema: s, acc: acc, all: all, from: from, to: to, series: map[seriesID]*seriesAcc{}}
}

// seriesOf names the series of a sample of field in measurement meas, on
// host, with the disk, interface and pressure resource tag values disk,
// iface and resource; false for a measurement, field or resource the usage
// read does not use.
func (d *usageDecoder) seriesOf(meas, field, host, disk, iface, resource string) (seriesID, bool) {
	s := d.schema
	id := seriesID{host: host}
	switch {
	case meas == s.CPUMeasurement && field == s.CPUIdleField:
		id.kind, id.field = kindCPU, 0
	case meas == s.CPUMeasurement && field == s.CPUIOWaitField:
		id.kind, id.field = kindCPU, 1
	case meas == s.DiskMeasurement && field == s.DiskReadField:
		id.kind, id.field, id.device = kindDisk, 0, disk
	case meas == s.DiskMeasurement && field == s.DiskWriteField:
		id.kind, id.field, id.device = kindDisk, 1, disk
	case meas == s.NetMeasurement && field == s.NetRecvField:
		id.kind, id.field, id.device = kindNet, 0, iface
	case meas == s.NetMeasurement && field == s.NetSentField:
		id.kind, id.field, id.device = kindNet, 1, iface
	case meas == s.PressureMeasurement && field == s.PressureTotalField && resource == "io":
		id.kind, id.field = kindPressure, 0 // the read keeps only type=some
	case meas == s.PressureMeasurement && field == s.PressureTotalField && resource == "cpu":
		id.kind, id.field = kindPressure, 1
	default:
		return id, false
	}
	return id, true
}

// lookup returns the accumulator of series id, nil when its host is not
// requested. Consecutive samples of one series cost one comparison.
func (d *usageDecoder) lookup(id seriesID) *seriesAcc {
	if d.haveCur && id == d.curID {
		return d.cur
	}
	d.curID, d.haveCur = id, true
	d.cur = d.series[id]
	if d.cur == nil {
		host := d.acc[id.host]
		if host == nil && d.all && id.host != "" {
			host = &hostAcc{}
			d.acc[id.host] = host
		}
		if host != nil {
			d.cur = &seriesAcc{host: host, kind: id.kind, field: id.field}
			d.series[id] = d.cur
		}
	}
	return d.cur
}

// add takes one sample of sa at t, raw as the store wrote it; samples
// outside [from, to) are dropped. Samples of one series must come in time
// order; series may interleave.
func (d *usageDecoder) add(sa *seriesAcc, t time.Time, raw string) error {
	if t.Before(d.from) || !t.Before(d.to) {
		return nil
	}
	return sa.add(t, raw)
}

// finish folds every series into its host.
func (d *usageDecoder) finish() {
	for _, sa := range d.series {
		sa.finish()
	}
}

// decodeUsage reads the Flux usage query's CSV into d. Rows of one series
// are expected in time order (storage's order); a row not after its
// series' previous one is ignored.
func decodeUsage(body io.Reader, d *usageDecoder) error {
	s := d.schema
	f := newFluxCSV(body)
	var iHost, iMeas, iField, iDisk, iNet, iRes int
	err := f.rows(func() {
		iHost, iMeas, iField = f.col(s.HostTag), f.col("_measurement"), f.col("_field")
		iDisk, iNet, iRes = f.col(s.DiskNameTag), f.col(s.NetInterfaceTag), f.col(s.PressureResourceTag)
	}, func(row []string, iTime, iValue int) error {
		id, ok := d.seriesOf(cell(row, iMeas), cell(row, iField), cell(row, iHost), cell(row, iDisk), cell(row, iNet), cell(row, iRes))
		if !ok {
			return nil
		}
		sa := d.lookup(id)
		if sa == nil {
			return nil
		}
		t, err := rowTime(row, iTime)
		if err != nil {
			return err
		}
		return d.add(sa, t, cell(row, iValue))
	})
	if err != nil {
		return err
	}
	d.finish()
	return nil
}

// usage turns one host's accumulator into a usage, or says why not.
func (h *hostAcc) usage() (goodness.Usage, bool) {
	if h.cpuN[0] == 0 {
		return goodness.Usage{}, false
	}
	for k := kindDisk; k < numKinds; k++ {
		if h.series[k] > 0 && h.rated[k] == 0 {
			return goodness.Usage{}, false // counters present but no two samples
		}
	}
	idle := h.cpuSum[0] / float64(h.cpuN[0])
	iowait := 0.0
	if h.cpuN[1] > 0 {
		iowait = h.cpuSum[1] / float64(h.cpuN[1])
	}
	iow := clamp01(iowait / 100)
	return goodness.Usage{
		CPU:       min(clamp01((100-idle-iowait)/100), 1-iow),
		IOWait:    iow,
		DiskRead:  max(h.rate[kindDisk][0], 0),
		DiskWrite: max(h.rate[kindDisk][1], 0),
		NetRecv:   max(h.rate[kindNet][0], 0),
		NetSent:   max(h.rate[kindNet][1], 0),
		// Stalled microseconds per second, as a fraction of time.
		IOPressure:  clamp01(h.rate[kindPressure][0] / 1e6),
		CPUPressure: clamp01(h.rate[kindPressure][1] / 1e6),
		Pressure:    h.pressRated[0] > 0 && h.pressRated[1] > 0,
	}, true
}
