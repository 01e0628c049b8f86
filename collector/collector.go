package collector

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"syscall"
	"time"
	"unicode/utf8"

	influxdb2 "github.com/influxdata/influxdb-client-go/v2"
	ihttp "github.com/influxdata/influxdb-client-go/v2/api/http"

	"github.com/colocd/colocd/goodness"
)

// Errors. Every error from New, Usage, Colocations, Placements,
// ContainerUsage and Ping wraps one of these, and the underlying error
// too, so both errors.Is(err, ErrUnreachable) and errors.Is(err,
// context.DeadlineExceeded) hold after a timeout. The one exception is the
// caller's own cancellation, which wraps context.Canceled and nothing
// else: it says nothing about InfluxDB.
var (
	// errInvalid: a Config field or an argument is invalid; the error is a
	// *fieldError naming it. Nothing was sent.
	errInvalid = errors.New("collector: invalid")
	// ErrUnreachable: the metrics store (InfluxDB, Prometheus) did not
	// answer in time, refused or dropped the connection, or a proxy in
	// front of it reported it unavailable (502, 503, 504).
	ErrUnreachable = errors.New("collector: metrics store unreachable")
	// errAuth: the store rejected the credentials (401, 403).
	errAuth = errors.New("collector: metrics store authentication failed")
	// errBadQuery: the store rejected or failed the query: a Flux,
	// InfluxQL or PromQL error, an unknown bucket or database, a result
	// that does not decode. InfluxDB 1.8 reports these as 500 with the
	// reason in the body, InfluxQL often as 200 with an error per
	// statement, Prometheus as 400 or 422.
	errBadQuery = errors.New("collector: metrics query failed")
	// ErrEmpty: none of the requested hosts has any cpu sample in the
	// window: usually a wrong bucket or schema name, or Telegraf not writing.
	ErrEmpty = errors.New("collector: no data")
	// errTooLarge: an answer, or a record or chunk of it, is over its cap
	// (cap.go); the error names the cap and the setting. It comes with
	// errBadQuery, or with the sentinel of the error status whose body
	// was over the cap.
	errTooLarge = errors.New("collector: answer over its size cap")
)

// Result is the usage of the hosts asked for, over one window.
type Result struct {
	// Usage holds each fresh host's mean usage in the window.
	Usage map[string]goodness.Usage
	// Stale lists, sorted, hosts whose newest cpu sample in the window is
	// older than the window's end minus StaleAfter: their data stopped, so
	// no usage.
	Stale []string
	// Missing lists, sorted, hosts without enough data in the window: no cpu
	// sample, or disk or net counters with fewer than two samples.
	Missing []string
}

// Collector reads node usage and YARN placements from InfluxDB, with Flux
// or InfluxQL.
// It is safe for concurrent use. New does no I/O; Close releases idle
// connections.
type Collector struct {
	cfg    compiled
	http   *http.Client // capped (cap.go)
	client influxdb2.Client
	// maxRecord and maxValue cap a Flux CSV record and an InfluxQL JSON
	// value (maxRecordBytes, maxValueBytes; tests lower them).
	maxRecord, maxValue int64
	queryURL            string // Flux: /api/v2/query
	influxQLURL         string // InfluxQL: /query
}

// New validates cfg and returns a Collector. It does not connect.
func New(cfg Config) (*Collector, error) {
	cc, err := cfg.compile()
	if err != nil {
		return nil, err
	}
	// The library's own client's timeout, a second over Timeout (each call
	// is bounded by Timeout through its context).
	hc := cappedClient(cc.HTTPClient, time.Duration(math.Ceil(cc.Timeout.Seconds())+1)*time.Second,
		cc.MaxAnswerBytes, "influxdb", "influx max_answer_bytes")
	opts := influxdb2.DefaultOptions().
		SetApplicationName("colocd").
		SetLogLevel(0). // errors only; the collector returns, never logs
		SetHTTPClient(hc)
	client := influxdb2.NewClientWithOptions(strings.TrimRight(cc.URL, "/"), cc.Token, opts)
	q := url.Values{}
	q.Set("org", cc.Org)
	queryURL := client.HTTPService().ServerAPIURL() + "query?" + q.Encode()
	return &Collector{cfg: cc, http: hc, client: client, maxRecord: maxRecordBytes, maxValue: maxValueBytes,
		queryURL: queryURL, influxQLURL: influxQLURL(client.ServerURL(), cc.Bucket)}, nil
}

// Close releases the client's idle connections.
func (c *Collector) Close() {
	c.client.Close()
	c.http.CloseIdleConnections()
}

// Ping checks that InfluxDB answers on /ping within Timeout. It does not
// check credentials: Usage reports errAuth.
func (c *Collector) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	if _, err := c.client.Ping(ctx); err != nil {
		return classify("ping", err)
	}
	return nil
}

// Usage returns each host's mean usage over [from, to) with one query for
// all hosts (Flux or InfluxQL, as Config.Language says):
//   - CPU = (100 − mean usage_idle − mean usage_iowait)/100 and
//     IOWait = mean usage_iowait/100 over the cpu-total samples in the
//     window, clamped to [0, 1];
//   - DiskRead/DiskWrite: for each whole disk, the per-second rate of its
//     byte counter between consecutive samples in the window, averaged, then
//     summed over the disks. A step where the counter went backwards (a
//     reboot) has no rate, and the next step counts from the new value;
//   - NetRecv/NetSent: the same over the included interfaces.
//
// A host is Stale, with no usage, when its newest cpu sample in the window
// is older than to − StaleAfter. It is Missing when it has no cpu sample in
// the window, or has disk or net series of which none has two samples there
// (the window is shorter than two Telegraf intervals). A host with no disk
// or net series at all gets zero rates for them. When no requested host has
// any cpu sample, Usage returns a Result listing every host as Missing
// together with an error wrapping ErrEmpty.
func (c *Collector) Usage(ctx context.Context, hosts []string, from, to time.Time) (Result, error) {
	if err := checkWindow(from, to); err != nil {
		return Result{Usage: map[string]goodness.Usage{}}, err
	}
	hosts, err := cleanHosts(hosts)
	if err != nil || len(hosts) == 0 {
		return Result{Usage: map[string]goodness.Usage{}}, err
	}
	return c.usage(ctx, hosts, false, from, to)
}

// UsageAll is Usage for every host that has a cpu sample in the window.
// It reads the whole bucket; `colocd metrics` uses it to list the hosts
// when no ResourceManager names them.
func (c *Collector) UsageAll(ctx context.Context, from, to time.Time) (Result, error) {
	if err := checkWindow(from, to); err != nil {
		return Result{Usage: map[string]goodness.Usage{}}, err
	}
	return c.usage(ctx, nil, true, from, to)
}

// cleanHosts checks, sorts and dedups host names.
func cleanHosts(hosts []string) ([]string, error) {
	hosts = slices.Clone(hosts)
	for i, h := range hosts {
		if h == "" || !utf8.ValidString(h) {
			return nil, invalid(fmt.Sprintf("hosts[%d]", i), "%q is not a non-empty UTF-8 name", h)
		}
	}
	slices.Sort(hosts)
	return slices.Compact(hosts), nil
}

// usage reads hosts (every host in the bucket when all) over [from, to).
func (c *Collector) usage(ctx context.Context, hosts []string, all bool, from, to time.Time) (Result, error) {
	res := Result{Usage: map[string]goodness.Usage{}}
	acc := make(map[string]*hostAcc, len(hosts))
	for _, h := range hosts {
		acc[h] = &hostAcc{}
	}
	dec := newUsageDecoder(c.cfg.Schema, acc, all, from, to)
	op := fmt.Sprintf("usage of %d hosts in [%s, %s)", len(hosts), fluxTime(from), fluxTime(to))
	if all {
		op = fmt.Sprintf("usage of every host in [%s, %s)", fluxTime(from), fluxTime(to))
	}
	if err := c.readUsage(ctx, op, hosts, all, dec); err != nil {
		return res, err
	}
	if all {
		hosts = sortedKeys(acc)
	}
	freshAfter := to.Add(-c.cfg.StaleAfter)
	anyData := false
	for _, h := range hosts {
		a := acc[h]
		if a.cpuN[0] > 0 {
			anyData = true
			if a.last.Before(freshAfter) {
				res.Stale = append(res.Stale, h)
				continue
			}
		}
		u, ok := a.usage()
		if !ok {
			res.Missing = append(res.Missing, h)
			continue
		}
		res.Usage[h] = u
	}
	if !anyData {
		s := c.cfg.Schema
		return res, fmt.Errorf("%w: %s: no %s.%s samples with %s=%s for any host in bucket %q",
			ErrEmpty, op, s.CPUMeasurement, s.CPUIdleField, s.CPUTag, s.CPUTotal, c.cfg.Bucket)
	}
	return res, nil
}

// readUsage runs the usage read in the configured language into dec.
func (c *Collector) readUsage(ctx context.Context, op string, hosts []string, all bool, dec *usageDecoder) error {
	if c.cfg.Language == LanguageInfluxQL {
		q, err := c.usageInfluxQL(hosts, all, dec.from, dec.to)
		if err != nil {
			return invalid("schema", "%v", err)
		}
		if err := c.runInfluxQL(ctx, op, q, func(st influxQLSeries) error { return decodeInfluxQLUsage(st, dec) }); err != nil {
			return err
		}
		dec.finish()
		return nil
	}
	q, err := c.usageQuery(hosts, all, dec.from, dec.to)
	if err != nil {
		return invalid("schema", "%v", err)
	}
	return c.run(ctx, op, q, func(body io.Reader) error { return decodeUsage(body, dec) })
}

// queryBody is the JSON body of POST /api/v2/query: Flux, answered as CSV
// with a header row per table and no annotations, which the decoders
// stream without building a record per row.
type queryBody struct {
	Query   string       `json:"query"`
	Type    string       `json:"type"`
	Dialect queryDialect `json:"dialect"`
}

type queryDialect struct {
	Header      bool     `json:"header"`
	Delimiter   string   `json:"delimiter"`
	Annotations []string `json:"annotations"`
}

// run posts q under Timeout through the client library's HTTP service
// (authorization, user agent, error decoding) and streams the CSV body to
// decode, each record capped at maxRecord bytes: a line without end fails
// there instead of growing the CSV reader's buffer.
func (c *Collector) run(ctx context.Context, op, q string, decode func(io.Reader) error) error {
	body, err := json.Marshal(queryBody{Query: q, Type: "flux",
		Dialect: queryDialect{Header: true, Delimiter: ",", Annotations: []string{}}})
	if err != nil {
		return fmt.Errorf("collector: %s: encode request: %w", op, err)
	}
	return c.post(ctx, op, c.queryURL, bytes.NewReader(body), "application/json", "application/csv",
		func(r io.Reader) error { return decode(&recordCap{r: r, max: c.maxRecord}) })
}

// post sends body to u under Timeout through the client library's HTTP
// service (authorization, user agent, error decoding), streams the
// answer to decode, and classifies any failure.
func (c *Collector) post(ctx context.Context, op, u string, body io.Reader, contentType, accept string, decode func(io.Reader) error) error {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Timeout)
	defer cancel()
	var decodeErr error
	perr := c.client.HTTPService().DoPostRequest(ctx, u, body,
		func(req *http.Request) {
			req.Header.Set("Content-Type", contentType)
			req.Header.Set("Accept", accept)
		},
		func(resp *http.Response) error {
			defer resp.Body.Close()
			decodeErr = decode(resp.Body)
			if decodeErr != nil {
				_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20)) // let the connection be reused
			}
			return nil
		})
	switch {
	case perr != nil:
		return classify(op, perr)
	case decodeErr != nil:
		return classify(op, decodeErr)
	case ctx.Err() != nil: // ended mid-stream, yet looked like a clean end
		return classify(op, ctx.Err())
	}
	return nil
}

// Colocations returns, for each host, the sorted distinct job kinds that
// had containers there at some point in [from, to), from the
// yarn_containers points the colocd-telegraf-yarn plugin writes
// (Placements). Applications without a kind (colocd did not submit them)
// are left out. An empty window gives an empty map and no error.
func (c *Collector) Colocations(ctx context.Context, from, to time.Time) (map[string][]string, error) {
	ps, err := c.Placements(ctx, from, to)
	if err != nil {
		return nil, err
	}
	sets := map[string]map[string]bool{}
	for _, p := range ps {
		if p.Kind == "" {
			continue
		}
		if sets[p.Host] == nil {
			sets[p.Host] = map[string]bool{}
		}
		sets[p.Host][p.Kind] = true
	}
	out := make(map[string][]string, len(sets))
	for h, kinds := range sets {
		out[h] = sortedKeys(kinds)
	}
	return out, nil
}

// InfluxDB stores nanoseconds since 1970 in an int64; Flux date literals
// need four-digit years.
var (
	minTime = time.Unix(0, math.MinInt64).UTC().AddDate(1, 0, 0)
	maxTime = time.Unix(0, math.MaxInt64).UTC().AddDate(-1, 0, 0)
)

func checkWindow(from, to time.Time) error {
	switch {
	case !from.Before(to):
		return invalid("window", "from %s is not before to %s", fluxTime(from), fluxTime(to))
	case from.Before(minTime):
		return invalid("window", "from %s is before %s", fluxTime(from), fluxTime(minTime))
	case to.After(maxTime):
		return invalid("window", "to %s is after %s", fluxTime(to), fluxTime(maxTime))
	}
	return nil
}

// classify wraps err in the sentinel that describes it: an HTTP status
// first (a 401 whose body failed to decode is still a 401), then the
// transport's failures.
func classify(op string, err error) error {
	var he *ihttp.Error
	var netErr net.Error
	wrap := func(sentinel error) error { return fmt.Errorf("%w: %s: %w", sentinel, op, err) }
	switch {
	case errors.Is(err, context.Canceled):
		// The caller gave up; that says nothing about InfluxDB.
		return fmt.Errorf("collector: %s: %w", op, err)
	case errors.Is(err, errTooLarge) && !errors.As(err, &he):
		return wrap(errBadQuery)
	case errors.As(err, &he) && he.StatusCode == http.StatusForbidden && strings.Contains(he.Message, "Flux query service disabled"):
		// InfluxDB 1.x with flux-enabled = false answers every Flux
		// query 403: a configuration mismatch, not bad credentials.
		return fmt.Errorf("%w: %s: %w (read it with influx.language: %s)", errBadQuery, op, err, LanguageInfluxQL)
	case errors.As(err, &he) && he.StatusCode != 0:
		return wrap(statusSentinel(he.StatusCode))
	case errors.Is(err, context.DeadlineExceeded), errors.As(err, &netErr),
		errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET),
		errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF), errors.Is(err, http.ErrBodyReadAfterClose):
		return wrap(ErrUnreachable)
	case errors.As(err, &he):
		// A transport failure the library wrapped without a status.
		return wrap(ErrUnreachable)
	}
	return wrap(errBadQuery)
}

// statusSentinel is the sentinel an HTTP error status from a metrics store
// means: 401/403 errAuth; 429 and a proxy's 502/503/504 ErrUnreachable;
// anything else errBadQuery.
func statusSentinel(code int) error {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden:
		return errAuth
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
		return ErrUnreachable
	}
	return errBadQuery
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
