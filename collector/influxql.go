package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// The InfluxQL path: the v1 /query API, which InfluxDB 1.x serves
// natively, 2.x through its v1 compatibility endpoint (bucket mapped with a
// DBRP) and 3.x as its InfluxQL API. It reads the same rows as the Flux
// path — raw samples, filtered on tags and fields by the storage layer —
// and feeds them to the same usageDecoder, so the two languages give the
// same usage on the same data.
//
// The counters' non-negative derivative is taken by the decoder, as on the
// Flux path, rather than by InfluxQL's non_negative_derivative(): the
// latter returns no row for a series with a single sample in the window,
// which would make a host whose window is too short look idle (zero rates)
// instead of Missing, and it takes integer differences through float64
// only after subtracting, which the decoder does too.

// influxQLChunkSize bounds the rows per chunk of a chunked answer, and so
// the memory one decoded chunk holds.
const influxQLChunkSize = 10000

var (
	influxQLStringEscaper = strings.NewReplacer("\n", `\n`, `\`, `\\`, `'`, `\'`)
	influxQLIdentEscaper  = strings.NewReplacer("\n", `\n`, `\`, `\\`, `"`, `\"`)
)

// influxQLString quotes s as an InfluxQL string literal.
func influxQLString(s string) string { return `'` + influxQLStringEscaper.Replace(s) + `'` }

// influxQLIdent quotes s as an InfluxQL identifier.
func influxQLIdent(s string) string { return `"` + influxQLIdentEscaper.Replace(s) + `"` }

// influxQLWindow is the time predicate for [from, to): InfluxQL's < is
// strict, so no nanosecond is taken off as for Flux's range().
func influxQLWindow(from, to time.Time) string {
	return "time >= " + influxQLString(fluxTime(from)) + " AND time < " + influxQLString(fluxTime(to))
}

// usageInfluxQL is the one request Usage sends for all hosts: three
// SELECTs of raw samples (cpu-total's idle and iowait; every included
// disk's and interface's byte counters), and with Pressure a fourth (the
// io and cpu "some" stall counters), each grouped by host and device
// so that a series' rows arrive together in time order. Fields and tags
// carry InfluxQL's ::field and ::tag casts, so a site whose tag and field
// share a name reads the right one. With all, or more hosts than
// HostPatternMax, no host is named (see usageQuery).
func (c *Collector) usageInfluxQL(hosts []string, all bool, from, to time.Time) (string, error) {
	s := c.cfg.Schema
	tag := func(name string) string { return influxQLIdent(name) + "::tag" }
	where := []string{influxQLWindow(from, to)}
	if !all && len(hosts) <= c.cfg.HostPatternMax {
		re, err := fluxRegex(hostsPattern(hosts))
		if err != nil {
			return "", fmt.Errorf("host pattern: %w", err)
		}
		where = append(where, tag(s.HostTag)+" =~ "+re)
	}
	selectStmt := func(meas string, fields, preds []string, groupBy ...string) string {
		sel := make([]string, len(fields))
		for i, f := range fields {
			sel[i] = influxQLIdent(f) + "::field"
		}
		groups := make([]string, len(groupBy))
		for i, g := range groupBy {
			groups[i] = influxQLIdent(g)
		}
		return fmt.Sprintf("SELECT %s FROM %s WHERE %s GROUP BY %s",
			strings.Join(sel, ", "), influxQLIdent(meas),
			strings.Join(append(where[:len(where):len(where)], preds...), " AND "), strings.Join(groups, ", "))
	}
	cpu := selectStmt(s.CPUMeasurement, []string{s.CPUIdleField, s.CPUIOWaitField},
		[]string{tag(s.CPUTag) + " = " + influxQLString(s.CPUTotal)}, s.HostTag)
	var diskPreds []string
	if c.cfg.diskExclude != "" {
		diskPreds = append(diskPreds, tag(s.DiskNameTag)+" !~ "+c.cfg.diskExclude)
	}
	disk := selectStmt(s.DiskMeasurement, []string{s.DiskReadField, s.DiskWriteField}, diskPreds, s.HostTag, s.DiskNameTag)
	// interface="all" carries Telegraf's protocol counters, never bytes.
	netPreds := []string{tag(s.NetInterfaceTag) + " != " + influxQLString("all")}
	if c.cfg.netInclude != "" {
		netPreds = append(netPreds, tag(s.NetInterfaceTag)+" =~ "+c.cfg.netInclude)
	}
	if c.cfg.netExclude != "" {
		netPreds = append(netPreds, tag(s.NetInterfaceTag)+" !~ "+c.cfg.netExclude)
	}
	net := selectStmt(s.NetMeasurement, []string{s.NetRecvField, s.NetSentField}, netPreds, s.HostTag, s.NetInterfaceTag)
	q := cpu + ";\n" + disk + ";\n" + net
	if c.cfg.Pressure {
		q += ";\n" + selectStmt(s.PressureMeasurement, []string{s.PressureTotalField}, []string{
			"(" + tag(s.PressureResourceTag) + " = " + influxQLString("io") + " OR " +
				tag(s.PressureResourceTag) + " = " + influxQLString("cpu") + ")",
			tag(s.PressureTypeTag) + " = " + influxQLString("some"),
		}, s.HostTag, s.PressureResourceTag)
	}
	return q, nil
}

// influxQLSeries is one series of a statement's answer, or the part of it
// one chunk carries. Values hold json.Number, string or nil cells.
type influxQLSeries struct {
	Name    string            `json:"name"`
	Tags    map[string]string `json:"tags"`
	Columns []string          `json:"columns"`
	Values  [][]any           `json:"values"`
}

// influxQLChunk is one JSON object of a (chunked) /query answer.
type influxQLChunk struct {
	Results []struct {
		StatementID int              `json:"statement_id"`
		Series      []influxQLSeries `json:"series"`
		Error       string           `json:"error"`
	} `json:"results"`
	Error string `json:"error"`
}

// errStatement is wrapped when InfluxDB answers 200 but reports a
// statement's failure (an unknown database, a parse error) in the body.
var errStatement = errors.New("statement failed")

// influxQLURL is the v1 /query URL of the server at base for bucket
// ("db" or "db/rp"): chunked answers, times in nanoseconds.
func influxQLURL(base, bucket string) string {
	params := url.Values{}
	db, rp, _ := strings.Cut(bucket, "/")
	params.Set("db", db)
	if rp != "" {
		params.Set("rp", rp)
	}
	params.Set("epoch", "ns")
	params.Set("chunked", "true")
	params.Set("chunk_size", strconv.Itoa(influxQLChunkSize))
	return strings.TrimRight(base, "/") + "/query?" + params.Encode()
}

// runInfluxQL posts q to /query under Timeout and hands each series of the
// chunked answer to each.
func (c *Collector) runInfluxQL(ctx context.Context, op, q string, each func(influxQLSeries) error) error {
	form := url.Values{"q": {q}}.Encode()
	return c.post(ctx, op, c.influxQLURL, strings.NewReader(form), "application/x-www-form-urlencoded", "application/json",
		func(body io.Reader) error { return decodeInfluxQL(body, c.maxValue, each) })
}

// decodeInfluxQL reads the JSON objects of a chunked answer (one object
// when the server does not chunk), each capped at maxValue bytes, and
// hands every series to each. An error reported in the body fails the
// read with errStatement.
func decodeInfluxQL(body io.Reader, maxValue int64, each func(influxQLSeries) error) error {
	vc := &valueCap{r: body, max: maxValue}
	dec := json.NewDecoder(vc)
	dec.UseNumber()
	for {
		var chunk influxQLChunk
		vc.next()
		err := dec.Decode(&chunk)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("answer does not decode: %w", err)
		}
		if chunk.Error != "" {
			return fmt.Errorf("%w: %s", errStatement, chunk.Error)
		}
		for _, r := range chunk.Results {
			if r.Error != "" {
				return fmt.Errorf("%w: statement %d: %s", errStatement, r.StatementID, r.Error)
			}
			for _, s := range r.Series {
				if err := each(s); err != nil {
					return err
				}
			}
		}
	}
}

// influxQLTime reads a time cell: nanoseconds (epoch=ns) or, from a server
// that ignores epoch, an RFC 3339 string.
func influxQLTime(v any) (time.Time, error) {
	switch v := v.(type) {
	case json.Number:
		ns, err := strconv.ParseInt(v.String(), 10, 64)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: %w", v, err)
		}
		return time.Unix(0, ns).UTC(), nil
	case string:
		t, err := time.Parse(time.RFC3339Nano, v)
		if err != nil {
			return time.Time{}, fmt.Errorf("time %q: %w", v, err)
		}
		return t, nil
	}
	return time.Time{}, fmt.Errorf("time cell %v is neither a number nor a string", v)
}

// influxQLNumbers hands add every numeric cell of st's value columns that
// use keeps (col ≥ 1), row by row, with the row's time and the cell as the
// store wrote it (the caller checked timeFirst). A short row or a cell
// that is not a number fails; empty cells are skipped.
func influxQLNumbers(st influxQLSeries, use []bool, add func(col int, t time.Time, raw string) error) error {
	for _, row := range st.Values {
		if len(row) != len(st.Columns) {
			return fmt.Errorf("series %q: a row of %d cells under %d columns", st.Name, len(row), len(st.Columns))
		}
		t, err := influxQLTime(row[0])
		if err != nil {
			return err
		}
		for i := 1; i < len(row); i++ {
			if !use[i] || row[i] == nil {
				continue
			}
			n, ok := row[i].(json.Number)
			if !ok {
				return fmt.Errorf("_value %v of %s.%s is not a number", row[i], st.Name, st.Columns[i])
			}
			if err := add(i, t, n.String()); err != nil {
				return err
			}
		}
	}
	return nil
}

// timeFirst fails for a series whose first column is not its time.
func (st influxQLSeries) timeFirst() error {
	if len(st.Columns) == 0 || st.Columns[0] != "time" {
		return fmt.Errorf("series %q without a leading time column: columns %q", st.Name, st.Columns)
	}
	return nil
}

// decodeInfluxQLUsage feeds one series of the usage answer to dec.
func decodeInfluxQLUsage(st influxQLSeries, dec *usageDecoder) error {
	s := dec.schema
	if err := st.timeFirst(); err != nil {
		return err
	}
	// One accumulator per value column, looked up once per series.
	accs := make([]*seriesAcc, len(st.Columns))
	use := make([]bool, len(st.Columns))
	anyAcc := false
	for i := 1; i < len(st.Columns); i++ {
		id, ok := dec.seriesOf(st.Name, st.Columns[i], st.Tags[s.HostTag], st.Tags[s.DiskNameTag], st.Tags[s.NetInterfaceTag], st.Tags[s.PressureResourceTag])
		if ok {
			accs[i] = dec.lookup(id)
			use[i] = accs[i] != nil
			anyAcc = anyAcc || use[i]
		}
	}
	if !anyAcc {
		return nil
	}
	return influxQLNumbers(st, use, func(i int, t time.Time, raw string) error { return dec.add(accs[i], t, raw) })
}
