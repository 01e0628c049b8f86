package collector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Every value that reaches a PromQL query goes through one of the
// functions below; nothing is pasted in raw. Label values are PromQL
// string literals written by strconv.Quote, whose escapes (\" \\ \n \t
// \uXXXX ...) are exactly those PromQL's lexer reads; regular expressions
// are Go RE2, which Prometheus also uses, anchored at both ends by
// Prometheus itself.

// node_exporter's metric names (its cpu, diskstats and netdev collectors).
const (
	promCPUMetric       = "node_cpu_seconds_total"
	promDiskReadMetric  = "node_disk_read_bytes_total"
	promDiskWriteMetric = "node_disk_written_bytes_total"
	promNetRecvMetric   = "node_network_receive_bytes_total"
	promNetSentMetric   = "node_network_transmit_bytes_total"
	promIOPressure      = "node_pressure_io_waiting_seconds_total"
	promCPUPressure     = "node_pressure_cpu_waiting_seconds_total"
)

// promTargetLabel is the label Prometheus gives every scrape target.
const promTargetLabel = "instance"

// The queries of one usage read, in the order promQueries returns them.
const (
	promQCPU      = iota // idle and iowait, by mode
	promQCPUEven         // the other modes, CPUs whose label ends in an even digit
	promQCPUOther        // the other modes, every other CPU
	promQDiskRead
	promQDiskWrite
	promQNetRecv
	promQNetSent
	promQNewest
	promQIOPressure  // only with Pressure
	promQCPUPressure // only with Pressure
	// The targets with a disk or net counter series that has one sample in
	// the window: a host with such a series and no rate for that counter
	// from any other (none has two samples there) is missing, not idle.
	promQDiskReadSeen
	promQDiskWriteSeen
	promQNetRecvSeen
	promQNetSentSeen
	numPromQueries
)

var promQueryNames = [numPromQueries]string{"cpu idle and iowait", "cpu busy (even cpus)", "cpu busy (other cpus)", "disk read", "disk write", "net receive", "net transmit", "newest cpu sample", "io pressure", "cpu pressure",
	"disk read series", "disk write series", "net receive series", "net transmit series"}

// promQueries are the instant queries of one usage read over a window of
// w, all hosts at once: the cpu modes' summed rates per target (idle and
// iowait by mode; the others summed, in two queries by CPU), each disk
// and net counter's summed rate per target, and each target's newest
// idle-cpu sample time, every row with its host label. hosts nil means
// every host (no host matcher).
//
// The cpu counters are most of the series a read touches (node_exporter
// exports 8 modes per CPU), and Prometheus evaluates one query on one
// core: as one query they were the read's critical path (140 of its
// 204 ms at 1,000 hosts of 4 CPUs on the project machine). Split three
// ways, about evenly, they run side by side, and the busy modes come
// back summed per target rather than one row per mode. The two busy
// queries' CPU matchers are complements (a CPU label not ending in an
// even digit, or none, is in the second), so combine sums every mode
// once.
func (p *Prometheus) promQueries(hosts []string, w time.Duration) [numPromQueries]string {
	c := &p.cfg
	var sel []string
	if c.Job != "" {
		sel = append(sel, "job="+strconv.Quote(c.Job))
	}
	if hosts != nil && len(hosts) <= c.HostPatternMax {
		sel = append(sel, c.HostLabel+"=~"+strconv.Quote(hostsRegex(hosts, c.StripPort)))
	}
	rng := fmt.Sprintf("[%dms]", w.Milliseconds())
	vec := func(metric string, extra ...string) string {
		return metric + "{" + strings.Join(slices.Concat(extra, sel), ", ") + "}"
	}
	rate := func(by, metric string, extra ...string) string {
		return "sum by (" + by + ") (rate(" + vec(metric, extra...) + rng + "))"
	}
	// single: the targets with a series of metric that has one sample in
	// the window, too few for a rate; usually none, so the answer is small.
	single := func(by, metric string, extra ...string) string {
		return "count by (" + by + ") (count_over_time(" + vec(metric, extra...) + rng + ") < 2)"
	}
	var disk, net []string
	if c.diskExclude != "" {
		disk = append(disk, "device!~"+strconv.Quote(c.diskExclude))
	}
	if c.netInclude != "" {
		net = append(net, "device=~"+strconv.Quote(c.netInclude))
	}
	if c.netExclude != "" {
		net = append(net, "device!~"+strconv.Quote(c.netExclude))
	}
	// Grouped per target too, so that targets sharing a host label value
	// are averaged by combine rather than summed here.
	hl := c.HostLabel
	if hl != promTargetLabel {
		hl += ", " + promTargetLabel
	}
	qs := [numPromQueries]string{
		promQCPU:       rate(hl+", mode", promCPUMetric, `mode=~"idle|iowait"`),
		promQCPUEven:   rate(hl, promCPUMetric, `mode!~"idle|iowait"`, `cpu=~".*[02468]"`),
		promQCPUOther:  rate(hl, promCPUMetric, `mode!~"idle|iowait"`, `cpu!~".*[02468]"`),
		promQDiskRead:  rate(hl, promDiskReadMetric, disk...),
		promQDiskWrite: rate(hl, promDiskWriteMetric, disk...),
		promQNetRecv:   rate(hl, promNetRecvMetric, net...),
		promQNetSent:   rate(hl, promNetSentMetric, net...),
		promQNewest:    "max by (" + hl + ") (timestamp(" + vec(promCPUMetric, `mode="idle"`) + "))",

		promQDiskReadSeen:  single(hl, promDiskReadMetric, disk...),
		promQDiskWriteSeen: single(hl, promDiskWriteMetric, disk...),
		promQNetRecvSeen:   single(hl, promNetRecvMetric, net...),
		promQNetSentSeen:   single(hl, promNetSentMetric, net...),
	}
	if c.Pressure {
		qs[promQIOPressure] = rate(hl, promIOPressure)
		qs[promQCPUPressure] = rate(hl, promCPUPressure)
	}
	return qs
}

// hostsRegex matches the host label values that name the given hosts:
// exactly the names, or with strip, every value stripPort maps to one of
// them ("h", "h:9100"; for a name with colons, an IPv6 address, "::1" and
// "[::1]:9100") and a few odd ones it does not ("[::1]"), which Usage
// drops after reading.
func hostsRegex(hosts []string, strip bool) string {
	var plain, v6 []string
	for _, h := range hosts {
		q := regexp.QuoteMeta(h)
		if strip && strings.Contains(h, ":") {
			v6 = append(v6, q)
		} else {
			plain = append(plain, q)
		}
	}
	var alts []string
	if len(plain) > 0 {
		re := "(?:" + strings.Join(plain, "|") + ")"
		if strip {
			re += portSuffix
		}
		alts = append(alts, re)
	}
	if len(v6) > 0 {
		re := "(?:" + strings.Join(v6, "|") + ")"
		alts = append(alts, re, `\[`+re+`\]`+portSuffix)
	}
	return strings.Join(alts, "|")
}

// portSuffix is an optional ":port" as stripPort removes it.
const portSuffix = "(?::[0-9]+)?"

// stripPort turns a target address into a host name: "node1:9100" →
// "node1", "[::1]:9100" → "::1". A value without a numeric port, or a bare
// IPv6 address, is returned as it is.
func stripPort(v string) string {
	i := strings.LastIndexByte(v, ':')
	if i < 0 || i == len(v)-1 || strings.Trim(v[i+1:], "0123456789") != "" {
		return v
	}
	h := v[:i]
	if len(h) > 2 && h[0] == '[' && h[len(h)-1] == ']' && strings.Contains(h, ":") {
		return h[1 : len(h)-1]
	}
	if strings.Contains(h, ":") {
		return v // "::1:9100" is an address, not ::1 on port 9100
	}
	return h
}

// promLabelName is Prometheus's label name syntax.
var promLabelName = regexp.MustCompile(`^[a-zA-Z_][a-zA-Z0-9_]*$`)

// checkHostLabel accepts a Prometheus label name that is neither reserved
// ("__" prefix) nor one of the node_exporter labels the queries group or
// filter by.
func checkHostLabel(v string) error {
	switch {
	case v == "":
		return invalid("host_label", "is empty")
	case !promLabelName.MatchString(v):
		return invalid("host_label", "%q is not a Prometheus label name ([a-zA-Z_][a-zA-Z0-9_]*)", v)
	case strings.HasPrefix(v, "__"):
		return invalid("host_label", "%q is reserved for Prometheus's own labels", v)
	case v == "mode" || v == "cpu" || v == "device" || v == "job":
		return invalid("host_label", "%q is a label the queries read for something else", v)
	}
	return nil
}

// promTime writes t, a whole millisecond, as the seconds the query API
// reads.
func promTime(t time.Time) string {
	return strconv.FormatFloat(float64(t.UnixMilli())/1e3, 'f', 3, 64)
}

// hostKey maps a host label value to the host it names.
func (c *promCompiled) hostKey(v string) string {
	if c.StripPort {
		return stripPort(v)
	}
	return v
}

// The query API: one form-encoded POST per instant query, its JSON
// answer, and the errors it reports.

// query posts one instant query and decodes its vector.
func (p *Prometheus) query(ctx context.Context, q, at string) ([]promRow, error) {
	form := url.Values{"query": {q}, "time": {at}, "timeout": {p.cfg.timeoutParam}}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, p.cfg.queryURL, strings.NewReader(form.Encode()))
	if err != nil {
		return nil, err
	}
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Accept", "application/json")
	p.authorize(req)
	resp, err := p.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, readPromError(resp.StatusCode, resp.Body)
	}
	cr := &capReader{r: resp.Body, left: p.maxAnswer, err: tooLarge("the prometheus answer", p.maxAnswer, "prometheus max_answer_bytes")}
	if resp.ContentLength > p.maxAnswer {
		cr.left, cr.err = -1, tooLarge(fmt.Sprintf("the prometheus answer (Content-Length %d)", resp.ContentLength), p.maxAnswer, "prometheus max_answer_bytes")
	}
	rows, err := decodeVector(cr, p.cfg.HostLabel)
	if err != nil {
		return nil, err
	}
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<16)) // let the connection be reused
	return rows, nil
}

// promAnswer is the query API's envelope.
type promAnswer struct {
	Status    string `json:"status"`
	ErrorType string `json:"errorType"`
	Error     string `json:"error"`
	Data      struct {
		ResultType string `json:"resultType"`
		Result     []struct {
			Metric map[string]string  `json:"metric"`
			Value  [2]json.RawMessage `json:"value"` // [seconds, "value"]
		} `json:"result"`
	} `json:"data"`
}

// decodeVector reads an instant-vector answer into rows, dropping NaN and
// infinite values.
func decodeVector(r io.Reader, hostLabel string) ([]promRow, error) {
	var ans promAnswer
	if err := json.NewDecoder(r).Decode(&ans); err != nil {
		return nil, fmt.Errorf("decode answer: %w", err)
	}
	if ans.Status != "success" {
		return nil, &promError{StatusCode: http.StatusOK, Type: ans.ErrorType, Msg: ans.Error, Status: ans.Status}
	}
	if ans.Data.ResultType != "vector" {
		return nil, fmt.Errorf("decode answer: result type %q, want vector", ans.Data.ResultType)
	}
	rows := make([]promRow, 0, len(ans.Data.Result))
	for _, s := range ans.Data.Result {
		raw := s.Value[1]
		if len(raw) < 2 || raw[0] != '"' || raw[len(raw)-1] != '"' {
			return nil, fmt.Errorf("decode answer: value %s is not a quoted number", raw)
		}
		v, err := strconv.ParseFloat(string(raw[1:len(raw)-1]), 64)
		if err != nil {
			return nil, fmt.Errorf("decode answer: value %s: %w", raw, err)
		}
		if math.IsNaN(v) || math.IsInf(v, 0) {
			continue
		}
		rows = append(rows, promRow{host: s.Metric[hostLabel], target: s.Metric[promTargetLabel], mode: s.Metric["mode"], v: v})
	}
	return rows, nil
}

// promError is an answer that is not a result: a status other than 200
// from Prometheus or a proxy in front of it, or a 200 whose body says
// "status": "error".
type promError struct {
	StatusCode int
	Status     string // the body's "status", when it has one
	Type, Msg  string // the body's "errorType" and "error", or Msg the start of a body that is not JSON
}

func (e *promError) Error() string {
	var b strings.Builder
	if e.StatusCode == http.StatusOK {
		fmt.Fprintf(&b, "prometheus answered status %q", e.Status)
	} else {
		fmt.Fprintf(&b, "prometheus answered %d %s", e.StatusCode, http.StatusText(e.StatusCode))
	}
	if e.Type != "" {
		b.WriteString(": " + e.Type)
	}
	if e.Msg != "" {
		b.WriteString(": " + e.Msg)
	}
	return b.String()
}

// readPromError reads the start of an error answer: Prometheus's JSON
// {"status":"error","errorType":...,"error":...}, or a proxy's text.
func readPromError(code int, body io.Reader) error {
	b, _ := io.ReadAll(io.LimitReader(body, 64<<10)) // the status says enough if the body breaks off
	e := &promError{StatusCode: code}
	var ans promAnswer
	if json.Unmarshal(b, &ans) == nil && ans.Status != "" {
		e.Status, e.Type, e.Msg = ans.Status, ans.ErrorType, ans.Error
		return e
	}
	if len(b) > 512 {
		b = append(b[:512:512], "..."...)
	}
	e.Msg = strings.ToValidUTF8(strings.TrimSpace(string(b)), "\ufffd")
	return e
}

// classifyProm wraps err in the sentinel that describes it: the caller's
// cancellation first, then an HTTP status (401 and 403 are errAuth; 429,
// 502, 503 and 504 ErrUnreachable; any other, and a "status": "error"
// body, errBadQuery), an answer over the cap (errBadQuery), then the
// transport's failures as classify sorts them (refused, reset, timed out
// or cut short: ErrUnreachable; an answer that does not decode:
// errBadQuery).
func classifyProm(op string, err error) error {
	var pe *promError
	wrap := func(sentinel error) error { return fmt.Errorf("%w: %s: %w", sentinel, op, err) }
	switch {
	case errors.Is(err, context.Canceled):
		return fmt.Errorf("collector: %s: %w", op, err)
	case errors.As(err, &pe):
		return wrap(statusSentinel(pe.StatusCode))
	case errors.Is(err, errTooLarge):
		return wrap(errBadQuery)
	}
	return classify(op, err)
}
