package collector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	"github.com/colocd/colocd/goodness"
	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	"github.com/influxdata/influxdb-client-go/v2/api"
	ihttp "github.com/influxdata/influxdb-client-go/v2/api/http"
)

// Errors. Every error from Usage, Colocations and Ping wraps exactly one of
// these together with the underlying error, so both errors.Is(err,
// ErrUnreachable) and errors.Is(err, context.DeadlineExceeded) work.
var (
	// ErrInvalid: a Config field or an argument is invalid; the error is a
	// *FieldError naming it. Nothing was sent.
	ErrInvalid = errors.New("collector: invalid")
	// ErrUnreachable: InfluxDB did not answer in time, refused or dropped
	// the connection, or a proxy in front of it reported it unavailable
	// (502, 503, 504).
	ErrUnreachable = errors.New("collector: influxdb unreachable")
	// ErrAuth: InfluxDB rejected the credentials (401, 403).
	ErrAuth = errors.New("collector: influxdb authentication failed")
	// ErrBadQuery: InfluxDB rejected or failed the query: a Flux error, an
	// unknown bucket or database, a result that does not decode. InfluxDB
	// 1.8 reports these as 500 with the reason in the body.
	ErrBadQuery = errors.New("collector: influxdb query failed")
	// ErrEmpty: none of the requested hosts has any cpu data from the
	// window's lookback to its end: usually a wrong bucket or schema name, or
	// Telegraf not writing.
	ErrEmpty = errors.New("collector: no data")
)

// Result is the usage of the hosts asked for, over one window.
type Result struct {
	// Usage holds each fresh host's mean usage in the window.
	Usage map[string]goodness.Usage
	// Stale lists, sorted, hosts whose newest cpu sample is older than the
	// window's end minus StaleAfter: their data stopped, so no usage.
	Stale []string
	// Missing lists, sorted, hosts with no cpu sample in the window (and
	// not stale).
	Missing []string
}

// Collector reads node usage and YARN colocations from InfluxDB with Flux.
// It is safe for concurrent use. New does no I/O; Close releases idle
// connections.
type Collector struct {
	cfg    compiled
	client influxdb2.Client
	query  api.QueryAPI
}

// New validates cfg and returns a Collector. It does not connect.
func New(cfg Config) (*Collector, error) {
	cc, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	opts := influxdb2.DefaultOptions().
		SetApplicationName("colocd").
		SetLogLevel(0). // errors only; the collector returns, never logs
		SetHTTPRequestTimeout(uint(math.Ceil(cc.Timeout.Seconds())) + 1)
	if cc.HTTPClient != nil {
		opts.SetHTTPClient(cc.HTTPClient)
	}
	client := influxdb2.NewClientWithOptions(strings.TrimRight(cc.URL, "/"), cc.Token, opts)
	return &Collector{cfg: cc, client: client, query: client.QueryAPI(cc.Org)}, nil
}

// Close releases the client's idle connections.
func (c *Collector) Close() { c.client.Close() }

// Ping checks that InfluxDB answers on /ping within Timeout. It does not
// check credentials: Usage reports ErrAuth.
func (c *Collector) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	if _, err := c.client.Ping(ctx); err != nil {
		return classify("ping "+c.cfg.URL, err)
	}
	return nil
}

// Usage returns each host's mean usage over [from, to) with one Flux query
// for all hosts:
//   - CPU = (100 − mean usage_idle − mean usage_iowait)/100 and
//     IOWait = mean usage_iowait/100 from cpu-total, clamped to [0, 1];
//   - DiskRead/DiskWrite: per-second rates of the whole disks' byte
//     counters, each disk's mean rate in the window, summed;
//   - NetRecv/NetSent: the same over the included interfaces.
//
// A host with no disk or net series in the window gets zero rates there. A
// host is Stale, with no usage, when its newest cpu sample is older than
// to − StaleAfter, and Missing when it has none in the window. When no
// requested host has any cpu data at all, Usage returns a Result listing
// every host as Missing together with an error wrapping ErrEmpty.
func (c *Collector) Usage(ctx context.Context, hosts []string, from, to time.Time) (Result, error) {
	res := Result{Usage: map[string]goodness.Usage{}}
	if err := checkWindow(from, to, c.cfg.StaleAfter); err != nil {
		return res, err
	}
	hosts = slices.Clone(hosts)
	for i, h := range hosts {
		if h == "" || !utf8.ValidString(h) {
			return res, invalid(fmt.Sprintf("hosts[%d]", i), "%q is not a non-empty UTF-8 name", h)
		}
	}
	slices.Sort(hosts)
	hosts = slices.Compact(hosts)
	if len(hosts) == 0 {
		return res, nil
	}
	q, err := c.usageQuery(hosts, from, to)
	if err != nil {
		return res, invalid("schema", "%v", err)
	}
	op := fmt.Sprintf("usage of %d hosts in [%s, %s)", len(hosts), fluxTime(from), fluxTime(to))
	rows, err := c.run(ctx, op, q)
	if err != nil {
		return res, err
	}
	return c.assemble(rows, hosts, to, op)
}

// row is one decoded record of a query result.
type row struct {
	result, host, field, kind string
	value                     float64
	time                      time.Time
}

// run executes q under Timeout and decodes every record.
func (c *Collector) run(ctx context.Context, op, q string) ([]row, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	tr, err := c.query.Query(ctx, q)
	if err != nil {
		if tr != nil {
			_ = tr.Close()
		}
		return nil, classify(op, err)
	}
	defer tr.Close()
	s := c.cfg.Schema
	var rows []row
	for tr.Next() {
		rec := tr.Record()
		r := row{result: rec.Result(), time: rec.Time()}
		r.host, _ = rec.ValueByKey(s.HostTag).(string)
		r.kind, _ = rec.ValueByKey(s.ContainersKindTag).(string)
		r.field, _ = rec.ValueByKey("_field").(string)
		switch v := rec.Value().(type) {
		case float64:
			r.value = v
		case int64:
			r.value = float64(v)
		case uint64:
			r.value = float64(v)
		case nil:
			r.value = math.NaN()
		default:
			return nil, fmt.Errorf("%w: %s: result %q: _value of type %T", ErrBadQuery, op, r.result, v)
		}
		rows = append(rows, r)
	}
	if err := tr.Err(); err != nil {
		return nil, classify(op, err)
	}
	// A context that ended mid-stream can look like a clean end of data.
	if err := ctx.Err(); err != nil {
		return nil, classify(op, err)
	}
	return rows, nil
}

// assemble turns the usage query's rows into a Result.
func (c *Collector) assemble(rows []row, hosts []string, to time.Time, op string) (Result, error) {
	s := c.cfg.Schema
	type acc struct {
		last                       time.Time
		idle, iowait               float64
		hasIdle, hasIOWait         bool
		diskR, diskW, netRx, netTx float64
	}
	byHost := make(map[string]*acc, len(hosts))
	get := func(h string) *acc {
		a := byHost[h]
		if a == nil {
			a = &acc{}
			byHost[h] = a
		}
		return a
	}
	for _, r := range rows {
		if r.host == "" {
			continue
		}
		a := get(r.host)
		valid := !math.IsNaN(r.value) && !math.IsInf(r.value, 0)
		switch r.result {
		case resultLast:
			if r.time.After(a.last) {
				a.last = r.time
			}
		case resultCPU:
			switch {
			case !valid:
			case r.field == s.CPUIdleField:
				a.idle, a.hasIdle = r.value, true
			case r.field == s.CPUIOWaitField:
				a.iowait, a.hasIOWait = r.value, true
			}
		case resultDisk, resultNet:
			if !valid {
				continue
			}
			v := max(r.value, 0)
			switch {
			case r.result == resultDisk && r.field == s.DiskReadField:
				a.diskR = v
			case r.result == resultDisk && r.field == s.DiskWriteField:
				a.diskW = v
			case r.result == resultNet && r.field == s.NetRecvField:
				a.netRx = v
			case r.result == resultNet && r.field == s.NetSentField:
				a.netTx = v
			}
		}
	}
	res := Result{Usage: make(map[string]goodness.Usage, len(hosts))}
	freshAfter := to.Add(-c.cfg.StaleAfter)
	anyData := false
	for _, h := range hosts {
		a := byHost[h]
		if a == nil || a.last.IsZero() {
			res.Missing = append(res.Missing, h)
			continue
		}
		anyData = true
		if a.last.Before(freshAfter) {
			res.Stale = append(res.Stale, h)
			continue
		}
		if !a.hasIdle {
			res.Missing = append(res.Missing, h)
			continue
		}
		iowait := clamp01(a.iowait / 100)
		res.Usage[h] = goodness.Usage{
			CPU:       min(clamp01((100-a.idle-a.iowait)/100), 1-iowait),
			IOWait:    iowait,
			DiskRead:  a.diskR,
			DiskWrite: a.diskW,
			NetRecv:   a.netRx,
			NetSent:   a.netTx,
		}
	}
	if !anyData {
		return res, fmt.Errorf("%w: %s: no %s.%s samples with %s=%s for any host in bucket %q",
			ErrEmpty, op, s.CPUMeasurement, s.CPUIdleField, s.CPUTag, s.CPUTotal, c.cfg.Bucket)
	}
	return res, nil
}

// Colocations returns, for each host, the sorted distinct job kinds that
// had containers there at some point in [from, to), from the
// yarn_containers points the colocd-telegraf-yarn plugin writes. Points
// without a kind (applications colocd did not submit) are ignored. An
// empty window gives an empty map and no error.
func (c *Collector) Colocations(ctx context.Context, from, to time.Time) (map[string][]string, error) {
	if err := checkWindow(from, to, 0); err != nil {
		return nil, err
	}
	op := fmt.Sprintf("colocations in [%s, %s)", fluxTime(from), fluxTime(to))
	rows, err := c.run(ctx, op, c.colocationsQuery(from, to))
	if err != nil {
		return nil, err
	}
	out := map[string][]string{}
	for _, r := range rows {
		if r.host == "" || r.kind == "" || !(r.value > 0) {
			continue
		}
		out[r.host] = append(out[r.host], r.kind)
	}
	for h, kinds := range out {
		slices.Sort(kinds)
		out[h] = slices.Compact(kinds)
	}
	return out, nil
}

// InfluxDB stores nanoseconds since 1970 in an int64; Flux date literals
// need four-digit years.
var (
	minTime = time.Unix(0, math.MinInt64).UTC().AddDate(1, 0, 0)
	maxTime = time.Unix(0, math.MaxInt64).UTC().AddDate(-1, 0, 0)
)

func checkWindow(from, to time.Time, lookback time.Duration) error {
	switch {
	case !from.Before(to):
		return invalid("window", "from %s is not before to %s", fluxTime(from), fluxTime(to))
	case from.Add(-lookback).Before(minTime):
		return invalid("window", "from %s (minus stale_after) is before %s", fluxTime(from), fluxTime(minTime))
	case to.After(maxTime):
		return invalid("window", "to %s is after %s", fluxTime(to), fluxTime(maxTime))
	}
	return nil
}

// classify wraps err in the sentinel that describes it.
func classify(op string, err error) error {
	var he *ihttp.Error
	isHTTP := errors.As(err, &he)
	var netErr net.Error
	switch {
	case errors.Is(err, context.Canceled):
		// The caller gave up; that says nothing about InfluxDB.
		return fmt.Errorf("collector: %s: %w", op, err)
	case errors.Is(err, context.DeadlineExceeded),
		errors.As(err, &netErr),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, op, err)
	case isHTTP && (he.StatusCode == http.StatusUnauthorized || he.StatusCode == http.StatusForbidden):
		return fmt.Errorf("%w: %s: %w", ErrAuth, op, err)
	case isHTTP && (he.StatusCode == http.StatusBadGateway || he.StatusCode == http.StatusServiceUnavailable ||
		he.StatusCode == http.StatusGatewayTimeout):
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, op, err)
	case isHTTP && he.StatusCode == 0 && he.Err != nil:
		// Transport failure without a recognisable cause.
		return fmt.Errorf("%w: %s: %w", ErrUnreachable, op, err)
	default:
		return fmt.Errorf("%w: %s: %w", ErrBadQuery, op, err)
	}
}

func clamp01(v float64) float64 {
	switch {
	case math.IsNaN(v) || v < 0:
		return 0
	case v > 1:
		return 1
	}
	return v
}
